"""A proposal's run became review's ``ProposalOrigin`` (issue 26): the migration gives
every run that queued proposals its origin, carries every proposal over, and back."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

from kgreview.agents.models import AgentRun
from kgreview.agents.runs import run_origin
from kgreview.review.models import Proposal
from kgreview.review.services import proposal_create


def _column_runs() -> dict[int, int | None]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, agent_run_id FROM review_proposal")
        return dict(cursor.fetchall())


def _propose(name: str, run: AgentRun | None) -> Proposal:
    return proposal_create(
        kind="add_concept",
        payload={"name": name, "aliases": [], "description": ""},
        confidence=0.9,
        origin=None if run is None else run_origin(run),
    )


@pytest.mark.django_db(transaction=True)
def test_the_migration_carries_every_proposals_run_over_and_back(reference_data):
    heal = AgentRun.objects.create(agent="heal")
    construct = AgentRun.objects.create(agent="construct", provider="openai", model="gpt-x")
    idle = AgentRun.objects.create(agent="discover")
    a, b = _propose("Alpha", construct), _propose("Beta", construct)
    c, person = _propose("Gamma", heal), _propose("Delta", None)

    call_command("migrate", "review", "0014", verbosity=0)
    assert "review_proposalorigin" not in connection.introspection.table_names()
    assert _column_runs() == {
        a.pk: construct.pk,
        b.pk: construct.pk,
        c.pk: heal.pk,
        person.pk: None,
    }

    call_command("migrate", verbosity=0)
    assert set(construct.proposals) == {a, b} and set(heal.proposals) == {c}
    assert not idle.proposals.exists()
    assert Proposal.objects.get(pk=person.pk).origin is None
    origin = Proposal.objects.select_related("origin").get(pk=a.pk).origin
    assert (origin.agent, origin.agent_label, origin.provider, origin.model, origin.run) == (
        "construct",
        "Construction",
        "openai",
        "gpt-x",
        construct.pk,
    )
    assert AgentRun.objects.get(pk=construct.pk).origin_id == origin.pk
