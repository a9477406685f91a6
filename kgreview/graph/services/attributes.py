"""Attributes: a concept type declares one (``attribute_create``), retires and
reactivates it; a concept is given a value for it (``attribute_value_set``, which
supersedes the value it held), a value is retired, and one a decision ended is restored
(``attribute_value_restore``, for an undo).

The rules and their words are ``graph.attribute_rules``'; these services raise what it
returns, before writing anything. A value row is never changed but to end it: a new
value supersedes the current row (``status`` superseded, ``invalid_at`` now) and a new
active row holds the new value, so ``graph.history.attribute_values_at`` reads what a
concept held at any instant.

Locks: a value's write locks the concept, then the attribute (the lock order's concepts,
then the vocabulary), then the concept's current value row; declaring an attribute locks
its type, so a type being retired and an attribute being declared on it wait for each
other. Each service is one ``kgreview.core.retry`` transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.utils import timezone

from construction.text import normal_name
from kgreview.core.errors import NameTaken
from kgreview.core.retry import retried

from .. import attribute_rules as arules
from .. import rules
from ..models import Attribute, AttributeValue, Concept, ConceptType
from .common import Evidence, audited, quoted, raise_if, switch_active
from .concept_types import MAX_DEPTH, locked_type

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def type_chain(concept_type: ConceptType | None) -> list[ConceptType]:
    """The type and every type above it, the type first (empty for none); bounded, and
    never walking a type twice."""
    chain: list[ConceptType] = []
    seen: set[int] = set()
    at = concept_type
    while at is not None and at.pk not in seen and len(chain) <= MAX_DEPTH:
        chain.append(at)
        seen.add(at.pk)
        at = at.parent
    return chain


def key_declared_refusal(concept_type: ConceptType, key: str) -> NameTaken | None:
    """The refusal of declaring ``key`` on ``concept_type`` when the type or a type above
    it declares it already (``attribute_rules.attribute_declared_refusal``)."""
    chain = type_chain(concept_type)
    held = {a.concept_type_id: a for a in Attribute.objects.filter(concept_type__in=chain, key=key)}
    return arules.attribute_declared_refusal(concept_type, key, chain, held)


@retried
def attribute_create(
    *,
    type_key: str,
    key: str,
    label: str,
    datatype: str,
    description: str = "",
    acting_user: User | None,
    decision=None,
) -> Attribute:
    """Declare the attribute ``key`` on the concept type ``type_key`` (and so on every
    type below it). Refused when the type is missing or retired, the key, words or
    datatype break the rule book, or the type or a type above it declares the key."""
    raise_if(arules.attribute_key_refusal(key))
    raise_if(arules.attribute_words_refusal(label, description))
    raise_if(arules.datatype_refusal(datatype))
    concept_type = locked_type(type_key)
    raise_if(rules.type_active_refusal(concept_type))
    raise_if(key_declared_refusal(concept_type, key))
    label, description = normal_name(label), description.strip()
    attribute = Attribute.objects.create(
        concept_type=concept_type,
        key=key,
        label=label,
        datatype=datatype,
        description=description,
    )
    audited(
        acting_user=acting_user,
        decision=decision,
        action="attribute.create",
        subject=attribute,
        summary=f"Declared the attribute {quoted(label)} ({datatype}) on the concept type "
        f"{quoted(concept_type.label)}.",
        after={
            "type": type_key,
            "key": key,
            "label": label,
            "datatype": datatype,
            "description": description,
        },
    )
    return attribute


def _switch(attribute: Attribute, *, active: bool, acting_user: User | None, decision):
    attribute = (
        Attribute.objects.select_for_update(no_key=True, of=("self",))
        .select_related("concept_type")
        .get(pk=attribute.pk)
    )
    raise_if(arules.attribute_switch_refusal(attribute, active=active))
    switch_active(
        attribute,
        active=active,
        acting_user=acting_user,
        decision=decision,
        action="attribute",
        summary=f"{'Reactivated' if active else 'Retired'} the attribute "
        f"{quoted(attribute.label)} of {quoted(attribute.concept_type.label)}.",
    )
    return attribute


@retried
def attribute_retire(*, attribute: Attribute, acting_user: User | None, decision=None) -> Attribute:
    """Take an attribute out of use: no concept is given a new value for it; the values
    held keep their history (and stay current until retired one by one)."""
    return _switch(attribute, active=False, acting_user=acting_user, decision=decision)


@retried
def attribute_reactivate(
    *, attribute: Attribute, acting_user: User | None, decision=None
) -> Attribute:
    """Put a retired attribute back in use (refused while its type is retired)."""
    return _switch(attribute, active=True, acting_user=acting_user, decision=decision)


def _locked(concept: Concept, attribute: Attribute) -> tuple[Concept, Attribute]:
    concept = Concept.objects.select_for_update(no_key=True).get(pk=concept.pk)
    attribute = (
        Attribute.objects.select_for_update(no_key=True, of=("self",))
        .select_related("concept_type")
        .get(pk=attribute.pk)
    )
    return concept, attribute


def _current(concept: Concept, attribute: Attribute) -> AttributeValue | None:
    return (
        AttributeValue.objects.select_for_update(no_key=True)
        .filter(concept=concept, attribute=attribute, status=AttributeValue.Status.ACTIVE)
        .first()
    )


def _end(row: AttributeValue, status: str, at) -> None:
    row.status = status
    row.invalid_at = at
    row.save(update_fields=["status", "invalid_at"])


@retried
def attribute_value_set(
    *,
    concept: Concept,
    attribute: Attribute,
    value: str,
    evidence: Evidence | None = None,
    acting_user: User | None,
    decision=None,
) -> AttributeValue:
    """Give ``concept`` the value ``value`` for ``attribute``, stored in its datatype's
    canonical form, with the quote that states it. The value it held (if any) is
    superseded at the same instant. Refused when the concept is not active, the attribute
    is retired or not declared by the concept's type or a type above it, the value lies
    outside the datatype, the evidence does not quote its revision, or the concept holds
    that value already."""
    concept, attribute = _locked(concept, attribute)
    chain = type_chain(concept.type)
    raise_if(arules.value_refusal_first(concept, chain, attribute, value))
    canonical = arules.canonical_value(attribute.datatype, value)
    if evidence is not None:
        evidence.check()
    current = _current(concept, attribute)
    if current is not None and current.value == canonical:
        raise arules.unchanged_refusal(concept, attribute, canonical)
    now = timezone.now()
    if current is not None:
        _end(current, AttributeValue.Status.SUPERSEDED, now)
    row = AttributeValue.objects.create(
        concept=concept,
        attribute=attribute,
        value=canonical,
        recorded_at=now,
        **Evidence.columns(evidence),
    )
    audited(
        acting_user=acting_user,
        decision=decision,
        action="attribute_value.set",
        subject=concept,
        summary=lambda: (
            f"Set the {attribute.label} of {quoted(concept.name)} to {quoted(canonical)}."
        ),
        before={attribute.key: current.value if current else None},
        after={attribute.key: canonical, "value_id": row.pk},
    )
    return row


@retried
def attribute_value_retire(
    *, value: AttributeValue, acting_user: User | None, decision=None
) -> AttributeValue:
    """End a concept's current value for an attribute, leaving it with none (the row
    stays, ``status`` retired). Refused when the row is no longer the current value."""
    row = AttributeValue.objects.select_related("concept", "attribute").get(pk=value.pk)
    _locked(row.concept, row.attribute)
    row = AttributeValue.objects.select_for_update(no_key=True).get(pk=value.pk)
    if row.status != AttributeValue.Status.ACTIVE:
        raise arules.value_ended_refusal(row)
    _end(row, AttributeValue.Status.RETIRED, timezone.now())
    audited(
        acting_user=acting_user,
        decision=decision,
        action="attribute_value.retire",
        subject=row.concept,
        summary=lambda: (
            f"Took the {row.attribute.label} {quoted(row.value)} off {quoted(row.concept.name)}."
        ),
        before={row.attribute.key: row.value},
        after={row.attribute.key: None},
    )
    return row


@retried
def attribute_value_restore(
    *, value: AttributeValue, acting_user: User | None, decision=None
) -> AttributeValue:
    """Make an ended value current again as a new row with its value and quote (an
    undo gives back the value a decision superseded). Refused when the concept holds
    another value now, or the rules refuse the value today (the concept retired, the
    attribute retired or no longer declared by its type)."""
    old = AttributeValue.objects.select_related("concept", "attribute").get(pk=value.pk)
    concept, attribute = _locked(old.concept, old.attribute)
    raise_if(arules.value_refusal_first(concept, type_chain(concept.type), attribute, old.value))
    current = _current(concept, attribute)
    if current is not None:
        raise arules.value_held_refusal(concept, attribute, current.value)
    row = AttributeValue.objects.create(
        concept=concept,
        attribute=attribute,
        value=old.value,
        recorded_at=timezone.now(),
        evidence_revision_id=old.evidence_revision_id,
        evidence_start=old.evidence_start,
        evidence_end=old.evidence_end,
        evidence_quote=old.evidence_quote,
    )
    audited(
        acting_user=acting_user,
        decision=decision,
        action="attribute_value.restore",
        subject=concept,
        summary=lambda: (
            f"Gave {quoted(concept.name)} back the {attribute.label} {quoted(old.value)}."
        ),
        before={attribute.key: None},
        after={attribute.key: old.value, "value_id": row.pk, "restores": old.pk},
    )
    return row
