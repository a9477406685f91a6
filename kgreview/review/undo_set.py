"""Undoing a bulk batch as one set: its accepted edges invalidated in one statement, the
concepts made for them retired, every proposal reopened, the undo decisions written in
bulk. Only acceptances of the kinds decided as a set (edges and concepts), rejections and
settlements qualify; ``undo.decisions_undo`` falls back to one decision at a time.
"""

from __future__ import annotations

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone

from kgreview.core.errors import StateConflict
from kgreview.core.tally import tally
from kgreview.graph import bulk as graph_bulk
from kgreview.graph import services as graph
from kgreview.graph.models import Edge

from .changes import GraphChanges
from .kinds import kind_of
from .models import Decision, Proposal
from .services import lock_proposals

# Decisions of any kind undone in a set; acceptances only of the kinds decided as a set.
ANY_KIND = frozenset({Decision.Action.REJECT, Decision.Action.SUPERSEDE})


class OneByOne(Exception):
    """The batch cannot be undone as one set; undo it one decision at a time."""


def undo_as_a_set(
    decisions: list[Decision], *, reviewer, undo_batch
) -> tuple[list[Decision], GraphChanges]:
    """Undo a bulk batch as one set: its accepted edges invalidated in one statement, the
    concepts made for them retired, every proposal reopened, the undo decisions written
    in bulk. Returns (undo decisions, graph changes). Raises ``_OneByOne`` for what the
    one-by-one path must do (edits, other kinds, aliases added to reused concepts, a
    proposal that cannot go back because the same change is waiting again)."""
    gate = settings.KG_CONFIDENCE_GATE
    for d in decisions:
        in_a_set = d.action == Decision.Action.ACCEPT and kind_of(d.proposal).decided_as_a_set
        if not (in_a_set or d.action in ANY_KIND):
            raise OneByOne("a kind undone one by one")
        if d.action == Decision.Action.ACCEPT and (d.after or {}).get("aliases_added"):
            raise OneByOne("aliases to take back")
    ids = sorted({d.proposal_id for d in decisions})
    proposals = lock_proposals(ids)
    latest = tally(Decision.objects.filter(proposal_id__in=ids), "proposal_id", Max("id"))
    now = timezone.now()
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
    edges = list(Edge.objects.filter(decision_id__in=accepts))
    for edge in edges:
        if not edge.is_active:
            raise StateConflict(
                f"Edge #{edge.pk} made by this decision was {edge.status} since; "
                "it can no longer be undone from here."
            )

    # The undo decisions: one per decision the reviewer took, the rest caused by the first.
    primary = [d for d in doing if d.caused_by_id is None]
    rest = [d for d in doing if d.caused_by_id is not None]

    def undo_row(d: Decision, cause=None) -> Decision:
        p = proposals[d.proposal_id]
        return Decision(
            proposal=p,
            user=reviewer,
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
    changes = GraphChanges()

    if edges:
        if first is None:  # edges come from acceptances, and a batch opens with one taken
            raise OneByOne("no decision the reviewer took")
        undo_of = {d.undoes_id: d.pk for d in rows}
        graph_bulk.edges_invalidate_many(
            {e.pk: undo_of[e.decision_id] for e in edges},
            user=reviewer,
            reason=f"Undone by {reviewer.get_username()} (the bulk undo of decision #{first.pk}).",
            at=now,
        )
        changes.edges_gone |= {e.pk for e in edges}

    # Concepts the batch made go back, with no edges left (else the undo is refused).
    made: dict[int, int] = {}
    for d in doing:
        p = proposals[d.proposal_id]
        accepted_concept = d.action == Decision.Action.ACCEPT and kind_of(p).names_a_concept
        if accepted_concept and p.concept_id and (d.after or {}).get("created", True):
            made[p.concept_id] = p.pk
    graph_bulk.concepts_retire_many(made, at=now)
    changes.unmade.update(made)

    # Every proposal back in the queue (held below the gate); twins lose their link.
    back = [proposals[d.proposal_id] for d in doing]
    twins = [
        p.pk
        for d, p in zip(doing, back, strict=True)
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
    if any(kind_of(p).names_a_concept for p in back):
        graph.name_index_changed()
    return rows, changes
