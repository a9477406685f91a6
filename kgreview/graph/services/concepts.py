"""Concepts and their names: create, describe, rename, add and remove aliases, retire and
reactivate. A name (canonical or alias) belongs to at most one concept; every service
that changes a concept's names, or whether they count, writes the name journal in the
same transaction (``name_index_changed``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils import timezone

from construction.text import name_key
from kgreview.core.errors import ConceptNotActive, NameTaken, StateConflict, ValidationFailed

from .. import rules, selectors
from ..models import Concept, ConceptAlias, ConceptTypeChange
from .common import NAME_MAX, audited, name_index_changed, quoted
from .concept_types import type_to_give

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def _checked_name(name: str) -> str:
    cleaned = selectors.clean_name(name)
    if not cleaned:
        raise ValidationFailed("A concept name cannot be empty.")
    if len(cleaned) > NAME_MAX:
        raise ValidationFailed(f"A concept name is at most {NAME_MAX} characters.")
    return cleaned


def _claim_name(*, concept: Concept, name: str, kind: str) -> ConceptAlias:
    owner = selectors.name_owner(name=name)
    if owner is not None:
        if owner.concept_id == concept.pk:
            return owner
        raise NameTaken(
            f'The name "{name}" already belongs to the concept "{owner.concept.name}".',
            concept_id=owner.concept_id,
        )
    try:
        with transaction.atomic():
            return ConceptAlias.objects.create(
                concept=concept, name=name, kind=kind, key=name_key(name)[:200]
            )
    except IntegrityError:
        raise NameTaken(f'The name "{name}" was just taken by another concept.') from None


def _lock_active(concept: Concept) -> Concept:
    concept = Concept.objects.select_for_update(no_key=True).get(pk=concept.pk)
    refusal = rules.end_refusal(concept)
    if refusal is not None:
        raise refusal
    return concept


@transaction.atomic
def concept_create(
    *,
    name: str,
    description: str = "",
    aliases: Iterable[str] = (),
    type_key: str = "",
    acting_user: User | None,
    decision=None,
) -> Concept:
    """Create an active concept with its canonical name and aliases registered, and the
    type ``type_key`` when one is given (refused in words when missing or retired)."""
    name = _checked_name(name)
    owner = selectors.name_owner(name=name)
    if owner is not None:
        raise NameTaken(
            f'The name "{name}" already belongs to the concept "{owner.concept.name}".',
            concept_id=owner.concept_id,
        )
    concept_type = type_to_give(type_key) if type_key else None
    try:
        with transaction.atomic():
            concept = Concept.objects.create(
                name=name, description=description.strip(), type=concept_type
            )
    except IntegrityError:
        raise NameTaken(f'A concept named "{name}" already exists.') from None
    if concept_type is not None:
        ConceptTypeChange.objects.create(
            concept=concept, type=concept_type, changed_at=concept.created_at
        )
    _claim_name(concept=concept, name=name, kind=ConceptAlias.Role.CANONICAL)
    seen = {name.lower()}
    added = []
    for alias in aliases:
        alias = _checked_name(alias)
        if alias.lower() in seen:
            continue
        seen.add(alias.lower())
        _claim_name(concept=concept, name=alias, kind=ConceptAlias.Role.ALIAS)
        added.append(alias)
    name_index_changed(concepts=[concept.pk])
    audited(
        acting_user=acting_user,
        decision=decision,
        action="concept.create",
        subject=concept,
        summary=f"Created the concept {quoted(name)}.",
        after={
            "name": name,
            "description": concept.description,
            "aliases": added,
            **({"type": concept_type.key} if concept_type is not None else {}),
        },
    )
    return concept


@transaction.atomic
def concept_describe(
    *, concept: Concept, description: str, acting_user: User | None, decision=None
) -> Concept:
    """Change what a concept's description says; its names and edges stay."""
    concept = Concept.objects.select_for_update(no_key=True).get(pk=concept.pk)
    before = concept.description
    concept.description = description.strip()
    concept.save(update_fields=["description", "updated_at"])
    audited(
        acting_user=acting_user,
        decision=decision,
        action="concept.describe",
        subject=concept,
        summary=f"Described the concept {quoted(concept.name)}.",
        before={"description": before},
        after={"description": concept.description},
    )
    return concept


