"""The writing API: POST /api/v1/proposals and GET /api/v1/proposals/{id}, and the
service behind them (``api.proposing.proposals_submit``)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from kgreview.api.models import ApiToken, ProposalBatch
from kgreview.api.proposing import proposals_submit
from kgreview.api.services import api_token_create
from kgreview.core.errors import NotAllowed, StateConflict, ValidationFailed
from kgreview.core.models import AuditEntry
from kgreview.graph.models import Source
from kgreview.review.decide.decisions import proposal_reject
from kgreview.review.models import Proposal

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_counts")]

URL = "/api/v1/proposals"
QUOTE = "Before learning vector search you should understand embeddings."


def reject(proposal_id: int, user) -> None:
    proposal_reject(
        proposal_id=proposal_id, acting_user=user, reason_code="not_supported_by_evidence"
    )


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


def post(client: Client, items, *, key: str | None = None, raw: str | None = None):
    headers = {"Idempotency-Key": key} if key is not None else {}
    body = raw if raw is not None else json.dumps({"proposals": items})
    return client.post(URL, body, content_type="application/json", headers=headers)


# --- Queueing ---------------------------------------------------------------------------


def test_an_edge_with_a_quote_in_its_source_is_queued_with_concepts_it_waits_for(
    proposer, lesson, submitter
):
    """A new edge between two new names is queued, and so are the two concepts."""
    answer = post(proposer, [edge_item()], key="k-1")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    (result,) = body["results"]
    assert result["result"] == "queued" and result["status"] == "pending"
    assert body["counts"] == {"queued": 1, "merged": 0, "dropped": 0}
    proposal = Proposal.objects.get(pk=result["id"])
    assert proposal.kind == "add_edge"
    assert proposal.evidence_revision == lesson.current_revision
    assert lesson.current_revision.text[proposal.evidence_start : proposal.evidence_end] == QUOTE
    assert proposal.created_by == submitter
    assert proposal.origin.is_submitted and proposal.origin.agent_label == "tutor-bot (ada)"
    waits = Proposal.objects.filter(pk__in=result["waits_for"])
    assert sorted(waits.values_list("payload__name", flat=True)) == ["Embeddings", "Vector search"]
    assert all(p.created_by == submitter for p in waits)


def test_a_batch_posted_twice_with_one_idempotency_key_is_queued_once(proposer, lesson):
    """The retry is answered with the first answer and queues nothing."""
    items = [edge_item(), edge_item(source="Embeddings", target="RAG", relation="related")]
    first = post(proposer, items, key="batch-7")
    before = Proposal.objects.count()
    again = post(proposer, items, key="batch-7")
    assert again.status_code == 200
    assert Proposal.objects.count() == before
    assert again.json()["results"] == first.json()["results"]
    assert again.json()["replayed"] is True and first.json()["replayed"] is False
    assert again["Idempotent-Replayed"] == "true"
    assert ProposalBatch.objects.count() == 1


def test_a_different_batch_under_a_used_key_is_refused_in_words(proposer, lesson):
    """409, saying the key was used for another batch; nothing more is queued."""
    post(proposer, [edge_item()], key="k")
    before = Proposal.objects.count()
    answer = post(proposer, [edge_item(confidence=0.7)], key="k")
    assert answer.status_code == 409
    assert "was used for a different batch" in answer.json()["detail"]
    assert Proposal.objects.count() == before


def test_the_same_key_from_another_token_is_another_batch(proposer, lesson, f):
    """Keys are per token: another tool's "k" queues (here: merges into the first)."""
    other = api_token_create(
        owner=f.user(role="viewer"), name="miner", acting_user=None, scope="propose"
    )
    post(proposer, [edge_item()], key="k")
    answer = post(
        Client(headers={"Authorization": f"Bearer {other.secret}"}), [edge_item()], key="k"
    )
    assert answer.json()["replayed"] is False
    assert answer.json()["results"][0]["result"] == "merged"


def test_a_proposal_whose_quote_is_not_in_its_source_is_dropped_with_the_reason(proposer, lesson):
    """Dropped, evidence_not_found, naming the revision; nothing queued."""
    answer = post(proposer, [edge_item(evidence={"source": "vectors", "quote": "Made up."})])
    (result,) = answer.json()["results"]
    assert result["result"] == "dropped"
    assert result["reason"] == "evidence_not_found"
    assert "The quote is not in its source" in result["detail"]
    assert "not in revision 1 of vectors" in result["detail"]
    assert not Proposal.objects.exists()


