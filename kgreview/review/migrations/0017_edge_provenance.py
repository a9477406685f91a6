"""An edge's provenance is review's own row (``EdgeProvenance``), in place of three
foreign keys from ``graph.Edge`` up to review (``proposal``, ``decision``,
``invalidation_decision``). Every edge that names one of them gets its row, in one
statement; graph's 0015 then drops the three columns. Reversed, the columns (brought back
by reversing graph's 0015 first) are filled from the rows before the table goes."""

import django.db.models.deletion
from django.db import migrations, models

from kgreview.core.nodelete import history_triggers

COLUMNS = ("proposal_id", "decision_id", "invalidation_decision_id")


def copy_out(apps, schema_editor):
    table = apps.get_model("review", "EdgeProvenance")._meta.db_table
    edges = apps.get_model("graph", "Edge")._meta.db_table
    columns = ", ".join(COLUMNS)
    named = " OR ".join(f"{c} IS NOT NULL" for c in COLUMNS)
    schema_editor.execute(
        f"INSERT INTO {table} (edge_id, {columns}) SELECT id, {columns} FROM {edges} WHERE {named}"
    )


def copy_back(apps, schema_editor):
    table = apps.get_model("review", "EdgeProvenance")._meta.db_table
    edges = apps.get_model("graph", "Edge")._meta.db_table
    sets = ", ".join(
        f"{c} = (SELECT p.{c} FROM {table} p WHERE p.edge_id = {edges}.id)" for c in COLUMNS
    )
    schema_editor.execute(f"UPDATE {edges} SET {sets} WHERE id IN (SELECT edge_id FROM {table})")


class Migration(migrations.Migration):
    dependencies = [
        ("graph", "0014_acronym_keys"),
        ("review", "0016_proposal_without_run"),
    ]

    operations = [
        migrations.CreateModel(
            name="EdgeProvenance",
            fields=[
                (
                    "edge",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        primary_key=True,
                        related_name="provenance",
                        serialize=False,
                        to="graph.edge",
                    ),
                ),
                (
                    "proposal",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="edge_provenance",
                        to="review.proposal",
                    ),
                ),
                (
                    "decision",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="edge_provenance",
                        to="review.decision",
                    ),
                ),
                (
                    "invalidation_decision",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="review.decision",
                    ),
                ),
            ],
            options={"verbose_name_plural": "edge provenances"},
        ),
        migrations.RunPython(copy_out, copy_back),
        history_triggers(["review.EdgeProvenance"]),
    ]
