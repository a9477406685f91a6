"""Mending the graph by hand: each change is a proposal made and decided by one person.

A reviewer adds an edge the agents missed or retires a wrong one; a curator merges two
concepts, renames one, changes its aliases, retires or reactivates it. Each is written as
a proposal (created by that person, flagged ``manual``) accepted in the same transaction,
so it has a decision with the user and the note, shows in the decision log and the
edge's life, settles the queue like any decision, and is undone like any decision.
Each service is one transaction taking its locks in the order of ``decisions``, retried
whole on a deadlock (``kgreview.core.retry``).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kgreview.core.errors import ValidationFailed
from kgreview.core.permissions import can_decide, is_curator
from kgreview.core.retry import retried
from kgreview.graph import rules
from kgreview.graph.models import Concept, Edge, RelationType
from kgreview.graph.services import Evidence
from kgreview.review.decide.decisions import accept_one, settle_outcome
from kgreview.review.decide.ends import EndChoice as EndChoice  # re-exported for callers
from kgreview.review.decide.ends import resolve_choice, same_end
from kgreview.review.decide.outcome import NotAllowed, Outcome
from kgreview.review.kinds import payload_validate
from kgreview.review.kinds.add_edge import AddEdgeKind
from kgreview.review.kinds.invalidate_edge import InvalidateEdgeKind
from kgreview.review.kinds.merge_concepts import MergeConceptsKind
from kgreview.review.kinds.update_concept import UpdateConceptKind
from kgreview.review.services import proposal_create, proposal_dedup_key

if TYPE_CHECKING:
    from django.contrib.auth.models import User

MANUAL = "manual"


def _require(*, acting_user: User, curator: bool = False) -> None:
    if curator and not is_curator(acting_user):
        raise NotAllowed("Only curators can do this.")
    if not can_decide(acting_user):
        raise NotAllowed("Your role can read the graph but not change it.")


def _note(note: str, *, required: str | None = None) -> str:
    note = " ".join(str(note).replace("\x00", "").split())
    if required and not note:
        raise ValidationFailed(required)
    if len(note) > 2000:
        raise ValidationFailed("Keep the note under 2,000 characters.")
    return note


def _made_and_accepted(
    *,
    acting_user: User,
    kind: str,
    payload: dict,
    reason: str,
    evidence: Evidence | None = None,
    confidence: float = 1.0,
    symmetric: bool | None = None,
) -> Outcome:
    """Queue the change as this person's own proposal and accept it at once."""
    clean = payload_validate(kind=kind, payload=payload)
    key = proposal_dedup_key(kind=kind, payload=clean, symmetric=symmetric)
    # Never open beyond this transaction, so its key only has to be unique: an agent's
    # open proposal for the same change is settled by the decision instead.
    dedup = f"{key[:200]}|{MANUAL}:{uuid.uuid4().hex[:12]}"
    proposal = proposal_create(
        kind=kind,
        payload=clean,
        confidence=confidence,
        reason=reason,
        evidence=evidence,
        flags=[MANUAL],
        dedup_key=dedup,
        created_by=acting_user,
        document=evidence.revision.source if evidence is not None else None,
        gate=0.0,
        decided_at_once=True,
    )
    out = accept_one(proposal, acting_user=acting_user, batch=uuid.uuid4(), note=reason)
    return settle_outcome(out, acting_user=acting_user)


@retried
def edge_add_by_hand(
    *,
    acting_user: User,
    source: EndChoice,
    target: EndChoice,
    relation: str,
    note: str,
    evidence: Evidence | None = None,
    confidence: float = 1.0,
) -> Outcome:
    """Add an edge the agents missed, with optional evidence quoted from a source."""
    _require(acting_user=acting_user)
    reason = _note(note, required="Say why the edge belongs in the graph.")
    relation_type = RelationType.objects.filter(key=relation).first()
    if relation_type is None or not relation_type.active:
        raise ValidationFailed(f'"{relation}" is not an active relation.')
    if not 0.0 <= confidence <= 1.0:
        raise ValidationFailed("Confidence must lie between 0 and 1.")
    payload: dict = {
        "source": resolve_choice(source),
        "target": resolve_choice(target),
        "relation": relation,
    }
    if same_end(payload["source"], payload["target"]):
        raise rules.self_loop_named(payload["source"]["name"])
    return _made_and_accepted(
        acting_user=acting_user,
        kind=AddEdgeKind.key,
        payload=payload,
        reason=reason,
        evidence=evidence,
        confidence=confidence,
        symmetric=relation_type.symmetric,
    )


