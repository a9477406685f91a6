"""Every write to the graph. One transaction per call; callers never touch rows directly.

Locking rules: a service locks (``select_for_update``) the rows it changes before it
checks their state. Edges of an acyclic relation are serialised per relation by locking
its ``RelationType`` row, so two concurrent inserts cannot close a cycle between them.
Concepts are locked in id order so concurrent merges cannot deadlock.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.db.models.functions import Lower
from django.utils import timezone

from construction.text import name_key
from kgreview.core.errors import (
    ConceptNotActive,
    CycleDetected,
    DuplicateEdge,
    EvidenceMismatch,
    InactiveRelation,
    NameTaken,
    SelfLoop,
    StateConflict,
    ValidationFailed,
)

from . import selectors
from .models import (
    Concept,
    ConceptAlias,
    Edge,
    NameIndexVersion,
    RelationType,
    SourceRevision,
)

# Importing sources is a graph write like the others: callers find it here too.
from .sources import SourceImportResult, source_import, text_sha256  # noqa: F401

NAME_MAX = 200


@dataclass(frozen=True)
class Evidence:
    """A verbatim quote of a source revision: ``revision.text[start:end] == quote``."""

    revision: SourceRevision
    start: int
    end: int
    quote: str

    @classmethod
    def of(cls, row) -> Evidence | None:
        """The evidence held in a row's ``evidence_*`` columns (an edge or a proposal)."""
        if row.evidence_revision_id is None:
            return None
        return cls(
            revision=row.evidence_revision,
            start=row.evidence_start,
            end=row.evidence_end,
            quote=row.evidence_quote,
        )

    @staticmethod
    def columns(evidence: Evidence | None) -> dict:
        """The ``evidence_*`` column values for a row carrying ``evidence`` (or none)."""
        return {
            "evidence_revision": evidence.revision if evidence else None,
            "evidence_start": evidence.start if evidence else None,
            "evidence_end": evidence.end if evidence else None,
            "evidence_quote": evidence.quote if evidence else "",
        }

    def check(self) -> None:
        text = self.revision.text
        if not 0 <= self.start < self.end <= len(text):
            raise EvidenceMismatch(
                f"Evidence offsets {self.start}..{self.end} fall outside revision "
                f"{self.revision.number} of {self.revision.source.slug} "
                f"({len(text)} characters)."
            )
        if text[self.start : self.end] != self.quote:
            raise EvidenceMismatch(
                f"The quoted evidence does not match revision {self.revision.number} of "
                f"{self.revision.source.slug} at {self.start}..{self.end}."
            )


def _user(user: AbstractBaseUser | None):
    return user if user is not None and user.is_authenticated else None


# --- Concepts ---------------------------------------------------------------------------


def name_index_changed() -> None:
    """Tell every worker's name index that existing names changed meaning (call in the
    same transaction as the change)."""
    updated = NameIndexVersion.objects.filter(pk=1).update(version=F("version") + 1)
    if not updated:
        NameIndexVersion.objects.get_or_create(pk=1, defaults={"version": 1})


def inactive_words(concept: Concept) -> str:
    """Why a concept that is not active cannot be used, naming the survivor of a merge."""
    if concept.status == Concept.Status.MERGED and concept.merged_into_id:
        survivor = Concept.objects.filter(pk=concept.merged_into_id).only("name").first()
        return (
            f'"{concept.name}" was merged into "{survivor.name if survivor else "?"}"; '
            "use the surviving concept."
        )
    if concept.status == Concept.Status.RETIRED:
        return (
            f'"{concept.name}" was retired; a curator can reactivate it from its page, '
            "or choose another concept."
        )
    return f'"{concept.name}" is {concept.status}, not active.'


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


@transaction.atomic
def concept_create(*, name: str, description: str = "", aliases: Iterable[str] = ()) -> Concept:
    """Create an active concept with its canonical name and aliases registered."""
    name = _checked_name(name)
    owner = selectors.name_owner(name=name)
    if owner is not None:
        raise NameTaken(
            f'The name "{name}" already belongs to the concept "{owner.concept.name}".',
            concept_id=owner.concept_id,
        )
    try:
        with transaction.atomic():
            concept = Concept.objects.create(name=name, description=description.strip())
    except IntegrityError:
        raise NameTaken(f'A concept named "{name}" already exists.') from None
    _claim_name(concept=concept, name=name, kind=ConceptAlias.Kind.CANONICAL)
    seen = {name.lower()}
    for alias in aliases:
        alias = _checked_name(alias)
        if alias.lower() in seen:
            continue
        seen.add(alias.lower())
        _claim_name(concept=concept, name=alias, kind=ConceptAlias.Kind.ALIAS)
    return concept


