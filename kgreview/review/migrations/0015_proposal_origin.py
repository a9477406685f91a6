"""Who or what proposed a proposal is review's own row now (``ProposalOrigin``: the agent,
its model, the run's number), in place of a foreign key up to ``agents.AgentRun``. The
agents' migration 0008 makes one origin per run that queued proposals and points the
proposals at it; 0016 then drops ``Proposal.agent_run``."""

import django.db.models.deletion
from django.db import migrations, models

from kgreview.core.nodelete import history_triggers


class Migration(migrations.Migration):
    dependencies = [("review", "0014_proposal_without_question")]

    operations = [
        migrations.CreateModel(
            name="ProposalOrigin",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "agent",
                    models.CharField(
                        help_text="The proposer's key: construct, heal, ...", max_length=32
                    ),
                ),
                (
                    "agent_label",
                    models.CharField(help_text="The proposer in words.", max_length=100),
                ),
                ("provider", models.CharField(blank=True, max_length=32)),
                ("model", models.CharField(blank=True, max_length=200)),
                (
                    "run",
                    models.PositiveBigIntegerField(
                        blank=True,
                        help_text="The run's number, as its proposer numbers runs.",
                        null=True,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["-id"],
                "indexes": [models.Index(fields=["run"], name="proposalorigin_run")],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("agent", "run"), name="proposalorigin_one_per_run"
                    )
                ],
            },
        ),
        migrations.AddField(
            model_name="proposal",
            name="origin",
            field=models.ForeignKey(
                blank=True,
                help_text="Who or what proposed it; empty for a proposal a person added.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="proposals",
                to="review.proposalorigin",
            ),
        ),
        history_triggers(["review.ProposalOrigin"]),
    ]
