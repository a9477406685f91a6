"""Ontology discovery end to end: dropped relations recur, a curator accepts, edges requeue."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from kgreview.agents.discover import discover_run, requeue_dropped_for
from kgreview.agents.models import AgentRun, DroppedCandidate
from kgreview.agents.runs import agent_run_create
from kgreview.graph import services as graph
from kgreview.graph.models import RelationType
from kgreview.review.decide import decisions
from kgreview.review.models import Proposal
from tests.construction.fake_llm import reply

pytestmark = pytest.mark.django_db

LESSONS = {
    "dpo": "# DPO\n\nDirect preference optimization is an alternative to RLHF for alignment.\n",
    "rerank": "# Reranking\n\nAn LLM judge is an alternative to a cross-encoder for reranking.\n",
    "quant": "# Quantization\n\nQuantization is an alternative to distillation for small models.\n",
    "misc": "# Misc\n\nCaching mitigates latency in serving systems.\n",
}
PAIRS = {
    "dpo": ("Direct preference optimization", "RLHF"),
    "rerank": ("LLM judge", "cross-encoder"),
    "quant": ("Quantization", "distillation"),
}


def drop(f, slug: str, label: str = "is_an_alternative_to") -> DroppedCandidate:
    """A candidate the construction loop dropped because the relation was unknown."""
    doc = graph.source_import(slug=slug, title=slug, text=LESSONS[slug], acting_user=None).source
    run = AgentRun.objects.filter(agent="construct").first() or agent_run_create(
        agent=AgentRun.Agent.CONSTRUCT
    )
    sentence = LESSONS[slug].splitlines()[-1]
    source, target = PAIRS.get(slug, ("Caching", "latency"))
    return DroppedCandidate.objects.create(
        run=run,
        revision=doc.current_revision,
        reason="unknown_relation",
        relation_label=label,
        candidate={
            "source": source,
            "target": target,
            "relation": label.replace("_", " "),
            "confidence": 0.8,
            "reason": "The lesson says so.",
            "evidence": sentence,
        },
    )


def discover(provider: str = "offline") -> AgentRun:
    run = agent_run_create(agent=AgentRun.Agent.DISCOVER, provider=provider)
    return discover_run(run, provider=provider)


@pytest.fixture
def recurring(f):
    """The same missing relation in three lessons, with two spellings, and a one-off."""
    drop(f, "dpo")
    drop(f, "rerank", label="alternative_to")
    drop(f, "quant")
    drop(f, "misc", label="mitigates")


def test_a_recurring_unknown_relation_becomes_one_relation_type_proposal(recurring):
    """Three sentences, two spellings, three lessons: one add_relation_type proposal."""
    run = discover()
    assert run.status == "succeeded"
    (p,) = Proposal.objects.filter(kind="add_relation_type")
    payload = p.payload
    assert payload["key"] == "alternative_to" and payload["symmetric"] is True
    assert "is an alternative to" in payload["verb"]
    assert {e["source_slug"] for e in payload["examples"]} == {"dpo", "rerank", "quant"}
    assert set(payload["labels"]) >= {"is_an_alternative_to", "alternative_to"}
    assert "3" in p.reason and p.origin.agent_run == run
    assert run.stats["relation_proposals"] == 1


def test_discovery_proposes_nothing_twice_and_nothing_below_the_threshold(recurring, settings):
    """Running again adds nothing; a relation seen once is not proposed."""
    discover()
    discover()
    assert Proposal.objects.filter(kind="add_relation_type").count() == 1
    assert not Proposal.objects.filter(payload__key="mitigates").exists()


def test_accepting_the_relation_type_requeues_the_dropped_edges(
    recurring, f, django_capture_on_commit_callbacks
):
    """A curator accepts; the type exists and the three dropped edges reach the queue."""
    discover()
    p = Proposal.objects.get(kind="add_relation_type")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        decisions.proposal_accept(proposal_id=p.pk, acting_user=f.user("cora", role="curator"))
    assert len(callbacks) >= 1  # the requeue waits for the decision to commit
    relation = RelationType.objects.get(key="alternative_to")
    assert relation.active and relation.symmetric
    edges = Proposal.objects.filter(kind="add_edge", relation_key="alternative_to")
    assert edges.count() == 3
    assert {e.document.slug for e in edges} == {"dpo", "rerank", "quant"}
    assert all(e.evidence_quote for e in edges)
    assert (
        DroppedCandidate.objects.filter(
            relation_label__in=["is_an_alternative_to", "alternative_to"], requeued_at__isnull=True
        ).count()
        == 0
    )
    requeue = AgentRun.objects.get(trigger="requeue")
    assert requeue.status == "succeeded"
    # Idempotent: asking again proposes nothing new.
    assert requeue_dropped_for(relation_key="alternative_to") == 0


def test_a_requeue_missed_at_accept_time_is_done_by_the_next_discovery(recurring, f):
    """If the queue was down when the type was accepted, discovery catches up."""
    discover()
    p = Proposal.objects.get(kind="add_relation_type")
    graph.relation_type_create(
        key="alternative_to",
        label="Alternative to",
        verb="is an alternative to",
        directed=False,
        symmetric=True,
        acting_user=None,
    )
    Proposal.objects.filter(pk=p.pk).update(status="accepted", decided_at=p.created_at)
    run = discover()
    edges = Proposal.objects.filter(kind="add_edge", relation_key="alternative_to")
    assert edges.count() == 3
    # The edges and the concepts they need (new names), all from the requeue run.
    requeued = Proposal.objects.filter(origin__agent_run__trigger="requeue")
    assert run.stats["requeued"] == requeued.count() == 9
    assert set(requeued.values_list("kind", flat=True)) == {"add_edge", "add_concept"}


def test_with_the_openai_provider_the_model_names_the_relation(recurring, settings, fake_llm):
    """The model's label, verb, description and shape replace the offline guesses."""
    settings.OPENAI_BASE_URL = fake_llm.base_url
    settings.OPENAI_API_KEY = "k"
    settings.KG_LLM_MODEL = "fake"
    fake_llm.push(
        reply(
            {
                "label": "Substitutes for",
                "verb": "can substitute for",
                "description": "Either can do the job of the other.",
                "symmetric": True,
                "acyclic": False,
            },
            prompt_tokens=50,
            completion_tokens=20,
        )
    )
    run = discover(provider="openai")
    (p,) = Proposal.objects.filter(kind="add_relation_type")
    assert p.payload["key"] == "substitutes_for" and p.payload["verb"] == "can substitute for"
    assert run.llm_usage["calls"] == 1 and run.llm_usage["total_tokens"] == 70
    sent = fake_llm.requests[0]["messages"][1]["content"]
    assert "Direct preference optimization is an alternative to RLHF" in sent


