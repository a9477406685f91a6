"""Writing edge rows, shared by the edge services and merges: the checks a new edge
passes, the lock taken before them, the retirement of an old row and the insert of a
new one. Nothing here commits, audits or opens a transaction: the callers do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from kgreview.core.errors import DuplicateEdge, StateConflict, ValidationFailed

from .. import order, pattern_book, precheck, rules, selectors
from ..models import Concept, ConceptOrder, Edge, RelationPattern, RelationType, SourceConcept
from ..pattern_book import PatternBook
from ..sources import sources_ground
from .common import Evidence

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def retire_row(
    edge: Edge, *, status: str, at: datetime, acting_user: User | None, reason: str
) -> None:
    """Mark an edge row superseded or invalidated, with when, by whom and why (the
    decision that retired it, if one did, is review's to record)."""
    edge.status = status
    edge.invalid_at = at
    edge.invalidated_by = acting_user
    edge.invalidation_reason = reason
    edge.save(update_fields=["status", "invalid_at", "invalidated_by", "invalidation_reason"])


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
    decided_by=None,
    in_order: bool | None = None,
) -> Edge:
    """An unsaved edge row with every column an edge carries (written by the caller).

    ``in_order``: whether ``admit_fact`` placed its ends in the relation's order; by
    default, whether the relation needs none (an acyclic relation's row written without
    being admitted is taken for one written past the services).
    """
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
        decided_by=decided_by,
        in_order=not relation.acyclic if in_order is None else in_order,
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


def insert_edge(
    *,
    guard: bool = True,
    moves: dict[int, int] | None = None,
    grounds: dict[tuple[int, int], int] | None = None,
    **columns,
) -> Edge:
    """Insert the row built by ``edge_row(**columns)``. ``guard`` turns a lost race into
    ``DuplicateEdge`` (a savepoint); callers holding the concept locks cannot lose that
    race and skip it. ``moves``: the places in the relation's order the edge needs
    (``admit_fact(..., defer=True)``), written with it. ``grounds``: the sources that
    ground its ends, (source id, concept id) -> revision id, written with it too
    (``sources.sources_ground``)."""
    row = edge_row(**columns)
    if (moves or grounds) and not guard and connection.vendor == "postgresql":
        _insert_with(row, moves or {}, grounds or {})
        return row
    if moves:
        order.write(row.relation_id, moves)
    if not guard:
        row.save(force_insert=True)
        sources_ground(grounds or {})
        return row
    try:
        with transaction.atomic():
            row.save(force_insert=True)
    except IntegrityError as exc:
        # The checks ran first, so this is a concurrent writer winning the race.
        raise DuplicateEdge(
            "The same edge was just added by someone else; it is already in the graph."
        ) from exc
    sources_ground(grounds or {})
    return row


