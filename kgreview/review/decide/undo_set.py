"""Undoing a bulk batch as one set: its accepted edges invalidated in one statement, the
concepts made for them retired, every proposal reopened, the undo decisions written in
bulk. Only acceptances of the kinds decided as a set (edges and concepts), rejections and
settlements qualify; ``undo.decisions_undo`` falls back to one decision at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone

from kgreview.core.errors import StateConflict
from kgreview.core.tally import tally
from kgreview.graph import bulk as graph_bulk
from kgreview.graph import services as graph
from kgreview.graph.models import Edge
from kgreview.review import provenance
from kgreview.review.decide.changes import GraphChanges
from kgreview.review.kinds import kind_of
from kgreview.review.models import Decision, Proposal

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Decisions of any kind undone in a set; acceptances only of the kinds decided as a set.
ANY_KIND = frozenset({Decision.Action.REJECT, Decision.Action.SUPERSEDE})


class OneByOne(Exception):
    """The batch cannot be undone as one set; undo it one decision at a time."""


@dataclass(frozen=True)
class _Undoing:
    """What the set undo works on once checked: the locked proposals by id, the decisions
    still to undo (a settlement decided again since is left alone), and the edges their
    acceptances made."""

    proposals: dict[int, Proposal]
    doing: list[Decision]
    edges: list[Edge]


def undo_as_a_set(
    decisions: list[Decision],
    proposals: dict[int, Proposal],
    *,
    acting_user: User,
    undo_batch,
) -> tuple[list[Decision], GraphChanges]:
    """Undo a bulk batch as one set: its accepted edges invalidated in one statement, the
    concepts made for them retired, every proposal reopened, the undo decisions written
    in bulk. Returns (undo decisions, graph changes). Raises ``OneByOne`` for what the
    one-by-one path must do (edits, other kinds, aliases added to reused concepts, a
    proposal that cannot go back because the same change is waiting again).

    ``proposals`` are the batch's proposals, locked by the caller (``undo`` locks every
    row the undo changes up front, in the lock order of ``decisions``)."""
    _refuse_what_goes_one_by_one(decisions)
    u = _lock_and_check(decisions, proposals)
    now = timezone.now()
    rows, first = _write_undo_decisions(u, undo_batch, acting_user=acting_user)
    changes = GraphChanges()
    changes.edges_gone |= _invalidate_edges(u, rows, first, now, acting_user=acting_user)
    changes.unmade.update(_retire_made_concepts(u, now))
    _reopen(u, now)
    return rows, changes


def _refuse_what_goes_one_by_one(decisions: list[Decision]) -> None:
    """Raise ``OneByOne`` for a decision of a kind undone one by one, or an acceptance
    that added aliases to a concept it reused."""
    for d in decisions:
        in_a_set = d.action == Decision.Action.ACCEPT and kind_of(d.proposal).decided_as_a_set
        if not (in_a_set or d.action in ANY_KIND):
            raise OneByOne("a kind undone one by one")
        if d.action == Decision.Action.ACCEPT and (d.after or {}).get("aliases_added"):
            raise OneByOne("aliases to take back")


def _lock_and_check(decisions: list[Decision], proposals: dict[int, Proposal]) -> _Undoing:
    """Refuse, in words, a proposal decided again since or an edge that changed since
    (the proposals locked by the caller); a settlement decided again since is skipped."""
    ids = sorted({d.proposal_id for d in decisions})
    latest = tally(Decision.objects.filter(proposal_id__in=ids), "proposal_id", Max("id"))
    doing: list[Decision] = []
    for d in decisions:
        p = proposals[d.proposal_id]
        if d.action == Decision.Action.SUPERSEDE:
            if p.status == Proposal.Status.SUPERSEDED and latest[p.pk] == d.pk:
                doing.append(d)
            continue
        if latest[p.pk] != d.pk or p.status not in ("accepted", "rejected"):
            raise StateConflict(
                f"Proposal #{p.pk} was decided again since; undo the later decision."
            )
        doing.append(d)
    accepts = [d.pk for d in doing if d.action == Decision.Action.ACCEPT]
    edges = list(Edge.objects.filter(provenance__decision__in=accepts).select_related("provenance"))
    for edge in edges:
        if not edge.is_active:
            raise StateConflict(
                f"Edge #{edge.pk} made by this decision was {edge.status} since; "
                "it can no longer be undone from here."
            )
    return _Undoing(proposals=proposals, doing=doing, edges=edges)


def _write_undo_decisions(
    u: _Undoing, undo_batch, *, acting_user: User
) -> tuple[list[Decision], Decision | None]:
    """One undo decision per decision the reviewer took, the rest caused by the first;
    returns them all, and that first one (None when the reviewer took none)."""
    primary = [d for d in u.doing if d.caused_by_id is None]
    rest = [d for d in u.doing if d.caused_by_id is not None]

    def undo_row(d: Decision, cause=None) -> Decision:
        p = u.proposals[d.proposal_id]
        return Decision(
            proposal=p,
            user=acting_user,
            action=Decision.Action.UNDO,
            note=f"Undoes {d.get_action_display().lower()} #{d.pk}.",
            before={"status": p.status},
            after={"status": "pending"},
            proposal_version=p.version,
            undoes=d,
            batch=undo_batch,
            caused_by=cause,
        )

    rows = Decision.objects.bulk_create([undo_row(d) for d in primary])
    first = rows[0] if rows else None
    rows += Decision.objects.bulk_create([undo_row(d, first) for d in rest])
    return rows, first


def _invalidate_edges(
    u: _Undoing, rows: list[Decision], first: Decision | None, now, *, acting_user: User
) -> set[int]:
    """Invalidate the batch's edges in one statement, each by the undo of the decision
    that made it; returns their ids."""
    if not u.edges:
        return set()
    if first is None:  # edges come from acceptances, and a batch opens with one taken
        raise OneByOne("no decision the reviewer took")
    undo_of = {d.undoes_id: d.pk for d in rows}
    graph_bulk.edges_invalidate_many(
        [e.pk for e in u.edges],
        acting_user=acting_user,
        reason=f"Undone by {acting_user.get_username()} (the bulk undo of decision #{first.pk}).",
        at=now,
    )
    provenance.edges_retired({e.pk: undo_of[e.provenance.decision_id] for e in u.edges})
    return {e.pk for e in u.edges}


def _retire_made_concepts(u: _Undoing, now) -> dict[int, int]:
    """Retire the concepts the batch made (they have no edges left, else the undo was
    refused); returns them, each with the proposal that goes back to the queue."""
    made: dict[int, int] = {}
    for d in u.doing:
        p = u.proposals[d.proposal_id]
        accepted_concept = d.action == Decision.Action.ACCEPT and kind_of(p).names_a_concept
        if accepted_concept and p.concept_id and (d.after or {}).get("created", True):
            made[p.concept_id] = p.pk
    graph_bulk.concepts_retire_many(made, at=now)
    return made


def _reopen(u: _Undoing, now) -> None:
    """Every proposal back in the queue (held below the gate); superseded twins lose their
    link to the concept. Raises ``OneByOne`` when the same change is waiting again."""
    gate = settings.KG_CONFIDENCE_GATE
    back = [u.proposals[d.proposal_id] for d in u.doing]
    twins = [
        p.pk
        for d, p in zip(u.doing, back, strict=True)
        if d.action == Decision.Action.SUPERSEDE and kind_of(p).names_a_concept
    ]
    common = {
        "decided_at": None,
        "decided_by": None,
        "version": F("version") + 1,
        "updated_at": now,
    }
    pks = [p.pk for p in back]
    try:
        with transaction.atomic():
            Proposal.objects.filter(pk__in=pks, confidence__lt=gate).update(
                status=Proposal.Status.HELD, **common
            )
            Proposal.objects.filter(pk__in=pks, confidence__gte=gate).update(
                status=Proposal.Status.PENDING, **common
            )
            if twins:
                Proposal.objects.filter(pk__in=twins).update(concept=None)
    except IntegrityError as exc:
        raise OneByOne("the same change is waiting again") from exc
    graph.name_index_changed(proposals=[p.pk for p in back if kind_of(p).names_a_concept])
