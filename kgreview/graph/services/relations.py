"""The relation vocabulary: add a relation type, describe it (label, verb, description),
retire and reactivate it. Its shape (direction, symmetry, acyclicity) never changes,
since that would change the meaning of its history; retiring keeps its edges.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.db import transaction

from construction.text import normal_name
from kgreview.core.errors import NameTaken, ValidationFailed

from .. import rules
from ..models import RelationType
from .common import audited, lock_relation, quoted, raise_if, switch_active

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
    acting_user: User | None,
    decision=None,
) -> RelationType:
    """Add a term to the vocabulary. Its shape (direction, symmetry, acyclicity) is fixed."""
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
    return relation


@transaction.atomic
def relation_type_describe(
    *,
    relation: RelationType,
    label: str | None = None,
    verb: str | None = None,
    description: str | None = None,
    acting_user: User | None,
    decision=None,
) -> RelationType:
    """Change how a relation is named and explained; never what it means structurally."""
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
    return relation


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