@transaction.atomic
def concept_add_alias(*, concept: Concept, name: str) -> ConceptAlias:
    """Register another name for an active concept."""
    concept = Concept.objects.select_for_update().get(pk=concept.pk)
    if not concept.is_active:
        raise ConceptNotActive(inactive_words(concept), concept_id=concept.pk)
    return _claim_name(concept=concept, name=_checked_name(name), kind=ConceptAlias.Kind.ALIAS)


def _own_alias(concept: Concept, name: str) -> ConceptAlias | None:
    return (
        ConceptAlias.objects.select_for_update()
        .annotate(lname=Lower("name"))
        .filter(concept=concept, lname=selectors.clean_name(name).lower())
        .first()
    )


@transaction.atomic
def concept_rename(*, concept: Concept, name: str) -> tuple[Concept, bool]:
    """Give an active concept a new canonical name; the old name stays as an alias.

    Returns the concept and whether the new name was already one of its aliases (an
    undo then knows whether to take the name off again). Refused when another concept
    answers to the name.
    """
    concept = Concept.objects.select_for_update().get(pk=concept.pk)
    if not concept.is_active:
        raise ConceptNotActive(inactive_words(concept), concept_id=concept.pk)
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
    canonical = ConceptAlias.objects.select_for_update().get(
        concept=concept, kind=ConceptAlias.Kind.CANONICAL
    )
    was_alias = owner is not None and owner.pk != canonical.pk
    if owner is not None and owner.pk == canonical.pk:
        # Only the spelling changes ("llm" -> "LLM"): one row, new letters.
        canonical.name = new
        canonical.key = name_key(new)[:200]
        canonical.save(update_fields=["name", "key"])
    else:
        canonical.kind = ConceptAlias.Kind.ALIAS
        canonical.save(update_fields=["kind"])
        if was_alias:
            promoted = ConceptAlias.objects.select_for_update().get(pk=owner.pk)
            promoted.kind = ConceptAlias.Kind.CANONICAL
            promoted.name = new
            promoted.key = name_key(new)[:200]
            promoted.merged_from = None
            promoted.save(update_fields=["kind", "name", "key", "merged_from"])
        else:
            _claim_name(concept=concept, name=new, kind=ConceptAlias.Kind.CANONICAL)
    concept.name = new
    try:
        with transaction.atomic():
            concept.save(update_fields=["name", "updated_at"])
    except IntegrityError:
        raise NameTaken(f'A concept named "{new}" already exists.') from None
    name_index_changed()
    return concept, was_alias


@transaction.atomic
def concept_remove_alias(*, concept: Concept, name: str) -> ConceptAlias:
    """Take a name off a concept. The row stays (``removed_at``); the name is free again."""
    concept = Concept.objects.select_for_update().get(pk=concept.pk)
    if not concept.is_active:
        raise ConceptNotActive(inactive_words(concept), concept_id=concept.pk)
    alias = _own_alias(concept, name)
    if alias is None:
        raise ValidationFailed(f'"{selectors.clean_name(name)}" is not a name of "{concept.name}".')
    if alias.kind == ConceptAlias.Kind.CANONICAL:
        raise ValidationFailed(
            f'"{alias.name}" is the concept\'s own name; rename the concept instead.'
        )
    if alias.kind == ConceptAlias.Kind.MERGED:
        raise ValidationFailed(
            f'"{alias.name}" came with a merge; undo that merge from the concept\'s page instead.'
        )
    alias.removed_at = timezone.now()
    alias.save(update_fields=["removed_at"])
    name_index_changed()
    return alias


@transaction.atomic
def concept_restore_alias(*, alias_id: int) -> ConceptAlias:
    """Give a removed name back to its concept (undoing its removal), if still free."""
    alias = ConceptAlias.all_objects.select_for_update().select_related("concept").get(pk=alias_id)
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
    name_index_changed()
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


