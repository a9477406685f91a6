"""Relation patterns: allow a (domain type, range type) pair on a relation, retire one,
bring one back. A relation with no active pattern is open; its first pattern closes it
to what the patterns allow, for every edge written from then on (edges already in the
graph stay, and ``manage.py validate`` reports those that break it).

The rules and their words are ``graph.rules``' (``pattern_taken``,
``pattern_type_refusal``, ``pattern_state_refusal``). Locks: the relation's row, then
the two types (the lock order's relation types, then the vocabulary), so a pattern made
and an edge of an acyclic relation written wait for each other, and two curators
allowing the same pair cannot both pass. Each service is one retried transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgreview.core.retry import retried

from .. import rules
from ..models import ConceptType, RelationPattern, RelationType
from .common import audited, lock_relation, raise_if, switch_active
from .concept_types import locked_type

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def _type(key: str) -> ConceptType:
    """The locked active type ``key``, refused in words when missing or retired."""
    found = locked_type(key)
    raise_if(rules.pattern_type_refusal(found))
    return found


def _relation(key: str) -> RelationType:
    found = RelationType.objects.select_for_update(no_key=True).filter(key=key).first()
    if found is None:
        raise rules.no_relation(key)
    raise_if(rules.relation_refusal(found))
    return found


def _twin(relation: RelationType, domain: ConceptType, range_: ConceptType):
    """An active pattern of the relation allowing the pair already (either way round in
    a symmetric relation)."""
    pairs = [(domain.pk, range_.pk)]
    if relation.symmetric:
        pairs.append((range_.pk, domain.pk))
    for d, r in pairs:
        found = (
            RelationPattern.objects.filter(relation=relation, domain_id=d, range_id=r, active=True)
            .select_related("domain", "range")
            .first()
        )
        if found is not None:
            return found
    return None


def _words(pattern: RelationPattern) -> str:
    return f"{rules.a_type(pattern.domain)} → {rules.a_type(pattern.range)}"


def _after(pattern: RelationPattern) -> dict:
    return {
        "relation": pattern.relation.key,
        "domain": pattern.domain.key,
        "range": pattern.range.key,
        "description": pattern.description,
    }


@retried
def pattern_create(
    *,
    relation_key: str,
    domain_key: str,
    range_key: str,
    description: str = "",
    acting_user: User | None,
    decision=None,
) -> RelationPattern:
    """Allow the relation ``relation_key`` to join a concept of type ``domain_key`` (or
    below) to one of ``range_key`` (or below). Refused in words when the relation or a
    type is missing or retired, or the relation allows the pair already."""
    relation = _relation(relation_key)
    domain = _type(domain_key)
    range_ = domain if range_key == domain_key else _type(range_key)
    twin = _twin(relation, domain, range_)
    if twin is not None:
        raise rules.pattern_taken(relation, twin.domain, twin.range)
    pattern = RelationPattern.objects.create(
        relation=relation, domain=domain, range=range_, description=description.strip()
    )
    audited(
        acting_user=acting_user,
        decision=decision,
        action="relation_pattern.create",
        subject=pattern,
        summary=f'Allowed {_words(pattern)} in the relation "{relation.key}".',
        after=_after(pattern),
    )
    return pattern


def _lock(pattern: RelationPattern) -> RelationPattern:
    relation = lock_relation(RelationType.objects.get(pk=pattern.relation_id))
    locked = (
        RelationPattern.objects.select_for_update(no_key=True)
        .select_related("domain", "range")
        .get(pk=pattern.pk)
    )
    locked.relation = relation
    return locked


@retried
def pattern_retire(
    *, pattern: RelationPattern, acting_user: User | None, decision=None
) -> RelationPattern:
    """Stop allowing a pattern; the row stays for history (an as-of read sees it). A
    relation left with no active pattern is open again."""
    pattern = _lock(pattern)
    raise_if(rules.pattern_state_refusal(pattern, active=False))
    switch_active(
        pattern,
        active=False,
        acting_user=acting_user,
        decision=decision,
        action="relation_pattern",
        summary=f'Retired the pattern {_words(pattern)} of the relation "{pattern.relation.key}".',
        after=_after(pattern),
    )
    return pattern


@retried
def pattern_reactivate(
    *, pattern: RelationPattern, acting_user: User | None, decision=None
) -> RelationPattern:
    """Allow a retired pattern again (refused while its relation or a type is retired, or
    when an active twin allows the pair already)."""
    pattern = _lock(pattern)
    raise_if(rules.pattern_state_refusal(pattern, active=True))
    raise_if(rules.relation_refusal(pattern.relation))
    raise_if(
        rules.pattern_type_refusal(pattern.domain) or rules.pattern_type_refusal(pattern.range)
    )
    twin = _twin(pattern.relation, pattern.domain, pattern.range)
    if twin is not None:
        raise rules.pattern_taken(pattern.relation, twin.domain, twin.range)
    switch_active(
        pattern,
        active=True,
        acting_user=acting_user,
        decision=decision,
        action="relation_pattern",
        summary=f'Allowed the pattern {_words(pattern)} of the relation "{pattern.relation.key}" '
        "again.",
        after=_after(pattern),
    )
    return pattern
