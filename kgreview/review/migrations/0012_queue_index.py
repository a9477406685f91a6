"""The Queue's indexes: one row per flag a proposal carries and the queue's tally, with
the triggers that keep them (``review.queue_index``), filled from the proposals already
there; and two orders of proposals the Queue reads. Reversed, the triggers go and the two
tables and indexes with them (nothing else changes)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from kgreview.review import queue_index


def forwards(apps, schema_editor):
    conn = schema_editor.connection
    queue_index.install_triggers(conn)
    queue_index.rebuild(conn)


def backwards(apps, schema_editor):
    queue_index.remove_triggers(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0007_gap_search_agent"),
        ("graph", "0012_concept_order"),
        ("questions", "0002_nodelete_history"),
        ("review", "0011_proposal_competency_question"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ProposalFlag",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("flag", models.TextField()),
                ("status", models.CharField(max_length=16)),
                ("priority", models.IntegerField()),
                ("confidence", models.FloatField()),
            ],
        ),
        migrations.CreateModel(
            name="QueueTally",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("status", models.CharField(max_length=16)),
                ("kind", models.CharField(max_length=32)),
                ("relation_key", models.CharField(blank=True, max_length=64)),
                ("flags_text", models.CharField(blank=True, max_length=500)),
                ("n", models.IntegerField()),
            ],
        ),
        migrations.AddIndex(
            model_name="proposal",
            index=models.Index(fields=["-confidence", "-id"], name="proposal_all_confidence"),
        ),
        migrations.AddIndex(
            model_name="proposal",
            index=models.Index(
                fields=["relation_key", "status", "-priority", "-id"],
                name="proposal_relation_queue",
            ),
        ),
        migrations.AddField(
            model_name="proposalflag",
            name="proposal",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="flag_rows",
                to="review.proposal",
            ),
        ),
        migrations.AddIndex(
            model_name="proposalflag",
            index=models.Index(
                fields=["flag", "status", "-priority", "-proposal"], name="proposal_flag_priority"
            ),
        ),
        migrations.AddIndex(
            model_name="proposalflag",
            index=models.Index(
                condition=models.Q(("status__in", ("pending", "held"))),
                fields=["flag", "-priority", "-proposal"],
                name="proposal_flag_open_priority",
            ),
        ),
        migrations.AddIndex(
            model_name="proposalflag",
            index=models.Index(
                fields=["flag", "-priority", "-proposal"], name="proposal_flag_all_priority"
            ),
        ),
        migrations.AddIndex(
            model_name="proposalflag",
            index=models.Index(
                fields=["flag", "status", "-confidence", "-proposal"],
                name="proposal_flag_confidence",
            ),
        ),
        migrations.AddIndex(
            model_name="proposalflag",
            index=models.Index(
                condition=models.Q(("status__in", ("pending", "held"))),
                fields=["flag", "-confidence", "-proposal"],
                name="proposal_flag_open_confidence",
            ),
        ),
        migrations.AddIndex(
            model_name="proposalflag",
            index=models.Index(
                fields=["flag", "-confidence", "-proposal"], name="proposal_flag_all_confidence"
            ),
        ),
        migrations.AddIndex(
            model_name="proposalflag",
            index=models.Index(fields=["flag", "status", "-proposal"], name="proposal_flag_new"),
        ),
        migrations.AddIndex(
            model_name="proposalflag",
            index=models.Index(
                condition=models.Q(("status__in", ("pending", "held"))),
                fields=["flag", "-proposal"],
                name="proposal_flag_open_new",
            ),
        ),
        migrations.AddIndex(
            model_name="proposalflag",
            index=models.Index(fields=["flag", "-proposal"], name="proposal_flag_all_new"),
        ),
        migrations.AddConstraint(
            model_name="proposalflag",
            constraint=models.UniqueConstraint(
                fields=("proposal", "flag"), name="proposal_flag_unique"
            ),
        ),
        migrations.RunPython(forwards, backwards),
    ]
