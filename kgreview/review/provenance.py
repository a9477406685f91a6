"""An edge's provenance: which proposal and decision made an edge row, and which decision
retired it (``EdgeProvenance``, one row per edge a decision touched).

The graph sits below review, so its services take a decision only as the audit marker of
the change they make and store no review id. Review writes the row here, in the same
transaction as the decision, on every path that makes or retires an edge: a kind's
``apply`` and ``undo``, a bulk accept (set-based, one statement for the batch), an undone
batch. An edge seeded or imported has no row; ``of`` reads one as empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from django.db.models import IntegerField
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from kgreview.graph.models import Edge
from kgreview.review.models import Decision, EdgeProvenance, Proposal


class Made(NamedTuple):
    """A new edge row and where it came from: ``like`` is the row it replaces, whose
    proposal it keeps when it has none of its own, and whose decision too with
    ``keep_decision`` (an edge a merge moves stays the one its decision made)."""

    edge_id: int
    proposal_id: int | None = None
    decision_id: int | None = None
    like: int | None = None
    keep_decision: bool = False


def of(edge: Edge) -> EdgeProvenance:
    """The edge's provenance, or an empty one (no proposal, no decisions) when no decision
    made or retired it. Read it through ``select_related("provenance")`` to save a query."""
    try:
        return edge.provenance
    except EdgeProvenance.DoesNotExist:
        return EdgeProvenance()


def _id(row) -> int | None:
    """The id of a proposal or decision given as a row or an id; ``None`` for anything
    else (the graph's ``DECIDING`` marker: the decision is still to be written)."""
    if isinstance(row, Proposal | Decision):
        return row.pk
    return row if isinstance(row, int) else None


def edge_made(edge: Edge, *, decision, proposal=None, like: Edge | None = None) -> None:
    """Record the decision (and proposal) that wrote ``edge``; ``like`` as in ``Made``."""
    edges_made([made(edge, decision=decision, proposal=proposal, like=like)])


def made(
    edge: Edge, *, decision, proposal=None, like: Edge | None = None, keep_decision=False
) -> Made:
    """``Made`` from rows (or ids, or the ``DECIDING`` marker, which records no decision)."""
    return Made(
        edge.pk, _id(proposal), _id(decision), like.pk if like is not None else None, keep_decision
    )


def edges_made(rows: Iterable[Made]) -> None:
    """Record many new edge rows in one insert (one more read when some keep the
    provenance of the rows they replace)."""
    rows = list(rows)
    kept = {
        m.like
        for m in rows
        if m.like is not None and not (m.proposal_id and (m.decision_id or not m.keep_decision))
    }
    old = (
        {
            p.pk: (p.proposal_id, p.decision_id)
            for p in EdgeProvenance.objects.filter(pk__in=kept).only("proposal", "decision")
        }
        if kept
        else {}
    )
    out = []
    for m in rows:
        proposal_id, decision_id = old.get(m.like, (None, None)) if m.like else (None, None)
        row = EdgeProvenance(
            edge_id=m.edge_id,
            proposal_id=m.proposal_id or proposal_id,
            decision_id=m.decision_id or (decision_id if m.keep_decision else None),
        )
        if row.proposal_id or row.decision_id:
            out.append(row)
    if out:
        EdgeProvenance.objects.bulk_create(out)


def edges_retired(decision_of: Mapping[int, object]) -> None:
    """Record the decision that retired each edge (edge id -> decision, row or id), in one
    statement: an edge no decision made gets its row now. ``DECIDING`` records nothing: a
    decision written after the change lists the edges it retired itself."""
    pairs = {edge_id: _id(d) for edge_id, d in decision_of.items()}
    rows = [EdgeProvenance(edge_id=e, invalidation_decision_id=d) for e, d in pairs.items() if d]
    if rows:
        EdgeProvenance.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["edge"],
            update_fields=["invalidation_decision"],
        )


def edge_retired(edge: Edge | int, decision) -> None:
    """``edges_retired`` for one edge."""
    edges_retired({edge if isinstance(edge, int) else edge.pk: decision})


def value_decisions(value_ids: Iterable[int]) -> dict[int, Decision]:
    """Which decision set each attribute value row: the acceptance whose ``after`` names
    it (``kinds.set_attribute`` records ``attribute_value`` there). A value set outside a
    decision (by hand, or given back by an undo) has none. One query."""
    wanted = {int(i) for i in value_ids}
    if not wanted:
        return {}
    found = (
        Decision.objects.annotate(value_id=Cast(KT("after__attribute_value"), IntegerField()))
        .filter(
            value_id__in=wanted, action__in=(Decision.Action.ACCEPT, Decision.Action.EDIT_ACCEPT)
        )
        .select_related("user", "proposal")
    )
    return {d.value_id: d for d in found}