@transaction.atomic
def concept_retire(*, concept: Concept) -> Concept:
    """Take back a concept that should not have been created (undoing its acceptance).

    Only a concept with no active edges can be retired; its names stay reserved for it,
    so accepting the same proposal again brings the same concept back.
    """
    concept = Concept.objects.select_for_update().get(pk=concept.pk)
    used = selectors.edges_active().filter(Q(source=concept) | Q(target=concept)).count()
    check_retirable(concept, used)
    concept.status = Concept.Status.RETIRED
    concept.retired_at = timezone.now()
    concept.save(update_fields=["status", "retired_at", "updated_at"])
    name_index_changed()
    return concept


@transaction.atomic
def concept_reactivate(*, concept: Concept) -> Concept:
    """Bring a retired concept back, with all its names."""
    concept = Concept.objects.select_for_update().get(pk=concept.pk)
    if concept.status != Concept.Status.RETIRED:
        raise StateConflict(f'"{concept.name}" is {concept.status}, not retired.')
    concept.status = Concept.Status.ACTIVE
    concept.retired_at = None
    concept.save(update_fields=["status", "retired_at", "updated_at"])
    name_index_changed()
    return concept


@dataclass
class MergeOutcome:
    survivor: Concept
    loser: Concept
    superseded: list[tuple[Edge, Edge]] = field(default_factory=list)
    invalidated: list[Edge] = field(default_factory=list)
    moved_names: list[str] = field(default_factory=list)


def _lock_concepts(*ids: int) -> dict[int, Concept]:
    rows = Concept.objects.select_for_update().filter(pk__in=ids).order_by("pk")
    return {c.pk: c for c in rows}


@transaction.atomic
def concept_merge(
    *,
    loser: Concept,
    survivor: Concept,
    user: AbstractBaseUser | None = None,
    reason: str = "",
    proposal=None,
    decision=None,
) -> MergeOutcome:
    """Merge ``loser`` into ``survivor``; nothing is deleted.

    The loser becomes a merged concept pointing at the survivor, all its names become
    names of the survivor, and each of its active edges is superseded by a copy on the
    survivor. A copy that would be a self-loop or repeat a fact the survivor already
    holds is invalidated instead, with the reason. A merge that would close a cycle in an
    acyclic relation is refused as a whole.
    """
    if loser.pk == survivor.pk:
        raise ValidationFailed("A concept cannot be merged into itself.")
    locked = _lock_concepts(loser.pk, survivor.pk)
    loser, survivor = locked[loser.pk], locked[survivor.pk]
    for concept in (loser, survivor):
        if not concept.is_active:
            raise ConceptNotActive(inactive_words(concept), concept_id=concept.pk)
    now = timezone.now()
    who = _user(user)
    outcome = MergeOutcome(survivor=survivor, loser=loser)
    why = reason or f'"{loser.name}" merged into "{survivor.name}"'

    edges = list(
        selectors.edges_active()
        .select_for_update(of=("self",))
        .filter(Q(source=loser) | Q(target=loser))
        .select_related("relation", "evidence_revision")
        .order_by("pk")
    )
    acyclic_new: list[Edge] = []
    for old in edges:
        src = survivor.pk if old.source_id == loser.pk else old.source_id
        dst = survivor.pk if old.target_id == loser.pk else old.target_id
        _retire(old, status=Edge.Status.SUPERSEDED, at=now, user=who, decision=decision, reason=why)
        if src == dst:
            _set_retired_status(
                old,
                Edge.Status.INVALIDATED,
                f'{why}: the edge would join "{survivor.name}" to itself.',
            )
            outcome.invalidated.append(old)
            continue
        existing = selectors.active_edge_between(
            source_id=src, target_id=dst, relation=old.relation
        )
        if existing is not None:
            _set_retired_status(
                old,
                Edge.Status.INVALIDATED,
                f"{why}: the same fact is already held by edge #{existing.pk}.",
            )
            outcome.invalidated.append(old)
            continue
        new = _insert_edge(
            source_id=src,
            target_id=dst,
            relation=old.relation,
            weight=old.weight,
            confidence=old.confidence,
            reason=old.reason,
            evidence=Evidence.of(old),
            valid_at=old.valid_at,
            recorded_at=now,
            supersedes=old,
            proposal=proposal or old.proposal,
            decision=decision or old.decision,
            decided_by=who or old.decided_by,
        )
        outcome.superseded.append((old, new))
        if old.relation.acyclic:
            acyclic_new.append(new)

    for new in acyclic_new:
        path = selectors.relation_path(
            relation=new.relation, start_id=new.target_id, goal_id=new.source_id
        )
        if path is not None:
            raise CycleDetected(
                f'Merging "{loser.name}" into "{survivor.name}" would create a '
                f"{new.relation.key} cycle: {_path_words(path + [path[0]])}. "
                "Invalidate one of those edges first.",
                path=path,
            )

    for alias in ConceptAlias.objects.select_for_update().filter(concept=loser):
        alias.concept = survivor
        alias.kind = ConceptAlias.Kind.MERGED
        alias.merged_from = loser
        alias.save(update_fields=["concept", "kind", "merged_from"])
        outcome.moved_names.append(alias.name)

    loser.status = Concept.Status.MERGED
    loser.merged_into = survivor
    loser.merged_at = now
    loser.save(update_fields=["status", "merged_into", "merged_at", "updated_at"])
    name_index_changed()
    return outcome


