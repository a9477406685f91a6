"""On PostgreSQL, curation log rows can be neither deleted nor updated, even by raw SQL."""

from django.db import migrations

from kgreview.core.nodelete import FORBID_FUNCTIONS_SQL as FUNCTIONS

TABLE = "core_auditentry"


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(FUNCTIONS, params=None)
    schema_editor.execute(
        f"CREATE TRIGGER {TABLE}_no_delete BEFORE DELETE ON {TABLE} "
        "FOR EACH ROW EXECUTE FUNCTION kgreview_forbid_delete()"
    )
    schema_editor.execute(
        f"CREATE TRIGGER {TABLE}_no_update BEFORE UPDATE ON {TABLE} "
        "FOR EACH ROW EXECUTE FUNCTION kgreview_forbid_update()"
    )


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_no_delete ON {TABLE}")
    schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_no_update ON {TABLE}")


class Migration(migrations.Migration):
    dependencies = [("core", "0001_audit")]
    operations = [migrations.RunPython(forwards, backwards)]
