"""Set-based writes to the graph, for a decision taken on many proposals at once.

The same rules as ``services`` (names unique across concepts and aliases; every edge held
to the rule book, ``rules``, and refused when the graph holds its fact or it closes a
cycle; only edge-less active concepts retired), checked here for every row, written
with a few statements for a whole set instead of a few per row. Callers run them inside
their transaction; a lost race surfaces as ``NameTaken`` or ``IntegrityError`` and the
caller falls back to the one-by-one services. Every caller is a decision on proposals, whose
``Decision`` rows record these writes, so they write no curation log rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.db.models.functions import Lower

from construction.text import name_key
from kgreview.core.errors import DomainError, NameTaken, ValidationFailed

from . import pattern_book, rules, selectors
from .bulk_admit import admit_many
from .models import (
    Concept,
    ConceptAlias,
    ConceptType,
    ConceptTypeChange,
    Edge,
    RelationPattern,
    RelationType,
)
from .pattern_book import PatternBook
from .services.common import NAME_MAX, name_index_changed
from .services.concepts import check_retirable

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def concepts_create_many(
    specs: Sequence[tuple[str, str, Iterable[str]]],
    *,
    types: Sequence[ConceptType | None] | None = None,
) -> list[Concept]:
    """New active concepts for (name, description, aliases), in order, each given the
    type at its place in ``types`` (with its type history's first row), refused in words
    when that type is retired. Aliases another concept already answers to are skipped; a
    canonical name taken meanwhile raises ``NameTaken``."""
    if not specs:
        return []
    given = list(types) if types is not None else [None] * len(specs)
    rows = []
    for (name, description, _), concept_type in zip(specs, given, strict=True):
        name = selectors.clean_name(name)
        if not name or len(name) > NAME_MAX:
            raise ValidationFailed(f"A concept name is 1 to {NAME_MAX} characters.")
        if concept_type is not None:
            refusal = rules.type_active_refusal(concept_type)
            if refusal is not None:
                raise refusal
        rows.append(Concept(name=name, description=description.strip(), type=concept_type))
    try:
        with transaction.atomic():
            made = Concept.objects.bulk_create(rows)
            if any(c.pk is None for c in made):
                raise IntegrityError("concept ids not returned")
            ConceptTypeChange.objects.bulk_create(
                ConceptTypeChange(concept=c, type_id=c.type_id, changed_at=c.created_at)
                for c in made
                if c.type_id is not None
            )
            wanted: dict[str, tuple[Concept, str, str]] = {}
            for (_, _, aliases), concept in zip(specs, made, strict=True):
                wanted.setdefault(concept.name.lower(), (concept, "canonical", concept.name))
                for alias in aliases:
                    alias = selectors.clean_name(alias)
                    if alias and len(alias) <= NAME_MAX:
                        wanted.setdefault(alias.lower(), (concept, "alias", alias))
            taken = set(
                ConceptAlias.objects.annotate(lname=Lower("name"))
                .filter(lname__in=list(wanted))
                .values_list("lname", flat=True)
            )
            ConceptAlias.objects.bulk_create(
                [
                    ConceptAlias(concept=c, name=n, kind=kind, key=name_key(n)[:200])
                    for lname, (c, kind, n) in wanted.items()
                    if lname not in taken or kind == "canonical"
                ]
            )
    except IntegrityError as exc:
        raise NameTaken("A name was taken by another concept meanwhile.") from exc
    name_index_changed(concepts=[c.pk for c in made])
    return made


def edges_add_checked(
    items: Sequence[tuple[Edge, Concept, Concept]], *, patterns: PatternBook | None = None
) -> list[DomainError | None]:
    """Insert unsaved edge rows, each with its ends' concept rows, as if one by one: every
    row is first held to the rule book (``rules``: relation, ends, loop, numbers, reason,
    evidence), then to the graph as the batch leaves it (a fact already held, either way
    round in a symmetric relation; in an acyclic relation, a cycle). Returns, per row,
    the refusal or None if added (``row.pk`` set).

    The acyclic relations' rows are locked once, in id order, as ``edge_add`` does, and
    their edges admitted as a set against the relations' orders (``bulk_admit``); the
    other edges are inserted in one statement. Callers hold the ends' concept rows
    locked (the lock order: concepts, then relation types).

    Each row is held to its relation's patterns too, read once for the batch (or given:
    ``patterns``, the book the caller read for the same relations), with its ends' types
    as the concept rows given carry them.
    """
    acyclic_ids = sorted({row.relation_id for row, _, _ in items if row.relation.acyclic})
    locked = {
        r.pk: r
        for r in RelationType.objects.select_for_update(no_key=True)
        .filter(pk__in=acyclic_ids)
        .annotate(
            patterned=Exists(RelationPattern.objects.filter(relation=OuterRef("pk"), active=True))
        )
        .order_by("pk")
    }
    out: list[DomainError | None] = [None] * len(items)
    ordered: list[int] = []
    plain: list[int] = []
    # The patterns of the relations the lock did not find open (none read when all are).
    asked = {row.relation_id for row, _, _ in items} - {
        pk for pk, r in locked.items() if not getattr(r, "patterned", True)
    }
    book = patterns if patterns is not None else pattern_book.load(asked)
    for i, (row, source, target) in enumerate(items):
        relation = locked.get(row.relation_id, row.relation)
        out[i] = rules.row_refusal(row, source, target, relation) or book.concepts_refusal(
            relation, source, target
        )
        if out[i] is None:
            (ordered if relation.acyclic else plain).append(i)
    admitted = admit_many([items[i] for i in ordered], locked) if ordered else []
    inserted = _insert_plain([items[i] for i in plain])
    for i, refusal in zip([*ordered, *plain], [*admitted, *inserted], strict=True):
        out[i] = refusal
    return out


def facts_held(
    facts: Iterable[tuple[int, RelationType, int]],
) -> dict[tuple[int, int, int], tuple[int, int]]:
    """The active edges holding any of these (source id, relation, target id) facts, by
    every key they hold a fact under (``rules.fact_keys``: a symmetric edge both ways
    round, an edge of a relation's inverse as its twin), each as (edge id, its relation
    id), in one query."""
    facts = list(facts)
    held: dict[tuple[int, int, int], tuple[int, int]] = {}
    if not facts:
        return held
    relations = {r.pk: r for _, r, _ in facts}
    # A fact's twin may be an edge of its relation's inverse, which states it as
    # (target, inverse, source): the keys it holds are its relation pair's.
    twins = {r.inverse_id: r for r in relations.values() if r.inverse_id}
    ends = {s for s, _, _ in facts} | {t for _, _, t in facts}
    rows = Edge.objects.filter(
        status=Edge.Status.ACTIVE,
        source_id__in=ends,
        target_id__in=ends,
        relation_id__in={*relations, *twins},
    ).values_list("pk", "source_id", "relation_id", "target_id")
    for pk, s, r, t in rows:
        if r in relations:
            held.update(dict.fromkeys(rules.fact_keys(s, relations[r], t), (pk, r)))
        else:
            held.update(dict.fromkeys(((s, r, t), (t, twins[r].pk, s)), (pk, r)))
    return held


def _insert_plain(items: Sequence[tuple[Edge, Concept, Concept]]) -> list[DomainError | None]:
    """Insert rows of relations that keep no order, in one statement, refusing a fact the
    graph holds or a repeat of one the batch inserts; returns, per row, the refusal."""
    if not items:
        return []
    held = facts_held((s.pk, row.relation, t.pk) for row, s, t in items)
    out: list[DomainError | None] = []
    rows: list[Edge] = []
    seen: dict[tuple[int, int, int], Edge] = {}
    repeats: list[tuple[int, Edge]] = []
    for i, (row, source, target) in enumerate(items):
        keys = rules.fact_keys(source.pk, row.relation, target.pk)
        existing = next((held[k] for k in keys if k in held), None)
        earlier = next((seen[k] for k in keys if k in seen), None)
        out.append(
            None
            if existing is None
            else rules.duplicate_refusal(
                row.relation, source.name, target.name, existing[0], held_relation_id=existing[1]
            )
        )
        if existing is None and earlier is not None:
            repeats.append((i, earlier))  # refused once the earlier row has its id
        elif existing is None:
            seen.update(dict.fromkeys(keys, row))
            rows.append(row)
    made = Edge.objects.bulk_create(rows)
    if any(e.pk is None for e in made):
        raise IntegrityError("edge ids not returned")
    for i, earlier in repeats:
        row, source, target = items[i]
        out[i] = rules.duplicate_refusal(
            row.relation,
            source.name,
            target.name,
            earlier.pk,
            held_relation_id=earlier.relation_id,
        )
    return out


def edges_invalidate_many(
    edge_ids: Iterable[int], *, acting_user: User | None, reason: str, at: datetime
) -> None:
    """Retire active edges with one reason, in one statement (the decisions retiring them
    are review's to record)."""
    ids = sorted(set(edge_ids))
    if not ids:
        return
    Edge.objects.filter(pk__in=ids).update(
        status=Edge.Status.INVALIDATED,
        invalid_at=at,
        invalidated_by=acting_user,
        invalidation_reason=reason.strip(),
    )


def concepts_retire_many(ids: Iterable[int], *, at: datetime) -> None:
    """Retire active concepts with no active edges left, or refuse them all in words."""
    ids = list(ids)
    if not ids:
        return
    concepts = {
        c.pk: c
        for c in Concept.objects.select_for_update(no_key=True).filter(pk__in=ids).order_by("pk")
    }
    used = selectors.active_edge_counts(ids)
    for cid in ids:
        check_retirable(concepts[cid], used[cid])
    Concept.objects.filter(pk__in=ids).update(
        status=Concept.Status.RETIRED, retired_at=at, updated_at=at
    )
    name_index_changed(concepts=ids)
