"""Reads of the concept vocabulary for the pages: the types with their parents and how
many concepts have each, and the types a concept may be given now."""

from __future__ import annotations

from django.db.models import Count, Q

from .models import Concept, ConceptType


def concept_type_overview() -> list[ConceptType]:
    """Every concept type with its parent and its active concepts counted (``concepts_now``),
    active ones first, then by key. One query."""
    return list(
        ConceptType.objects.select_related("parent")
        .annotate(
            concepts_now=Count(
                "concepts", filter=Q(concepts__status=Concept.Status.ACTIVE), distinct=True
            )
        )
        .order_by("-active", "key")
    )


def assignable_types() -> list[ConceptType]:
    """The types a concept may be given now: the active ones, by key."""
    return list(ConceptType.objects.filter(active=True).order_by("key"))


def type_family(key: str) -> set[int] | None:
    """The ids of the type ``key`` and of every type below it (a subtype is a kind of its
    parent), retired ones included; ``None`` when no type has that key. One query: the
    vocabulary is small, so its tree is walked here."""
    rows = list(ConceptType.objects.values_list("pk", "key", "parent_id"))
    root = next((pk for pk, k, _ in rows if k == key), None)
    if root is None:
        return None
    children: dict[int, list[int]] = {}
    for pk, _, parent in rows:
        if parent is not None:
            children.setdefault(parent, []).append(pk)
    family, todo = {root}, [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in family:  # the rule book refuses loops; never walk one twice
                family.add(child)
                todo.append(child)
    return family


def type_tree() -> list[tuple[ConceptType, int]]:
    """Every type with its depth in the hierarchy, each parent before its subtypes and
    siblings by label: the order of a type menu. One query."""
    rows = list(ConceptType.objects.order_by("label", "key"))
    children: dict[int | None, list[ConceptType]] = {}
    for t in rows:
        children.setdefault(t.parent_id, []).append(t)
    out: list[tuple[ConceptType, int]] = []
    seen: set[int] = set()

    def walk(parent: int | None, depth: int) -> None:
        for t in children.get(parent, []):
            if t.pk not in seen:  # the rule book refuses loops; never walk one twice
                seen.add(t.pk)
                out.append((t, depth))
                walk(t.pk, depth + 1)

    walk(None, 0)
    return out
