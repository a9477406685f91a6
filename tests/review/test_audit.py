"""Decisions are their own record: graph changes made by deciding or undoing a proposal
(one at a time, in bulk, by hand) write no curation log row beside the Decision rows."""

from __future__ import annotations

import pytest

from kgreview.core.models import AuditEntry
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph
from kgreview.review.decide import bulk, decisions, mend, undo
from kgreview.review.decide.decisions import EndChoice
from kgreview.review.models import Decision, Proposal
from kgreview.review.services import proposal_create
from tests.review.conftest import reload

pytestmark = pytest.mark.django_db


class Log:
    """Counts the curation log rows written since ``mark()`` (after a test's setup)."""

    def __init__(self) -> None:
        self.since = 0

    def mark(self) -> None:
        self.since = AuditEntry.objects.order_by("-pk").values_list("pk", flat=True).first() or 0

    def written(self) -> int:
        return AuditEntry.objects.filter(pk__gt=self.since).count()


@pytest.fixture
def log() -> Log:
    return Log()


def test_accepting_and_undoing_an_edge_with_new_concepts_logs_nothing(f, reviewer, log):
    doc = f.lesson()
    emb = f.concept_proposal("Embeddings", doc=doc)
    vs = f.concept_proposal("Vector search", aliases=["VS"], doc=doc)
    p = f.edge_proposal(emb, vs, doc=doc)
    log.mark()
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert graph_selectors.edges_active().count() == 1
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    assert graph_selectors.edges_active().count() == 0
    assert log.written() == 0 and Decision.objects.count() == 6


def test_a_concept_proposal_for_a_known_name_adds_its_aliases_without_a_log_row(f, reviewer, log):
    emb = f.concept("Embeddings")
    p = f.concept_proposal("Embeddings", aliases=["vector embeddings"])
    log.mark()
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert emb.aliases.filter(name="vector embeddings").exists()
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    assert not emb.aliases.filter(name="vector embeddings").exists()
    assert log.written() == 0


def test_updating_invalidating_and_undoing_edges_logs_nothing(f, reviewer, log):
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    e = f.edge(emb, vs)
    log.mark()
    update = proposal_create(
        kind="update_edge",
        payload={"edge_id": e.pk, "relation": "builds_on", "swap_direction": True},
        confidence=0.9,
        reason="Direction was wrong.",
    )
    out = decisions.proposal_accept(proposal_id=update.pk, acting_user=reviewer)
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    (back,) = graph_selectors.edges_active()
    retire = proposal_create(
        kind="invalidate_edge",
        payload={"edge_id": back.pk, "reason_code": "evidence_gone"},
        confidence=0.9,
        reason="Quote vanished.",
    )
    gone = decisions.proposal_accept(proposal_id=retire.pk, acting_user=reviewer)
    assert not graph_selectors.edges_active().exists()
    undo.decisions_undo(acting_user=reviewer, batch=gone.batch)
    (again,) = graph_selectors.edges_active()
    assert (again.source, again.target, again.relation.key) == (emb, vs, "prerequisite")
    assert log.written() == 0


def test_keeping_a_contradicting_proposal_logs_no_row_for_the_edge_it_retires(f, reviewer, log):
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    old = f.edge(vs, emb)
    p = f.edge_proposal(emb, vs)
    Proposal.objects.filter(pk=p.pk).update(
        payload={**p.payload, "conflicts": [{"kind": "edge", "id": old.pk}]},
        flags=["contradiction"],
    )
    log.mark()
    out = decisions.proposal_accept_over_conflicts(proposal_id=p.pk, acting_user=reviewer)
    assert reload(old).status == "invalidated"
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    assert log.written() == 0


