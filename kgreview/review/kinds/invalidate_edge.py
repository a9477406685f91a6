"""invalidate_edge: retire an edge (its evidence is gone, it closes a cycle, it
contradicts another, it is a duplicate, or a person says it is wrong).

Accepting it invalidates the edge; undoing it restores the fact as a new row.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from construction import keys
from kgreview.graph import services as graph
from kgreview.graph.models import Edge
from kgreview.review import provenance
from kgreview.review.kinds.base import Step, UndoStep, active_edge
from kgreview.review.kinds.edge_change import EdgeChangeKind
from kgreview.review.payloads import RowId, Strict


class InvalidateEdge(Strict):
    edge_id: RowId
    reason_code: Literal["evidence_gone", "cycle", "contradiction", "duplicate", "manual", "other"]
    cycle_edge_ids: list[int] = Field(default_factory=list)


# What the card says when the proposal has no quote of its own.
NO_QUOTE = {
    "cycle": "No quote of its own: the cycle below is the evidence.",
    "evidence_gone": "No quoted evidence: the quote this edge stood on is gone from its source.",
}


class InvalidateEdgeKind(EdgeChangeKind):
    key = "invalidate_edge"
    schema = InvalidateEdge
    decision_first = True

    def dedup_key(self, payload: dict, *, symmetric: bool | None = None) -> str:
        return keys.invalidation_dedup_key(payload["edge_id"])

    def apply(self, step: Step) -> None:
        proposal = step.proposal
        edge = active_edge(proposal.payload["edge_id"])
        graph.edge_invalidate(
            edge=edge,
            reason=proposal.reason or "Invalidated by a reviewer.",
            acting_user=step.acting_user,
            decision=step.audit_row,
        )
        provenance.edge_retired(edge, step.audit_row)
        step.out.edges.append(edge)
        step.out.changes.edges_gone.add(edge.pk)

    def undo(self, step: UndoStep) -> None:
        """Restore the fact as a new row."""
        old = Edge.objects.get(pk=step.proposal.payload["edge_id"])
        back = graph.edge_restore(
            edge=old, why=step.why, acting_user=step.acting_user, decision=step.audit_row
        )
        provenance.edge_made(back, decision=step.audit_row, like=old)
        step.changes.edges_added.add(back.pk)

    def claim(self, proposal, relations=None) -> str:
        return self.edge_claim(proposal, "Retire")

    def view(self, proposal) -> dict:
        return self.edge_view(proposal)

    def card(self, card) -> None:
        super().card(card)
        card.no_quote = NO_QUOTE.get(card.proposal.payload["reason_code"], "")
