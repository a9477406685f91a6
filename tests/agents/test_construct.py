"""The construction agent end to end: the real openai client against a local fake server."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from construction.errors import LLMTransientError
from kgreview.agents.construct import construct_item_run, construct_run_create
from kgreview.agents.models import AgentRun, AgentRunItem, DroppedCandidate, ExtractionRecord
from kgreview.agents.tasks import construct_source
from kgreview.graph import services as graph_services
from kgreview.graph.models import Source
from kgreview.review.models import Proposal
from tests.construction.fake_llm import reply, slow, status

pytestmark = pytest.mark.django_db

RAG = (
    "# Retrieval-augmented generation\n\n"
    "Before learning RAG you should understand embeddings.\n"
    "Retrieval-augmented generation (RAG) is related to semantic search.\n"
    "Chunking is part of RAG.\n"
)
EMB = (
    "# Embeddings\n\n"
    "Embeddings build on RAG, oddly enough.\n"
    "Retrieval-augmented generation requires embeddings.\n"
)


def edge(source, target, relation="prerequisite", evidence=None, confidence=0.9):
    return {
        "source": source,
        "target": target,
        "relation": relation,
        "confidence": confidence,
        "reason": "The lesson states it.",
        "evidence": evidence or "Before learning RAG you should understand embeddings.",
    }


def answer(*edges, concepts=()):
    return reply(
        {"concepts": list(concepts), "edges": list(edges)}, prompt_tokens=100, completion_tokens=40
    )


RAG_CONCEPT = {"name": "Retrieval-augmented generation", "aliases": ["RAG"], "description": ""}


def construct(*args) -> dict:
    out = io.StringIO()
    call_command("construct", "--provider", "openai", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def rag(db):
    return graph_services.source_import(slug="rag", title="RAG", text=RAG, acting_user=None).source


def test_run_queues_proposals_with_evidence_and_records_usage(openai_settings, rag):
    """A good answer becomes concept and edge proposals; the JSON is the documented shape."""
    openai_settings.push(answer(edge("embeddings", "RAG"), concepts=[RAG_CONCEPT]))
    report = construct("--source", "rag")
    assert set(report) == {"run", "proposals", "dropped"}
    run = report["run"]
    assert run["status"] == "succeeded" and run["provider"] == "openai"
    assert run["llm"]["calls"] == 1 and run["llm"]["total_tokens"] == 140
    assert run["proposals"] == {"add_concept": {"pending": 2}, "add_edge": {"pending": 1}}
    edges = [p for p in report["proposals"] if p["kind"] == "add_edge"]
    assert len(edges) == 1
    (p,) = edges
    assert set(p) == {
        "id",
        "kind",
        "status",
        "source",
        "target",
        "relation",
        "confidence",
        "reason",
        "evidence",
        "flags",
    }
    assert (p["source"], p["relation"], p["target"]) == (
        "Embeddings",
        "prerequisite",
        "Retrieval-augmented generation",
    )
    ev = p["evidence"]
    assert set(ev) == {"source", "revision", "start", "end", "quote", "page", "section", "support"}
    assert ev["page"] is None and ev["section"] == ["Retrieval-augmented generation"]
    assert RAG[ev["start"] : ev["end"]] == ev["quote"] and ev["source"] == "rag"
    assert p["flags"] == ["new_concept"]
    concepts = {p["source"] for p in report["proposals"] if p["kind"] == "add_concept"}
    assert concepts == {"Embeddings", "Retrieval-augmented generation"}
    stored = Proposal.objects.get(pk=p["id"])
    assert stored.payload["target"]["proposal_id"] is not None
    assert stored.document == rag and stored.relation_key == "prerequisite"


def test_broken_json_then_a_good_answer_succeeds_after_one_validation_retry(openai_settings, rag):
    """An unparseable answer is retried with the error fed back, then accepted."""
    openai_settings.push(reply("{not json"), answer(edge("embeddings", "RAG")))
    report = construct()
    assert report["run"]["status"] == "succeeded"
    assert report["run"]["llm"]["validation_retries"] == 1
    assert report["run"]["llm"]["calls"] == 2
    assert len([p for p in report["proposals"] if p["kind"] == "add_edge"]) == 1


def test_rate_limit_then_success(openai_settings, rag):
    """A 429 is retried with backoff and the run still succeeds."""
    openai_settings.push(status(429, retry_after="1"), answer(edge("embeddings", "RAG")))
    report = construct()
    assert report["run"]["status"] == "succeeded" and report["run"]["llm"]["retries"] == 1


def test_repeated_server_errors_fail_the_source_cleanly_with_nothing_written(openai_settings, rag):
    """Persistent 500s fail that source with a clear error; no proposals, no cached output."""
    openai_settings.push(*[status(500)] * 5)
    with pytest.raises(CommandError):
        construct()
    run = AgentRun.objects.get()
    assert run.status == "failed" and "rag" in run.error and "500" in run.error
    item = run.items.get()
    assert item.status == "failed" and "500" in item.error
    assert not Proposal.objects.exists()
    assert not ExtractionRecord.objects.exists()


def test_slow_answer_past_the_timeout_fails_the_source(openai_settings, rag, settings):
    """A model slower than KG_LLM_TIMEOUT fails that source with 'timed out'."""
    settings.KG_LLM_TIMEOUT = 0.2
    openai_settings.push(*[slow(2, answer(edge("embeddings", "RAG")))] * 3)
    with pytest.raises(CommandError):
        construct()
    item = AgentRunItem.objects.get()
    assert item.status == "failed" and "timed out" in item.error.lower()
    assert not Proposal.objects.exists()


def test_hallucinated_evidence_unknown_relation_and_self_loop_are_dropped_and_counted(
    openai_settings, rag
):
    """Each bad candidate is dropped with its reason code; the run counts them."""
    openai_settings.push(
        answer(
            edge("embeddings", "RAG", evidence="Embeddings are the heart of every RAG system."),
            edge(
                "RAG",
                "semantic search",
                "is_alternative_to",
                "Retrieval-augmented generation (RAG) is related to semantic search.",
            ),
            edge(
                "RAG",
                "Retrieval-augmented generation",
                "related",
                "Retrieval-augmented generation (RAG) is related to semantic search.",
            ),
            concepts=[RAG_CONCEPT],
        )
    )
    report = construct()
    reasons = sorted(d["reason"] for d in report["dropped"])
    assert reasons == ["evidence_not_found", "self_loop", "unknown_relation"]
    assert all(set(d) == {"source_slug", "candidate", "reason"} for d in report["dropped"])
    assert report["run"]["dropped"] == {
        "evidence_not_found": 1,
        "self_loop": 1,
        "unknown_relation": 1,
    }
    unknown = DroppedCandidate.objects.get(reason="unknown_relation")
    assert unknown.relation_label == "is_alternative_to"
    assert not Proposal.objects.filter(kind="add_edge").exists()


def test_below_gate_candidate_is_held(openai_settings, rag, settings):
    """Confidence under KG_CONFIDENCE_GATE queues the proposal as held."""
    settings.KG_CONFIDENCE_GATE = 0.6
    openai_settings.push(answer(edge("embeddings", "RAG", confidence=0.4)))
    report = construct()
    (p,) = [p for p in report["proposals"] if p["kind"] == "add_edge"]
    assert p["status"] == "held" and "below_gate" in p["flags"]
    assert report["run"]["proposals"]["add_edge"] == {"held": 1}


def test_duplicate_in_one_answer_is_proposed_once(openai_settings, rag):
    """The same edge twice in an answer yields one proposal and one duplicate drop."""
    openai_settings.push(answer(edge("embeddings", "RAG"), edge("Embeddings", "rag")))
    report = construct()
    assert len([p for p in report["proposals"] if p["kind"] == "add_edge"]) == 1
    assert [d["reason"] for d in report["dropped"]] == ["duplicate"]


def test_a_cycle_across_two_sources_is_flagged_on_both_proposals(openai_settings, rag):
    """Lesson one: embeddings before RAG; lesson two: RAG before embeddings. Both flagged."""
    graph_services.source_import(slug="emb", title="Embeddings", text=EMB, acting_user=None)
    openai_settings.push(
        answer(edge("embeddings", "RAG"), concepts=[RAG_CONCEPT]),
        answer(edge("RAG", "embeddings", "prerequisite", "Embeddings build on RAG, oddly enough.")),
    )
    construct("--source", "rag", "--source", "emb")
    first, second = Proposal.objects.filter(kind="add_edge").order_by("pk")
    assert first.document.slug == "rag" and second.document.slug == "emb"
    assert "contradiction" in first.flags and "contradiction" in second.flags
    assert [c["id"] for c in second.payload["conflicts"]] == [first.pk]
    assert [c["id"] for c in first.payload["conflicts"]] == [second.pk]
    assert first.version == 2
    assert second.priority > 100


def test_concept_proposed_in_one_source_is_known_in_the_next(openai_settings, rag):
    """ "RAG" in the second lesson resolves to the first lesson's proposed concept."""
    graph_services.source_import(slug="emb", title="Embeddings", text=EMB, acting_user=None)
    openai_settings.push(
        answer(edge("embeddings", "Retrieval-augmented generation (RAG)")),
        answer(
            edge(
                "embeddings",
                "RAG",
                "applies_to",
                "Retrieval-augmented generation requires embeddings.",
            )
        ),
    )
    construct("--source", "rag", "--source", "emb")
    names = sorted(p.payload["name"] for p in Proposal.objects.filter(kind="add_concept"))
    assert names == ["Embeddings", "Retrieval-augmented generation"]
    rag_concept = Proposal.objects.get(kind="add_concept", payload__name__startswith="Retr")
    later = Proposal.objects.filter(kind="add_edge").order_by("pk").last()
    assert later.payload["target"]["proposal_id"] == rag_concept.pk
    assert later.payload["target"]["match"] in {"exact", "alias"}


