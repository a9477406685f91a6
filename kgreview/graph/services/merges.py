"""Merging two concepts and undoing a merge. Nothing is deleted: the loser points at the
survivor, its edges are superseded by copies on the survivor, and every row the merge
retired or wrote carries its timestamp, which is how an unmerge finds them again.

Which decision merged or split them, and which proposal each new row stands for, is
review's to record: the outcomes list every row retired and every new row with the row
it carries on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from kgreview.core.errors import CycleDetected, PatternViolation, StateConflict, ValidationFailed

from .. import pattern_book, rules, selectors
from ..models import Concept, ConceptAlias, Edge
from .common import (
    audited,
    lock_concepts,
    lock_relations,
    name_index_changed,
    path_words,
    quoted,
    user_row,
)
from .rows import admit_fact, fact_of, insert_edge, retire_row, set_retired_status

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@dataclass
class MergeOutcome:
    survivor: Concept
    loser: Concept
    superseded: list[tuple[Edge, Edge]] = field(default_factory=list)
    invalidated: list[Edge] = field(default_factory=list)
    moved_names: list[str] = field(default_factory=list)


def _admit_moved(old: Edge, source: Concept, target: Concept, doing: str) -> bool:
    """Admit the copy ``source -> target`` of a moved or restored edge like a new edge (an
    acyclic relation's order makes room for it); refuse the change as a whole when it
    closes a cycle, saying what ``doing`` ("Merging A into B would create") would bring.
    Returns whether the copy is in its relation's order."""
    if not old.relation.acyclic:
        return True
    try:
        return admit_fact(relation=old.relation, source=source, target=target).in_order
    except CycleDetected as exc:
        path = cast(list[int], exc.details["path"])
        raise CycleDetected(
            f"{doing} a {old.relation.key} cycle: {path_words([*path, path[0]])}. "
            "Invalidate one of those edges first.",
            path=path,
        ) from exc


def _check_patterns(edges: list[Edge], loser: Concept, survivor: Concept) -> None:
    """Refuse the merge as a whole when an edge moved onto the survivor, whose type is
    not the loser's, would break its relation's pattern (one read of the patterns)."""
    book = pattern_book.load({e.relation_id for e in edges})
    for old in edges:
        ends = [survivor if c.pk == loser.pk else c for c in (old.source, old.target)]
        if ends[0].pk == ends[1].pk:
            continue
        refusal = book.concepts_refusal(old.relation, ends[0], ends[1])
        if refusal is not None:
            raise PatternViolation(
                f'Merging "{loser.name}" into "{survivor.name}" would break a relation\'s '
                f"pattern: {refusal} Change a type or the edge first.",
                edge_id=old.pk,
            )


@transaction.atomic
def concept_merge(
    *,
    loser: Concept,
    survivor: Concept,
    acting_user: User | None,
    reason: str = "",
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
    locked = lock_concepts(loser.pk, survivor.pk)
    loser, survivor = locked[loser.pk], locked[survivor.pk]
    for concept in (loser, survivor):
        refusal = rules.end_refusal(concept)
        if refusal is not None:
            raise refusal
    now = timezone.now()
    who = user_row(acting_user)
    outcome = MergeOutcome(survivor=survivor, loser=loser)
    why = reason or f'"{loser.name}" merged into "{survivor.name}"'

    # The lock order: both concepts (above), the acyclic relations of the edges it moves
    # (a moved edge is a new one there), then those edges.
    touching = Q(source=loser) | Q(target=loser)
    lock_relations(
        selectors.edges_active().filter(touching, relation__acyclic=True).values("relation_id")
    )
    edges = list(
        selectors.edges_active()
        .select_for_update(no_key=True, of=("self",))
        .filter(touching)
        .select_related("relation", "evidence_revision", "source", "target")
        .order_by("pk")
    )
    doing = f'Merging "{loser.name}" into "{survivor.name}" would create'
    if loser.type_id != survivor.type_id:
        _check_patterns(edges, loser, survivor)
    for old in edges:
        src = survivor.pk if old.source_id == loser.pk else old.source_id
        dst = survivor.pk if old.target_id == loser.pk else old.target_id
        retire_row(old, status=Edge.Status.SUPERSEDED, at=now, acting_user=who, reason=why)
        if src == dst:
            set_retired_status(
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
            set_retired_status(
                old,
                Edge.Status.INVALIDATED,
                f"{why}: the same fact is already held by edge #{existing.pk}.",
            )
            outcome.invalidated.append(old)
            continue
        in_order = _admit_moved(
            old,
            survivor if src == survivor.pk else old.source,
            survivor if dst == survivor.pk else old.target,
            doing,
        )
        new = insert_edge(
            **fact_of(old, source_id=src, target_id=dst),
            recorded_at=now,
            supersedes=old,
            decided_by=who or old.decided_by,
            in_order=in_order,
        )
        outcome.superseded.append((old, new))

    for alias in ConceptAlias.objects.select_for_update(no_key=True).filter(concept=loser):
        alias.concept = survivor
        alias.kind = ConceptAlias.Role.MERGED
        # A name that came with an earlier merge keeps the concept it belongs to, so
        # undoing the merges of a chain one by one gives each concept its names back.
        alias.merged_from_id = alias.merged_from_id or loser.pk
        alias.save(update_fields=["concept", "kind", "merged_from"])
        outcome.moved_names.append(alias.name)

    loser.status = Concept.Status.MERGED
    loser.merged_into = survivor
    loser.merged_at = now
    loser.save(update_fields=["status", "merged_into", "merged_at", "updated_at"])
    name_index_changed(concepts=[loser.pk, survivor.pk])
    audited(
        acting_user=acting_user,
        decision=decision,
        action="concept.merge",
        subject=loser,
        summary=f"Merged the concept {quoted(loser.name)} into {quoted(survivor.name)}.",
        before={"status": Concept.Status.ACTIVE},
        after={
            "status": Concept.Status.MERGED,
            "merged_into": survivor.pk,
            "edges_moved": [new.pk for _, new in outcome.superseded],
            "edges_invalidated": [old.pk for old in outcome.invalidated],
            "names_moved": outcome.moved_names,
        },
    )
    return outcome


@dataclass
class UnmergeOutcome:
    """``restored``: each new row with the row from before the merge whose fact it brings
    back; ``retired``: the rows the merge had moved, retired again."""

    loser: Concept
    survivor: Concept
    restored: list[Edge] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    restored_from: list[tuple[Edge, Edge]] = field(default_factory=list)
    retired: list[Edge] = field(default_factory=list)


@transaction.atomic
def concept_unmerge(
    *, loser: Concept, acting_user: User | None, reason: str = "", decision=None
) -> UnmergeOutcome:
    """Undo a merge: the loser is a concept again, with its names and edges.

    The merge left a precise trace: the rows it retired and the rows it wrote all carry
    the merge's timestamp. Each edge the merge moved is moved back (a new row
    superseding the moved one) and each edge it retired as a self-loop or a repeat is
    restored. Refused as a whole if a moved edge changed since, or if a restored edge
    would now close a cycle.
    """
    # The lock order: both concepts together, in id order (the survivor read unlocked
    # first; a merge undone or redone meanwhile is caught by the checks below).
    seen = Concept.objects.filter(pk=loser.pk).values_list("merged_into_id", flat=True).first()
    locked = lock_concepts(loser.pk, *([seen] if seen else []))
    loser = locked[loser.pk]
    if loser.status != Concept.Status.MERGED:
        raise StateConflict(f'"{loser.name}" is {loser.status}; there is no merge to undo.')
    survivor_id = loser.merged_into_id
    if survivor_id is None:
        raise StateConflict(f'"{loser.name}" is merged into nothing; there is no merge to undo.')
    # Merged into another concept since it was read: that one is locked late (rare).
    survivor = locked.get(survivor_id) or lock_concepts(survivor_id)[survivor_id]
    if not survivor.is_active:
        raise StateConflict(f'"{survivor.name}" was merged again since; undo that merge first.')
    at = loser.merged_at
    now = timezone.now()
    who = user_row(acting_user)
    why = reason.strip() or f'Undoing the merge of "{loser.name}" into "{survivor.name}".'
    outcome = UnmergeOutcome(loser=loser, survivor=survivor)
    # Then the acyclic relations of the edges it may bring back (each a new edge there),
    # then those edges.
    by_merge = Edge.objects.filter(Q(source=loser) | Q(target=loser), invalid_at=at).exclude(
        status=Edge.Status.ACTIVE
    )
    lock_relations(by_merge.filter(relation__acyclic=True).values("relation_id"))
    retired = (
        by_merge.select_for_update(no_key=True, of=("self",))
        .select_related("relation", "evidence_revision", "source", "target")
        .order_by("pk")
    )
    for old in retired:
        successor = Edge.objects.select_for_update(no_key=True).filter(supersedes=old).first()
        if old.status == Edge.Status.SUPERSEDED:
            if successor is None or successor.recorded_at != at:
                continue  # not moved by this merge
            if not successor.is_active:
                raise StateConflict(
                    f'Edge #{successor.pk}, moved onto "{survivor.name}" by the merge, was '
                    f"{successor.status} since; the merge can no longer be undone whole."
                )
            retire_row(
                successor,
                status=Edge.Status.SUPERSEDED,
                at=now,
                acting_user=who,
                reason=why,
            )
            outcome.retired.append(successor)
            supersedes = successor
        else:
            if successor is not None:
                continue  # already brought back by someone
            supersedes = old
        in_order = _admit_moved(old, old.source, old.target, "Undoing the merge would bring back")
        restored = insert_edge(
            **fact_of(old),
            recorded_at=now,
            supersedes=supersedes,
            decided_by=who,
            in_order=in_order,
        )
        outcome.restored.append(restored)
        outcome.restored_from.append((old, restored))
    loser.status = Concept.Status.ACTIVE
    loser.merged_into = None
    loser.merged_at = None
    loser.save(update_fields=["status", "merged_into", "merged_at", "updated_at"])
    # Its own names, and those of the concepts merged into it before (they stay merged
    # into it: their names come back to it as merged names).
    owners = [loser.pk, *selectors.merged_under(loser.pk)]
    names = ConceptAlias.objects.select_for_update(no_key=True).filter(
        concept=survivor, merged_from__in=owners
    )
    for alias in names.order_by("pk"):
        alias.concept = loser
        if alias.merged_from_id == loser.pk:
            alias.kind = (
                ConceptAlias.Role.CANONICAL
                if alias.name.casefold() == loser.name.casefold()
                else ConceptAlias.Role.ALIAS
            )
            alias.merged_from = None
        alias.save(update_fields=["concept", "kind", "merged_from"])
        outcome.names.append(alias.name)
    name_index_changed(concepts=[loser.pk, survivor.pk])
    audited(
        acting_user=acting_user,
        decision=decision,
        action="concept.unmerge",
        subject=loser,
        summary=f"Split the concept {quoted(loser.name)} from {quoted(survivor.name)} again.",
        before={"status": Concept.Status.MERGED, "merged_into": survivor.pk},
        after={
            "status": Concept.Status.ACTIVE,
            "edges_restored": [e.pk for e in outcome.restored],
            "names_back": outcome.names,
        },
    )
    return outcome
