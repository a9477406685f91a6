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