def test_running_twice_creates_nothing_and_calls_no_model(openai_settings, rag):
    """An unchanged revision already read costs no LLM call and adds no proposal."""
    openai_settings.push(answer(edge("embeddings", "RAG")))
    construct()
    before = Proposal.objects.count()
    requests = len(openai_settings.requests)
    report = construct()
    assert report["run"]["unchanged"] == 1 and report["run"]["llm"]["calls"] == 0
    assert len(openai_settings.requests) == requests
    assert Proposal.objects.count() == before


def test_reverify_reuses_the_stored_extraction_without_calling_the_model(openai_settings, rag):
    """--reverify runs search/verify again on the stored answer; duplicates stay out."""
    openai_settings.push(answer(edge("embeddings", "RAG")))
    construct()
    requests = len(openai_settings.requests)
    report = construct("--reverify")
    assert len(openai_settings.requests) == requests
    assert report["proposals"] == []
    assert [d["reason"] for d in report["dropped"]] == ["duplicate"]


def test_a_new_revision_is_read_again_and_a_vanished_quote_proposes_invalidation(
    openai_settings, rag, f
):
    """Revision 2 costs one call; an edge quoting a sentence now gone is proposed for retirement."""
    rev1 = rag.current_revision
    rag_c = f.concept("RAG")
    quote = "Chunking is part of RAG."
    kept = f.edge(f.concept("Chunking"), rag_c, "part_of", evidence=f.evidence(rev1, quote))
    openai_settings.push(answer(edge("embeddings", "RAG")))
    construct()
    graph_services.source_import(
        slug="rag", title="RAG", text=RAG.replace(quote, "Gone.\n"), acting_user=None
    )
    openai_settings.push(answer(edge("embeddings", "RAG")))
    report = construct()
    assert report["run"]["llm"]["calls"] == 1
    (inv,) = [p for p in report["proposals"] if p["kind"] == "invalidate_edge"]
    assert (inv["source"], inv["relation"], inv["target"]) == ("Chunking", "part_of", "RAG")
    stored = Proposal.objects.get(pk=inv["id"])
    assert stored.payload == {
        "edge_id": kept.pk,
        "reason_code": "evidence_gone",
        "cycle_edge_ids": [],
    }
    assert "no longer appears in revision 2" in stored.reason


