"""The link from a competency question to the proposals its gap searches queued moves
from ``review.Proposal.competency_question`` into this app (``GapProposal``): review sits
below the questions and must not name them. Every existing link is copied here, then
review's 0014 drops the column (``run_before``: the lower app's migration never depends
on this one). Reversed, review's 0014 brings the column back first and this migration
copies the links back into it."""

import django.db.models.deletion
from django.db import migrations, models

from kgreview.core.nodelete import history_triggers


def copy_links(apps, schema_editor):
    Proposal = apps.get_model("review", "Proposal")
    GapProposal = apps.get_model("questions", "GapProposal")
    rows = Proposal.objects.filter(competency_question__isnull=False).values_list(
        "pk", "competency_question_id"
    )
    batch = []
    for proposal_id, question_id in rows.order_by("pk").iterator(chunk_size=5000):
        batch.append(GapProposal(proposal_id=proposal_id, question_id=question_id))
        if len(batch) >= 5000:
            GapProposal.objects.bulk_create(batch)
            batch = []
    GapProposal.objects.bulk_create(batch)


def copy_links_back(apps, schema_editor):
    Proposal = apps.get_model("review", "Proposal")
    GapProposal = apps.get_model("questions", "GapProposal")
    for link in GapProposal.objects.order_by("pk").iterator(chunk_size=5000):
        Proposal.objects.filter(pk=link.proposal_id).update(competency_question_id=link.question_id)


class Migration(migrations.Migration):
    dependencies = [
        ("questions", "0002_nodelete_history"),
        ("review", "0013_add_alias"),
    ]
    run_before = [("review", "0014_proposal_without_question")]

    operations = [
        migrations.CreateModel(
            name="GapProposal",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "proposal",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="gap_link",
                        to="review.proposal",
                    ),
                ),
                (
                    "question",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="gap_links",
                        to="questions.competencyquestion",
                    ),
                ),
            ],
            options={"ordering": ["-id"]},
        ),
        migrations.AddField(
            model_name="competencyquestion",
            name="gap_proposals",
            field=models.ManyToManyField(
                blank=True,
                related_name="competency_questions",
                related_query_name="competency_question",
                through="questions.GapProposal",
                to="review.proposal",
            ),
        ),
        migrations.RunPython(copy_links, copy_links_back),
        history_triggers(["questions.GapProposal"], no_update=("questions.GapProposal",)),
    ]
