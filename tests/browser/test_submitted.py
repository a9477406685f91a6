"""Proposals from outside kgreview on the Review page, in Chromium: one posted to the
writing API over HTTP and one proposed by an agent with the MCP SDK's own client over
the streamable HTTP endpoint, both on the live server. Each card names its submitter and
the door; accepted with the keyboard (a), each puts its edge in the graph, and the audit,
the edge's explanation and the explorer's panel name the reviewer and the submitter."""

from __future__ import annotations

import json
import threading
import urllib.request

import anyio
import httpx2
import pytest
from django.test import Client as DjangoClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from playwright.sync_api import expect

from kgreview.api.services import api_token_create
from kgreview.graph.models import Edge
from kgreview.review.models import Decision, Proposal
from tests.browser.explorer.support import click_edge, drawn
from tests.browser.test_review import card, open_focus, sign_in

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser and the live server read through their own connections.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

NOTES = "Tutor notes: vector search builds on embeddings, and RAG builds on vector search."


def item(source: str, target: str, quote: str) -> dict:
    return {
        "kind": "add_edge",
        "source": source,
        "relation": "builds_on",
        "target": target,
        "confidence": 0.9,
        "reason": "The tutor's notes say so.",
        "evidence": {"text": NOTES, "quote": quote},
    }


def in_a_thread(work):
    """Run ``work()`` on a thread of its own (the SDK's client runs its own event loop,
    which Playwright's, on this thread, must not meet) and return what it returned."""
    out: dict = {}

    def run():
        try:
            out["value"] = work()
        except BaseException as exc:  # re-raised below, on the test's thread
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(120)
    if "error" in out:
        raise out["error"]
    return out["value"]


def post_over_http(url: str, secret: str, items: list[dict]) -> dict:
    request = urllib.request.Request(
        url,
        data=json.dumps({"proposals": items}).encode("utf-8"),
        method="POST",
        headers={
            "Authorization": f"Bearer {secret}",
            "Content-Type": "application/json",
            "Idempotency-Key": "browser-1",
        },
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.load(answer)


def propose_over_mcp(url: str, secret: str, items: list[dict]) -> dict:
    async def main():
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await client.call_tool("propose", {"proposals": items})

    result = anyio.run(main)
    assert not result.is_error, result.content
    return result.structured_content


def accept_by_keyboard(page, live_server, proposal: Proposal, submitter: str) -> None:
    """Open its card, check it names the submitter, press a and wait for the card to go."""
    open_focus(page, live_server, proposal)
    expect(card(page).locator("dd.submitter")).to_have_text(submitter)
    page.keyboard.press("a")
    expect(card(page)).not_to_have_attribute("data-proposal", str(proposal.pk))


def test_proposals_from_the_api_and_from_mcp_are_reviewed_by_keyboard_naming_who_sent_them(
    page, live_server, f
):
    f.concept("Embeddings")
    f.concept("Vector search")
    f.concept("RAG")
    ada = f.user("ada", role="viewer")
    api_token = api_token_create(owner=ada, name="tutor-bot", acting_user=None, scope="propose")
    mcp_token = api_token_create(owner=ada, name="study-agent", acting_user=None, scope="propose")
    f.user("rev", role="reviewer", password="browser-pass-1")

    posted = in_a_thread(
        lambda: post_over_http(
            f"{live_server.url}/api/v1/proposals",
            api_token.secret,
            [item("Vector search", "Embeddings", "vector search builds on embeddings")],
        )
    )
    proposed = in_a_thread(
        lambda: propose_over_mcp(
            f"{live_server.url}/api/mcp",
            mcp_token.secret,
            [item("RAG", "Vector search", "RAG builds on vector search")],
        )
    )
    proposed_batch = proposed["batch"]
    from_api = Proposal.objects.get(pk=posted["results"][0]["id"])
    from_mcp = Proposal.objects.get(pk=proposed["results"][0]["id"])
    assert from_api.status == from_mcp.status == "pending"

    sign_in(page, live_server, "rev")
    accept_by_keyboard(page, live_server, from_api, "tutor-bot (ada) via the API")
    accept_by_keyboard(page, live_server, from_mcp, "study-agent (ada) via MCP")

    reader = DjangoClient(headers={"Authorization": f"Bearer {api_token.secret}"})
    for proposal, token, via, batch in (
        (from_api, "tutor-bot", "api", posted["batch"]),
        (from_mcp, "study-agent", "mcp", proposed["batch"]),
    ):
        edge = Edge.objects.get(provenance__proposal=proposal)
        assert edge.status == "active" and edge.decided_by.username == "rev"
        (decision,) = Decision.objects.filter(proposal=proposal)
        assert decision.action == "accept" and decision.user.username == "rev"
        shown = reader.get(f"/api/v1/edges/{edge.pk}").json()
        assert shown["edge"]["decided_by"] == "rev"
        assert shown["proposal"]["agent"] is None
        assert shown["proposal"]["submitter"] == {
            "user": "ada",
            "via": via,
            "name": f"{token} (ada)",
            "token": token,
            "batch": batch,
        }

    # The explorer's panel says who submitted the edge, never a run number.
    edge = Edge.objects.get(provenance__proposal=from_mcp)
    page.goto(f"{live_server.url}/explore/{edge.source_id}/")
    drawn(page, edge.source_id)
    click_edge(page, edge.pk)
    proposed = page.locator("#ex-panel #ex-proposed")
    expect(proposed).to_contain_text(f"by study-agent (ada) via MCP (batch #{proposed_batch})")
    expect(proposed).not_to_contain_text("run #")