@dataclass
class UnmergeOutcome:
    loser: Concept
    survivor: Concept
    restored: list[Edge] = field(default_factory=list)
    names: list[str] = field(default_factory=list)


@transaction.atomic
def concept_unmerge(
    *, loser: Concept, user: AbstractBaseUser | None = None, reason: str = "", decision=None
) -> UnmergeOutcome:
    """Undo a merge: the loser is a concept again, with its names and edges.

    The merge left a precise trace: the rows it retired and the rows it wrote all carry
    the merge's timestamp. Each edge the merge moved is moved back (a new row
    superseding the moved one) and each edge it retired as a self-loop or a repeat is
    restored. Refused as a whole if a moved edge changed since, or if a restored edge
    would now close a cycle.
    """
    loser = Concept.objects.select_for_update().get(pk=loser.pk)
    if loser.status != Concept.Status.MERGED:
        raise StateConflict(f'"{loser.name}" is {loser.status}; there is no merge to undo.')
    survivor = Concept.objects.select_for_update().get(pk=loser.merged_into_id)
    if not survivor.is_active:
        raise StateConflict(f'"{survivor.name}" was merged again since; undo that merge first.')
    at = loser.merged_at
    now = timezone.now()
    who = _user(user)
    why = reason.strip() or f'Undoing the merge of "{loser.name}" into "{survivor.name}".'
    outcome = UnmergeOutcome(loser=loser, survivor=survivor)
    retired = (
        Edge.objects.select_for_update(of=("self",))
        .filter(Q(source=loser) | Q(target=loser), invalid_at=at)
        .exclude(status=Edge.Status.ACTIVE)
        .select_related("relation", "evidence_revision")
        .order_by("pk")
    )
    acyclic_restored: list[Edge] = []
    for old in retired:
        successor = Edge.objects.select_for_update().filter(supersedes=old).first()
        if old.status == Edge.Status.SUPERSEDED:
            if successor is None or successor.recorded_at != at:
                continue  # not moved by this merge
            if not successor.is_active:
                raise StateConflict(
                    f'Edge #{successor.pk}, moved onto "{survivor.name}" by the merge, was '
                    f"{successor.status} since; the merge can no longer be undone whole."
                )
            _retire(
                successor,
                status=Edge.Status.SUPERSEDED,
                at=now,
                user=who,
                decision=decision,
                reason=why,
            )
            supersedes = successor
        else:
            if successor is not None:
                continue  # already brought back by someone
            supersedes = old
        restored = _insert_edge(
            source_id=old.source_id,
            target_id=old.target_id,
            relation=old.relation,
            weight=old.weight,
            confidence=old.confidence,
            reason=old.reason,
            evidence=Evidence.of(old),
            valid_at=old.valid_at,
            recorded_at=now,
            supersedes=supersedes,
            proposal=old.proposal,
            decision=decision,
            decided_by=who,
        )
        outcome.restored.append(restored)
        if old.relation.acyclic:
            acyclic_restored.append(restored)
    loser.status = Concept.Status.ACTIVE
    loser.merged_into = None
    loser.merged_at = None
    loser.save(update_fields=["status", "merged_into", "merged_at", "updated_at"])
    for alias in ConceptAlias.objects.select_for_update().filter(merged_from=loser):
        alias.concept = loser
        alias.kind = (
            ConceptAlias.Kind.CANONICAL
            if alias.name.casefold() == loser.name.casefold()
            else ConceptAlias.Kind.ALIAS
        )
        alias.merged_from = None
        alias.save(update_fields=["concept", "kind", "merged_from"])
        outcome.names.append(alias.name)
    for edge in acyclic_restored:
        path = selectors.relation_path(
            relation=edge.relation, start_id=edge.target_id, goal_id=edge.source_id
        )
        if path is not None:
            raise CycleDetected(
                f"Undoing the merge would bring back a {edge.relation.key} cycle: "
                f"{_path_words(path + [path[0]])}. Invalidate one of those edges first.",
                path=path,
            )
    name_index_changed()
    return outcome


