"""Queueing proposals: validation, the confidence gate and de-duplication."""

from __future__ import annotations

import pytest
from django.utils import timezone

from kgreview.core.errors import DuplicateProposal, EvidenceMismatch, ValidationFailed
from kgreview.graph.services import Evidence
from kgreview.review.models import Proposal
from kgreview.review.services import proposal_create, proposal_dedup_key

pytestmark = pytest.mark.django_db

EDGE = {
    "source": {"name": "Embeddings", "match": "new"},
    "target": {"name": "Vector search", "match": "new"},
    "relation": "prerequisite",
}


def test_proposal_above_the_gate_is_pending(settings):
    """Confidence at or above KG_CONFIDENCE_GATE queues as pending."""
    settings.KG_CONFIDENCE_GATE = 0.6
    p = proposal_create(kind="add_edge", payload=EDGE, confidence=0.6, reason="Stated.")
    assert p.status == "pending" and "below_gate" not in p.flags


def test_proposal_below_the_gate_is_held_and_flagged(settings):
    """Below the gate a proposal waits as held, flagged below_gate."""
    settings.KG_CONFIDENCE_GATE = 0.6
    p = proposal_create(kind="add_edge", payload=EDGE, confidence=0.59, flags=["new_concept"])
    assert p.status == "held"
    assert p.flags == ["below_gate", "new_concept"]


def test_the_same_open_proposal_is_never_queued_twice():
    """A second identical proposal is refused and names the first."""
    first = proposal_create(kind="add_edge", payload=EDGE, confidence=0.9)
    with pytest.raises(DuplicateProposal, match=f"#{first.pk}"):
        proposal_create(kind="add_edge", payload=EDGE, confidence=0.8)
    assert Proposal.objects.count() == 1


def test_dedup_key_ignores_case_spacing_and_symmetric_order():
    """Names are normalised; a symmetric relation's ends are ordered."""
    a = proposal_dedup_key(kind="add_concept", payload={"name": "Vector  Search"})
    b = proposal_dedup_key(kind="add_concept", payload={"name": "vector search"})
    assert a == b
    sym = {**EDGE, "relation": "contrasts_with"}
    rev = {**sym, "source": EDGE["target"], "target": EDGE["source"]}
    assert proposal_dedup_key(kind="add_edge", payload=sym) == proposal_dedup_key(
        kind="add_edge", payload=rev
    )
    directed_rev = {**EDGE, "source": EDGE["target"], "target": EDGE["source"]}
    assert proposal_dedup_key(kind="add_edge", payload=EDGE) != proposal_dedup_key(
        kind="add_edge", payload=directed_rev
    )


def test_a_closed_proposal_does_not_block_a_new_one():
    """Once decided, the same change may be proposed again (e.g. with new evidence)."""
    first = proposal_create(kind="add_concept", payload={"name": "LoRA"}, confidence=0.9)
    Proposal.objects.filter(pk=first.pk).update(status="rejected", decided_at=timezone.now())
    second = proposal_create(kind="add_concept", payload={"name": "LoRA"}, confidence=0.9)
    assert second.pk != first.pk


def test_invalid_payload_and_confidence_are_refused():
    """Nothing malformed reaches the queue."""
    with pytest.raises(ValidationFailed):
        proposal_create(kind="add_edge", payload={"relation": "prerequisite"}, confidence=0.9)
    with pytest.raises(ValidationFailed, match="between 0 and 1"):
        proposal_create(kind="add_concept", payload={"name": "X"}, confidence=1.01)
    assert not Proposal.objects.exists()


def test_proposal_evidence_must_quote_its_revision(f):
    """A proposal's evidence is checked against the revision text like an edge's."""
    rev = f.source(text="Embeddings come before vector search.\n").current_revision
    good = f.evidence(rev, "Embeddings come before vector search.")
    p = proposal_create(kind="add_edge", payload=EDGE, confidence=0.9, evidence=good)
    assert p.evidence_quote == "Embeddings come before vector search."
    bad = Evidence(revision=rev, start=0, end=4, quote="Nope")
    with pytest.raises(EvidenceMismatch):
        proposal_create(kind="add_concept", payload={"name": "Y"}, confidence=0.9, evidence=bad)


def test_a_merge_naming_a_missing_concept_is_refused_in_words(f):
    """No foreign-key error at commit: the service says which concept does not exist."""
    a = f.concept("Fine-tuning")
    with pytest.raises(ValidationFailed, match="do not exist: #999999"):
        proposal_create(
            kind="merge_concepts",
            payload={"survivor_id": a.pk, "loser_id": 999999, "why": "Spelling."},
            confidence=0.9,
        )
    assert not Proposal.objects.exists()


def test_merge_and_edge_proposals_link_the_concepts_they_touch(f):
    """A merge links loser and survivor; an edge retirement links the edge's ends and
    relation, so the queue names them and a concept's page finds the proposal."""
    a, b = f.concept("Fine-tuning"), f.concept("Finetuning")
    edge = f.edge(a, b, "builds_on")
    merge = proposal_create(
        kind="merge_concepts",
        payload={"survivor_id": a.pk, "loser_id": b.pk, "why": "Spelling."},
        confidence=0.9,
    )
    retire = proposal_create(
        kind="invalidate_edge",
        payload={"edge_id": edge.pk, "reason_code": "cycle"},
        confidence=0.7,
    )
    assert (merge.source_concept_id, merge.target_concept_id) == (b.pk, a.pk)
    assert (retire.source_concept_id, retire.target_concept_id) == (a.pk, b.pk)
    assert retire.relation_id == edge.relation_id