def _insert_with(row: Edge, moves: dict[int, int], grounds: dict[tuple[int, int], int]) -> None:
    """Insert ``row`` with the order's ``moves`` and the ``grounds`` of its ends in one
    statement (data-modifying subqueries), so a decision that writes an edge is not a
    round trip longer for either (the decision budget counts them)."""
    fields = [f for f in Edge._meta.concrete_fields if not f.primary_key]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    values = [f.get_db_prep_save(f.pre_save(row, True), connection) for f in fields]
    placed = ", ".join(["%s"] * len(values))
    parts: list[str] = []
    params: list = []
    if moves:
        parts.append(
            f"moved AS (INSERT INTO {ConceptOrder._meta.db_table}"
            " (relation_id, concept_id, position)"
            " SELECT %s, c, p FROM unnest(%s::bigint[], %s::bigint[]) AS t(c, p)"
            " ON CONFLICT (relation_id, concept_id) DO UPDATE SET position = EXCLUDED.position)"
        )
        params += [row.relation_id, list(moves), list(moves.values())]
    if grounds:
        parts.append(
            f"grounded AS (INSERT INTO {SourceConcept._meta.db_table}"
            " (source_id, concept_id, revision_id, created_at)"
            " SELECT s, c, r, %s FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[])"
            " AS t(s, c, r)"
            " ON CONFLICT (source_id, concept_id) DO UPDATE SET revision_id = EXCLUDED.revision_id)"
        )
        pairs = list(grounds.items())
        params += [
            timezone.now(),
            [s for (s, _), _ in pairs],
            [c for (_, c), _ in pairs],
            [r for _, r in pairs],
        ]
    sql = (
        f"WITH {', '.join(parts)}"
        f" INSERT INTO {Edge._meta.db_table} ({columns}) VALUES ({placed}) RETURNING id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *values])
        row.pk = cursor.fetchone()[0]
    row._state.adding = False
    row._state.db = connection.alias


@dataclass(frozen=True)
class Admission:
    """What admitting a new edge decided: whether its row is in the relation's order, and
    the places it needs there, when the caller writes them with the row (``defer``)."""

    in_order: bool
    moves: dict[int, int] = field(default_factory=dict)


def check_edge(
    *,
    source: Concept,
    target: Concept,
    relation: RelationType,
    confidence: float,
    weight: float,
    reason: str,
    evidence: Evidence | None,
    defer: bool = False,
    patterns: PatternBook | None = None,
) -> Admission:
    """Refuse, in words, an edge the graph cannot take as it is now (the rule book,
    ``graph.rules``, its relation's patterns among them); else make room for it in the
    relation's order (``admit_fact``; ``defer``: the caller writes the moves).
    ``patterns``: the relation's patterns when the caller read them (read here if not)."""
    refusal = rules.edge_refusal(
        source=source,
        target=target,
        relation=relation,
        confidence=confidence,
        weight=weight,
        reason=reason,
        evidence=evidence.parts() if evidence is not None else None,
    )
    if refusal is None:
        book = patterns if patterns is not None else pattern_book.load([relation.pk])
        refusal = book.concepts_refusal(relation, source, target)
    if refusal is not None:
        raise refusal
    return admit_fact(relation=relation, source=source, target=target, defer=defer)


def admit_fact(
    *, relation: RelationType, source: Concept, target: Concept, defer: bool = False
) -> Admission:
    """Refuse an edge the graph already holds, or one that closes a cycle in an acyclic
    relation (with the chain in words); otherwise move what the relation's order needs
    moved for it (or, with ``defer``, return the moves for the caller to write with the
    row) and say whether the new row is in that order (``Edge.in_order``).

    Call it holding the locks of ``lock_for_edge`` (for an acyclic relation, its row). One
    round trip, and one write when the order changes (see ``kgreview.graph.order``); the
    chain of a cycle is read only when there is one, among the concepts already found.
    """
    check = precheck.edge_precheck(relation=relation, source_id=source.pk, target_id=target.pk)
    if check.existing is not None:
        holder = None
        if relation.inverse_id:  # its twin's words, read only for the refusal
            holder = Edge.objects.filter(pk=check.existing).values_list("relation_id", flat=True)
        raise rules.duplicate_refusal(
            relation,
            source.name,
            target.name,
            check.existing,
            held_relation_id=holder.first() if holder is not None else None,
        )
    placement = order.place(check, source.pk, target.pk)
    if placement.repair:
        if check.small:
            order.rebuild_orders([relation.pk])
        else:
            order.set_unordered(relation.pk)
        check = precheck.edge_precheck(relation=relation, source_id=source.pk, target_id=target.pk)
        placement = order.place(check, source.pk, target.pk, repaired=True)
    if placement.cycle_among is not None:
        chain = selectors.relation_chain(
            relation=relation,
            start_id=target.pk,
            goal_id=source.pk,
            within=placement.cycle_among,
        )
        # The search found the way back; the chain is only its words (the concepts found
        # always hold it), so even without one the edge is refused.
        raise rules.cycle_refusal(relation, source, target, chain)
    if placement.unchecked:
        raise rules.unchecked_refusal(
            relation, source, target, limit=precheck.REACH_LIMIT, ordered=check.ordered
        )
    if defer:
        return Admission(in_order=placement.in_order, moves=placement.moves)
    order.write(relation.pk, placement.moves)
    return Admission(in_order=placement.in_order)


def lock_for_edge(
    relation_id: int, concept_ids: tuple[int, int]
) -> tuple[RelationType, dict[int, Concept], bool]:
    """Lock both concept rows in id order and, for an acyclic relation, its row after them
    (the lock order: concepts, then relation types), in one statement; read the relation
    either way. Returns them fresh.

    Locking the concepts serialises edges between the same pair and merges of either
    end; locking an acyclic relation serialises its edges (no two writers can close a
    cycle between them, and its order has one writer at a time). Any other relation is
    only read: its edges need nothing more, and retiring it leaves its edges be.

    The third value says whether the relation has an active pattern (read by the same
    statement), so an edge of an open relation pays no query for the patterns.
    """
    rows = list(Concept.objects.raw(*_lock_sql(relation_id, concept_ids)))
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
        ordered=bool(first.r_ordered),
        inverse_id=first.r_inverse_id,
    )
    concepts = {c.pk: c for c in rows}
    missing = [i for i in concept_ids if i not in concepts]
    if missing:
        raise rules.no_concept(missing[0])
    return relation, concepts, bool(first.r_patterned)


