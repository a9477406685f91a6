"""On PostgreSQL, releases, their files and build requests cannot be deleted by raw SQL,
and a release and its files cannot be updated: a release never changes once cut.
(SQLite gets the same triggers after every migrate.)
"""

from django.db import migrations

from kgreview.core.nodelete import history_triggers


class Migration(migrations.Migration):
    dependencies = [("exports", "0001_initial"), ("core", "0002_audit_append_only")]
    operations = [
        history_triggers(
            ["exports.Release", "exports.ReleaseFile", "exports.ReleaseBuild"],
            no_update=("exports.Release", "exports.ReleaseFile"),
        )
    ]