def _path_words(ids: Sequence[int]) -> str:
    names = selectors.concept_names(ids)
    return " → ".join(names.get(i, f"#{i}") for i in ids)


# --- Edges ------------------------------------------------------------------------------


def _retire(edge: Edge, *, status: str, at: datetime, user, decision, reason: str) -> None:
    edge.status = status
    edge.invalid_at = at
    edge.invalidated_by = user
    edge.invalidation_decision = decision
    edge.invalidation_reason = reason
    edge.save(
        update_fields=[
            "status",
            "invalid_at",
            "invalidated_by",
            "invalidation_decision",
            "invalidation_reason",
        ]
    )


def _set_retired_status(edge: Edge, status: str, reason: str) -> None:
    edge.status = status
    edge.invalidation_reason = reason
    edge.save(update_fields=["status", "invalidation_reason"])


def edge_row(
    *,
    source_id: int,
    target_id: int,
    relation: RelationType,
    weight: float,
    confidence: float,
    reason: str,
    evidence: Evidence | None,
    valid_at: datetime,
    recorded_at: datetime,
    supersedes: Edge | None = None,
    proposal=None,
    decision=None,
    decided_by=None,
) -> Edge:
    """An unsaved edge row with every column an edge carries (written by the caller)."""
    return Edge(
        source_id=source_id,
        target_id=target_id,
        relation=relation,
        is_symmetric=relation.symmetric,
        weight=weight,
        confidence=confidence,
        reason=reason,
        **Evidence.columns(evidence),
        valid_at=valid_at,
        recorded_at=recorded_at,
        supersedes=supersedes,
        proposal=proposal,
        decision=decision,
        decided_by=decided_by,
    )


def _insert_edge(
    *,
    source_id: int,
    target_id: int,
    relation: RelationType,
    weight: float,
    confidence: float,
    reason: str,
    evidence: Evidence | None,
    valid_at: datetime,
    recorded_at: datetime,
    supersedes: Edge | None = None,
    proposal=None,
    decision=None,
    decided_by=None,
    guard: bool = True,
) -> Edge:
    """Insert the row. ``guard`` turns a lost race into ``DuplicateEdge`` (a savepoint);
    callers holding the concept locks cannot lose that race and skip it."""
    row = edge_row(
        source_id=source_id,
        target_id=target_id,
        relation=relation,
        weight=weight,
        confidence=confidence,
        reason=reason,
        evidence=evidence,
        valid_at=valid_at,
        recorded_at=recorded_at,
        supersedes=supersedes,
        proposal=proposal,
        decision=decision,
        decided_by=decided_by,
    )
    if not guard:
        row.save(force_insert=True)
        return row
    try:
        with transaction.atomic():
            row.save(force_insert=True)
            return row
    except IntegrityError as exc:
        # The checks ran first, so this is a concurrent writer winning the race.
        raise DuplicateEdge(
            "The same edge was just added by someone else; it is already in the graph."
        ) from exc