@retried
def edge_retire_by_hand(*, acting_user: User, edge_id: int, note: str) -> Outcome:
    """Retire an accepted edge that is wrong; it stays, invalidated, with the reason."""
    _require(acting_user=acting_user)
    reason = _note(note, required="Say why the edge is wrong.")
    edge = Edge.objects.filter(pk=edge_id).first()
    if edge is None:
        raise ValidationFailed(f"There is no edge #{edge_id}.")
    if not edge.is_active:
        raise ValidationFailed(f"Edge #{edge.pk} is already {edge.status}.")
    return _made_and_accepted(
        acting_user=acting_user,
        kind=InvalidateEdgeKind.key,
        payload={"edge_id": edge.pk, "reason_code": MANUAL},
        reason=reason,
    )


@retried
def concepts_merge_by_hand(
    *, acting_user: User, survivor_id: int, loser_id: int, note: str
) -> Outcome:
    """Merge two concepts a curator chose: the loser's names and edges move over."""
    _require(acting_user=acting_user, curator=True)
    if survivor_id == loser_id:
        raise ValidationFailed("Choose two different concepts to merge.")
    found = Concept.objects.in_bulk([survivor_id, loser_id])
    for pk in (survivor_id, loser_id):
        if pk not in found:
            raise ValidationFailed(f"There is no concept #{pk}.")
    survivor, loser = found[survivor_id], found[loser_id]
    why = _note(note) or f'"{loser.name}" and "{survivor.name}" are the same concept.'
    return _made_and_accepted(
        acting_user=acting_user,
        kind=MergeConceptsKind.key,
        payload={"survivor_id": survivor.pk, "loser_id": loser.pk, "why": why},
        reason=why,
    )


@retried
def concept_update_by_hand(
    *,
    acting_user: User,
    concept_id: int,
    name: str | None = None,
    add_aliases=(),
    remove_aliases=(),
    status: str | None = None,
    type_key: str | None = None,
    note: str = "",
) -> Outcome:
    """Rename a concept, add or remove its aliases, change its type (``type_key``: a
    type's key, ``""`` for none), or retire or reactivate it."""
    _require(acting_user=acting_user, curator=True)
    concept = Concept.objects.filter(pk=concept_id).first()
    if concept is None:
        raise ValidationFailed(f"There is no concept #{concept_id}.")
    name = " ".join(str(name or "").split()) or None
    if name == concept.name:
        name = None
    add = [a for a in (" ".join(str(x).split()) for x in add_aliases) if a]
    remove = [a for a in (" ".join(str(x).split()) for x in remove_aliases) if a]
    if type_key is not None:
        type_key = str(type_key).strip()
        if type_key and rules.type_key_refusal(type_key) is not None:
            raise rules.no_type(type_key)
        if type_key == (concept.type.key if concept.type else ""):
            type_key = None
    if not (name or add or remove or status or type_key is not None):
        raise ValidationFailed("Nothing would change.")
    words = []
    if name:
        words.append(f'renamed "{concept.name}" to "{name}"')
    if add:
        words.append("added " + ", ".join(f'"{a}"' for a in add))
    if remove:
        words.append("removed " + ", ".join(f'"{a}"' for a in remove))
    if status:
        words.append("retired it" if status == "retired" else "reactivated it")
    if type_key is not None:
        words.append(f'made it a "{type_key}"' if type_key else "took its type away")
    reason = _note(note) or ("Curated by hand: " + "; ".join(words) + ".")
    return _made_and_accepted(
        acting_user=acting_user,
        kind=UpdateConceptKind.key,
        payload={
            "concept_id": concept.pk,
            "name": name,
            "add_aliases": add,
            "remove_aliases": remove,
            "status": status,
            "type_key": type_key,
        },
        reason=reason,
    )
