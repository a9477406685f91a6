"""Writes to the proposal queue. Decisions that change the graph live here too.

Locking rules: a service that changes a proposal locks its row first, then checks the
status and version it expects; a mismatch raises ``StateConflict`` naming who decided.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from django.conf import settings
from django.db import IntegrityError, transaction

from construction import keys
from kgreview.core.errors import DuplicateProposal, ValidationFailed
from kgreview.graph.models import RelationType
from kgreview.graph.services import Evidence

from .models import Proposal
from .payloads import payload_validate


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
        pair = sorted((payload["survivor_id"], payload["loser_id"]))
        return f"merge_concepts:{pair[0]}|{pair[1]}"
    if kind == "add_relation_type":
        return f"add_relation_type:{payload['key']}"
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:32]
    return f"{kind}:{digest}"


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
    clean = payload_validate(kind=kind, payload=payload)
    if not 0.0 <= confidence <= 1.0:
        raise ValidationFailed(f"Confidence must lie between 0 and 1, not {confidence}.")
    if evidence is not None:
        evidence.check()
    gate = settings.KG_CONFIDENCE_GATE if gate is None else gate
    flag_list = sorted(set(flags))
    status = Proposal.Status.PENDING
    if confidence < gate:
        status = Proposal.Status.HELD
        if "below_gate" not in flag_list:
            flag_list.append("below_gate")
    key = dedup_key or proposal_dedup_key(kind=kind, payload=clean)
    endpoints = {}
    if kind == "add_edge":
        src, dst = _endpoint_key(clean["source"]), _endpoint_key(clean["target"])
        endpoints = {"relation_key": clean["relation"], "source_key": src, "target_key": dst}
    try:
        with transaction.atomic():
            return Proposal.objects.create(
                kind=kind,
                status=status,
                payload=clean,
                confidence=confidence,
                reason=reason.strip(),
                evidence_revision=evidence.revision if evidence else None,
                evidence_start=evidence.start if evidence else None,
                evidence_end=evidence.end if evidence else None,
                evidence_quote=evidence.quote if evidence else "",
                flags=sorted(flag_list),
                dedup_key=key[:255],
                priority=priority,
                agent_run=agent_run,
                created_by=created_by,
                document=document,
                **endpoints,
            )
    except IntegrityError:
        existing = Proposal.objects.filter(
            dedup_key=key[:255], status__in=("pending", "held")
        ).first()
        raise DuplicateProposal(
            "The same change is already waiting for review"
            + (f" (proposal #{existing.pk})." if existing else "."),
            proposal_id=existing.pk if existing else None,
        ) from None


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
    proposal.version += 1
    proposal.save(update_fields=["payload", "flags", "version", "updated_at"])
    return proposal
