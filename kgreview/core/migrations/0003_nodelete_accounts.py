"""On PostgreSQL, accounts and the admin's change log cannot be deleted by raw SQL.

Every decision, edge, run and token names the person behind it: accounts are
deactivated, never deleted. (SQLite gets the same triggers after every migrate.)
"""

from django.conf import settings
from django.db import migrations

from kgreview.core.nodelete import history_triggers


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0002_audit_append_only"),
        ("admin", "0003_logentry_add_action_flag_choices"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]
    operations = [history_triggers([settings.AUTH_USER_MODEL, "admin.LogEntry"])]
