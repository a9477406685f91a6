"""Reads of the attributes for the pages: every attribute with its type and its values
counted (the Ontology page), and the attributes a concept's type declares with the
values it held at an instant (a concept's page)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Q

from .history import attribute_values_at, concept_type_at
from .models import Attribute, AttributeValue, Concept
from .services.attributes import type_chain

# The datatypes a curator chooses from, with their words.
DATATYPES = Attribute.Datatype.choices


def attribute_overview() -> list[Attribute]:
    """Every attribute with its type and its current values counted (``values_now``),
    by type key, active first, then by key. One query."""
    return list(
        Attribute.objects.select_related("concept_type")
        .annotate(
            values_now=Count(
                "values", filter=Q(values__status=AttributeValue.Status.ACTIVE), distinct=True
            )
        )
        .order_by("concept_type__key", "-active", "key")
    )


@dataclass(frozen=True)
class AttributeLine:
    """One attribute on a concept's page: the attribute and the value held (or none)."""

    attribute: Attribute
    value: AttributeValue | None


def concept_attributes(concept: Concept, *, at: datetime | None) -> list[AttributeLine]:
    """The attributes the concept's type (at ``at``) and the types above it declare, each
    with the value the concept held then; and any value it held for an attribute its
    type no longer declares. Active attributes without a value are listed too, so a
    reader sees what is missing."""
    values = {
        v.attribute_id: v for v in attribute_values_at([concept.pk], at=at).get(concept.pk, [])
    }
    chain = type_chain(concept_type_at(concept, at))
    declared = Attribute.objects.filter(concept_type__in=chain, active=True).select_related(
        "concept_type"
    )
    lines = {a.pk: AttributeLine(a, values.get(a.pk)) for a in declared}
    for attribute_id, value in values.items():
        lines.setdefault(attribute_id, AttributeLine(value.attribute, value))
    return sorted(
        lines.values(), key=lambda line: (line.attribute.label.casefold(), line.attribute.pk)
    )