@transaction.atomic
def concept_add_alias(
    *, concept: Concept, name: str, acting_user: User | None, decision=None
) -> ConceptAlias:
    """Register another name for an active concept."""
    concept = _lock_active(concept)
    alias = _claim_name(concept=concept, name=_checked_name(name), kind=ConceptAlias.Role.ALIAS)
    name_index_changed(concepts=[concept.pk])
    audited(
        acting_user=acting_user,
        decision=decision,
        action="concept.add_alias",
        subject=concept,
        summary=f"Added the name {quoted(alias.name)} to {quoted(concept.name)}.",
        after={"alias": alias.name},
    )
    return alias


def _own_alias(concept: Concept, name: str) -> ConceptAlias | None:
    return (
        ConceptAlias.objects.select_for_update(no_key=True)
        .annotate(lname=Lower("name"))
        .filter(concept=concept, lname=selectors.clean_name(name).lower())
        .first()
    )


@transaction.atomic
def concept_rename(
    *, concept: Concept, name: str, acting_user: User | None, decision=None
) -> tuple[Concept, bool]:
    """Give an active concept a new canonical name; the old name stays as an alias.

    Returns the concept and whether the new name was already one of its aliases (an
    undo then knows whether to take the name off again). Refused when another concept
    answers to the name.
    """
    concept = _lock_active(concept)
    old = concept.name
    new = _checked_name(name)
    if new == concept.name:
        raise ValidationFailed(f'"{concept.name}" already has that name.')
    owner = selectors.name_owner(name=new)
    if owner is not None and owner.concept_id != concept.pk:
        raise NameTaken(
            f'The name "{new}" already belongs to the concept "{owner.concept.name}"; '
            "merge the two concepts instead.",
            concept_id=owner.concept_id,
        )
    canonical = ConceptAlias.objects.select_for_update(no_key=True).get(
        concept=concept, kind=ConceptAlias.Role.CANONICAL
    )
    was_alias = owner is not None and owner.pk != canonical.pk
    if owner is not None and owner.pk == canonical.pk:
        # Only the spelling changes ("llm" -> "LLM"): one row, new letters.
        canonical.name = new
        canonical.key = name_key(new)[:200]
        canonical.save(update_fields=["name", "key"])
    else:
        canonical.kind = ConceptAlias.Role.ALIAS
        canonical.save(update_fields=["kind"])
        if owner is not None:  # here: the name was one of the concept's aliases
            promoted = ConceptAlias.objects.select_for_update(no_key=True).get(pk=owner.pk)
            promoted.kind = ConceptAlias.Role.CANONICAL
            promoted.name = new
            promoted.key = name_key(new)[:200]
            promoted.merged_from = None
            promoted.save(update_fields=["kind", "name", "key", "merged_from"])
        else:
            _claim_name(concept=concept, name=new, kind=ConceptAlias.Role.CANONICAL)
    concept.name = new
    try:
        with transaction.atomic():
            concept.save(update_fields=["name", "updated_at"])
    except IntegrityError:
        raise NameTaken(f'A concept named "{new}" already exists.') from None
    name_index_changed(concepts=[concept.pk])
    audited(
        acting_user=acting_user,
        decision=decision,
        action="concept.rename",
        subject=concept,
        summary=f"Renamed the concept {quoted(old)} to {quoted(new)}.",
        before={"name": old},
        after={"name": new},
    )
    return concept, was_alias