def _check_edge(
    *,
    source: Concept,
    target: Concept,
    relation: RelationType,
    confidence: float,
    weight: float,
    reason: str,
    evidence: Evidence | None,
) -> None:
    if not relation.active:
        raise InactiveRelation(
            f'The relation "{relation.key}" was retired; choose an active relation.'
        )
    for concept in (source, target):
        if not concept.is_active:
            raise ConceptNotActive(inactive_words(concept), concept_id=concept.pk)
    if source.pk == target.pk:
        raise SelfLoop(f'An edge cannot join "{source.name}" to itself.')
    if not 0.0 <= confidence <= 1.0:
        raise ValidationFailed(f"Confidence must lie between 0 and 1, not {confidence}.")
    if weight < 0:
        raise ValidationFailed(f"Weight cannot be negative ({weight}).")
    if not reason.strip():
        raise ValidationFailed("Every edge needs a reason: say why it exists.")
    if evidence is not None:
        evidence.check()
    ensure_new_fact(relation=relation, source=source, target=target)


def ensure_new_fact(*, relation: RelationType, source: Concept, target: Concept) -> None:
    """Refuse an edge the graph already holds, or one that closes a cycle in an acyclic
    relation (one round trip; the cycle's chain is read only when there is one)."""
    existing_id, closes_cycle = selectors.edge_precheck(
        relation=relation, source_id=source.pk, target_id=target.pk
    )
    if existing_id is not None:
        raise DuplicateEdge(
            f'"{source.name}" {relation.verb} "{target.name}" is already in the graph '
            f"(edge #{existing_id}).",
            edge_id=existing_id,
        )
    if closes_cycle:
        path = selectors.relation_path(relation=relation, start_id=target.pk, goal_id=source.pk)
        if path is not None:
            raise CycleDetected(
                f'"{source.name}" {relation.verb} "{target.name}" would close a cycle: '
                f"{_path_words(path + [target.pk])}.",
                path=path,
            )


def _lock_relation(relation: RelationType) -> RelationType:
    return RelationType.objects.select_for_update().get(pk=relation.pk)


def _lock_for_edge(relation_id: int, concept_ids: tuple[int, int]):
    """Lock the relation row and both concept rows in one statement; return them fresh.

    Locking the relation serialises edges of one relation (no two writers can close a
    cycle between them); locking the concepts serialises edges between the same pair and
    merges of either end.
    """
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    concept_table = Concept._meta.db_table
    relation_table = RelationType._meta.db_table
    rows = list(
        Concept.objects.raw(
            f"SELECT c.*, r.id AS r_id, r.key AS r_key, r.label AS r_label, r.verb AS r_verb,"
            f" r.description AS r_description, r.directed AS r_directed,"
            f" r.symmetric AS r_symmetric, r.acyclic AS r_acyclic, r.active AS r_active,"
            f" r.retired_at AS r_retired_at, r.created_at AS r_created_at"
            f" FROM {concept_table} c CROSS JOIN {relation_table} r"
            f" WHERE r.id = %s AND c.id IN (%s, %s) ORDER BY c.id{lock}",
            [relation_id, *concept_ids],
        )
    )
    if not rows:
        raise ValidationFailed("The relation or the concepts of this edge do not exist.")
    first = rows[0]
    relation = RelationType(
        id=first.r_id,
        key=first.r_key,
        label=first.r_label,
        verb=first.r_verb,
        description=first.r_description,
        directed=bool(first.r_directed),
        symmetric=bool(first.r_symmetric),
        acyclic=bool(first.r_acyclic),
        active=bool(first.r_active),
        retired_at=first.r_retired_at,
        created_at=first.r_created_at,
    )
    concepts = {c.pk: c for c in rows}
    missing = [i for i in concept_ids if i not in concepts]
    if missing:
        raise ValidationFailed(f"There is no concept #{missing[0]}.")
    return relation, concepts


