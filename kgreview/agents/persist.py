"""CONSTRUCT's writes for one source: what the pure loop returned becomes proposals
(concepts first, so edges can name the proposals they wait for; then the names the
revision defines for concepts already known), dropped candidates with
their reasons, contradiction links between proposals, and the concepts the source grounds.
Called inside the caller's transaction, which holds the ``construct`` mutex.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from construction import keys
from construction.types import (
    AliasDraft,
    ConceptDraft,
    Dropped,
    EdgeDraft,
    InvalidationDraft,
    Resolution,
    SourceResult,
    Span,
)
from kgreview.core.errors import DuplicateProposal, StateConflict
from kgreview.graph.models import SourceRevision
from kgreview.graph.services import Evidence
from kgreview.graph.sources import source_ground
from kgreview.review.kinds.add_alias import AddAliasKind
from kgreview.review.kinds.add_concept import AddConceptKind
from kgreview.review.kinds.add_edge import AddEdgeKind
from kgreview.review.kinds.invalidate_edge import InvalidateEdgeKind
from kgreview.review.models import Proposal
from kgreview.review.services import (
    ProposalSpec,
    proposal_add_names,
    proposal_flag_conflict,
    proposals_create_many,
)

from .models import AgentRun, DroppedCandidate
from .runs import run_origin


@dataclass(frozen=True)
class _Origin:
    """Where this source's proposals come from: the run, and the revision they quote."""

    run: AgentRun
    revision: SourceRevision

    def evidence(self, span: Span | None) -> Evidence | None:
        if span is None:
            return None
        return Evidence(revision=self.revision, start=span.start, end=span.end, quote=span.quote)

    def defined(self, alias: str, span: Span) -> dict:
        """A name the revision defines, with its sentence, as a concept proposal keeps it."""
        return {
            "alias": alias,
            "quote": span.quote,
            "start": span.start,
            "end": span.end,
            "revision_id": self.revision.pk,
        }


def _endpoint(res: Resolution, created: dict[str, Proposal]) -> dict:
    endpoint = {
        "name": res.canonical,
        "concept_id": res.concept_id,
        "proposal_id": res.proposal_id,
        "match": res.match,
        "score": res.score,
        "matched_name": res.matched_name,
    }
    if res.is_new and res.key in created:
        endpoint["proposal_id"] = created[res.key].pk
    return endpoint


def _conflicts_json(draft: EdgeDraft) -> list[dict]:
    out = []
    for conflict in draft.conflicts:
        for link in conflict.links:
            out.append(
                {
                    "kind": link.kind,
                    "id": link.id,
                    "source": link.source_key,
                    "relation": link.relation,
                    "target": link.target_key,
                    "rule": conflict.rule,
                    "explanation": conflict.explanation,
                }
            )
    return out


def _priority(confidence: float, flags: Iterable[str]) -> int:
    # Contradictions first: they need a person most, and they block other decisions.
    return round(confidence * 100) + (100 if "contradiction" in flags else 0)


def _tally(stats: dict, proposal: Proposal) -> None:
    slot = stats["proposals"].setdefault(proposal.kind, {})
    slot[proposal.status] = slot.get(proposal.status, 0) + 1


def persist_result(*, run: AgentRun, revision: SourceRevision, result: SourceResult) -> dict:
    """Write what CONSTRUCT decided for one revision; counts of what was written.

    Stats: ``proposals`` (kind -> status -> count, duplicates of open proposals left
    out), ``dropped`` (reason -> count) and ``flagged_existing`` (open proposals now
    flagged as contradicted by a new one).
    """
    origin = _Origin(run, revision)
    stats: dict = {"proposals": {}, "dropped": {}, "flagged_existing": 0}
    created = _create_concepts(origin, result.concepts, stats)
    _create_aliases(origin, result.aliases, stats)
    edge_proposals = _create_edges(origin, result, created, stats)
    _link_drafts(edge_proposals)
    stats["flagged_existing"] = _flag_existing(result.flag_existing, edge_proposals)
    _record_dropped(origin, result.dropped, stats)
    source_ground(revision, result.grounded_concepts)
    return stats


def _create_concepts(
    origin: _Origin, drafts: Sequence[ConceptDraft], stats: dict
) -> dict[str, Proposal]:
    """An ``add_concept`` proposal per draft, by the draft's key; a duplicate of an open
    proposal stands for it (an edge waits for that one instead)."""
    specs = [
        ProposalSpec(
            kind=AddConceptKind.key,
            payload={
                "name": draft.name,
                "aliases": list(draft.aliases)[:50],
                "description": draft.description,
                "defined": [origin.defined(d.alias, d.span) for d in draft.defined[:50]],
                **({"type_key": draft.type_key} if draft.type_key else {}),
            },
            confidence=draft.confidence,
            reason=draft.reason,
            evidence=origin.evidence(draft.evidence),
            flags=("new_concept",),
            dedup_key=draft.dedup_key,
            priority=_priority(draft.confidence, ()),
            origin=run_origin(origin.run),
            document=origin.revision.source,
        )
        for draft in drafts
    ]
    created: dict[str, Proposal] = {}
    for draft, outcome in zip(drafts, proposals_create_many(specs), strict=True):
        if isinstance(outcome, DuplicateProposal):
            if outcome.proposal_id is None:  # queued and decided while this source was read
                raise StateConflict(
                    f'The concept "{draft.name}" was proposed and decided meanwhile; '
                    "read the source again."
                )
            outcome = Proposal.objects.get(pk=outcome.proposal_id)
        else:
            _tally(stats, outcome)
        created[draft.key] = outcome
    return created


