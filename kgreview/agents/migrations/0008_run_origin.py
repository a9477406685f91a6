"""An agent run points at the origin review shows beside its proposals (review's 0015),
instead of each proposal pointing up at the run. Every run that queued proposals gets
its origin (the agent, its words, the provider and model, the run's number), and its
proposals point at it, before review's 0016 drops ``Proposal.agent_run``. Reversed, the
column comes back and is filled from the origins."""

import django.db.models.deletion
from django.db import migrations, models


def make_origins(apps, schema_editor):
    AgentRun = apps.get_model("agents", "AgentRun")
    Proposal = apps.get_model("review", "Proposal")
    ProposalOrigin = apps.get_model("review", "ProposalOrigin")
    proposing = Proposal.objects.filter(agent_run__isnull=False).values("agent_run_id")
    for run in AgentRun.objects.filter(pk__in=proposing).order_by("pk").iterator():
        # Migrated back and forth, the origins of the first pass are still there.
        origin, _ = ProposalOrigin.objects.get_or_create(
            agent=run.agent,
            run=run.pk,
            defaults={
                "agent_label": run.get_agent_display(),
                "provider": run.provider,
                "model": run.model,
            },
        )
        AgentRun.objects.filter(pk=run.pk).update(origin=origin)
        Proposal.objects.filter(agent_run_id=run.pk).update(origin=origin)


def restore_runs(apps, schema_editor):
    AgentRun = apps.get_model("agents", "AgentRun")
    Proposal = apps.get_model("review", "Proposal")
    for run in AgentRun.objects.filter(origin__isnull=False).order_by("pk").iterator():
        Proposal.objects.filter(origin_id=run.origin_id).update(agent_run_id=run.pk)


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0007_gap_search_agent"),
        ("review", "0015_proposal_origin"),
    ]
    run_before = [("review", "0016_proposal_without_run")]

    operations = [
        migrations.AddField(
            model_name="agentrun",
            name="origin",
            field=models.OneToOneField(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="agent_run",
                to="review.proposalorigin",
            ),
        ),
        migrations.RunPython(make_origins, restore_runs),
    ]
