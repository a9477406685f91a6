"""On PostgreSQL, API tokens cannot be deleted by raw SQL: a revoked token keeps its name
for the audit trail. (SQLite gets the same trigger after every migrate.)
"""

from django.db import migrations

from kgreview.core.nodelete import history_triggers


class Migration(migrations.Migration):
    dependencies = [("api", "0001_initial"), ("core", "0002_audit_append_only")]
    operations = [history_triggers(["api.ApiToken"])]
