"""An edge whose proposal came from outside says truthfully who submitted it: the
account, the token's name, the door (the writing API or MCP) and the batch, never the
token's id dressed up as an agent run's number."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from django.test import Client
from mcp import Client as McpClient

from kgreview.api.mcp.server import SERVER, Caller, reading_as
from kgreview.api.models import ApiToken, SubmittedProposal
from kgreview.api.proposing import proposals_submit
from kgreview.graph.models import Edge
from kgreview.review.decide.decisions import proposal_accept
from kgreview.review.models import Proposal
from kgreview.review.services import proposal_origin
from kgreview.review.workspace.selectors import QueueFilter, queue_queryset

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_counts")]

QUOTE = "Before learning vector search you should understand embeddings."


EDGE = {
    "kind": "add_edge",
    "source": "Embeddings",
    "relation": "prerequisite",
    "target": "Vector search",
    "confidence": 0.9,
    "reason": "The lesson says to learn embeddings first.",
    "evidence": {"source": "vectors", "quote": QUOTE},
}


def accepted_edge(proposal_id: int, reviewer) -> Edge:
    proposal_accept(proposal_id=proposal_id, acting_user=reviewer)
    return Edge.objects.get(provenance__proposal_id=proposal_id)


def explained(client: Client, edge: Edge) -> dict:
    answer = client.get(f"/api/v1/edges/{edge.pk}")
    assert answer.status_code == 200, answer.content
    return answer.json()


def over_mcp(caller: Caller, items: list[dict]) -> dict:
    async def main():
        async with McpClient(SERVER) as client:
            return await client.call_tool("propose", {"proposals": items})

    reset = reading_as(caller)
    try:
        result = async_to_sync(main)()
    finally:
        reset.var.reset(reset)
    assert not result.is_error, result.content
    return result.structured_content


def test_an_edge_submitted_through_the_api_names_its_submitter_not_a_run(
    issued, submitter, lesson, f
):
    answer = Client(headers={"Authorization": f"Bearer {issued.secret}"}).post(
        "/api/v1/proposals", json.dumps({"proposals": [EDGE]}), content_type="application/json"
    )
    body = answer.json()
    edge = accepted_edge(body["results"][0]["id"], f.user("rev", role="reviewer"))

    shown = explained(Client(headers={"Authorization": f"Bearer {issued.secret}"}), edge)
    proposal = shown["proposal"]
    assert proposal["agent"] is None  # no agent run proposed it
    assert proposal["submitter"] == {
        "user": "ada",
        "via": "api",
        "name": "tutor-bot (ada)",
        "token": "tutor-bot",
        "batch": body["batch"],
    }
    assert "run_id" not in json.dumps(proposal)
    assert shown["edge"]["decided_by"] == "rev"


def test_an_edge_proposed_over_mcp_with_a_token_says_via_mcp(issued, lesson, f, client):
    token = ApiToken.objects.select_related("user").get(pk=issued.token.pk)
    answer = over_mcp(Caller(user=token.user, api_token=token), [EDGE])
    proposal_id = answer["results"][0]["id"]
    assert str(Proposal.objects.get(pk=proposal_id).origin) == "tutor-bot (ada) via MCP"
    edge = accepted_edge(proposal_id, f.user("rev", role="reviewer"))

    client.force_login(f.user("vic", role="viewer"))
    submitter = explained(client, edge)["proposal"]["submitter"]
    assert submitter == {
        "user": "ada",
        "via": "mcp",
        "name": "tutor-bot (ada)",
        "token": "tutor-bot",
        "batch": answer["batch"],
    }


def test_an_edge_proposed_over_stdio_names_the_account_and_no_token(submitter, lesson, f, client):
    answer = over_mcp(Caller(user=submitter), [EDGE])
    edge = accepted_edge(answer["results"][0]["id"], f.user("rev", role="reviewer"))
    client.force_login(f.user("vic", role="viewer"))
    submitter = explained(client, edge)["proposal"]["submitter"]
    assert submitter == {
        "user": "ada",
        "via": "mcp",
        "name": "ada",
        "token": None,
        "batch": answer["batch"],
    }


def test_the_concepts_an_edge_waits_for_are_linked_to_its_batch(issued, lesson):
    token = ApiToken.objects.select_related("user").get(pk=issued.token.pk)
    answer = proposals_submit(acting_user=token.user, token=token, items=[EDGE])
    (result,) = answer.results
    linked = set(
        SubmittedProposal.objects.filter(batch_id=answer.batch).values_list(
            "proposal_id", flat=True
        )
    )
    assert linked == {result["id"], *result["waits_for"]}
    # The same concept named by a later batch stays the first batch's.
    again = proposals_submit(
        acting_user=token.user,
        token=token,
        items=[{**EDGE, "target": "Cosine similarity", "reason": "Another."}],
    )
    later = set(
        SubmittedProposal.objects.filter(batch_id=again.batch).values_list("proposal_id", flat=True)
    )
    assert later and not later & linked


def test_an_agents_edge_still_names_its_run(f, client):
    origin = proposal_origin(agent="construct", agent_label="Construction", run=41)
    proposal = f.edge_proposal(f.concept("Alpha"), f.concept("Beta"))
    Proposal.objects.filter(pk=proposal.pk).update(origin=origin)
    edge = accepted_edge(proposal.pk, f.user("rev", role="reviewer"))
    client.force_login(f.user("vic", role="viewer"))
    shown = explained(client, edge)["proposal"]
    assert shown["agent"]["run_id"] == 41 and shown["agent"]["agent"] == "construct"
    assert shown["submitter"] is None


def test_a_submitted_proposal_without_a_batch_link_names_its_token_by_its_origin(
    issued, submitter, f, client
):
    """Queued before batches were linked: the origin is the token's, so its name is
    known; the batch is not."""
    origin = proposal_origin(agent="api", agent_label="tutor-bot (ada)", run=issued.token.pk)
    proposal = f.edge_proposal(f.concept("Alpha"), f.concept("Beta"))
    Proposal.objects.filter(pk=proposal.pk).update(origin=origin, created_by=submitter)
    edge = accepted_edge(proposal.pk, f.user("rev", role="reviewer"))
    client.force_login(f.user("vic", role="viewer"))
    submitter = explained(client, edge)["proposal"]["submitter"]
    assert submitter == {
        "user": "ada",
        "via": "api",
        "name": "tutor-bot (ada)",
        "token": "tutor-bot",
        "batch": None,
    }


def test_the_queues_run_filter_never_takes_a_token_id_for_a_run(issued, lesson, f):
    token = ApiToken.objects.select_related("user").get(pk=issued.token.pk)
    proposals_submit(acting_user=token.user, token=token, items=[EDGE])
    assert Proposal.objects.filter(origin__run=token.pk).exists()
    agents = proposal_origin(agent="construct", agent_label="Construction", run=token.pk)
    theirs = f.edge_proposal(f.concept("Alpha"), f.concept("Beta"))
    Proposal.objects.filter(pk=theirs.pk).update(origin=agents)
    shown = queue_queryset(QueueFilter(status="open", run=token.pk))
    assert list(shown.values_list("pk", flat=True)) == [theirs.pk]