_RELATION_COLUMNS = (
    "id",
    "key",
    "label",
    "verb",
    "description",
    "directed",
    "symmetric",
    "acyclic",
    "active",
    "retired_at",
    "created_at",
    "ordered",
    "inverse_id",
)


def _lock_sql(relation_id: int, concept_ids: tuple[int, int]) -> tuple[str, list[int]]:
    """The statement of ``lock_for_edge`` and its parameters.

    On PostgreSQL one statement takes the locks in the lock order: the concepts are locked
    in a materialised subquery, and the acyclic relation's row only once a count over that
    subquery has read (and so locked) every concept, as its filter asks. A plain join
    would lock the relation with the first concept, before the second: a writer holding
    the second and waiting for the relation would then deadlock with it. The relation's
    columns come from the locking read, so a change committed while it waited is seen.
    """
    concept = Concept._meta.db_table
    relation = RelationType._meta.db_table
    quote = connection.ops.quote_name  # "symmetric" is a keyword to PostgreSQL
    picked = ", ".join(f"r.{quote(c)} AS r_{c}" for c in _RELATION_COLUMNS)
    picked += (
        f", EXISTS (SELECT 1 FROM {RelationPattern._meta.db_table} p"
        " WHERE p.relation_id = r.id AND p.active) AS r_patterned"
    )
    columns = ", ".join(quote(c) for c in _RELATION_COLUMNS)
    if connection.vendor != "postgresql":
        lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
        sql = (
            f"SELECT c.*, {picked} FROM {concept} c CROSS JOIN {relation} r"
            f" WHERE r.id = %s AND c.id IN (%s, %s) ORDER BY c.id{lock}"
        )
        return sql, [relation_id, *concept_ids]
    sql = f"""
        WITH c AS MATERIALIZED (
            SELECT * FROM {concept} WHERE id IN (%s, %s) ORDER BY id FOR NO KEY UPDATE
        ),
        locked AS MATERIALIZED (
            SELECT {columns} FROM {relation}
            WHERE id = %s AND acyclic AND (SELECT count(*) FROM c) >= 0
            FOR NO KEY UPDATE
        ),
        r AS (
            SELECT {columns} FROM {relation} WHERE id = %s AND NOT acyclic
            UNION ALL
            SELECT {columns} FROM locked
        )
        SELECT c.*, {picked} FROM c CROSS JOIN r ORDER BY c.id
    """
    return sql, [*concept_ids, relation_id, relation_id]


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