def test_merges_and_relation_types_decided_by_a_curator_log_nothing(f, curator, log):
    a, b, c = f.concept("Fine-tuning"), f.concept("Finetuning"), f.concept("LoRA")
    f.edge(c, b, "builds_on")
    log.mark()
    merge = proposal_create(
        kind="merge_concepts",
        payload={"survivor_id": a.pk, "loser_id": b.pk, "score": 95.0, "why": "Spelling."},
        confidence=0.9,
    )
    out = decisions.proposal_accept(proposal_id=merge.pk, acting_user=curator)
    undo.decisions_undo(acting_user=curator, batch=out.batch)
    relation = proposal_create(
        kind="add_relation_type",
        payload={
            "key": "alternative_to",
            "label": "Alternative to",
            "verb": "is an alternative to",
            "directed": False,
            "symmetric": True,
        },
        confidence=0.8,
        reason="Recurs in three lessons.",
    )
    out = decisions.proposal_accept(proposal_id=relation.pk, acting_user=curator)
    undo.decisions_undo(acting_user=curator, batch=out.batch)
    assert reload(b).status == "active"
    assert log.written() == 0


def test_concepts_curated_by_hand_are_decisions_and_log_nothing(f, curator, log):
    c = f.concept("Retrieval", aliases=["retrieval step"])
    log.mark()
    renamed = mend.concept_update_by_hand(
        acting_user=curator,
        concept_id=c.pk,
        name="RAG",
        add_aliases=["rag pipeline"],
        remove_aliases=["retrieval step"],
    )
    retired = mend.concept_update_by_hand(acting_user=curator, concept_id=c.pk, status="retired")
    undo.decisions_undo(acting_user=curator, batch=retired.batch)
    undo.decisions_undo(acting_user=curator, batch=renamed.batch)
    assert reload(c).name == "Retrieval" and reload(c).status == "active"
    assert log.written() == 0


def test_an_edge_added_and_merges_made_by_hand_log_nothing(f, curator, log):
    emb, vs, twin = f.concept("Embeddings"), f.concept("Vector search"), f.concept("Embedding")
    log.mark()
    mend.edge_add_by_hand(
        acting_user=curator,
        source=EndChoice(concept_id=emb.pk),
        target=EndChoice(concept_id=vs.pk),
        relation="prerequisite",
        note="Obvious.",
    )
    mend.concepts_merge_by_hand(acting_user=curator, survivor_id=emb.pk, loser_id=twin.pk, note="")
    assert log.written() == 0


def test_a_bulk_accept_and_its_undo_log_nothing(f, reviewer, log):
    """A concept proposal for a known name adds its alias to it inside the bulk write."""
    emb = f.concept("Embeddings")
    doc = f.lesson()
    ps = [
        f.edge_proposal(f.concept_proposal("Embeddings", aliases=["emb"], doc=doc), "RAG"),
        f.edge_proposal("Vector search", "Dense retrieval", doc=doc),
    ]
    log.mark()
    result = bulk.proposals_bulk_decide(
        acting_user=reviewer, proposal_ids=[p.pk for p in ps], action="accept"
    )
    assert result.done == [p.pk for p in ps]
    assert emb.aliases.filter(name="emb").exists()
    undo.decisions_undo(acting_user=reviewer, batch=result.batch)
    assert graph_selectors.edges_active().count() == 0
    assert log.written() == 0


def test_a_direct_unmerge_from_the_concept_page_is_logged_but_a_decided_one_is_not(f, curator, log):
    a, b = f.concept("Fine-tuning"), f.concept("Finetuning")
    graph.concept_merge(loser=b, survivor=a, acting_user=None)
    log.mark()
    undo.merge_undo(loser_id=b.pk, acting_user=curator)
    (row,) = AuditEntry.objects.filter(action="concept.unmerge")
    assert row.user == curator and log.written() == 1
    decided = mend.concepts_merge_by_hand(
        acting_user=curator, survivor_id=a.pk, loser_id=b.pk, note=""
    )
    assert decided.decision is not None
    undo.merge_undo(loser_id=b.pk, acting_user=curator)
    assert log.written() == 1
