"""Database constraints hold even when code bypasses the services."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from kgreview.agents.models import AgentRun
from kgreview.graph.models import Concept, ConceptAlias, Edge, RelationType, SourceRevision
from kgreview.review.models import Proposal

pytestmark = pytest.mark.django_db


def raises_integrity(fn):
    with pytest.raises(IntegrityError), transaction.atomic():
        fn()


def raw_edge(src, dst, rel, **kw):
    now = timezone.now()
    values = dict(
        source=src,
        target=dst,
        relation=rel,
        is_symmetric=rel.symmetric,
        confidence=0.9,
        reason="because",
        valid_at=now,
        recorded_at=now,
    )
    values.update(kw)
    return Edge.objects.create(**values)


def test_seeded_vocabulary_has_the_six_starting_relations():
    """The data migration seeds exactly the design's starting vocabulary."""
    rels = {r.key: r for r in RelationType.objects.all()}
    assert set(rels) == {
        "prerequisite",
        "builds_on",
        "part_of",
        "contrasts_with",
        "applies_to",
        "related",
    }
    assert {k for k, r in rels.items() if r.acyclic} == {"prerequisite", "builds_on", "part_of"}
    assert {k for k, r in rels.items() if r.symmetric} == {"contrasts_with", "related"}
    assert all(r.directed != r.symmetric and r.active for r in rels.values())


def test_concept_names_are_unique_case_insensitively():
    """Two concepts cannot share a name that differs only in case."""
    Concept.objects.create(name="Vector search")
    raises_integrity(lambda: Concept.objects.create(name="VECTOR SEARCH"))


def test_alias_names_are_unique_case_insensitively_across_concepts(f):
    """No alias may repeat another concept's canonical name or alias, in any case."""
    rag = f.concept("Retrieval-augmented generation", aliases=["RAG"])
    other = f.concept("Fine-tuning")
    raises_integrity(lambda: ConceptAlias.objects.create(concept=other, name="rag"))
    raises_integrity(
        lambda: ConceptAlias.objects.create(concept=other, name="retrieval-AUGMENTED generation")
    )
    assert rag.aliases.count() == 2


def test_a_concept_has_at_most_one_canonical_name_row(f):
    """The canonical alias row is unique per concept."""
    c = f.concept("Embeddings")
    raises_integrity(
        lambda: ConceptAlias.objects.create(concept=c, name="Embedding", kind="canonical")
    )


def test_merged_status_requires_a_survivor():
    """A concept is merged exactly when it points at a survivor and has a merge time."""
    c = Concept.objects.create(name="Orphan")
    c.status = "merged"
    raises_integrity(lambda: c.save())
    other = Concept.objects.create(name="Target")
    c2 = Concept.objects.create(name="Half")
    c2.merged_into = other
    raises_integrity(lambda: c2.save())


def test_relation_type_shape_is_checked():
    """Directed xor symmetric; only a directed relation may be acyclic; retired has a time."""
    raises_integrity(
        lambda: RelationType.objects.create(
            key="both", label="Both", verb="x", directed=True, symmetric=True
        )
    )
    raises_integrity(
        lambda: RelationType.objects.create(
            key="loop", label="Loop", verb="x", directed=False, symmetric=True, acyclic=True
        )
    )
    raises_integrity(
        lambda: RelationType.objects.create(key="gone", label="Gone", verb="x", active=False)
    )


def test_one_active_edge_per_triple(f):
    """The same directed fact cannot be active twice; retired copies may repeat it."""
    a, b = f.concept("A"), f.concept("B")
    rel = f.relation("prerequisite")
    first = raw_edge(a, b, rel)
    raises_integrity(lambda: raw_edge(a, b, rel))
    first.status = "invalidated"
    first.invalid_at = timezone.now()
    first.save()
    raw_edge(a, b, rel)
    assert Edge.objects.filter(source=a, target=b).count() == 2


def test_symmetric_relation_allows_one_active_edge_per_unordered_pair(f):
    """A contrasts with B and B contrasts with A are the same active fact."""
    a, b = f.concept("A"), f.concept("B")
    contrasts = f.relation("contrasts_with")
    raw_edge(a, b, contrasts)
    raises_integrity(lambda: raw_edge(b, a, contrasts))


