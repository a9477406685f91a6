"""Aliases are removed by marking them, never deleted; only current names are unique.

On PostgreSQL a trigger forbids deleting alias rows, as for the other history tables.
"""

import django.db.models.functions.text
import django.db.models.manager
from django.db import migrations, models


def forbid_delete(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        "CREATE TRIGGER graph_conceptalias_no_delete BEFORE DELETE ON graph_conceptalias "
        "FOR EACH ROW EXECUTE FUNCTION kgreview_forbid_delete()"
    )


def allow_delete(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        "DROP TRIGGER IF EXISTS graph_conceptalias_no_delete ON graph_conceptalias"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("graph", "0006_review_workspace"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="conceptalias",
            options={
                "base_manager_name": "all_objects",
                "ordering": ["name"],
                "verbose_name_plural": "concept aliases",
            },
        ),
        migrations.AlterModelManagers(
            name="conceptalias",
            managers=[
                ("objects", django.db.models.manager.Manager()),
                ("all_objects", django.db.models.manager.Manager()),
            ],
        ),
        migrations.RemoveConstraint(
            model_name="conceptalias",
            name="conceptalias_name_unique_ci",
        ),
        migrations.RemoveConstraint(
            model_name="conceptalias",
            name="conceptalias_one_canonical_per_concept",
        ),
        migrations.AddField(
            model_name="conceptalias",
            name="removed_at",
            field=models.DateTimeField(
                blank=True,
                help_text="Set when a curator took this name off the concept.",
                null=True,
            ),
        ),
        migrations.AddConstraint(
            model_name="conceptalias",
            constraint=models.UniqueConstraint(
                django.db.models.functions.text.Lower("name"),
                condition=models.Q(("removed_at__isnull", True)),
                name="conceptalias_current_name_unique_ci",
                violation_error_message="This name already belongs to a concept.",
            ),
        ),
        migrations.AddConstraint(
            model_name="conceptalias",
            constraint=models.UniqueConstraint(
                condition=models.Q(("kind", "canonical"), ("removed_at__isnull", True)),
                fields=("concept",),
                name="conceptalias_one_canonical_per_concept",
            ),
        ),
        migrations.AddConstraint(
            model_name="conceptalias",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("kind", "canonical"), ("removed_at__isnull", False), _negated=True
                ),
                name="conceptalias_canonical_not_removed",
            ),
        ),
        migrations.RunPython(forbid_delete, allow_delete),
    ]