def test_a_repeated_item_is_merged_into_the_open_proposal(proposer, lesson):
    """The second copy in one batch names the first's proposal."""
    answer = post(proposer, [edge_item(), edge_item()])
    first, second = answer.json()["results"]
    assert first["result"] == "queued"
    assert second == {
        "index": 1,
        "kind": "add_edge",
        "result": "merged",
        "id": first["id"],
        "reason": "duplicate",
        "detail": second["detail"],
    }
    assert f"proposal #{first['id']}" in second["detail"]


def test_items_are_checked_one_by_one_and_answered_in_order(proposer, lesson, f):
    """Unknown relation, unknown source, self-loop, existing edge: each dropped in words."""
    a, b = f.concept("Alpha"), f.concept("Beta")
    f.edge(a, b)
    items = [
        edge_item(relation="loves"),
        edge_item(evidence={"source": "nowhere", "quote": QUOTE}),
        edge_item(source="Embeddings", target="embeddings"),
        edge_item(source="Alpha", target="Beta", evidence=None),
        edge_item(evidence={"source": "vectors", "revision": 9, "quote": QUOTE}),
    ]
    results = post(proposer, items).json()["results"]
    assert [r["reason"] for r in results] == [
        "unknown_relation",
        "unknown_source",
        "self_loop",
        "existing_edge",
        "unknown_source",
    ]
    assert all(r["result"] == "dropped" and r["detail"] for r in results)
    assert "has no revision 9" in results[4]["detail"]


def test_a_rejected_edge_is_not_proposed_again_with_the_same_quote(proposer, lesson, f):
    """Dedup against rejected proposals: the same quote is dropped; a new quote is kept,
    flagged previously_rejected."""
    first = post(proposer, [edge_item()]).json()["results"][0]
    reject(first["id"], f.user(role="curator"))
    again = post(proposer, [edge_item()]).json()["results"][0]
    assert again["result"] == "dropped" and again["reason"] == "previously_rejected"
    other = post(
        proposer,
        [
            edge_item(
                evidence={
                    "text": "Embeddings come before vector search.",
                    "quote": "Embeddings come before vector search.",
                }
            )
        ],
    ).json()["results"][0]
    assert other["result"] == "queued"
    assert "previously_rejected" in other["flags"]


def test_below_the_gate_an_item_is_held(proposer, lesson):
    """The confidence gate is the agents': held, flagged below_gate."""
    (result,) = post(proposer, [edge_item(confidence=0.3)]).json()["results"]
    assert result["status"] == "held" and "below_gate" in result["flags"]


def test_a_contradiction_with_an_open_proposal_is_flagged_on_both_sides(proposer, lesson):
    """A builds_on B, then B builds_on A (acyclic): the second is flagged, and so is the first."""
    one = edge_item(relation="builds_on", source="Vector search", target="Embeddings")
    two = edge_item(relation="builds_on", source="Embeddings", target="Vector search")
    first, second = post(proposer, [one, two]).json()["results"]
    assert "contradiction" in second["flags"]
    assert "contradiction" in Proposal.objects.get(pk=first["id"]).flags


def test_evidence_as_a_text_creates_a_submitted_source(proposer, submitter):
    """The text becomes a source of its own (submitted-…), the quote found in it."""
    text = "Tokenization comes before embeddings. Everything else follows."
    item = edge_item(
        source="Tokenization",
        target="Embeddings",
        evidence={"text": text, "quote": "Tokenization comes before embeddings.", "title": "Notes"},
    )
    (result,) = post(proposer, [item]).json()["results"]
    assert result["result"] == "queued"
    proposal = Proposal.objects.get(pk=result["id"])
    source = proposal.evidence_revision.source
    assert source.slug.startswith("submitted-") and source.title == "Notes"
    assert proposal.evidence_revision.media_type == "text/x-kgreview-submitted"
    assert proposal.evidence_revision.imported_by == submitter
    assert "tutor-bot (ada)" in source.origin


def test_a_quote_not_in_the_submitted_text_is_dropped(proposer):
    item = edge_item(evidence={"text": "Something else entirely.", "quote": "Not there."})
    (result,) = post(proposer, [item]).json()["results"]
    assert result["reason"] == "evidence_not_found"


def test_evidence_as_a_url_keeps_the_quote_with_the_url(proposer):
    url = "https://example.org/notes#embeddings"
    item = edge_item(evidence={"url": url, "quote": "Embeddings precede vector search."})
    (result,) = post(proposer, [item]).json()["results"]
    proposal = Proposal.objects.get(pk=result["id"])
    assert proposal.evidence_quote == "Embeddings precede vector search."
    assert proposal.evidence_revision.source.origin.startswith(url)