@transaction.atomic
def concept_remove_alias(
    *, concept: Concept, name: str, acting_user: User | None, decision=None
) -> ConceptAlias:
    """Take a name off a concept. The row stays (``removed_at``); the name is free again."""
    concept = _lock_active(concept)
    alias = _own_alias(concept, name)
    if alias is None:
        raise ValidationFailed(f'"{selectors.clean_name(name)}" is not a name of "{concept.name}".')
    if alias.kind == ConceptAlias.Role.CANONICAL:
        raise ValidationFailed(
            f'"{alias.name}" is the concept\'s own name; rename the concept instead.'
        )
    if alias.kind == ConceptAlias.Role.MERGED:
        raise ValidationFailed(
            f'"{alias.name}" came with a merge; undo that merge from the concept\'s page instead.'
        )
    alias.removed_at = timezone.now()
    alias.save(update_fields=["removed_at"])
    name_index_changed(concepts=[concept.pk])
    audited(
        acting_user=acting_user,
        decision=decision,
        action="concept.remove_alias",
        subject=concept,
        summary=f"Took the name {quoted(alias.name)} off {quoted(concept.name)}.",
        before={"alias": alias.name},
    )
    return alias


@transaction.atomic
def concept_restore_alias(
    *, alias_id: int, acting_user: User | None, decision=None
) -> ConceptAlias:
    """Give a removed name back to its concept (undoing its removal), if still free."""
    alias = (
        ConceptAlias.all_objects.select_for_update(no_key=True)
        .select_related("concept")
        .get(pk=alias_id)
    )
    if alias.removed_at is None:
        return alias
    owner = selectors.name_owner(name=alias.name)
    if owner is not None:
        raise NameTaken(
            f'The name "{alias.name}" was given to "{owner.concept.name}" since.',
            concept_id=owner.concept_id,
        )
    alias.removed_at = None
    try:
        with transaction.atomic():
            alias.save(update_fields=["removed_at"])
    except IntegrityError:
        raise NameTaken(f'The name "{alias.name}" was just taken by another concept.') from None
    name_index_changed(concepts=[alias.concept_id])
    audited(
        acting_user=acting_user,
        decision=decision,
        action="concept.restore_alias",
        subject=alias.concept,
        summary=f"Gave the name {quoted(alias.name)} back to {quoted(alias.concept.name)}.",
        after={"alias": alias.name},
    )
    return alias


def check_retirable(concept: Concept, active_edges: int) -> None:
    """Only an active concept with no active edges can be retired."""
    if not concept.is_active:
        raise ConceptNotActive(f'"{concept.name}" is {concept.status}, not active.')
    if active_edges:
        raise StateConflict(
            f'"{concept.name}" is an end of {active_edges} active edge(s); undo or '
            "invalidate them first.",
            concept_id=concept.pk,
        )


def _set_status(concept: Concept, status: str, *, acting_user: User | None, decision) -> Concept:
    """Retire or reactivate a locked, checked concept; its names change meaning."""
    before = concept.status
    concept.status = status
    concept.retired_at = timezone.now() if status == Concept.Status.RETIRED else None
    concept.save(update_fields=["status", "retired_at", "updated_at"])
    name_index_changed(concepts=[concept.pk])
    retired = status == Concept.Status.RETIRED
    audited(
        acting_user=acting_user,
        decision=decision,
        action="concept.retire" if retired else "concept.reactivate",
        subject=concept,
        summary=f"{'Retired' if retired else 'Reactivated'} the concept {quoted(concept.name)}.",
        before={"status": before},
        after={"status": status},
    )
    return concept


@transaction.atomic
def concept_retire(*, concept: Concept, acting_user: User | None, decision=None) -> Concept:
    """Take back a concept that should not have been created (undoing its acceptance).

    Only a concept with no active edges can be retired; its names stay reserved for it,
    so accepting the same proposal again brings the same concept back.
    """
    concept = Concept.objects.select_for_update(no_key=True).get(pk=concept.pk)
    used = selectors.edges_active().filter(Q(source=concept) | Q(target=concept)).count()
    check_retirable(concept, used)
    return _set_status(concept, Concept.Status.RETIRED, acting_user=acting_user, decision=decision)


@transaction.atomic
def concept_reactivate(*, concept: Concept, acting_user: User | None, decision=None) -> Concept:
    """Bring a retired concept back, with all its names."""
    concept = Concept.objects.select_for_update(no_key=True).get(pk=concept.pk)
    if concept.status != Concept.Status.RETIRED:
        raise StateConflict(f'"{concept.name}" is {concept.status}, not retired.')
    return _set_status(concept, Concept.Status.ACTIVE, acting_user=acting_user, decision=decision)
