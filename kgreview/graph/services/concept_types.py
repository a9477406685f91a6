"""The concept vocabulary: add a concept type, describe it (label, description, parent),
retire and reactivate it; and give a concept a type (or take it away), keeping the
history every as-of read asks (``ConceptTypeChange``).

The rules and their words are ``graph.rules``' (key, words, parent cycle, a retired type
given to nobody); these services raise what it returns, before writing anything.

Locks: a concept's type change locks the concept, then the type it gets (the lock
order's concepts, then the vocabulary, as for relation types), so a type being retired
and a concept being given it wait for each other. A change to the hierarchy locks the
type, then each ancestor of its new parent as it walks up, so two changes that would
close a loop between them cannot both pass; a deadlock between them is retried whole
(each service is one ``kgreview.core.retry`` transaction), then refused with ``Busy``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import Q
from django.utils import timezone

from construction.text import normal_name
from kgreview.core.errors import PatternViolation
from kgreview.core.retry import retried

from .. import pattern_book, rules
from ..models import Concept, ConceptType, ConceptTypeChange, Edge
from .common import audited, quoted, raise_if, switch_active

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# The deepest hierarchy walked for a cycle; a deeper one is refused as a loop would be.
MAX_DEPTH = 200


def locked_type(key: str) -> ConceptType:
    """The type ``key``, locked; refused in words when there is none (whether it may be
    used, retired or not, is the caller's rule)."""
    if rules.type_key_refusal(key) is not None:
        raise rules.no_type(key)
    found = ConceptType.objects.select_for_update(no_key=True).filter(key=key).first()
    if found is None:
        raise rules.no_type(key)
    return found


def _parent(key: str, *, child_key: str) -> ConceptType:
    """The locked parent named ``key`` for the type ``child_key``, refused in words when
    it is missing, retired or would make the hierarchy loop."""
    parent = locked_type(key)
    raise_if(rules.type_active_refusal(parent, as_parent=True))
    ancestors, at = [parent.key], parent
    while at.parent_id is not None and len(ancestors) <= MAX_DEPTH:
        at = ConceptType.objects.select_for_update(no_key=True).get(pk=at.parent_id)
        ancestors.append(at.key)
        if at.key == child_key:
            break
    raise_if(rules.parent_cycle_refusal(child_key, ancestors))
    return parent


def _words(label: str, description: str) -> tuple[str, str]:
    """The label and description as stored, refused in words before anything is written."""
    raise_if(rules.type_words_refusal(label, description))
    return normal_name(label), description.strip()


@retried
def concept_type_create(
    *,
    key: str,
    label: str,
    description: str = "",
    parent_key: str = "",
    acting_user: User | None,
    decision=None,
) -> ConceptType:
    """Add a type to the concept vocabulary, under ``parent_key`` when one is given."""
    raise_if(rules.type_key_refusal(key))
    label, description = _words(label, description)
    if ConceptType.objects.filter(key=key).exists():
        raise rules.type_taken(key)
    parent = _parent(parent_key, child_key=key) if parent_key else None
    concept_type = ConceptType.objects.create(
        key=key, label=label, description=description, parent=parent
    )
    audited(
        acting_user=acting_user,
        decision=decision,
        action="concept_type.create",
        subject=concept_type,
        summary=f"Added the concept type {quoted(label)}"
        + (f" under {quoted(parent.label)}." if parent else "."),
        after={
            "key": key,
            "label": label,
            "description": description,
            "parent": parent.key if parent else None,
        },
    )
    return concept_type


def _described(concept_type: ConceptType) -> dict[str, str | None]:
    parent = concept_type.parent
    return {
        "label": concept_type.label,
        "description": concept_type.description,
        "parent": parent.key if parent is not None else None,
    }


def _lock(concept_type: ConceptType) -> ConceptType:
    return ConceptType.objects.select_for_update(no_key=True).get(pk=concept_type.pk)


@retried
def concept_type_describe(
    *,
    concept_type: ConceptType,
    label: str | None = None,
    description: str | None = None,
    parent_key: str | None = None,
    acting_user: User | None,
    decision=None,
) -> ConceptType:
    """Change a type's words or its place in the hierarchy (``parent_key=""``: a top
    type; ``None``: the parent stays). Its key never changes."""
    concept_type = _lock(concept_type)
    was = _described(concept_type)
    concept_type.label, concept_type.description = _words(
        concept_type.label if label is None else label,
        concept_type.description if description is None else description,
    )
    if parent_key is not None:
        concept_type.parent = (
            _parent(parent_key, child_key=concept_type.key) if parent_key else None
        )
    concept_type.save(update_fields=["label", "description", "parent"])
    now = _described(concept_type)
    changed = [f for f in now if now[f] != was[f]]
    audited(
        acting_user=acting_user,
        decision=decision,
        action="concept_type.describe",
        subject=concept_type,
        summary=f"Described the concept type {quoted(concept_type.label)}.",
        before={f: was[f] for f in changed},
        after={f: now[f] for f in changed},
    )
    return concept_type


def _switch(
    concept_type: ConceptType, *, active: bool, acting_user: User | None, decision
) -> ConceptType:
    concept_type = _lock(concept_type)
    raise_if(
        rules.switch_refusal(
            concept_type, active=active, what=f'The concept type "{concept_type.key}"'
        )
    )
    if active and concept_type.parent is not None:
        raise_if(rules.type_active_refusal(concept_type.parent, as_parent=True))
    if not active:
        children = list(
            concept_type.children.filter(active=True).order_by("key").values_list("key", flat=True)
        )
        raise_if(rules.type_retire_refusal(concept_type, children))
    switch_active(
        concept_type,
        active=active,
        acting_user=acting_user,
        decision=decision,
        action="concept_type",
        summary=f"{'Reactivated' if active else 'Retired'} the concept type "
        f"{quoted(concept_type.label)}.",
    )
    return concept_type


@retried
def concept_type_retire(
    *, concept_type: ConceptType, acting_user: User | None, decision=None
) -> ConceptType:
    """Take a type out of use: no concept is given it any more; the concepts that have it
    keep it, and its history stays. Refused while it has active subtypes."""
    return _switch(concept_type, active=False, acting_user=acting_user, decision=decision)


@retried
def concept_type_reactivate(
    *, concept_type: ConceptType, acting_user: User | None, decision=None
) -> ConceptType:
    """Put a retired type back in use (refused while its parent is retired)."""
    return _switch(concept_type, active=True, acting_user=acting_user, decision=decision)


def _broken_by(concept: Concept, new: ConceptType | None) -> list[PatternViolation]:
    """The refusals the concept's active edges would meet were it of type ``new``: those
    that fit their relation's patterns now and would not then (two or three queries)."""
    edges = list(
        Edge.objects.filter(Q(source=concept) | Q(target=concept), status=Edge.Status.ACTIVE)
        .select_related("source", "target", "relation")
        .order_by("pk")
    )
    book = pattern_book.load({e.relation_id for e in edges})
    broken = []
    for edge in edges:
        if not book.of(edge.relation_id):
            continue
        ends = [concept if c.pk == concept.pk else c for c in (edge.source, edge.target)]
        if book.concepts_refusal(edge.relation, ends[0], ends[1]) is not None:
            continue  # broken already: not this change's doing
        names = [c.name for c in ends]
        given = new.pk if new is not None else None
        types = [given if c.pk == concept.pk else c.type_id for c in ends]
        refusal = book.refusal(edge.relation, names[0], types[0], names[1], types[1])
        if refusal is not None:
            broken.append(refusal)
    return broken


def type_change_pattern_refusal(
    concept: Concept, new: ConceptType | None
) -> PatternViolation | None:
    """The refusal a concept's type change meets from its active edges' relation patterns
    (None: it breaks none), as ``concept_set_type`` raises it and a card's blockers say
    it. An untyped concept's patterned edges are broken already, so typing it breaks none."""
    return rules.type_change_pattern_refusal(concept, new, _broken_by(concept, new))


def type_to_give(type_key: str) -> ConceptType:
    """The type ``type_key``, locked, that a concept is about to be given: refused in words
    when it does not exist or was retired."""
    found = locked_type(type_key)
    raise_if(rules.type_active_refusal(found))
    return found


@retried
def concept_set_type(
    *,
    concept: Concept,
    type_key: str,
    acting_user: User | None,
    decision=None,
) -> Concept:
    """Give an active concept the type ``type_key`` (``""``: untyped), writing the change
    to its type history. Refused when the type is missing or retired, or already its."""
    # Locked alone: PostgreSQL locks no row on the nullable side of a join (its type).
    concept = Concept.objects.select_for_update(no_key=True).get(pk=concept.pk)
    raise_if(rules.end_refusal(concept))
    new = type_to_give(type_key) if type_key else None
    old = concept.type
    raise_if(rules.type_change_refusal(concept, old, new))
    raise_if(type_change_pattern_refusal(concept, new))
    concept.type = new
    concept.save(update_fields=["type", "updated_at"])
    ConceptTypeChange.objects.create(concept=concept, type=new, changed_at=timezone.now())
    audited(
        acting_user=acting_user,
        decision=decision,
        action="concept.set_type",
        subject=concept,
        summary=lambda: (
            f"Gave {quoted(concept.name)} the type {quoted(new.label)}."
            if new
            else f"Took the type {quoted(old.label if old else '')} off {quoted(concept.name)}."
        ),
        before={"type": old.key if old else None},
        after={"type": new.key if new else None},
    )
    return concept
