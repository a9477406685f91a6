"""The self-healing agent: planted problems are found, clean data yields nothing."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.utils import timezone

from kgreview.agents.heal import heal_run, orphan_concepts
from kgreview.agents.models import AgentRun
from kgreview.agents.runs import agent_run_create
from kgreview.graph import services as graph
from kgreview.graph.models import Edge
from kgreview.review.models import Proposal

pytestmark = pytest.mark.django_db

V1 = (
    "Before learning vector search you should understand embeddings.\n"
    "Chunking is part of retrieval-augmented generation.\n"
)
V2 = "Before learning vector search you should understand embeddings.\nNothing else.\n"


def heal() -> AgentRun:
    run = agent_run_create(agent=AgentRun.Agent.HEAL, trigger=AgentRun.Trigger.CLI)
    return heal_run(run)


def raw_edge(f, src, dst, rel="prerequisite", confidence=0.9):
    """An edge written without the services' checks, as imported legacy data would be."""
    now = timezone.now()
    return Edge.objects.create(
        source=src,
        target=dst,
        relation=f.relation(rel),
        is_symmetric=False,
        confidence=confidence,
        reason="Imported.",
        valid_at=now,
        recorded_at=now,
    )


def test_clean_graph_yields_no_proposals(f):
    """Distinct concepts, an acyclic graph and evidence that is still there: nothing to do."""
    doc = f.lesson(text=V1)
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    f.edge(emb, vs, evidence=f.evidence(doc.current_revision, V1.splitlines()[0]))
    f.edge(f.concept("Tokenization"), emb)
    run = heal()
    assert run.status == "succeeded" and run.progress_done == run.progress_total == 4
    assert not Proposal.objects.exists()
    assert run.stats["cycles"] == 0 and run.stats["duplicate_pairs"] == 0


def test_planted_duplicates_become_merge_proposals_naming_the_survivor(f):
    """Plural variants and abbreviations are proposed; the better-connected one survives."""
    big = f.concept("Vector database")
    small = f.concept("Vector databases")
    for other in ("Embeddings", "ANN", "Metadata filtering"):
        f.edge(f.concept(other), big, "part_of")
    rag = f.concept("Retrieval-augmented generation")
    abbr = f.concept("RAG")
    f.edge(rag, f.concept("LLM"), "applies_to")
    run = heal()
    merges = {
        (p.payload["survivor_id"], p.payload["loser_id"]): p
        for p in Proposal.objects.filter(kind="merge_concepts")
    }
    assert (big.pk, small.pk) in merges and (rag.pk, abbr.pk) in merges
    plural = merges[(big.pk, small.pk)]
    assert plural.payload["score"] >= 90 and "kept" in plural.payload["why"]
    assert plural.flags == ["duplicate"] and plural.agent_run == run
    assert "abbreviat" in merges[(rag.pk, abbr.pk)].reason


def test_names_differing_only_in_a_number_are_never_proposed(f):
    """GPT-3 and GPT-4 are different models, however alike the names."""
    f.concept("GPT-3")
    f.concept("GPT-4")
    f.concept("Llama 2 chat")
    f.concept("Llama 3 chat")
    heal()
    assert not Proposal.objects.filter(kind="merge_concepts").exists()


def test_a_planted_cycle_proposes_retiring_its_weakest_edge_with_the_whole_cycle(f):
    """A → B → C → A: the weakest edge is proposed for invalidation, the cycle in words."""
    a, b, c = f.concept("Alpha"), f.concept("Beta"), f.concept("Gamma")
    e1 = f.edge(a, b, confidence=0.9)
    e2 = f.edge(b, c, confidence=0.8)
    weak = raw_edge(f, c, a, confidence=0.4)
    heal()
    (p,) = Proposal.objects.filter(kind="invalidate_edge")
    assert p.payload["edge_id"] == weak.pk and p.payload["reason_code"] == "cycle"
    assert set(p.payload["cycle_edge_ids"]) == {e1.pk, e2.pk, weak.pk}
    assert "Alpha" in p.reason and "Gamma" in p.reason and "0.40" in p.reason
    assert "contradiction" in p.flags


def test_a_vanished_quote_proposes_invalidation_of_its_edge(f):
    """Revision 2 dropped the sentence an active edge quoted."""
    doc = f.lesson(slug="rag", text=V1)
    chunking, rag = f.concept("Chunking"), f.concept("Retrieval-augmented generation")
    gone = f.edge(
        chunking, rag, "part_of", evidence=f.evidence(doc.current_revision, V1.splitlines()[1])
    )
    kept = f.edge(
        f.concept("Embeddings"),
        f.concept("Vector search"),
        evidence=f.evidence(doc.current_revision, V1.splitlines()[0]),
    )
    graph.source_import(slug="rag", title="RAG", text=V2, acting_user=None)
    run = heal()
    (p,) = Proposal.objects.filter(kind="invalidate_edge")
    assert p.payload == {"edge_id": gone.pk, "reason_code": "evidence_gone", "cycle_edge_ids": []}
    assert "no longer appears in revision 2" in p.reason
    assert run.stats["evidence_gone"] == 1 and kept.pk != gone.pk


