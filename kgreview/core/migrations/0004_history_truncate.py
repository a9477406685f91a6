"""On PostgreSQL, no history table can be emptied by TRUNCATE either.

TRUNCATE fires no row trigger, so the ``BEFORE DELETE`` triggers of the earlier
migrations never saw it (nor ``TRUNCATE … CASCADE`` from a table that history rows point
at). Every table that already refuses a DELETE gets a ``BEFORE TRUNCATE`` trigger; the
tables are read off those triggers, not listed again. (SQLite has no TRUNCATE; its
``DELETE`` without a WHERE meets the row triggers.)
"""

from django.db import migrations

from kgreview.core.nodelete import truncate_guards


class Migration(migrations.Migration):
    # After every migration that installs a no-delete trigger.
    dependencies = [
        ("core", "0003_nodelete_accounts"),
        ("graph", "0010_nodelete_history"),
        ("agents", "0006_nodelete_history"),
        ("api", "0002_nodelete_history"),
        ("questions", "0002_nodelete_history"),
    ]
    operations = [truncate_guards()]
