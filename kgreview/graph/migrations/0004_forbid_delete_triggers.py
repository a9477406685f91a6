"""On PostgreSQL, back the ORM's no-delete guard with triggers at the database.

Rows that carry history cannot be deleted even by raw SQL; audit rows (decisions,
source revisions) cannot be updated either. TRUNCATE (used by test teardown) is not
affected. SQLite relies on the ORM guard alone.
"""

from django.db import migrations

from kgreview.core.nodelete import FORBID_FUNCTIONS_SQL as FUNCTIONS

NO_DELETE = [
    "graph_relationtype",
    "graph_concept",
    "graph_source",
    "graph_sourcerevision",
    "graph_edge",
    "review_proposal",
    "review_decision",
    "agents_agentrun",
]
NO_UPDATE = ["graph_sourcerevision", "review_decision"]


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    # No parameters: the "%" in RAISE must reach PL/pgSQL untouched.
    schema_editor.execute(FUNCTIONS, params=None)
    for table in NO_DELETE:
        schema_editor.execute(
            f"CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION kgreview_forbid_delete()"
        )
    for table in NO_UPDATE:
        schema_editor.execute(
            f"CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION kgreview_forbid_update()"
        )


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in NO_DELETE:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_no_delete ON {table}")
    for table in NO_UPDATE:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_no_update ON {table}")
    schema_editor.execute("DROP FUNCTION IF EXISTS kgreview_forbid_delete()")
    schema_editor.execute("DROP FUNCTION IF EXISTS kgreview_forbid_update()")


class Migration(migrations.Migration):
    dependencies = [
        ("graph", "0003_seed_relation_types"),
        ("review", "0001_initial"),
        ("agents", "0001_initial"),
    ]
    operations = [migrations.RunPython(forwards, backwards)]
