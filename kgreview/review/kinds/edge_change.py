"""What the two kinds about an existing edge (invalidate_edge, update_edge) share: the
edge's own ends as columns, its staying active as the condition to accept, and a card
that shows the edge with its evidence (and, for a cycle, every edge of the cycle)."""

from __future__ import annotations

from kgreview.graph.models import Edge
from kgreview.review.kinds.base import BlockerReads, Kind, Rows, Settle
from kgreview.review.workspace.card_parts import evidence_context


class EdgeChangeKind(Kind):
    """A proposal naming an edge by ``edge_id``."""

    settled = frozenset({Settle.EDGE})

    def columns(self, payload: dict, rows: Rows) -> dict:
        """The edge's ends and relation, so the queue names what it touches without a
        query per row, and a concept's page finds it."""
        ends = rows.edge_ends(payload["edge_id"])
        if ends is None:
            return {}
        return {"source_concept_id": ends[0], "target_concept_id": ends[1], "relation_id": ends[2]}

    def edge_ids(self, payload: object) -> list[int]:
        edge_id = payload.get("edge_id") if isinstance(payload, dict) else None
        return [edge_id] if isinstance(edge_id, int) else []

    def blocker_reads(self, payload: dict, reads: BlockerReads) -> None:
        reads.edge_ids.add(payload["edge_id"])

    def blockers(self, proposal, reads: BlockerReads) -> list[str]:
        edge_id = proposal.payload["edge_id"]
        edge = reads.edges.get(edge_id)
        if edge is None:
            return [f"Edge #{edge_id} does not exist."]
        if not edge.is_active:
            return [f"Edge #{edge.pk} is no longer active ({edge.status})."]
        return []

    def named_ends(self, proposal, edges, names):
        edge = edges.get(proposal.payload["edge_id"])
        if edge is None:
            return None, None, None
        return edge.source.name, edge.target.name, edge.relation.key

    def edge_claim(self, proposal, what: str) -> str:
        """ "<what> edge #<id>: <source> <verb> <target>", from the loaded columns."""
        edge_id = proposal.payload["edge_id"]
        if proposal.source_concept_id and proposal.target_concept_id:
            return (
                f"{what} edge #{edge_id}: {proposal.source_concept.name} "
                f"{proposal.relation.verb if proposal.relation else ''} "
                f"{proposal.target_concept.name}"
            ).replace("  ", " ")
        return f"{what} edge #{edge_id}"

    def edge_view(self, proposal) -> dict:
        """The edge as its row names it: its ends and relation key, or its number."""
        return {
            "edge_id": proposal.payload["edge_id"],
            "source": proposal.source_concept,
            "target": proposal.target_concept,
            "relation_words": proposal.relation.key.replace("_", " ") if proposal.relation else "",
        }

    def card(self, card) -> None:
        """The edge with its evidence; for a cycle, its edges in order, each with its
        evidence in context, the weakest being the one proposed for retirement."""
        payload = card.proposal.payload
        cycle_ids = [int(i) for i in payload.get("cycle_edge_ids") or []][:50]
        found = Edge.objects.select_related(
            "source", "target", "relation", "evidence_revision__source"
        ).in_bulk({payload["edge_id"], *cycle_ids})
        view = self.view(card.proposal)
        view["edge"] = found.get(payload["edge_id"])
        view["cycle"] = [
            (e, evidence_context(e.evidence_revision, e.evidence_start, e.evidence_end))
            for e in (found.get(i) for i in cycle_ids)
            if e is not None
        ]
        card.view = view