def test_without_evidence_an_item_is_flagged_no_evidence(proposer):
    (result,) = post(proposer, [edge_item(evidence=None)]).json()["results"]
    assert result["result"] == "queued"
    assert "no_evidence" in result["flags"]
    proposal = Proposal.objects.get(pk=result["id"])
    assert proposal.evidence_revision is None and proposal.evidence_quote == ""


def test_concepts_aliases_and_retirements_are_queued(proposer, lesson, f):
    """The four kinds: each queued, or resolved against what the graph already has."""
    known = f.concept("Vector search")
    a, b = f.concept("Alpha"), f.concept("Beta")
    edge = f.edge(a, b)
    items = [
        {
            "kind": "add_concept",
            "name": "Embeddings",
            "aliases": ["Embedding vectors"],
            "confidence": 0.8,
            "reason": "Taught in the lesson.",
            "evidence": {"source": "vectors", "quote": QUOTE},
        },
        {"kind": "add_concept", "name": "vector search", "confidence": 0.8, "reason": "r"},
        {
            "kind": "add_alias",
            "concept": "Vector search",
            "alias": "ANN search",
            "confidence": 0.9,
            "reason": "r",
        },
        {
            "kind": "add_alias",
            "concept": "Nothing such",
            "alias": "X",
            "confidence": 0.9,
            "reason": "r",
        },
        {
            "kind": "invalidate_edge",
            "edge": edge.pk,
            "confidence": 0.7,
            "reason": "Wrong way round.",
        },
        {"kind": "invalidate_edge", "edge": edge.pk + 1000, "confidence": 0.7, "reason": "r"},
        {"kind": "add_concept", "name": "Embeddings", "confidence": 0.8, "reason": "again"},
    ]
    results = post(proposer, items).json()["results"]
    assert [r["result"] for r in results] == [
        "queued",
        "dropped",
        "queued",
        "dropped",
        "queued",
        "dropped",
        "merged",
    ]
    concept = Proposal.objects.get(pk=results[0]["id"])
    assert concept.payload["name"] == "Embeddings"
    assert concept.payload["aliases"] == ["Embedding vectors"]
    assert concept.reason == "Taught in the lesson."
    assert results[1]["reason"] == "existing_concept" and f"#{known.pk}" in results[1]["detail"]
    alias = Proposal.objects.get(pk=results[2]["id"])
    assert alias.kind == "add_alias" and alias.payload["concept_id"] == known.pk
    assert "no_evidence" in alias.flags
    assert results[3]["reason"] == "unresolvable"
    retire = Proposal.objects.get(pk=results[4]["id"])
    assert retire.kind == "invalidate_edge" and retire.payload["edge_id"] == edge.pk
    assert results[5]["reason"] == "unknown_edge"
    assert results[6]["id"] == results[0]["id"]


# --- Who may propose --------------------------------------------------------------------


def test_a_read_token_cannot_propose(f, lesson):
    """403 in words, naming the scope it needs; nothing queued."""
    read = api_token_create(owner=f.user(role="viewer"), name="reader", acting_user=None)
    answer = post(Client(headers={"Authorization": f"Bearer {read.secret}"}), [edge_item()])
    assert answer.status_code == 403
    assert "--scope propose" in answer.json()["detail"]
    assert not Proposal.objects.exists() and not ProposalBatch.objects.exists()


def test_a_read_token_is_refused_by_the_service_too(f):
    read = api_token_create(owner=f.user(role="viewer"), name="reader", acting_user=None)
    with pytest.raises(NotAllowed):
        proposals_submit(acting_user=read.token.user, token=read.token, items=[edge_item()])


def test_without_a_token_the_api_refuses_to_propose(lesson):
    answer = post(Client(), [edge_item()])
    assert answer.status_code == 401 and "Bearer" in answer.json()["detail"]


def test_a_browser_session_cannot_propose(client, f, lesson):
    """Proposing is for tokens: a signed-in session is refused (401), nothing queued."""
    client.force_login(f.user(role="curator"))
    answer = post(client, [edge_item()])
    assert answer.status_code == 401
    assert not Proposal.objects.exists()


def test_proposing_is_rate_limited_per_token(proposer, settings, lesson, f):
    """KG_API_PROPOSE_RATE counts per token: a second token of the account still may."""
    settings.KG_API_PROPOSE_RATE = "2/min"
    assert post(proposer, [edge_item()]).status_code == 200
    assert post(proposer, [edge_item()]).status_code == 200
    refused = post(proposer, [edge_item()])
    assert refused.status_code == 429 and "KG_API_PROPOSE_RATE" in refused.json()["detail"]
    assert refused["Retry-After"]
    owner = ApiToken.objects.get(name="tutor-bot").user
    second = api_token_create(owner=owner, name="other", acting_user=None, scope="propose")
    client = Client(headers={"Authorization": f"Bearer {second.secret}"})
    assert post(client, [edge_item()]).status_code == 200


