"""Edges: add one, invalidate one, supersede one with a changed copy, restore a retired
one. Rows are never edited in place beyond their retirement: a change is a new row that
points at the row it replaces.

Locking (the order is in the package's "Locking rules"): the concepts at both ends in id
order, then an acyclic relation's ``RelationType`` row (so two concurrent inserts cannot
close a cycle between them), then the edge changed.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import TYPE_CHECKING, Final, Literal, TypedDict

from django.db import transaction
from django.utils import timezone

from kgreview.core.errors import StateConflict, ValidationFailed

from .. import pattern_book, rules
from ..models import Concept, Edge, RelationType
from .common import (
    Evidence,
    audited,
    lock_concepts,
    lock_relation,
    quoted,
    user_row,
)
from .rows import (
    check_edge,
    fact_of,
    insert_edge,
    lock_active_edge,
    lock_for_edge,
    retire_row,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def _fact(edge: Edge) -> str:
    """An edge in words: “Embeddings” is a prerequisite of “Vector search”."""
    names = dict(
        Concept.objects.filter(pk__in=[edge.source_id, edge.target_id]).values_list("pk", "name")
    )
    return (
        f"{quoted(names.get(edge.source_id, '?'))} {edge.relation.verb} "
        f"{quoted(names.get(edge.target_id, '?'))}"
    )


def _columns(edge: Edge) -> dict:
    """An edge's fact as the curation log keeps it."""
    return {
        "source": edge.source_id,
        "target": edge.target_id,
        "relation": edge.relation.key,
        "confidence": edge.confidence,
        "weight": edge.weight,
        "reason": edge.reason,
        "evidence": edge.evidence_quote,
        "valid_at": edge.valid_at.isoformat(),
    }