def test_task_called_twice_processes_the_source_once(openai_settings, rag):
    """The Celery task is idempotent: the second call finds the item finished."""
    openai_settings.push(answer(edge("embeddings", "RAG")))
    run = construct_run_create(provider="openai")
    item = run.items.get()
    assert construct_source(item_id=item.pk) == "done"
    count = Proposal.objects.count()
    assert construct_source(item_id=item.pk) == "done"
    assert Proposal.objects.count() == count and len(openai_settings.requests) == 1
    run.refresh_from_db()
    assert run.status == "succeeded" and run.progress_done == run.progress_total == 1


def test_redelivered_task_takes_over_but_another_worker_does_not(openai_settings, rag):
    """Same claim (a redelivery after a crash) may resume; a different claim is turned away."""
    openai_settings.push(answer(edge("embeddings", "RAG")))
    run = construct_run_create(provider="openai")
    item = run.items.get()
    AgentRunItem.objects.filter(pk=item.pk).update(status="running", claimed_by="task:A")
    from django.utils import timezone

    AgentRunItem.objects.filter(pk=item.pk).update(started_at=timezone.now())
    other = construct_item_run(item_id=item.pk, claim="task:B")
    assert other.status == "running" and not Proposal.objects.exists()
    resumed = construct_item_run(item_id=item.pk, claim="task:A")
    assert resumed.status == "done" and Proposal.objects.exists()


def test_transient_failure_before_the_last_attempt_hands_the_item_back(openai_settings, rag):
    """Not the final attempt: the item returns to pending and the error is raised for a retry."""
    openai_settings.push(*[status(503)] * 5)
    run = construct_run_create(provider="openai")
    item = run.items.get()
    with pytest.raises(LLMTransientError):
        construct_item_run(item_id=item.pk, claim="task:1", final_attempt=False)
    item.refresh_from_db()
    assert item.status == "pending" and "503" in item.error
    assert not Proposal.objects.exists()


def test_unknown_source_slug_is_an_error_in_words(openai_settings, rag):
    """Naming a source that does not exist stops before anything runs."""
    with pytest.raises(CommandError, match="No source with slug: nope"):
        construct("--source", "nope")
    assert not AgentRun.objects.exists()


def test_hostile_lesson_text_is_stored_verbatim_in_evidence(openai_settings, db):
    """Script in a lesson is quoted as text; rendering escapes it (see browser tests)."""
    text = "# Evil\n\n<script>alert(1)</script> requires <b>embeddings</b>.\n"
    graph_services.source_import(slug="evil", title="Evil", text=text, acting_user=None)
    openai_settings.push(
        answer(
            edge(
                "<b>embeddings</b>",
                "<script>alert(1)</script>",
                evidence="<script>alert(1)</script> requires <b>embeddings</b>.",
            )
        )
    )
    report = construct()
    (p,) = [p for p in report["proposals"] if p["kind"] == "add_edge"]
    assert p["evidence"]["quote"] == "<script>alert(1)</script> requires <b>embeddings</b>."
    assert Source.objects.get(slug="evil").current_revision.text == text
