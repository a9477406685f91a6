"""CONSTRUCT's writes for one source: what the pure loop returned becomes proposals
(concepts first, so edges can name the proposals they wait for; then the names the
revision defines for concepts already known), dropped candidates with
their reasons, contradiction links between proposals, and the concepts the source grounds.
Called inside the caller's transaction, which holds the ``construct`` mutex.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

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
from kgreview.review.models import Proposal, ProposalOrigin
from kgreview.review.services import (
    ProposalSpec,
    proposal_add_flags,
    proposal_add_names,
    proposal_flag_conflict,
    proposals_create_many,
)

from .models import AgentRun, DroppedCandidate
from .runs import run_origin

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@dataclass(frozen=True)
class _Origin:
    """Where proposals come from: who proposed (an agent's run, or a submitter through
    the API), and the revision they quote (none for a submission without evidence)."""

    proposer: ProposalOrigin
    revision: SourceRevision | None
    run: AgentRun | None = None
    created_by: User | None = None
    # Flags every proposal from here carries besides its own (a submission's
    # ``no_evidence``, an annotation import's origin ``annotator:TOOL:WHO``).
    flags: tuple[str, ...] = ()

    def evidence(self, span: Span | None) -> Evidence | None:
        if span is None or self.revision is None:
            return None
        return Evidence(revision=self.revision, start=span.start, end=span.end, quote=span.quote)

    def fields(self) -> dict:
        """What every proposal from here carries: its origin, who made it, its document."""
        return {
            "origin": self.proposer,
            "created_by": self.created_by,
            "document": self.revision.source if self.revision is not None else None,
        }

    def defined(self, alias: str, span: Span) -> dict:
        """A name the revision defines, with its sentence, as a concept proposal keeps it."""
        return {
            "alias": alias,
            "quote": span.quote,
            "start": span.start,
            "end": span.end,
            "revision_id": self.revision.pk if self.revision is not None else None,
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


def persist_result(
    *,
    run: AgentRun,
    revision: SourceRevision,
    result: SourceResult,
    flags: tuple[str, ...] = (),
    merged_gain_flags: bool = False,
) -> dict:
    """Write what CONSTRUCT decided for one revision; counts of what was written.
    ``flags``: added to every proposal written (an annotation import's origin). With
    ``merged_gain_flags``, an open proposal that stands for a duplicate (a candidate the
    loop dropped as its twin, a draft refused as one when written) gains ``flags`` too:
    a second annotator marking what a first one's open proposal holds is merged into it
    and found by their own flag as well.

    Stats: ``proposals`` (kind -> status -> count, duplicates of open proposals left
    out), ``dropped`` (reason -> count), ``flagged_existing`` (open proposals now
    flagged as contradicted by a new one); with ``merged_gain_flags`` also ``merged``
    (the drafts refused as duplicates when written: ``{"item", "proposal_id"}``, each
    item as a dropped candidate's) and ``gained`` (each merged proposal's id ->
    ``gained`` when it now carries every flag, ``decided`` when it was decided
    meanwhile, ``full`` when it holds no more flags).
    """
    origin = _Origin(run_origin(run), revision, run=run, flags=tuple(flags))
    stats: dict = {"proposals": {}, "dropped": {}, "flagged_existing": 0}
    merged_keys: set[str] = set()
    created = _create_concepts(origin, result.concepts, stats, merged=merged_keys)
    _create_aliases(origin, result.aliases, stats)
    edges = _create_edges(origin, result, created, stats)
    edge_proposals = _queued(edges)
    _link_drafts(edge_proposals)
    stats["flagged_existing"] = _flag_existing(result.flag_existing, edge_proposals)
    _record_dropped(origin, result.dropped, stats)
    source_ground(revision, result.grounded_concepts)
    if merged_gain_flags:
        stats["merged"] = _merged(result, created, merged_keys, edges)
        ids = {d.twin_of for d in result.dropped if d.reason == "duplicate" and d.twin_of}
        ids |= {m["proposal_id"] for m in stats["merged"]}
        stats["gained"] = _gain_flags(sorted(ids), flags)
    return stats


def _merged(
    result: SourceResult,
    created: dict[str, Proposal],
    merged_keys: set[str],
    edges: list[Proposal | DuplicateProposal],
) -> list[dict]:
    """The drafts refused when written as duplicates of an open proposal, with it."""
    out = [
        {"item": {"span": draft.name}, "proposal_id": created[draft.key].pk}
        for draft in result.concepts
        if draft.key in merged_keys
    ]
    for draft, made in zip(result.edges, edges, strict=True):
        if isinstance(made, DuplicateProposal) and made.proposal_id is not None:
            out.append({"item": draft.candidate.as_json(), "proposal_id": made.proposal_id})
    return out


def _gain_flags(ids: Sequence[int], flags: Sequence[str]) -> dict[int, str]:
    """Each open proposal ``ids`` (in id order, the lock order) given ``flags``: whether
    it now carries them all (``gained``), was decided meanwhile (``decided``) or holds no
    more flags (``full``)."""
    out: dict[int, str] = {}
    for proposal_id in ids:
        proposal = proposal_add_flags(proposal_id=proposal_id, flags=flags)
        if proposal is None:
            out[proposal_id] = "decided"
        else:
            out[proposal_id] = "gained" if set(flags) <= set(proposal.flags) else "full"
    return out


@dataclass(frozen=True)
class Persisted:
    """What ``persist_submitted`` wrote: each edge draft's proposal, or the refusal naming
    the open proposal it duplicates (in draft order); each concept draft's proposal by
    its key (an open one standing for a duplicate), and the keys that were duplicates."""

    edges: list[Proposal | DuplicateProposal]
    concepts: dict[str, Proposal]
    merged_concepts: frozenset[str]
    aliases: list[Proposal | DuplicateProposal]


def persist_submitted(
    *,
    proposer: ProposalOrigin,
    created_by: User | None,
    revision: SourceRevision | None,
    result: SourceResult,
    flags: tuple[str, ...] = (),
) -> Persisted:
    """Write what the pipeline decided for a submission (``agents.submissions``): its
    new concepts, its edges and their contradictions, exactly as for a source an agent
    read, under the submitter's origin. Names the revision defines for other concepts and
    invalidations are the agents' own inferences and are not asked of a submission; its
    drops are answered to the submitter rather than recorded. ``flags`` are added to
    every proposal written (``no_evidence``). Called inside the caller's
    transaction, which holds the ``construct`` mutex."""
    origin = _Origin(proposer, revision, created_by=created_by, flags=flags)
    stats: dict = {"proposals": {}, "dropped": {}, "flagged_existing": 0}
    merged: set[str] = set()
    created = _create_concepts(origin, result.concepts, stats, merged=merged)
    aliases = _create_aliases(origin, result.aliases, stats)
    edges = _create_edges(origin, result, created, stats)
    edge_proposals = _queued(edges)
    _link_drafts(edge_proposals)
    _flag_existing(result.flag_existing, edge_proposals)
    if revision is not None:
        source_ground(revision, result.grounded_concepts)
    return Persisted(
        edges=edges, concepts=created, merged_concepts=frozenset(merged), aliases=aliases
    )


def _queued(outcomes: list[Proposal | DuplicateProposal]) -> list[Proposal | None]:
    return [None if isinstance(o, DuplicateProposal) else o for o in outcomes]


def _create_concepts(
    origin: _Origin,
    drafts: Sequence[ConceptDraft],
    stats: dict,
    *,
    merged: set[str] | None = None,
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
            flags=("new_concept", *origin.flags),
            dedup_key=draft.dedup_key,
            priority=_priority(draft.confidence, ()),
            **origin.fields(),
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
            if merged is not None:
                merged.add(draft.key)
        else:
            _tally(stats, outcome)
        created[draft.key] = outcome
    return created


def _create_aliases(
    origin: _Origin, drafts: Sequence[AliasDraft], stats: dict
) -> list[Proposal | DuplicateProposal]:
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
            flags=origin.flags,
            dedup_key=d.dedup_key,
            priority=_priority(d.confidence, ()),
            **origin.fields(),
        )
        for d in drafts
        if d.concept_id is not None
    ]
    outcomes = proposals_create_many(specs)
    for outcome in outcomes:
        if not isinstance(outcome, DuplicateProposal):
            _tally(stats, outcome)
    for draft in drafts:
        if draft.proposal_id is not None:
            proposal_add_names(
                proposal_id=draft.proposal_id,
                defined=[origin.defined(draft.alias, draft.evidence)],
            )
    return outcomes


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
        flags=(*draft.flags, *origin.flags),
        dedup_key=draft.dedup_key,
        priority=_priority(draft.confidence, draft.flags),
        **origin.fields(),
    )


def _invalidation_spec(origin: _Origin, draft: InvalidationDraft) -> ProposalSpec:
    return ProposalSpec(
        kind=InvalidateEdgeKind.key,
        payload={"edge_id": draft.edge_id, "reason_code": "evidence_gone"},
        confidence=draft.confidence,
        reason=draft.reason,
        flags=origin.flags,
        dedup_key=draft.dedup_key,
        priority=_priority(draft.confidence, ()),
        **origin.fields(),
    )


def _create_edges(
    origin: _Origin, result: SourceResult, created: dict[str, Proposal], stats: dict
) -> list[Proposal | DuplicateProposal]:
    """The ``add_edge`` and ``invalidate_edge`` proposals, in one batch; the edge
    proposals in draft order, the refusal where a draft duplicated an open proposal."""
    edge_specs = [_edge_spec(origin, draft, created) for draft in result.edges]
    invalidation_specs = [_invalidation_spec(origin, draft) for draft in result.invalidations]
    outcomes = proposals_create_many(edge_specs + invalidation_specs)
    for outcome in outcomes:
        if not isinstance(outcome, DuplicateProposal):
            _tally(stats, outcome)
    return outcomes[: len(edge_specs)]


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
