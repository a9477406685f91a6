"""CONSTRUCT's writes for one source: what the pure loop returned becomes proposals
(concepts first, so edges can name the proposals they wait for), dropped candidates with
their reasons, contradiction links between proposals, and the concepts the source grounds.
Called inside the caller's transaction, which holds the ``construct`` mutex.
"""

from __future__ import annotations

from collections.abc import Iterable

from construction import keys
from construction.types import EdgeDraft, Resolution, Span
from kgreview.core.errors import DuplicateProposal, StateConflict
from kgreview.graph.models import SourceConcept, SourceRevision
from kgreview.graph.services import Evidence
from kgreview.review.models import Proposal
from kgreview.review.services import (
    ProposalSpec,
    proposal_flag_conflict,
    proposals_create_many,
)

from .models import AgentRun, DroppedCandidate


def _evidence(revision: SourceRevision, span: Span | None) -> Evidence | None:
    if span is None:
        return None
    return Evidence(revision=revision, start=span.start, end=span.end, quote=span.quote)


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


def persist_result(*, run: AgentRun, revision: SourceRevision, result) -> dict:
    source = revision.source
    stats: dict = {"proposals": {}, "dropped": {}, "flagged_existing": 0}
    concept_specs = [
        ProposalSpec(
            kind="add_concept",
            payload={
                "name": draft.name,
                "aliases": list(draft.aliases),
                "description": draft.description,
            },
            confidence=draft.confidence,
            reason=draft.reason,
            evidence=_evidence(revision, draft.evidence),
            flags=("new_concept",),
            dedup_key=draft.dedup_key,
            priority=_priority(draft.confidence, ()),
            agent_run=run,
            document=source,
        )
        for draft in result.concepts
    ]
    created: dict[str, Proposal] = {}
    for draft, outcome in zip(result.concepts, proposals_create_many(concept_specs), strict=True):
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

    edge_specs = [
        ProposalSpec(
            kind="add_edge",
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
            evidence=_evidence(revision, draft.evidence),
            flags=draft.flags,
            dedup_key=draft.dedup_key,
            priority=_priority(draft.confidence, draft.flags),
            agent_run=run,
            document=source,
        )
        for draft in result.edges
    ]
    invalidation_specs = [
        ProposalSpec(
            kind="invalidate_edge",
            payload={"edge_id": draft.edge_id, "reason_code": "evidence_gone"},
            confidence=draft.confidence,
            reason=draft.reason,
            dedup_key=draft.dedup_key,
            priority=_priority(draft.confidence, ()),
            agent_run=run,
            document=source,
        )
        for draft in result.invalidations
    ]
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

    # Links between drafts of this source pointed at draft positions; now they have ids.
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

    by_dedup = {p.dedup_key: p for p in edge_proposals if p is not None}
    for other_id, dedup, explanation in result.flag_existing:
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
        stats["flagged_existing"] += flagged is not None

    DroppedCandidate.objects.bulk_create(
        [
            DroppedCandidate(
                run=run,
                revision=revision,
                reason=d.reason,
                relation_label=(
                    keys.relation_key(str(d.candidate.get("relation", "")))[:100]
                    if d.reason == "unknown_relation"
                    else ""
                ),
                detail=d.detail[:500],
                candidate=d.candidate,
            )
            for d in result.dropped
        ]
    )
    for d in result.dropped:
        stats["dropped"][d.reason] = stats["dropped"].get(d.reason, 0) + 1

    if result.grounded_concepts:
        SourceConcept.objects.bulk_create(
            [
                SourceConcept(source=source, concept_id=cid, revision=revision)
                for cid in result.grounded_concepts
            ],
            update_conflicts=True,
            unique_fields=["source", "concept"],
            update_fields=["revision"],
        )
    return stats