def edge_add(
    *,
    source_id: int,
    target_id: int,
    relation_id: int,
    confidence: float,
    reason: str,
    evidence: Evidence | None = None,
    weight: float = 1.0,
    valid_at: datetime | None = None,
    proposal=None,
    decision=None,
    decided_by: AbstractBaseUser | None = None,
) -> Edge:
    """The body of ``edge_create`` for callers already inside a transaction.

    It takes the locks itself and adds no savepoint, so a decision that creates an edge
    stays a handful of queries. Any error leaves the caller's transaction to roll back.
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("edge_add must run inside a transaction; use edge_create")
    relation, concepts = _lock_for_edge(relation_id, (source_id, target_id))
    source, target = concepts[source_id], concepts[target_id]
    _check_edge(
        source=source,
        target=target,
        relation=relation,
        confidence=confidence,
        weight=weight,
        reason=reason,
        evidence=evidence,
    )
    now = timezone.now()
    return _insert_edge(
        source_id=source.pk,
        target_id=target.pk,
        relation=relation,
        weight=weight,
        confidence=confidence,
        reason=reason.strip(),
        evidence=evidence,
        valid_at=valid_at or now,
        recorded_at=now,
        proposal=proposal,
        decision=decision,
        decided_by=_user(decided_by),
        guard=False,
    )


@transaction.atomic
def edge_create(
    *,
    source: Concept,
    target: Concept,
    relation: RelationType,
    confidence: float,
    reason: str,
    evidence: Evidence | None = None,
    weight: float = 1.0,
    valid_at: datetime | None = None,
    proposal=None,
    decision=None,
    decided_by: AbstractBaseUser | None = None,
) -> Edge:
    """Add an active edge after checking vocabulary, endpoints, evidence, duplicates, cycles."""
    if source.pk == target.pk:
        raise SelfLoop(f'An edge cannot join "{source.name}" to itself.')
    return edge_add(
        source_id=source.pk,
        target_id=target.pk,
        relation_id=relation.pk,
        confidence=confidence,
        reason=reason,
        evidence=evidence,
        weight=weight,
        valid_at=valid_at,
        proposal=proposal,
        decision=decision,
        decided_by=decided_by,
    )


def _lock_active_edge(edge: Edge) -> Edge:
    edge = Edge.objects.select_for_update().select_related("relation").get(pk=edge.pk)
    if not edge.is_active:
        who = f" by {edge.invalidated_by}" if edge.invalidated_by_id else ""
        raise StateConflict(
            f"Edge #{edge.pk} is no longer active: it was {edge.status}{who} "
            f"on {edge.invalid_at:%Y-%m-%d %H:%M} UTC.",
            edge_id=edge.pk,
        )
    return edge


@transaction.atomic
def edge_invalidate(
    *,
    edge: Edge,
    reason: str,
    user: AbstractBaseUser | None = None,
    decision=None,
    at: datetime | None = None,
) -> Edge:
    """Retire an active edge. The row stays, with when, why and by whom."""
    if not reason.strip():
        raise ValidationFailed("Say why the edge is invalidated.")
    edge = _lock_active_edge(edge)
    at = at or timezone.now()
    if at < edge.valid_at:
        raise ValidationFailed("An edge cannot be retired before the time it holds from.")
    _retire(
        edge,
        status=Edge.Status.INVALIDATED,
        at=at,
        user=_user(user),
        decision=decision,
        reason=reason.strip(),
    )
    return edge


_UNSET = object()


@transaction.atomic
def edge_supersede(
    *,
    edge: Edge,
    user: AbstractBaseUser | None = None,
    why: str = "",
    decision=None,
    proposal=None,
    source: Concept | None = None,
    target: Concept | None = None,
    relation: RelationType | None = None,
    confidence: float | None = None,
    weight: float | None = None,
    reason: str | None = None,
    evidence: Evidence | None | object = _UNSET,
    valid_at: datetime | None = None,
) -> Edge:
    """Replace an active edge by a new row carrying the changes; the old row is kept.

    The new row is checked like a new edge (vocabulary, endpoints, evidence, duplicates,
    cycles) against the graph without the old row; if it fails, nothing changes.
    """
    old = _lock_active_edge(edge)
    new_relation = _lock_relation(relation or old.relation)
    src_id = source.pk if source else old.source_id
    dst_id = target.pk if target else old.target_id
    locked = _lock_concepts(src_id, dst_id)
    new_evidence = Evidence.of(old) if evidence is _UNSET else evidence
    values = dict(
        source=locked[src_id],
        target=locked[dst_id],
        relation=new_relation,
        confidence=old.confidence if confidence is None else confidence,
        weight=old.weight if weight is None else weight,
        reason=(old.reason if reason is None else reason).strip(),
        evidence=new_evidence,
    )
    if (
        values["source"].pk == old.source_id
        and values["target"].pk == old.target_id
        and new_relation.pk == old.relation_id
        and values["confidence"] == old.confidence
        and values["weight"] == old.weight
        and values["reason"] == old.reason
        and new_evidence == Evidence.of(old)
        and (valid_at is None or valid_at == old.valid_at)
    ):
        raise ValidationFailed("Nothing would change: the update is the same as the edge.")
    now = timezone.now()
    _retire(
        old,
        status=Edge.Status.SUPERSEDED,
        at=now,
        user=_user(user),
        decision=decision,
        reason=why.strip() or "Updated.",
    )
    _check_edge(**values)
    return _insert_edge(
        source_id=values["source"].pk,
        target_id=values["target"].pk,
        relation=new_relation,
        weight=values["weight"],
        confidence=values["confidence"],
        reason=values["reason"],
        evidence=new_evidence,
        valid_at=valid_at or old.valid_at,
        recorded_at=now,
        supersedes=old,
        proposal=proposal,
        decision=decision,
        decided_by=_user(user),
    )


@transaction.atomic
def edge_restore(
    *,
    edge: Edge,
    user: AbstractBaseUser | None = None,
    why: str = "",
    decision=None,
    proposal=None,
) -> Edge:
    """Bring back a retired fact as a new active row that supersedes the retired one.

    Used to undo an invalidation; checked like any new edge (the graph may have changed
    since). The retired row keeps its history; the new row points at it.
    """
    old = Edge.objects.select_for_update().select_related("relation").get(pk=edge.pk)
    if old.is_active:
        raise StateConflict(f"Edge #{old.pk} is already active.")
    if Edge.objects.filter(supersedes=old).exists():
        raise StateConflict(
            f"Edge #{old.pk} was already replaced by a newer edge; restore that one instead."
        )
    relation = _lock_relation(old.relation)
    locked = _lock_concepts(old.source_id, old.target_id)
    source, target = locked[old.source_id], locked[old.target_id]
    evidence = Evidence.of(old)
    _check_edge(
        source=source,
        target=target,
        relation=relation,
        confidence=old.confidence,
        weight=old.weight,
        reason=old.reason,
        evidence=evidence,
    )
    return _insert_edge(
        source_id=source.pk,
        target_id=target.pk,
        relation=relation,
        weight=old.weight,
        confidence=old.confidence,
        reason=old.reason,
        evidence=evidence,
        valid_at=old.valid_at,
        recorded_at=timezone.now(),
        supersedes=old,
        proposal=proposal or old.proposal,
        decision=decision,
        decided_by=_user(user),
    )


# --- Relation types ---------------------------------------------------------------------


@transaction.atomic
def relation_type_retire(*, relation: RelationType) -> RelationType:
    """Take a relation out of the active vocabulary; its edges and history stay."""
    relation = _lock_relation(relation)
    if not relation.active:
        raise StateConflict(f'The relation "{relation.key}" is already retired.')
    relation.active = False
    relation.retired_at = timezone.now()
    relation.save(update_fields=["active", "retired_at"])
    return relation


@transaction.atomic
def relation_type_reactivate(*, relation: RelationType) -> RelationType:
    relation = _lock_relation(relation)
    if relation.active:
        raise StateConflict(f'The relation "{relation.key}" is already active.')
    relation.active = True
    relation.retired_at = None
    relation.save(update_fields=["active", "retired_at"])
    return relation


# --- Sources: kgreview.graph.sources (importing a document's text and file) ------------


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
) -> RelationType:
    """Add a term to the vocabulary. Its shape (direction, symmetry, acyclicity) is fixed."""
    if RelationType.objects.filter(key=key).exists():
        raise NameTaken(f'The relation "{key}" already exists.')
    relation = RelationType(
        key=key,
        label=label.strip(),
        verb=verb.strip(),
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
    return relation


@transaction.atomic
def relation_type_describe(
    *,
    relation: RelationType,
    label: str | None = None,
    verb: str | None = None,
    description: str | None = None,
) -> RelationType:
    """Change how a relation is named and explained; never what it means structurally."""
    relation = _lock_relation(relation)
    if label is not None:
        relation.label = label.strip()
    if verb is not None:
        relation.verb = verb.strip()
    if description is not None:
        relation.description = description.strip()
    relation.save(update_fields=["label", "verb", "description"])
    return relation