def edge_add(
    *,
    source_id: int,
    target_id: int,
    relation_id: int,
    confidence: float,
    reason: str,
    evidence: Evidence | None = None,
    weight: float = 1.0,
    valid_at: datetime | None = None,
    acting_user: User | None,
    decision=None,
    grounds: dict[tuple[int, int], int] | None = None,
) -> Edge:
    """The body of ``edge_create`` for callers already inside a transaction.

    It takes the locks itself and adds no savepoint, so a decision that creates an edge
    stays a handful of queries. Any error leaves the caller's transaction to roll back.
    ``grounds``: the sources that ground the ends, written with the edge
    (``rows.insert_edge``).
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("edge_add must run inside a transaction; use edge_create")
    relation, concepts, patterned = lock_for_edge(relation_id, (source_id, target_id))
    source, target = concepts[source_id], concepts[target_id]
    admitted = check_edge(
        source=source,
        target=target,
        relation=relation,
        confidence=confidence,
        weight=weight,
        reason=reason,
        evidence=evidence,
        defer=True,
        patterns=None if patterned else pattern_book.EMPTY,
    )
    now = timezone.now()
    edge = insert_edge(
        source_id=source.pk,
        target_id=target.pk,
        relation=relation,
        weight=weight,
        confidence=confidence,
        reason=reason.strip(),
        evidence=evidence,
        valid_at=valid_at or now,
        recorded_at=now,
        decided_by=user_row(acting_user),
        in_order=admitted.in_order,
        moves=admitted.moves,
        grounds=grounds,
        guard=False,
    )
    audited(
        acting_user=acting_user,
        decision=decision,
        action="edge.create",
        subject=edge,
        summary=lambda: (
            f"Added the edge {quoted(source.name)} {relation.verb} {quoted(target.name)}."
        ),
        after=_columns(edge),
    )
    return edge


@transaction.atomic
def edge_create(*, source: Concept, target: Concept, relation: RelationType, **fact) -> Edge:
    """Add an active edge after checking vocabulary, endpoints, evidence, duplicates, cycles.

    ``edge_add`` in a transaction of its own, given rows instead of ids; ``fact`` is the
    rest of ``edge_add``'s keywords (``confidence``, ``reason`` and ``acting_user``, and
    optionally ``evidence``, ``weight``, ``valid_at`` and ``decision``).
    """
    refusal = rules.self_loop(source, target)
    if refusal is not None:
        raise refusal
    return edge_add(source_id=source.pk, target_id=target.pk, relation_id=relation.pk, **fact)


@transaction.atomic
def edge_invalidate(
    *,
    edge: Edge,
    reason: str,
    acting_user: User | None,
    decision=None,
    at: datetime | None = None,
) -> Edge:
    """Retire an active edge. The row stays, with when, why and by whom."""
    if not reason.strip():
        raise ValidationFailed("Say why the edge is invalidated.")
    edge = lock_active_edge(edge)
    at = at or timezone.now()
    if at < edge.valid_at:
        raise ValidationFailed("An edge cannot be retired before the time it holds from.")
    retire_row(
        edge,
        status=Edge.Status.INVALIDATED,
        at=at,
        acting_user=user_row(acting_user),
        reason=reason.strip(),
    )
    audited(
        acting_user=acting_user,
        decision=decision,
        action="edge.invalidate",
        subject=edge,
        summary=lambda: f"Invalidated the edge {_fact(edge)}.",
        before={"status": Edge.Status.ACTIVE},
        after={"status": Edge.Status.INVALIDATED, "reason": edge.invalidation_reason},
    )
    return edge


class _Unset(enum.Enum):
    """The default of ``edge_supersede``'s ``evidence``: keep the old edge's evidence
    (``None`` there means the new edge cites none)."""

    UNSET = "unset"


_UNSET: Final = _Unset.UNSET


class _EdgeValues(TypedDict):
    """What ``check_edge`` weighs for the new row of a superseded edge."""

    source: Concept
    target: Concept
    relation: RelationType
    confidence: float
    weight: float
    reason: str
    evidence: Evidence | None


@transaction.atomic
def edge_supersede(
    *,
    edge: Edge,
    acting_user: User | None,
    why: str = "",
    decision=None,
    source: Concept | None = None,
    target: Concept | None = None,
    relation: RelationType | None = None,
    confidence: float | None = None,
    weight: float | None = None,
    reason: str | None = None,
    evidence: Evidence | None | Literal[_Unset.UNSET] = _UNSET,
    valid_at: datetime | None = None,
) -> Edge:
    """Replace an active edge by a new row carrying the changes; the old row is kept.

    The new row is checked like a new edge (vocabulary, endpoints, evidence, duplicates,
    cycles) against the graph without the old row; if it fails, nothing changes.
    """
    # The lock order: the concepts at both ends (old and new), the new relation if it is
    # acyclic, then the edge itself (its ends never change, so they are read unlocked).
    ends = Edge.objects.filter(pk=edge.pk).values_list("source_id", "target_id").first()
    if ends is None:
        raise StateConflict(f"There is no edge #{edge.pk}.")
    src_id = source.pk if source else ends[0]
    dst_id = target.pk if target else ends[1]
    locked = lock_concepts(*ends, src_id, dst_id)
    new_relation = relation or RelationType.objects.get(pk=edge.relation_id)
    if new_relation.acyclic:
        new_relation = lock_relation(new_relation)
    old = lock_active_edge(edge)
    new_evidence = Evidence.of(old) if evidence is _UNSET else evidence
    values = _EdgeValues(
        source=locked[src_id],
        target=locked[dst_id],
        relation=new_relation,
        confidence=old.confidence if confidence is None else confidence,
        weight=old.weight if weight is None else weight,
        reason=(old.reason if reason is None else reason).strip(),
        evidence=new_evidence,
    )
    if (
        values["source"].pk == old.source_id
        and values["target"].pk == old.target_id
        and new_relation.pk == old.relation_id
        and values["confidence"] == old.confidence
        and values["weight"] == old.weight
        and values["reason"] == old.reason
        and new_evidence == Evidence.of(old)
        and (valid_at is None or valid_at == old.valid_at)
    ):
        raise ValidationFailed("Nothing would change: the update is the same as the edge.")
    now = timezone.now()
    who = user_row(acting_user)
    retire_row(
        old,
        status=Edge.Status.SUPERSEDED,
        at=now,
        acting_user=who,
        reason=why.strip() or "Updated.",
    )
    in_order = check_edge(**values).in_order
    new = insert_edge(
        source_id=values["source"].pk,
        target_id=values["target"].pk,
        relation=new_relation,
        weight=values["weight"],
        confidence=values["confidence"],
        reason=values["reason"],
        evidence=new_evidence,
        valid_at=valid_at or old.valid_at,
        recorded_at=now,
        supersedes=old,
        decided_by=who,
        in_order=in_order,
    )
    was, now_is = _columns(old), _columns(new)
    changed = [k for k in was if was[k] != now_is[k]]
    audited(
        acting_user=acting_user,
        decision=decision,
        action="edge.supersede",
        subject=old,
        summary=lambda: f"Updated the edge {_fact(old)} (now edge #{new.pk}).",
        before={k: was[k] for k in changed},
        after={**{k: now_is[k] for k in changed}, "edge": new.pk},
    )
    return new


@transaction.atomic
def edge_restore(
    *,
    edge: Edge,
    acting_user: User | None,
    why: str = "",
    decision=None,
) -> Edge:
    """Bring back a retired fact as a new active row that supersedes the retired one.

    Used to undo an invalidation; checked like any new edge (the graph may have changed
    since). The retired row keeps its history; the new row points at it.
    """
    # The lock order: both ends, the relation if it is acyclic, then the retired row.
    seen = Edge.objects.select_related("relation").get(pk=edge.pk)
    locked = lock_concepts(seen.source_id, seen.target_id)
    relation = lock_relation(seen.relation) if seen.relation.acyclic else seen.relation
    old = Edge.objects.select_for_update(no_key=True).select_related("relation").get(pk=edge.pk)
    if old.is_active:
        raise StateConflict(f"Edge #{old.pk} is already active.")
    if Edge.objects.filter(supersedes=old).exists():
        raise StateConflict(
            f"Edge #{old.pk} was already replaced by a newer edge; restore that one instead."
        )
    source, target = locked[old.source_id], locked[old.target_id]
    fact = fact_of(old, relation=relation)
    admitted = check_edge(
        source=source,
        target=target,
        relation=relation,
        confidence=old.confidence,
        weight=old.weight,
        reason=old.reason,
        evidence=fact["evidence"],
    )
    new = insert_edge(
        **fact,
        recorded_at=timezone.now(),
        supersedes=old,
        decided_by=user_row(acting_user),
        in_order=admitted.in_order,
    )
    audited(
        acting_user=acting_user,
        decision=decision,
        action="edge.restore",
        subject=old,
        summary=lambda: (
            f"Restored the edge {quoted(source.name)} {relation.verb} {quoted(target.name)} "
            f"(as edge #{new.pk})."
        ),
        before={"status": old.status},
        after={"status": Edge.Status.ACTIVE, "edge": new.pk},
    )
    return new
