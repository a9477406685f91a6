"""Writing edge rows, shared by the edge services and merges: the checks a new edge
passes, the lock taken before them, the retirement of an old row and the insert of a
new one. Nothing here commits, audits or opens a transaction: the callers do.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import IntegrityError, connection, transaction

from kgreview.core.errors import (
    ConceptNotActive,
    CycleDetected,
    DuplicateEdge,
    InactiveRelation,
    SelfLoop,
    StateConflict,
    ValidationFailed,
)

from .. import selectors
from ..models import Concept, Edge, RelationType
from .common import Evidence, inactive_words, lock_relation, path_words


def retire_row(edge: Edge, *, status: str, at: datetime, user, decision, reason: str) -> None:
    """Mark an edge row superseded or invalidated, with when, by whom and why."""
    edge.status = status
    edge.invalid_at = at
    edge.invalidated_by = user
    edge.invalidation_decision = decision
    edge.invalidation_reason = reason
    edge.save(
        update_fields=[
            "status",
            "invalid_at",
            "invalidated_by",
            "invalidation_decision",
            "invalidation_reason",
        ]
    )


def set_retired_status(edge: Edge, status: str, reason: str) -> None:
    """Change how a just-retired row is described (superseded becomes invalidated)."""
    edge.status = status
    edge.invalidation_reason = reason
    edge.save(update_fields=["status", "invalidation_reason"])


def edge_row(
    *,
    source_id: int,
    target_id: int,
    relation: RelationType,
    weight: float,
    confidence: float,
    reason: str,
    evidence: Evidence | None,
    valid_at: datetime,
    recorded_at: datetime,
    supersedes: Edge | None = None,
    proposal=None,
    decision=None,
    decided_by=None,
) -> Edge:
    """An unsaved edge row with every column an edge carries (written by the caller)."""
    return Edge(
        source_id=source_id,
        target_id=target_id,
        relation=relation,
        is_symmetric=relation.symmetric,
        weight=weight,
        confidence=confidence,
        reason=reason,
        **Evidence.columns(evidence),
        valid_at=valid_at,
        recorded_at=recorded_at,
        supersedes=supersedes,
        proposal=proposal,
        decision=decision,
        decided_by=decided_by,
    )


def fact_of(edge: Edge, **changes) -> dict:
    """The columns that say what ``edge`` holds (its ends, relation, weights, reason,
    evidence and the time it holds from), with ``changes`` applied: what a new row that
    carries the same fact again passes to ``insert_edge``."""
    return {
        "source_id": edge.source_id,
        "target_id": edge.target_id,
        "relation": edge.relation,
        "weight": edge.weight,
        "confidence": edge.confidence,
        "reason": edge.reason,
        "evidence": Evidence.of(edge),
        "valid_at": edge.valid_at,
        **changes,
    }


def insert_edge(*, guard: bool = True, **columns) -> Edge:
    """Insert the row built by ``edge_row(**columns)``. ``guard`` turns a lost race into
    ``DuplicateEdge`` (a savepoint); callers holding the concept locks cannot lose that
    race and skip it."""
    row = edge_row(**columns)
    if not guard:
        row.save(force_insert=True)
        return row
    try:
        with transaction.atomic():
            row.save(force_insert=True)
            return row
    except IntegrityError as exc:
        # The checks ran first, so this is a concurrent writer winning the race.
        raise DuplicateEdge(
            "The same edge was just added by someone else; it is already in the graph."
        ) from exc


def check_edge(
    *,
    source: Concept,
    target: Concept,
    relation: RelationType,
    confidence: float,
    weight: float,
    reason: str,
    evidence: Evidence | None,
) -> None:
    """Refuse, in words, an edge the graph cannot take as it is now."""
    if not relation.active:
        raise InactiveRelation(
            f'The relation "{relation.key}" was retired; choose an active relation.'
        )
    for concept in (source, target):
        if not concept.is_active:
            raise ConceptNotActive(inactive_words(concept), concept_id=concept.pk)
    if source.pk == target.pk:
        raise SelfLoop(f'An edge cannot join "{source.name}" to itself.')
    if not 0.0 <= confidence <= 1.0:
        raise ValidationFailed(f"Confidence must lie between 0 and 1, not {confidence}.")
    if weight < 0:
        raise ValidationFailed(f"Weight cannot be negative ({weight}).")
    if not reason.strip():
        raise ValidationFailed("Every edge needs a reason: say why it exists.")
    if evidence is not None:
        evidence.check()
    ensure_new_fact(relation=relation, source=source, target=target)


def ensure_new_fact(*, relation: RelationType, source: Concept, target: Concept) -> None:
    """Refuse an edge the graph already holds, or one that closes a cycle in an acyclic
    relation (one round trip; the cycle's chain is read only when there is one)."""
    existing_id, closes_cycle = selectors.edge_precheck(
        relation=relation, source_id=source.pk, target_id=target.pk
    )
    if existing_id is not None:
        raise DuplicateEdge(
            f'"{source.name}" {relation.verb} "{target.name}" is already in the graph '
            f"(edge #{existing_id}).",
            edge_id=existing_id,
        )
    if closes_cycle:
        path = selectors.relation_path(relation=relation, start_id=target.pk, goal_id=source.pk)
        if path is not None:
            raise CycleDetected(
                f'"{source.name}" {relation.verb} "{target.name}" would close a cycle: '
                f"{path_words(path + [target.pk])}.",
                path=path,
            )


def lock_for_edge(
    relation_id: int, concept_ids: tuple[int, int]
) -> tuple[RelationType, dict[int, Concept]]:
    """Lock both concept rows in id order while reading the relation, in one statement;
    then, for an acyclic relation, lock its row too (the lock order: concepts, then
    relation types). Returns them fresh.

    Locking the concepts serialises edges between the same pair and merges of either
    end; locking an acyclic relation serialises its edges (no two writers can close a
    cycle between them). Any other relation is only read: its edges need nothing more,
    and retiring it leaves its edges be.
    """
    lock = ""
    if connection.features.has_select_for_update:
        lock = " FOR NO KEY UPDATE OF c" if connection.vendor == "postgresql" else " FOR UPDATE"
    concept_table = Concept._meta.db_table
    relation_table = RelationType._meta.db_table
    rows = list(
        Concept.objects.raw(
            f"SELECT c.*, r.id AS r_id, r.key AS r_key, r.label AS r_label, r.verb AS r_verb,"
            f" r.description AS r_description, r.directed AS r_directed,"
            f" r.symmetric AS r_symmetric, r.acyclic AS r_acyclic, r.active AS r_active,"
            f" r.retired_at AS r_retired_at, r.created_at AS r_created_at"
            f" FROM {concept_table} c CROSS JOIN {relation_table} r"
            f" WHERE r.id = %s AND c.id IN (%s, %s) ORDER BY c.id{lock}",
            [relation_id, *concept_ids],
        )
    )
    if not rows:
        raise ValidationFailed("The relation or the concepts of this edge do not exist.")
    # A raw row: a Concept that also carries the relation's columns as ``r_*`` attributes,
    # which no model declares.
    first: Any = rows[0]
    relation = RelationType(
        id=first.r_id,
        key=first.r_key,
        label=first.r_label,
        verb=first.r_verb,
        description=first.r_description,
        directed=bool(first.r_directed),
        symmetric=bool(first.r_symmetric),
        acyclic=bool(first.r_acyclic),
        active=bool(first.r_active),
        retired_at=first.r_retired_at,
        created_at=first.r_created_at,
    )
    concepts = {c.pk: c for c in rows}
    missing = [i for i in concept_ids if i not in concepts]
    if missing:
        raise ValidationFailed(f"There is no concept #{missing[0]}.")
    if relation.acyclic:
        relation = lock_relation(relation)
    return relation, concepts


def lock_active_edge(edge: Edge) -> Edge:
    """Lock an edge row, refusing in words one that is no longer active."""
    edge = Edge.objects.select_for_update(no_key=True).select_related("relation").get(pk=edge.pk)
    if not edge.is_active:
        who = f" by {edge.invalidated_by}" if edge.invalidated_by_id else ""
        raise StateConflict(
            f"Edge #{edge.pk} is no longer active: it was {edge.status}{who} "
            f"on {edge.invalid_at:%Y-%m-%d %H:%M} UTC.",
            edge_id=edge.pk,
        )
    return edge