def test_a_relation_the_model_renames_to_a_rejected_one_is_not_proposed_again(
    recurring, settings, fake_llm
):
    """The model's name is checked against decided proposals too, not only our draft's."""
    settings.OPENAI_BASE_URL = fake_llm.base_url
    settings.OPENAI_API_KEY = "k"
    settings.KG_LLM_MODEL = "fake"
    answer = {
        "label": "Substitutes for",
        "verb": "can substitute for",
        "description": "Either can do the job of the other.",
        "symmetric": True,
        "acyclic": False,
    }
    fake_llm.push(reply(answer))
    discover(provider="openai")
    (first,) = Proposal.objects.filter(kind="add_relation_type")
    Proposal.objects.filter(pk=first.pk).update(status="rejected", decided_at=first.created_at)
    fake_llm.push(reply(answer))
    run = discover(provider="openai")
    assert run.status == "succeeded" and run.stats["relation_proposals"] == 0
    assert Proposal.objects.filter(kind="add_relation_type").count() == 1


def test_a_broken_model_answer_keeps_the_offline_draft(recurring, settings, fake_llm):
    """If the model cannot describe the relation, the offline draft is proposed."""
    settings.OPENAI_BASE_URL = fake_llm.base_url
    settings.OPENAI_API_KEY = "k"
    settings.KG_LLM_VALIDATION_RETRIES = 0
    fake_llm.push(reply("not json at all"))
    run = discover(provider="openai")
    assert run.status == "succeeded"
    (p,) = Proposal.objects.filter(kind="add_relation_type")
    assert p.payload["key"] == "alternative_to"


def test_discover_command_prints_json(recurring):
    """manage.py discover --json lists the proposal."""
    out = io.StringIO()
    call_command("discover", "--json", stdout=out)
    report = json.loads(out.getvalue())
    (p,) = report["proposals"]
    assert p["kind"] == "add_relation_type" and p["relation"] == "alternative_to"
