"""What stands in the way of accepting an open proposal, in the words a refusal would use.

The card shows these before a key is pressed; ``reconcile`` keeps the queue free of them,
and the tests use them to check that it did.
"""

from __future__ import annotations

from construction.keys import concept_dedup_key
from kgreview.graph import pattern_book
from kgreview.graph.models import Concept, ConceptAlias, Edge, RelationType
from kgreview.review.kinds import kind_of
from kgreview.review.kinds.add_concept import AddConceptKind
from kgreview.review.kinds.base import BlockerReads
from kgreview.review.models import OPEN_STATUSES, Proposal


def proposal_blockers(proposal: Proposal, *, facts=None) -> list[str]:
    """Why this open proposal cannot be accepted as it stands, in words (none: it can).

    The card shows these, and accepting refuses with the same words. The queue is kept
    free of them by ``reconcile``; this is the check that it worked. ``facts``: what the
    card already knows of the edges holding facts (``BlockerReads.facts``).
    """
    return open_proposal_blockers([proposal], facts=facts).get(proposal.pk, [])


def pattern_blocked(proposal: Proposal, *, facts=None, holders=None) -> tuple[list[str], bool]:
    """``proposal_blockers``, and whether a relation's pattern is among them (a curator
    may then accept by widening the pattern, ``review.decide.widen``)."""
    reads = BlockerReads(facts=dict(facts or {}), holders=dict(holders or {}))
    words = open_proposal_blockers([proposal], reads=reads).get(proposal.pk, [])
    return words, proposal.pk in reads.pattern_refused


def open_proposal_blockers(
    proposals, *, facts=None, reads: BlockerReads | None = None
) -> dict[int, list[str]]:
    """``proposal_blockers`` for many open proposals, in a handful of queries: each kind
    says which rows it needs, they are read at once, then each kind says its blockers."""
    proposals = [p for p in proposals if p.is_open]
    reads = reads if reads is not None else BlockerReads(facts=dict(facts or {}))
    for p in proposals:
        kind_of(p).blocker_reads(p.payload, reads)
    reads.needed = Proposal.objects.in_bulk(reads.needed_ids) if reads.needed_ids else {}
    reads.concept_ids |= {n.concept_id for n in reads.needed.values() if n.concept_id}
    # Concepts and relations a card loaded with its proposal are not read again.
    for p in proposals:
        for attr in ("source_concept", "target_concept"):
            if getattr(Proposal, attr).is_cached(p) and getattr(p, attr) is not None:
                reads.concepts[getattr(p, attr).pk] = getattr(p, attr)
        if Proposal.relation.is_cached(p) and p.relation is not None:
            reads.relations[p.relation.key] = p.relation
    missing = reads.concept_ids - set(reads.concepts)
    if missing:
        reads.concepts.update(Concept.objects.in_bulk(missing))
    if reads.relation_keys - set(reads.relations):
        reads.relations.update(
            {r.key: r for r in RelationType.objects.filter(key__in=reads.relation_keys)}
        )
    reads.edges = Edge.objects.in_bulk(reads.edge_ids) if reads.edge_ids else {}
    # The patterns of the relations asked, unless the card's query found them open.
    known_open = {
        p.relation_id for p in proposals if getattr(p, "relation_patterned", None) is False
    }
    wanted = {r.pk for key, r in reads.relations.items() if key in reads.pattern_keys} - known_open
    if wanted:
        reads.patterns = pattern_book.load(wanted)
    out: dict[int, list[str]] = {}
    for p in proposals:
        words = kind_of(p).blockers(p, reads)
        if words:
            out[p.pk] = words
    return out


def twin_concept_proposals() -> list[Proposal]:
    """Open add_concept proposals whose name already belongs to an active concept: the
    twins ``reconcile`` supersedes when a concept comes into being (should be none)."""
    keys = {
        concept_dedup_key(name)
        for name in ConceptAlias.objects.filter(concept__status="active").values_list(
            "name", flat=True
        )
    }
    return [
        p
        for p in Proposal.objects.filter(kind=AddConceptKind.key, status__in=OPEN_STATUSES)
        if p.dedup_key in keys
    ]
