"""The relation vocabulary: add a relation type, describe it (label, verb, description),
declare its inverse, retire and reactivate it. Its shape (direction, symmetry,
acyclicity) never changes, since that would change the meaning of its history; retiring
keeps its edges, and its inverse pair (the facts its edges state do not change).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.db import transaction

from construction.text import normal_name
from kgreview.core.errors import NameTaken, ValidationFailed

from .. import rules
from ..models import RelationType
from .common import audited, lock_relation, lock_relations, quoted, raise_if, switch_active

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@transaction.atomic
def relation_type_create(
    *,
    key: str,
    label: str,
    verb: str,
    description: str = "",
    directed: bool = True,
    symmetric: bool = False,
    acyclic: bool = False,
    inverse: RelationType | None = None,
    acting_user: User | None,
    decision=None,
) -> RelationType:
    """Add a term to the vocabulary. Its shape (direction, symmetry, acyclicity) is fixed;
    ``inverse``, when given, is declared its inverse (``relation_type_pair``)."""
    if RelationType.objects.filter(key=key).exists():
        raise NameTaken(f'The relation "{key}" already exists.')
    relation = RelationType(
        key=key,
        label=normal_name(label),
        verb=normal_name(verb),
        description=description.strip(),
        directed=directed,
        symmetric=symmetric,
        acyclic=acyclic,
    )
    try:
        relation.full_clean()
    except ValidationError as exc:
        raise ValidationFailed(
            "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
        ) from None
    relation.save()
    audited(
        acting_user=acting_user,
        decision=decision,
        action="relation_type.create",
        subject=relation,
        summary=f"Added the relation type {quoted(relation.label)}.",
        after={
            "key": key,
            "label": relation.label,
            "verb": relation.verb,
            "description": relation.description,
            "directed": directed,
            "symmetric": symmetric,
            "acyclic": acyclic,
        },
    )
    if inverse is not None:
        relation = relation_type_pair(
            relation=relation, inverse=inverse, acting_user=acting_user, decision=decision
        )
    return relation


@transaction.atomic
def relation_type_pair(
    *,
    relation: RelationType,
    inverse: RelationType | None,
    acting_user: User | None,
    decision=None,
) -> RelationType:
    """Declare ``inverse`` the inverse of ``relation`` and ``relation`` the inverse of
    ``inverse`` (None: ``relation`` has no inverse). The pair ``relation`` had before is
    released on both sides. Refused in the rule book's words (``rules.inverse_refusal``).

    Locks the relations concerned (both, and the partner ``relation`` leaves) in id order.
    """
    relation = lock_relation(relation)
    old_id = relation.inverse_id
    ids = {relation.pk, *(i for i in (old_id, inverse.pk if inverse else None) if i)}
    lock_relations(ids)
    rows = RelationType.objects.select_related("inverse").in_bulk(ids)
    relation = rows[relation.pk]
    other = rows[inverse.pk] if inverse is not None else None
    if (other.pk if other else None) == old_id:
        return relation  # no change: nothing to record
    raise_if(rules.inverse_refusal(relation, other))
    if old_id is not None:
        RelationType.objects.filter(pk__in=[relation.pk, old_id]).update(inverse=None)
    if other is not None:
        RelationType.objects.filter(pk=relation.pk).update(inverse=other.pk)
        RelationType.objects.filter(pk=other.pk).update(inverse=relation.pk)
    relation.inverse = other
    was = rows[old_id].key if old_id else ""
    summary = (
        f"Declared {quoted(other.label)} the inverse of {quoted(relation.label)}."
        if other is not None
        else f"Declared {quoted(relation.label)} no inverse (it was {quoted(was)})."
    )
    audited(
        acting_user=acting_user,
        decision=decision,
        action="relation_type.pair",
        subject=relation,
        summary=summary,
        before={"inverse": was},
        after={"inverse": other.key if other is not None else ""},
    )
    return relation


@transaction.atomic
def relation_type_describe(
    *,
    relation: RelationType,
    label: str | None = None,
    verb: str | None = None,
    description: str | None = None,
    inverse_key: str | None = None,
    acting_user: User | None,
    decision=None,
) -> RelationType:
    """Change how a relation is named and explained, never what it means structurally;
    ``inverse_key`` ("" for none; None leaves it) declares its inverse as
    ``relation_type_pair`` does, in the same transaction."""
    relation = lock_relation(relation)
    fields = ("label", "verb", "description")
    was = {f: getattr(relation, f) for f in fields}
    for field, value in (("label", label), ("verb", verb)):
        if value is not None and not normal_name(value):
            raise ValidationFailed(f"A relation's {field} must hold words.")
    if label is not None:
        relation.label = normal_name(label)
    if verb is not None:
        relation.verb = normal_name(verb)
    if description is not None:
        relation.description = description.strip()
    relation.save(update_fields=list(fields))
    changed = [f for f in fields if getattr(relation, f) != was[f]]
    renamed = was["label"] != relation.label
    audited(
        acting_user=acting_user,
        decision=decision,
        action="relation_type.describe",
        subject=relation,
        summary=(
            f"Renamed the relation type {quoted(was['label'])} to {quoted(relation.label)}."
            if renamed
            else f"Described the relation type {quoted(relation.label)}."
        ),
        before={f: was[f] for f in changed},
        after={f: getattr(relation, f) for f in changed},
    )
    if inverse_key is not None:
        relation = relation_type_pair(
            relation=relation,
            inverse=inverse_named(inverse_key),
            acting_user=acting_user,
            decision=decision,
        )
    return relation


def inverse_named(key: str) -> RelationType | None:
    """The relation ``key`` names as an inverse ("": none), refused in words when none
    has that key."""
    if not key:
        return None
    found = RelationType.objects.filter(key=key).first()
    if found is None:
        raise rules.no_relation(key[:64])
    return found


def _switch(
    relation: RelationType, *, active: bool, acting_user: User | None, decision
) -> RelationType:
    """Put a relation in or out of the active vocabulary, refusing a change to nothing."""
    relation = lock_relation(relation)
    raise_if(rules.switch_refusal(relation, active=active, what=f'The relation "{relation.key}"'))
    verb = "Reactivated" if active else "Retired"
    switch_active(
        relation,
        active=active,
        acting_user=acting_user,
        decision=decision,
        action="relation_type",
        summary=f"{verb} the relation type {quoted(relation.label)}.",
    )
    return relation


@transaction.atomic
def relation_type_retire(
    *, relation: RelationType, acting_user: User | None, decision=None
) -> RelationType:
    """Take a relation out of the active vocabulary; its edges and history stay."""
    return _switch(relation, active=False, acting_user=acting_user, decision=decision)


@transaction.atomic
def relation_type_reactivate(
    *, relation: RelationType, acting_user: User | None, decision=None
) -> RelationType:
    """Put a retired relation back in the active vocabulary."""
    return _switch(relation, active=True, acting_user=acting_user, decision=decision)