def test_the_command_makes_a_proposing_token(f):
    f.user("bob", role="viewer")
    out = StringIO()
    call_command(
        "api_token",
        "create",
        "--user",
        "bob",
        "--name",
        "miner",
        "--scope",
        "propose",
        "--json",
        stdout=out,
    )
    made = json.loads(out.getvalue())
    assert made["scope"] == "propose"
    assert ApiToken.objects.get(prefix=made["prefix"]).scope == "propose"
    listed = StringIO()
    call_command("api_token", "list", "--json", stdout=listed)
    assert json.loads(listed.getvalue())["tokens"][0]["scope"] == "propose"


def test_existing_and_default_tokens_only_read(f):
    made = api_token_create(owner=f.user(role="viewer"), name="plain", acting_user=None)
    assert made.token.scope == "read"
    with pytest.raises(ValidationFailed, match="not a token scope"):
        api_token_create(owner=f.user(role="viewer"), name="x", acting_user=None, scope="write")


# --- Bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("items", "words"),
    [
        ([edge_item(source="Embed\x00dings")], "NUL"),
        ([edge_item(reason="why\x00")], "NUL"),
        ([edge_item(evidence={"source": "vectors", "quote": "q\x00"})], "NUL"),
        ([edge_item(confidence=10**400)], "confidence"),
        ([edge_item(confidence=1.5)], "less than or equal to 1"),
        ([edge_item(confidence="0.9")], "valid number"),
        (
            [edge_item(evidence={"source": "vectors", "revision": 10**30, "quote": QUOTE})],
            "less than",
        ),
        (
            [{"kind": "invalidate_edge", "edge": 2**70, "confidence": 0.5, "reason": "r"}],
            "less than",
        ),
        ([edge_item(source=["a"])], "string"),
        ([edge_item(kind="merge_concepts")], "kind"),
        ([edge_item(extra="x")], "Extra inputs"),
        ([edge_item(evidence={"quote": QUOTE})], "exactly one of"),
        ([edge_item(evidence={"url": "ftp://x", "quote": QUOTE})], "pattern"),
        ([], "at least 1"),
        ([edge_item()] * 1001, "at most 1000"),
    ],
)
def test_bad_input_is_refused_in_words_and_nothing_is_queued(proposer, lesson, items, words):
    answer = post(proposer, items, key="bad")
    assert answer.status_code == 422, answer.content
    assert words in json.dumps(answer.json())
    assert not Proposal.objects.exists() and not ProposalBatch.objects.exists()


@pytest.mark.parametrize(
    "raw", ["{not json", '{"proposals": 5}', "[]", '{"proposals": [null]}', "\x00"]
)
def test_a_body_that_is_not_a_batch_is_refused_in_words(proposer, raw):
    answer = post(proposer, None, raw=raw)
    assert 400 <= answer.status_code < 500
    assert answer.json()["detail"]


def test_an_oversized_idempotency_key_is_refused(proposer, lesson):
    answer = post(proposer, [edge_item()], key="k" * 256)
    assert answer.status_code == 422
    assert not Proposal.objects.exists()


def test_the_service_refuses_bad_items_in_words(issued):
    with pytest.raises(ValidationFailed, match=r"proposals\.0\..*NUL"):
        proposals_submit(
            acting_user=issued.token.user, token=issued.token, items=[edge_item(target="a\x00")]
        )
    with pytest.raises(ValidationFailed, match="at most 1,000"):
        proposals_submit(
            acting_user=issued.token.user, token=issued.token, items=[edge_item()] * 1001
        )


def test_the_service_replays_and_refuses_like_the_endpoint(issued, lesson):
    user, token = issued.token.user, issued.token
    first = proposals_submit(
        acting_user=user, token=token, items=[edge_item()], idempotency_key="s"
    )
    again = proposals_submit(
        acting_user=user, token=token, items=[edge_item()], idempotency_key="s"
    )
    assert again.replayed and again.results == first.results and again.batch == first.batch
    with pytest.raises(StateConflict):
        proposals_submit(
            acting_user=user, token=token, items=[edge_item(reason="other")], idempotency_key="s"
        )


