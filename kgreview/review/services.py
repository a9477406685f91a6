"""Writes to the proposal queue. Decisions that change the graph live here too.

Locking rules: a service that changes a proposal locks its row first, then checks the
status and version it expects; a mismatch raises ``StateConflict`` naming who decided.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction

from construction import keys
from kgreview.core.errors import DuplicateProposal, ValidationFailed
from kgreview.graph.models import Concept, Edge, RelationType
from kgreview.graph.services import Evidence

from .models import Proposal
from .payloads import payload_validate


def flags_text(flags: Iterable[str]) -> str:
    """The "|a|b|" form stored beside the JSON flags for portable filtering."""
    ordered = sorted(set(flags))
    return ("|" + "|".join(ordered) + "|") if ordered else ""


def endpoint_columns(
    kind: str,
    payload: dict,
    relation_ids: dict[str, int] | None = None,
    edges: dict[int, tuple[int, int, int]] | None = None,
) -> dict:
    """The denormalised endpoint columns of a proposal, from its payload.

    add_edge: the relation and endpoints as keys and links. merge_concepts: the loser as
    source and the survivor as target. invalidate_edge / update_edge: the edge's own
    ends and relation (``edges`` maps an edge id to them), so the queue can name what a
    proposal touches without a query per row, and a concept's page finds it.
    """
    if kind == "merge_concepts":
        return {
            "source_concept_id": payload["loser_id"],
            "target_concept_id": payload["survivor_id"],
        }
    if kind == "update_concept":
        return {"source_concept_id": payload["concept_id"]}
    if kind in ("invalidate_edge", "update_edge"):
        if edges is None:
            edges = edge_ends([payload["edge_id"]])
        ends = edges.get(payload["edge_id"])
        if ends is None:
            return {}
        return {"source_concept_id": ends[0], "target_concept_id": ends[1], "relation_id": ends[2]}
    if kind != "add_edge":
        return {}
    if relation_ids is None:
        relation_ids = _relation_ids()
    return {
        "relation_key": payload["relation"],
        "source_key": _endpoint_key(payload["source"]),
        "target_key": _endpoint_key(payload["target"]),
        "relation_id": relation_ids.get(payload["relation"]),
        "source_concept_id": payload["source"].get("concept_id"),
        "target_concept_id": payload["target"].get("concept_id"),
    }


def _check_merge_concepts(specs: list[ProposalSpec]) -> None:
    """A merge must name two concepts that exist (one query for the whole batch)."""
    wanted = set()
    for spec in specs:
        if spec.kind == "merge_concepts" and isinstance(spec.payload, dict):
            wanted |= {
                v
                for v in (spec.payload.get("survivor_id"), spec.payload.get("loser_id"))
                if isinstance(v, int)
            }
    if not wanted:
        return
    missing = wanted - set(Concept.objects.filter(pk__in=wanted).values_list("pk", flat=True))
    if missing:
        listed = ", ".join(f"#{pk}" for pk in sorted(missing))
        raise ValidationFailed(f"A merge names concepts that do not exist: {listed}.")


def edge_ends(edge_ids) -> dict[int, tuple[int, int, int]]:
    """Edge id -> (source id, target id, relation id), in one query."""
    return {
        pk: (source, target, relation)
        for pk, source, target, relation in Edge.objects.filter(pk__in=set(edge_ids)).values_list(
            "pk", "source_id", "target_id", "relation_id"
        )
    }


def _relation_ids() -> dict[str, int]:
    return dict(RelationType.objects.values_list("key", "id"))


def _endpoint_key(endpoint: dict) -> str:
    if endpoint.get("concept_id"):
        return keys.concept_key(endpoint["concept_id"])
    return keys.new_concept_key(endpoint["name"])


def proposal_dedup_key(*, kind: str, payload: dict, symmetric: bool | None = None) -> str:
    """A key that is equal for two proposals asking for the same change.

    Endpoints count by concept when resolved and by name key when new (the same keys the
    construction loop uses); a symmetric relation's ends are ordered.
    """
    if kind == "add_concept":
        return keys.concept_dedup_key(payload["name"])
    if kind == "add_edge":
        if symmetric is None:
            symmetric = RelationType.objects.filter(
                key=payload["relation"], symmetric=True
            ).exists()
        return keys.edge_dedup_key(
            _endpoint_key(payload["source"]),
            payload["relation"],
            _endpoint_key(payload["target"]),
            symmetric=symmetric,
        )
    if kind == "invalidate_edge":
        return keys.invalidation_dedup_key(payload["edge_id"])
    if kind == "merge_concepts":
        return keys.merge_dedup_key(payload["survivor_id"], payload["loser_id"])
    if kind == "add_relation_type":
        return keys.relation_type_dedup_key(payload["key"])
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:32]
    return f"{kind}:{digest}"


@dataclass(frozen=True)
class ProposalSpec:
    """Everything needed to queue one proposal; see ``proposal_create``."""

    kind: str
    payload: dict
    confidence: float
    reason: str = ""
    evidence: Evidence | None = None
    flags: tuple[str, ...] = ()
    dedup_key: str | None = None
    priority: int = 0
    agent_run: object = None
    created_by: object = None
    document: object = None


def _build(
    spec: ProposalSpec,
    *,
    gate: float,
    relation_ids: dict[str, int] | None = None,
    edges: dict[int, tuple[int, int, int]] | None = None,
) -> Proposal:
    """An unsaved, validated proposal: held below the gate, pending otherwise."""
    clean = payload_validate(kind=spec.kind, payload=spec.payload)
    confidence = spec.confidence
    if not 0.0 <= confidence <= 1.0:
        raise ValidationFailed(f"Confidence must lie between 0 and 1, not {confidence}.")
    evidence = spec.evidence
    if evidence is not None:
        evidence.check()
    flags = set(spec.flags)
    status = Proposal.Status.PENDING
    if confidence < gate:
        status = Proposal.Status.HELD
        flags.add("below_gate")
    key = (spec.dedup_key or proposal_dedup_key(kind=spec.kind, payload=clean))[:255]
    endpoints = endpoint_columns(spec.kind, clean, relation_ids, edges)
    return Proposal(
        kind=spec.kind,
        status=status,
        payload=clean,
        confidence=confidence,
        reason=spec.reason.strip(),
        **Evidence.columns(evidence),
        flags=sorted(flags),
        flags_text=flags_text(flags),
        dedup_key=key,
        priority=spec.priority,
        agent_run=spec.agent_run,
        created_by=spec.created_by,
        document=spec.document,
        **endpoints,
    )


def _duplicate(key: str) -> DuplicateProposal:
    existing = Proposal.objects.filter(dedup_key=key, status__in=("pending", "held")).first()
    return DuplicateProposal(
        "The same change is already waiting for review"
        + (f" (proposal #{existing.pk})." if existing else "."),
        proposal_id=existing.pk if existing else None,
    )


@transaction.atomic
def proposal_create(
    *,
    kind: str,
    payload: dict,
    confidence: float,
    reason: str = "",
    evidence: Evidence | None = None,
    flags: Iterable[str] = (),
    dedup_key: str | None = None,
    priority: int = 0,
    agent_run=None,
    created_by=None,
    document=None,
    gate: float | None = None,
) -> Proposal:
    """Queue a proposal: ``held`` below the confidence gate, ``pending`` otherwise.

    Raises ``DuplicateProposal`` when the same change is already open.
    """
    spec = ProposalSpec(
        kind=kind,
        payload=payload,
        confidence=confidence,
        reason=reason,
        evidence=evidence,
        flags=tuple(flags),
        dedup_key=dedup_key,
        priority=priority,
        agent_run=agent_run,
        created_by=created_by,
        document=document,
    )
    _check_merge_concepts([spec])
    proposal = _build(spec, gate=settings.KG_CONFIDENCE_GATE if gate is None else gate)
    try:
        with transaction.atomic():
            proposal.save(force_insert=True)
    except IntegrityError:
        raise _duplicate(proposal.dedup_key) from None
    return proposal


@transaction.atomic
def proposals_create_many(
    specs: list[ProposalSpec], *, gate: float | None = None
) -> list[Proposal | DuplicateProposal]:
    """Queue many proposals with one INSERT; used by agents writing a source's results.

    Every spec is validated first (any invalid one raises before anything is written).
    If the batch collides with an open proposal (someone queued the same change a moment
    ago), it is retried one by one and the colliding specs come back as
    ``DuplicateProposal`` in their place.
    """
    gate = settings.KG_CONFIDENCE_GATE if gate is None else gate
    relation_ids = _relation_ids() if any(s.kind == "add_edge" for s in specs) else {}
    edge_ids = [
        s.payload.get("edge_id")
        for s in specs
        if s.kind in ("invalidate_edge", "update_edge") and isinstance(s.payload, dict)
    ]
    edges = edge_ends([e for e in edge_ids if isinstance(e, int)]) if edge_ids else {}
    _check_merge_concepts(specs)
    built = [_build(spec, gate=gate, relation_ids=relation_ids, edges=edges) for spec in specs]
    if not built:
        return []
    try:
        with transaction.atomic():
            created = Proposal.objects.bulk_create(built)
        if any(p.pk is None for p in created):  # a backend that returns no ids
            raise IntegrityError("ids not returned")
        return list(created)
    except IntegrityError:
        out: list[Proposal | DuplicateProposal] = []
        for proposal in built:
            proposal.pk = None
            proposal._state.adding = True
            try:
                with transaction.atomic():
                    proposal.save(force_insert=True)
                out.append(proposal)
            except IntegrityError:
                out.append(_duplicate(proposal.dedup_key))
        return out


@transaction.atomic
def proposal_flag_conflict(*, proposal_id: int, other: dict) -> Proposal | None:
    """Mark an open proposal as contradicted by another fact, linking to it.

    Locks the proposal; a decided proposal is left alone (its contradiction no longer
    matters for review). The version is bumped so a reviewer looking at the old card is
    told it changed.
    """
    proposal = Proposal.objects.select_for_update().filter(pk=proposal_id).first()
    if proposal is None or not proposal.is_open:
        return None
    payload = dict(proposal.payload)
    conflicts = list(payload.get("conflicts") or [])
    if other not in conflicts:
        conflicts.append(other)
    if proposal.kind == "add_edge":
        payload["conflicts"] = conflicts
    flags = sorted(set(proposal.flags) | {"contradiction"})
    if flags == proposal.flags and payload == proposal.payload:
        return proposal
    proposal.payload = payload
    proposal.flags = flags
    proposal.flags_text = flags_text(flags)
    proposal.version += 1
    proposal.save(update_fields=["payload", "flags", "flags_text", "version", "updated_at"])
    return proposal


def lock_proposals(ids) -> dict[int, Proposal]:
    """Lock many proposals (``select_for_update``, in id order, so two batches never wait on
    each other crosswise) and return them by id."""
    rows = Proposal.objects.select_for_update(of=("self",)).filter(pk__in=list(ids)).order_by("pk")
    return {p.pk: p for p in rows}