def test_directed_relation_allows_both_directions(f):
    """For a directed relation the reverse edge is a different fact (cycles are a service check)."""
    a, b = f.concept("A"), f.concept("B")
    applies = f.relation("applies_to")
    forward = raw_edge(a, b, applies)
    backward = raw_edge(b, a, applies)
    assert forward.pk != backward.pk
    assert Edge.objects.filter(relation=applies, status=Edge.Status.ACTIVE).count() == 2


def test_edge_checks_self_loop_confidence_weight_reason(f):
    """Self-loops, confidence outside 0..1, negative weight and empty reasons are refused."""
    a, b = f.concept("A"), f.concept("B")
    rel = f.relation("related")
    raises_integrity(lambda: raw_edge(a, a, rel))
    raises_integrity(lambda: raw_edge(a, b, rel, confidence=1.5))
    raises_integrity(lambda: raw_edge(a, b, rel, confidence=-0.1))
    raises_integrity(lambda: raw_edge(a, b, rel, weight=-1))
    raises_integrity(lambda: raw_edge(a, b, rel, reason=""))


def test_edge_evidence_is_all_or_nothing(f):
    """Evidence needs a revision and a non-empty span together, or none of them."""
    a, b = f.concept("A"), f.concept("B")
    rel = f.relation("related")
    rev = f.source().current_revision
    raises_integrity(lambda: raw_edge(a, b, rel, evidence_revision=rev))
    raises_integrity(lambda: raw_edge(a, b, rel, evidence_start=0, evidence_end=5))
    raises_integrity(
        lambda: raw_edge(a, b, rel, evidence_revision=rev, evidence_start=5, evidence_end=5)
    )
    raw_edge(
        a, b, rel, evidence_revision=rev, evidence_start=0, evidence_end=10, evidence_quote="x"
    )


def test_edge_status_and_invalid_at_go_together(f):
    """An active edge has no invalid_at; a retired one must have it."""
    a, b = f.concept("A"), f.concept("B")
    rel = f.relation("related")
    raises_integrity(lambda: raw_edge(a, b, rel, invalid_at=timezone.now()))
    raises_integrity(lambda: raw_edge(a, b, rel, status="invalidated"))


def test_an_edge_is_superseded_by_at_most_one_newer_edge(f):
    """History is a chain: two rows cannot both supersede the same edge."""
    a, b, c = f.concept("A"), f.concept("B"), f.concept("C")
    rel = f.relation("related")
    old = raw_edge(a, b, rel, status="superseded", invalid_at=timezone.now())
    raw_edge(a, c, rel, supersedes=old)
    raises_integrity(lambda: raw_edge(b, c, rel, supersedes=old))


def test_revision_numbers_are_unique_per_source(f):
    """A source cannot have two revisions with the same number."""
    src = f.source()
    raises_integrity(
        lambda: SourceRevision.objects.create(
            source=src, number=1, title="t", text="x", sha256="0" * 64
        )
    )


def test_open_proposals_have_unique_dedup_keys_but_closed_ones_may_repeat():
    """The same change cannot wait twice; once decided, it may be proposed again."""
    base = dict(kind="add_concept", payload={"name": "X"}, confidence=0.9, dedup_key="k")
    first = Proposal.objects.create(**base)
    raises_integrity(lambda: Proposal.objects.create(**base))
    raises_integrity(lambda: Proposal.objects.create(**base, status="held"))
    first.status = "rejected"
    first.decided_at = timezone.now()
    first.save()
    Proposal.objects.create(**base)


def test_proposal_decided_time_matches_status():
    """Closed proposals carry a decision time, open ones do not."""
    base = dict(kind="add_concept", payload={"name": "X"}, confidence=0.9)
    raises_integrity(lambda: Proposal.objects.create(**base, dedup_key="a", status="accepted"))
    raises_integrity(
        lambda: Proposal.objects.create(**base, dedup_key="b", decided_at=timezone.now())
    )
    raises_integrity(lambda: Proposal.objects.create(**{**base, "confidence": 2}, dedup_key="c"))


def test_agent_run_progress_cannot_exceed_total_and_final_runs_have_an_end():
    """Progress stays within its total; finished runs carry finished_at."""
    raises_integrity(lambda: AgentRun.objects.create(agent="construct", progress_done=3))
    raises_integrity(lambda: AgentRun.objects.create(agent="construct", status="succeeded"))
    run = AgentRun.objects.create(agent="construct", progress_total=3, progress_done=1)
    assert run.progress_percent == 33
