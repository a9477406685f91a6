"""The attribute values a source states, queued as ``set_attribute`` proposals.

``stated_in`` reads, outside any transaction, which concepts of the graph have a type
that declares a default or a value-type attribute (``construction.attribute_values``
knows only those two), and finds what the revision states for them. ``queue_stated``,
inside construct's transaction, holds each value to the rule book
(``graph.attribute_rules``: the attribute still active, the value in its datatype, not
the value the concept holds already) and queues the rest with their quotes, like edges.
A graph whose types declare no such attribute costs one query.
"""

from __future__ import annotations

from collections import defaultdict

from construction.attribute_values import StatedValue, Target, role_of, stated_values
from kgreview.core.errors import DuplicateProposal
from kgreview.graph import attribute_rules as arules
from kgreview.graph.models import (
    Attribute,
    AttributeValue,
    Concept,
    ConceptAlias,
    ConceptType,
    SourceRevision,
)
from kgreview.graph.services import Evidence
from kgreview.review.kinds.set_attribute import SetAttributeKind
from kgreview.review.services import ProposalSpec, proposals_create_many

from .models import AgentRun
from .runs import run_origin


def _declared_below() -> dict[int, list[Attribute]]:
    """Type id -> the active attributes this reader knows that it declares or inherits."""
    attributes = [
        a
        for a in Attribute.objects.filter(active=True).select_related("concept_type")
        if role_of(a.key, a.label)
    ]
    if not attributes:
        return {}
    children: dict[int, list[int]] = defaultdict(list)
    for pk, parent in ConceptType.objects.values_list("pk", "parent_id"):
        if parent is not None:
            children[parent].append(pk)
    below: dict[int, list[Attribute]] = defaultdict(list)
    for attribute in attributes:
        todo, seen = [attribute.concept_type_id], set()
        while todo:
            at = todo.pop()
            if at in seen:
                continue
            seen.add(at)
            below[at].append(attribute)
            todo.extend(children.get(at, ()))
    return below


def targets() -> list[Target]:
    """The active concepts whose type declares (or inherits) a default or value-type
    attribute, each with its names and those attributes."""
    below = _declared_below()
    if not below:
        return []
    concepts = list(
        Concept.objects.filter(status=Concept.Status.ACTIVE, type_id__in=list(below)).only(
            "pk", "name", "type_id"
        )
    )
    names: dict[int, list[str]] = defaultdict(list)
    for concept_id, name in ConceptAlias.objects.filter(
        concept__in=[c.pk for c in concepts], kind=ConceptAlias.Role.ALIAS
    ).values_list("concept_id", "name"):
        names[concept_id].append(name)
    return [
        Target(
            concept_id=c.pk,
            name=c.name,
            names=tuple(names[c.pk]),
            attributes=tuple((a.concept_type.key, a.key, a.label) for a in below[c.type_id]),
        )
        for c in concepts
    ]


def stated_in(revision: SourceRevision) -> list[StatedValue]:
    """What the revision states for those concepts (outside any transaction)."""
    wanted = targets()
    return stated_values(revision.text, wanted) if wanted else []


def _keep(stated: list[StatedValue]) -> list[StatedValue]:
    """The values the rule book takes now, and that the concept does not hold already."""
    if not stated:
        return []
    attributes = {
        (a.concept_type.key, a.key): a
        for a in Attribute.objects.filter(active=True).select_related("concept_type")
    }
    held = {
        (v.concept_id, v.attribute_id): v.value
        for v in AttributeValue.objects.filter(
            concept_id__in={s.concept_id for s in stated}, status=AttributeValue.Status.ACTIVE
        )
    }
    kept = []
    for s in stated:
        attribute = attributes.get((s.type_key, s.attribute_key))
        if attribute is None or arules.value_refusal(attribute, s.value) is not None:
            continue
        value = arules.canonical_value(attribute.datatype, s.value)
        if held.get((s.concept_id, attribute.pk)) != value:
            kept.append(s)
    return kept


def queue_stated(
    *, run: AgentRun, revision: SourceRevision, stated: list[StatedValue], stats: dict
) -> None:
    """Queue a ``set_attribute`` proposal for each value the rule book takes, counted in
    ``stats["proposals"]`` as ``persist_result`` counts the others."""
    specs = [
        ProposalSpec(
            kind=SetAttributeKind.key,
            payload={
                "concept": {"name": s.name, "concept_id": s.concept_id, "match": "exact"},
                "type_key": s.type_key,
                "attribute_key": s.attribute_key,
                "value": s.value,
            },
            confidence=s.confidence,
            reason=f"The text states it ({s.how}).",
            evidence=Evidence(revision=revision, start=s.start, end=s.end, quote=s.quote),
            priority=round(s.confidence * 100),
            origin=run_origin(run),
            document=revision.source,
        )
        for s in _keep(stated)
    ]
    if not specs:
        return
    for outcome in proposals_create_many(specs):
        if not isinstance(outcome, DuplicateProposal):
            slot = stats["proposals"].setdefault(outcome.kind, {})
            slot[outcome.status] = slot.get(outcome.status, 0) + 1