def test_a_fact_still_supported_by_an_equivalent_edge_is_kept(f):
    """Support counting: B builds on A still stands, so A-before-B is not proposed away."""
    doc = f.lesson(slug="rag", text=V1)
    other = f.lesson(slug="other", text="Retrieval-augmented generation builds on chunking.\n")
    chunking, rag = f.concept("Chunking"), f.concept("Retrieval-augmented generation")
    f.edge(
        chunking, rag, "prerequisite", evidence=f.evidence(doc.current_revision, V1.splitlines()[1])
    )
    f.edge(
        rag,
        chunking,
        "builds_on",
        evidence=f.evidence(
            other.current_revision, "Retrieval-augmented generation builds on chunking."
        ),
    )
    graph.source_import(slug="rag", title="RAG", text=V2, acting_user=None)
    run = heal()
    assert not Proposal.objects.filter(kind="invalidate_edge").exists()
    assert run.stats["evidence_gone"] == 1 and run.stats["still_supported"] == 1


def test_orphans_are_counted_for_curators(f):
    """Concepts without active edges are listed, not proposed."""
    f.edge(f.concept("A1"), f.concept("B1"))
    lonely = f.concept("Lonely")
    run = heal()
    assert run.stats["orphans"] == 1
    assert list(orphan_concepts()) == [lonely]


def test_running_twice_queues_nothing_new_and_rejected_merges_stay_rejected(f):
    """Idempotent: open proposals are not repeated; a rejected merge is not proposed again."""
    f.concept("Vector database")
    f.concept("Vector databases")
    heal()
    (p,) = Proposal.objects.filter(kind="merge_concepts")
    heal()
    assert Proposal.objects.filter(kind="merge_concepts").count() == 1
    from kgreview.review.decisions import proposal_reject

    proposal_reject(
        proposal_id=p.pk,
        reviewer=f.user("c", role="curator"),
        reason_code="other",
        note="Different things here.",
    )
    heal()
    assert Proposal.objects.filter(kind="merge_concepts").count() == 1


def test_cancel_stops_between_steps(f):
    """A cancel request stops the run at the next step boundary, with what it found."""
    f.concept("Vector database")
    f.concept("Vector databases")
    run = agent_run_create(agent=AgentRun.Agent.HEAL)
    AgentRun.objects.filter(pk=run.pk).update(cancel_requested=True)
    run.refresh_from_db()
    run = heal_run(run)
    assert run.status == "cancelled" and run.finished_at is not None
    assert run.progress_done == 0


def test_heal_command_prints_the_run_and_its_proposals_as_json(f):
    """manage.py heal --json has the same shape as construct's."""
    f.concept("Vector database")
    f.concept("Vector databases")
    out = io.StringIO()
    call_command("heal", "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert set(report) == {"run", "proposals", "dropped"}
    (p,) = report["proposals"]
    assert p["kind"] == "merge_concepts" and {p["source"], p["target"]} == {
        "Vector database",
        "Vector databases",
    }


def test_the_cycle_card_shows_every_edge_of_the_cycle_with_its_evidence(f, client):
    """The reviewer sees A → B → C → A edge by edge, quotes included, the weakest marked."""
    from django.urls import reverse

    doc = f.lesson(slug="cyc", text="Alpha comes first. Beta follows Alpha. Gamma needs Beta.\n")
    rev = doc.current_revision
    a, b, c = f.concept("Alpha"), f.concept("Beta"), f.concept("Gamma")
    f.edge(a, b, confidence=0.9, evidence=f.evidence(rev, "Beta follows Alpha."))
    f.edge(b, c, confidence=0.8, evidence=f.evidence(rev, "Gamma needs Beta."))
    weak = raw_edge(f, c, a, confidence=0.4)
    heal()
    (p,) = Proposal.objects.filter(kind="invalidate_edge")
    client.force_login(f.user("rita", role="reviewer"))
    html = client.get(reverse("review:proposal", args=[p.pk]), follow=True).content.decode()
    assert 'aria-label="The cycle"' in html and html.count("data-edge=") == 3
    assert "<mark>Beta follows Alpha.</mark>" in html and "<mark>Gamma needs Beta.</mark>" in html
    assert f'class="weakest" data-edge="{weak.pk}"' in html
    assert "No quoted evidence: Imported." in html