def _create_aliases(origin: _Origin, drafts: Sequence[AliasDraft], stats: dict) -> None:
    """Names the revision defines for known concepts: an ``add_alias`` proposal for a
    concept of the graph (a twin of an open one stands for it), the name added to an
    open concept proposal."""
    specs = [
        ProposalSpec(
            kind=AddAliasKind.key,
            payload={"concept_id": d.concept_id, "alias": d.alias, "name": d.name},
            confidence=d.confidence,
            reason=d.reason,
            evidence=origin.evidence(d.evidence),
            dedup_key=d.dedup_key,
            priority=_priority(d.confidence, ()),
            origin=run_origin(origin.run),
            document=origin.revision.source,
        )
        for d in drafts
        if d.concept_id is not None
    ]
    for outcome in proposals_create_many(specs):
        if not isinstance(outcome, DuplicateProposal):
            _tally(stats, outcome)
    for draft in drafts:
        if draft.proposal_id is not None:
            proposal_add_names(
                proposal_id=draft.proposal_id,
                defined=[origin.defined(draft.alias, draft.evidence)],
            )


def _edge_spec(origin: _Origin, draft: EdgeDraft, created: dict[str, Proposal]) -> ProposalSpec:
    return ProposalSpec(
        kind=AddEdgeKind.key,
        payload={
            "source": _endpoint(draft.source, created),
            "target": _endpoint(draft.target, created),
            "relation": draft.relation,
            "weight": 1.0,
            "conflicts": _conflicts_json(draft),
            "support": [
                {"start": span.start, "end": span.end, "quote": span.quote}
                for span in draft.support
            ],
        },
        confidence=draft.confidence,
        reason=draft.reason,
        evidence=origin.evidence(draft.evidence),
        flags=draft.flags,
        dedup_key=draft.dedup_key,
        priority=_priority(draft.confidence, draft.flags),
        origin=run_origin(origin.run),
        document=origin.revision.source,
    )


def _invalidation_spec(origin: _Origin, draft: InvalidationDraft) -> ProposalSpec:
    return ProposalSpec(
        kind=InvalidateEdgeKind.key,
        payload={"edge_id": draft.edge_id, "reason_code": "evidence_gone"},
        confidence=draft.confidence,
        reason=draft.reason,
        dedup_key=draft.dedup_key,
        priority=_priority(draft.confidence, ()),
        origin=run_origin(origin.run),
        document=origin.revision.source,
    )


def _create_edges(
    origin: _Origin, result: SourceResult, created: dict[str, Proposal], stats: dict
) -> list[Proposal | None]:
    """The ``add_edge`` and ``invalidate_edge`` proposals, in one batch; the edge
    proposals in draft order, ``None`` where a draft duplicated an open proposal."""
    edge_specs = [_edge_spec(origin, draft, created) for draft in result.edges]
    invalidation_specs = [_invalidation_spec(origin, draft) for draft in result.invalidations]
    outcomes = proposals_create_many(edge_specs + invalidation_specs)
    edge_proposals: list[Proposal | None] = []
    for index, outcome in enumerate(outcomes):
        if isinstance(outcome, DuplicateProposal):
            if index < len(edge_specs):
                edge_proposals.append(None)
            continue
        _tally(stats, outcome)
        if index < len(edge_specs):
            edge_proposals.append(outcome)
    return edge_proposals


def _link_drafts(edge_proposals: list[Proposal | None]) -> None:
    """Links between drafts of this source pointed at draft positions; now they have ids
    (a link to a draft that duplicated an open proposal is dropped)."""
    for proposal in edge_proposals:
        if proposal is None:
            continue
        conflicts = proposal.payload.get("conflicts") or []
        if not any(c["kind"] == "draft" for c in conflicts):
            continue
        kept = []
        for conflict in conflicts:
            if conflict["kind"] == "draft":
                other = edge_proposals[conflict["id"]]
                if other is None:
                    continue
                conflict = {**conflict, "kind": "proposal", "id": other.pk}
            kept.append(conflict)
        proposal.payload = {**proposal.payload, "conflicts": kept}
        proposal.save(update_fields=["payload"])


def _flag_existing(
    flag_existing: Iterable[tuple[int, str, str]], edge_proposals: list[Proposal | None]
) -> int:
    """Flag the open proposals a new edge proposal contradicts; how many were flagged."""
    by_dedup = {p.dedup_key: p for p in edge_proposals if p is not None}
    flagged_count = 0
    for other_id, dedup, explanation in flag_existing:
        new = by_dedup.get(dedup)
        if new is None:
            continue
        flagged = proposal_flag_conflict(
            proposal_id=other_id,
            other={
                "kind": "proposal",
                "id": new.pk,
                "rule": "contradiction",
                "explanation": explanation,
            },
        )
        flagged_count += flagged is not None
    return flagged_count


def _record_dropped(origin: _Origin, dropped: Sequence[Dropped], stats: dict) -> None:
    """A ``DroppedCandidate`` row per candidate left out, with its reason."""
    DroppedCandidate.objects.bulk_create(
        [
            DroppedCandidate(
                run=origin.run,
                revision=origin.revision,
                reason=d.reason,
                relation_label=(
                    keys.relation_key(str(d.candidate.get("relation", "")))[:100]
                    if d.reason == "unknown_relation"
                    else ""
                ),
                detail=d.detail[:500],
                candidate=d.candidate,
            )
            for d in dropped
        ]
    )
    for d in dropped:
        stats["dropped"][d.reason] = stats["dropped"].get(d.reason, 0) + 1
