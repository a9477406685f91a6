"""The name journal (``NameChange``) replaces the name index's version counter.

Processes that hold names in memory follow the journal and re-read only the concepts
and proposed concepts a change touched (``graph.name_index``); the single version row
every naming decision bumped, which made every worker rebuild its whole index, goes.
Nothing needs carrying over: a process starts with an empty index and builds it on first
use. Undone, the counter comes back with its one row (on SQLite and PostgreSQL alike).
"""

from django.db import migrations, models


def seed_version(apps, schema_editor):
    apps.get_model("graph", "NameIndexVersion").objects.get_or_create(pk=1)


class Migration(migrations.Migration):
    dependencies = [
        ("graph", "0012_concept_order"),
    ]

    operations = [
        migrations.CreateModel(
            name="NameChange",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("concept_id", models.BigIntegerField(blank=True, null=True)),
                ("proposal_id", models.BigIntegerField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            ("concept_id__isnull", True),
                            ("proposal_id__isnull", True),
                            _connector="OR",
                        ),
                        name="namechange_one_endpoint",
                    )
                ],
            },
        ),
        migrations.RunPython(migrations.RunPython.noop, seed_version),
        migrations.DeleteModel(
            name="NameIndexVersion",
        ),
    ]
