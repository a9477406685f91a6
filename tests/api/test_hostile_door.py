"""The agent-facing door attacked as a hostile client would: what it sends that no
honest client sends (NUL bytes, lone surrogates, numbers past any row, bodies that are no
batch, the wrong media type, a token revoked between calls, JSON-RPC that is no message)
is refused at a documented 4xx in words, never a 500, and nothing is queued or lost."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from kgreview.api.models import ProposalBatch
from kgreview.api.services import api_token_create, api_token_revoke
from kgreview.review.models import Proposal

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_counts")]

URL = "/api/v1/proposals"
MCP = "/api/mcp"
QUOTE = "Before learning vector search you should understand embeddings."
JSON_RPC = {"Accept": "application/json, text/event-stream"}


def edge_item(**over) -> dict:
    item = {
        "kind": "add_edge",
        "source": "Embeddings",
        "relation": "prerequisite",
        "target": "Vector search",
        "confidence": 0.9,
        "reason": "The lesson says to learn embeddings first.",
        "evidence": {"source": "vectors", "quote": QUOTE},
    }
    item.update(over)
    return item


def with_escape(body: dict, marker: str, escape: str) -> str:
    """The body as JSON with ``marker`` written as a raw JSON escape (``\\ud800``): a
    lone surrogate can only travel that way."""
    return json.dumps(body).replace(marker, escape)


def nothing_queued() -> bool:
    return not Proposal.objects.exists() and not ProposalBatch.objects.exists()


# --- The writing API ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "field",
    ["source", "target", "relation", "reason", "quote", "text", "title", "name", "alias"],
)
def test_a_lone_surrogate_anywhere_in_an_item_is_refused_in_words(proposer, lesson, field):
    """Half of a UTF-16 pair (sent as \\ud800) is no character: refused with the field
    named, never tidied away from a name (which would queue another name than the one
    sent) nor left for the database to choke on."""
    if field in ("quote",):
        item = edge_item(evidence={"source": "vectors", "quote": "SUR"})
    elif field in ("text", "title"):
        item = edge_item(evidence={"text": "Embeddings come first.", "quote": "first"})
        item["evidence"][field] = "SUR" if field == "title" else "Embeddings come SUR first."
    elif field == "name":
        item = {"kind": "add_concept", "name": "Zebra SUR", "confidence": 0.9, "reason": "r"}
    elif field == "alias":
        item = {"kind": "add_alias", "concept": "Embeddings", "alias": "SUR", "confidence": 0.9}
        item["reason"] = "r"
    else:
        item = edge_item(**{field: f"Emb SUR {field}"})
    raw = with_escape({"proposals": [item]}, "SUR", "\\ud800")
    answer = proposer.post(URL, raw, content_type="application/json")
    assert answer.status_code == 422, answer.content
    assert "lone surrogate" in answer.content.decode()
    assert nothing_queued()


def test_a_nul_byte_in_a_name_is_refused_before_the_name_is_tidied(proposer, lesson):
    answer = proposer.post(
        URL,
        json.dumps({"proposals": [edge_item(target="Vector\x00 search")]}),
        content_type="application/json",
    )
    assert answer.status_code == 422 and "NUL" in answer.content.decode()
    assert nothing_queued()


@pytest.mark.parametrize(
    ("key", "words"),
    [("a\x00b", "printable ASCII"), ("é-key", "printable ASCII"), ("   ", "1 to 255")],
)
def test_a_hostile_idempotency_key_is_refused_in_words(proposer, lesson, key, words):
    answer = proposer.post(
        URL,
        json.dumps({"proposals": [edge_item()]}),
        content_type="application/json",
        headers={"Idempotency-Key": key},
    )
    assert answer.status_code == 400, answer.content
    assert words in answer.json()["detail"]
    assert nothing_queued()


@pytest.mark.parametrize(
    ("item", "words"),
    [
        (edge_item(confidence=1e308), "less than or equal to 1"),
        (edge_item(evidence={"source": "vectors", "revision": 2**63, "quote": QUOTE}), "less"),
        ({"kind": "invalidate_edge", "edge": 2**63, "confidence": 0.5, "reason": "r"}, "less"),
    ],
)
def test_huge_numbers_are_refused_in_words(proposer, lesson, item, words):
    answer = proposer.post(URL, json.dumps({"proposals": [item]}), content_type="application/json")
    assert answer.status_code == 422, answer.content
    assert words in answer.content.decode()
    assert nothing_queued()


def test_the_largest_row_id_is_answered_item_by_item(proposer, lesson):
    """2**63 - 1 is a number the database holds: no such revision or edge, each dropped
    with the reason, the batch answered."""
    items = [
        edge_item(evidence={"source": "vectors", "revision": 2**63 - 1, "quote": QUOTE}),
        {"kind": "invalidate_edge", "edge": 2**63 - 1, "confidence": 0.5, "reason": "r"},
    ]
    answer = proposer.post(URL, json.dumps({"proposals": items}), content_type="application/json")
    assert answer.status_code == 200, answer.content
    assert [r["reason"] for r in answer.json()["results"]] == ["unknown_source", "unknown_edge"]
    assert not Proposal.objects.exists()


@pytest.mark.parametrize("proposal_id", [2**70, 2**63, 0, -1])
def test_following_a_proposal_past_any_row_is_a_404_in_words(proposer, proposal_id):
    answer = proposer.get(f"{URL}/{proposal_id}")
    assert answer.status_code == 404
    assert f"no proposal with id {proposal_id}" in answer.json()["detail"]


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (json.dumps({"proposals": []}), 422),
        (json.dumps({"proposals": [edge_item()] * 1001}), 422),
        ('"proposals"', 422),
        ("17", 422),
        ("null", 422),
        ("[" * 50_000 + "]" * 50_000, 400),
        ("", 422),
    ],
)
def test_a_body_that_is_no_batch_is_refused_and_queues_nothing(proposer, lesson, raw, status):
    answer = proposer.post(URL, raw, content_type="application/json")
    assert answer.status_code == status, answer.content
    assert answer.json()["detail"]
    assert nothing_queued()


@pytest.mark.parametrize(
    "content_type",
    [
        "multipart/form-data; boundary=xx",
        "application/x-www-form-urlencoded",
        "text/plain",
        "",
    ],
)
def test_a_body_of_another_type_than_json_is_a_415_in_words(proposer, lesson, content_type):
    """A well-formed batch under the wrong media type is refused, not guessed at (a
    multipart body used to reach the form parser first: a 500)."""
    answer = proposer.post(URL, json.dumps({"proposals": [edge_item()]}), content_type=content_type)
    assert answer.status_code == 415, answer.content
    assert "Content-Type: application/json" in answer.json()["detail"]
    assert nothing_queued()


def test_a_json_dialect_media_type_is_read(proposer, lesson):
    answer = proposer.post(
        URL,
        json.dumps({"proposals": [edge_item()]}),
        content_type="application/vnd.api+json; charset=utf-8",
    )
    assert answer.status_code == 200, answer.content


def test_a_token_revoked_between_two_calls_is_refused_and_its_batch_stays(
    proposer, issued, submitter, lesson
):
    first = proposer.post(
        URL,
        json.dumps({"proposals": [edge_item()]}),
        content_type="application/json",
        headers={"Idempotency-Key": "k-1"},
    )
    assert first.status_code == 200
    queued = first.json()["results"][0]["id"]
    api_token_revoke(token=issued.token, acting_user=submitter)
    again = proposer.post(
        URL,
        json.dumps({"proposals": [edge_item(reason="Again.")]}),
        content_type="application/json",
        headers={"Idempotency-Key": "k-2"},
    )
    assert again.status_code == 401 and "Revoked tokens" in again.json()["detail"]
    assert proposer.get(f"{URL}/{queued}").status_code == 401
    assert ProposalBatch.objects.count() == 1
    assert Proposal.objects.filter(pk=queued, status="pending").exists()


# --- MCP over HTTP ------------------------------------------------------------------------


def rpc(client: Client, body, *, content_type="application/json"):
    raw = body if isinstance(body, str | bytes) else json.dumps(body)
    return client.post(MCP, raw, content_type=content_type, headers=JSON_RPC)


def propose_call(items, *, id_=7, key=None) -> dict:
    arguments: dict = {"proposals": items}
    if key is not None:
        arguments["idempotency_key"] = key
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/call",
        "params": {"name": "propose", "arguments": arguments},
    }


CONCEPT = {"kind": "add_concept", "name": "Zebra", "confidence": 0.9, "reason": "r"}


@pytest.mark.parametrize("id_", [{"a": 1}, None, True, 1.5, [1]])
def test_a_json_rpc_request_whose_id_is_no_id_is_refused_not_run(proposer, id_):
    """The transport took such a request for a notification: it ran the tool (queued
    the proposal) and answered nothing. Now: a 400 in words, and nothing queued."""
    answer = rpc(proposer, propose_call([CONCEPT], id_=id_))
    assert answer.status_code == 400, answer.content
    assert "id is a string or an integer" in answer.json()["error"]["message"]
    assert not Proposal.objects.exists()


@pytest.mark.parametrize(
    ("raw", "status", "words"),
    [
        ("", 400, "The body is empty"),
        ("   ", 400, "The body is empty"),
        ("{", 400, "Parse error"),
        ("[" * 50_000, 400, "Parse error"),
        ("[]", 400, "Validation error"),
        ("null", 400, "Validation error"),
        ('{"jsonrpc": "2.0", "id": 1}', 400, "Validation error"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list\xff"}', 400, "Parse error"),
        ('{"jsonrpc": "2.0", "id": 1, "method": "tools/list\\ud800"}', 400, "Parse error"),
    ],
)
def test_a_malformed_json_rpc_body_is_a_4xx_in_words(proposer, raw, status, words):
    answer = rpc(proposer, raw)
    assert answer.status_code == status, answer.content
    assert words in answer.json()["error"]["message"]


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_a_json_rpc_message_of_another_type_is_a_415_in_words(proposer, content_type):
    answer = rpc(proposer, propose_call([CONCEPT]), content_type=content_type)
    assert answer.status_code == 415, answer.content
    assert "Content-Type: application/json" in answer.json()["error"]["message"]
    assert not Proposal.objects.exists()


def test_a_deeply_nested_body_without_a_token_is_a_401_not_a_500(db):
    answer = Client().post(MCP, "[" * 100_000, content_type="application/json")
    assert answer.status_code == 401
    assert answer.json()["error"]["message"].startswith("Authentication needed")


def test_a_read_token_calling_propose_over_http_is_refused_in_words(f):
    reader = api_token_create(owner=f.user("rita", role="viewer"), name="reader", acting_user=None)
    client = Client(headers={"Authorization": f"Bearer {reader.secret}"})
    answer = rpc(client, propose_call([CONCEPT]))
    assert answer.status_code == 200  # a tool's refusal is the call's result, isError
    result = answer.json()["result"]
    assert result["isError"] is True
    assert "may only read (scope read)" in result["content"][0]["text"]
    assert not Proposal.objects.exists() and not ProposalBatch.objects.exists()


@pytest.mark.parametrize(
    ("items", "key", "words"),
    [
        ([{**CONCEPT, "name": "Zebra\x00"}], None, "NUL"),
        ([{**CONCEPT, "confidence": 1e308}], None, "less than or equal to 1"),
        ([CONCEPT] * 1001, None, "at most 1,000"),
        ([], None, "at least one proposal"),
        ([CONCEPT], "k\x00", "printable ASCII"),
    ],
)
def test_hostile_proposals_over_mcp_are_refused_in_words(proposer, items, key, words):
    answer = rpc(proposer, propose_call(items, key=key))
    assert answer.status_code == 200, answer.content
    result = answer.json()["result"]
    assert result["isError"] is True and words in result["content"][0]["text"]
    assert not Proposal.objects.exists() and not ProposalBatch.objects.exists()


def test_a_token_revoked_between_two_mcp_calls_is_refused(proposer, issued, submitter):
    first = rpc(proposer, propose_call([CONCEPT], key="m-1"))
    assert first.json()["result"].get("isError") is not True, first.content
    api_token_revoke(token=issued.token, acting_user=submitter)
    again = rpc(proposer, propose_call([{**CONCEPT, "name": "Okapi"}], key="m-2"))
    assert again.status_code == 401
    assert again.json()["error"]["message"].startswith("Authentication needed")
    assert list(Proposal.objects.values_list("payload__name", flat=True)) == ["Zebra"]
