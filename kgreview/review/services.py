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

from kgreview.core.errors import DuplicateProposal, ValidationFailed
from kgreview.graph.models import RelationType
from kgreview.graph.services import Evidence

from .models import Proposal
from .payloads import payload_validate


def _name_key(name: str) -> str:
    return " ".join(name.casefold().split())


def _endpoint_key(endpoint: dict) -> str:
    if endpoint.get("concept_id"):
        return f"c{endpoint['concept_id']}"
    return f"n:{_name_key(endpoint['name'])}"


def proposal_dedup_key(*, kind: str, payload: dict, symmetric: bool | None = None) -> str:
    """A key that is equal for two proposals asking for the same change.

    Endpoints count by concept when resolved and by normalised name when new; a
    symmetric relation's ends are ordered so "A contrasts with B" equals "B ... A".
    """
    if kind == "add_concept":
        return f"add_concept:{_name_key(payload['name'])}"
    if kind == "add_edge":
        src, dst = _endpoint_key(payload["source"]), _endpoint_key(payload["target"])
        if symmetric is None:
            symmetric = RelationType.objects.filter(
                key=payload["relation"], symmetric=True
            ).exists()
        if symmetric:
            src, dst = sorted((src, dst))
        return f"add_edge:{src}|{payload['relation']}|{dst}"
    if kind == "invalidate_edge":
        return f"invalidate_edge:{payload['edge_id']}"
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