def test_a_batch_writes_one_curation_log_row(proposer, lesson):
    post(proposer, [edge_item(), edge_item(relation="loves")], key="k")
    row = AuditEntry.objects.get(action="api.propose")
    assert "tutor-bot (ada)" in row.summary and "1 queued" in row.summary
    assert "1 dropped" in row.summary


# --- Following a proposal ---------------------------------------------------------------


def test_a_proposal_is_followed_to_its_decision(proposer, lesson, f):
    answer = post(proposer, [edge_item()]).json()
    (result,) = answer["results"]
    shown = proposer.get(f"{URL}/{result['id']}").json()
    assert shown["status"] == "pending" and shown["decisions"] == []
    assert shown["submitter"] == {
        "user": "ada",
        "via": "api",
        "name": "tutor-bot (ada)",
        "token": "tutor-bot",
        "batch": answer["batch"],
    }
    curator = f.user("cora", role="curator")
    reject(result["id"], curator)
    shown = proposer.get(f"{URL}/{result['id']}").json()
    assert shown["status"] == "rejected" and shown["decided_by"] == "cora"
    assert shown["decisions"][0]["action"] == "reject" and shown["decisions"][0]["by"] == "cora"


@pytest.mark.parametrize("pk", [999_999, 2**70])
def test_an_unknown_proposal_is_a_404_in_words(agent, pk):
    answer = agent.get(f"{URL}/{pk}")
    assert answer.status_code == 404
    assert "no proposal" in answer.json()["detail"]


# --- The review card --------------------------------------------------------------------


def test_the_review_card_names_the_submitter(proposer, lesson, f, client):
    (result,) = post(proposer, [edge_item()]).json()["results"]
    client.force_login(f.user(role="curator"))
    page = client.get(reverse("review:focus") + f"?id={result['id']}")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Submitted by" in html and "tutor-bot (ada) via the API" in html


def test_sources_without_a_slug_match_are_never_revised_by_a_submission(proposer, lesson):
    """A submitted text gets a source of its own: the lesson keeps its revision."""
    item = edge_item(
        evidence={"text": "Brand new text about embeddings.", "quote": "Brand new text"}
    )
    post(proposer, [item])
    assert Source.objects.get(slug="vectors").revisions.count() == 1


def test_an_oversized_body_is_refused_in_words(proposer, settings):
    """A body past DATA_UPLOAD_MAX_MEMORY_SIZE is a 4xx in words, never a 500."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    text = "Embeddings come first. " * 1000
    answer = post(proposer, [edge_item(evidence={"text": text, "quote": "Embeddings"})])
    assert 400 <= answer.status_code < 500
    assert answer.json()["detail"]
    assert not Proposal.objects.exists()


def test_the_same_fact_with_another_quote_becomes_support_of_the_first(proposer):
    """As in a source an agent reads: one proposal, the second quote kept as support."""
    text = "Embeddings come before vector search. Again: learn embeddings before vector search."
    items = [
        edge_item(evidence={"text": text, "quote": "Embeddings come before vector search."}),
        edge_item(evidence={"text": text, "quote": "learn embeddings before vector search"}),
    ]
    first, second = post(proposer, items).json()["results"]
    assert first["result"] == "queued"
    assert second["result"] == "merged" and second["id"] == first["id"]
    assert "further support" in second["detail"]
    support = Proposal.objects.get(pk=first["id"]).payload["support"]
    assert [s["quote"] for s in support] == ["learn embeddings before vector search"]


def test_a_full_batch_of_a_thousand_is_queued_in_one_request(proposer, lesson):
    """1,000 edges quoting one source: one pipeline pass, every item answered in order."""
    items = [
        edge_item(source=f"Topic {n}", target=f"Subject {n}", relation="related")
        for n in range(1000)
    ]
    answer = post(proposer, items, key="full")
    assert answer.status_code == 200
    body = answer.json()
    assert body["counts"] == {"queued": 1000, "merged": 0, "dropped": 0}
    assert [r["index"] for r in body["results"]] == list(range(1000))
    assert Proposal.objects.filter(kind="add_edge").count() == 1000


def test_a_submitted_source_shows_on_its_page_with_its_quote(proposer, f, client):
    """The submitted text is a source like any other: its page names who submitted it."""
    text = "Tokenization comes before embeddings."
    item = edge_item(source="Tokenization", evidence={"text": text, "quote": text})
    (result,) = post(proposer, [item]).json()["results"]
    slug = Proposal.objects.get(pk=result["id"]).evidence_revision.source.slug
    client.force_login(f.user(role="viewer"))
    page = client.get(reverse("source-detail", args=[slug]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Tokenization comes before embeddings." in html
    assert "submitted through the API by tutor-bot (ada)" in html
