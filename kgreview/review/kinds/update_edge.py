"""update_edge: change an edge's relation, direction, ends, weight or confidence.

Accepting it supersedes the edge with a new row that says what changed; undoing it
supersedes that row again with the old values.
"""

from __future__ import annotations

from pydantic import model_validator

from kgreview.core.errors import StateConflict
from kgreview.graph import pattern_book
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, Edge, RelationType
from kgreview.review import provenance
from kgreview.review.kinds.base import BlockerReads, Step, UndoStep, active_edge
from kgreview.review.kinds.edge_change import EdgeChangeKind
from kgreview.review.payloads import Confidence, RelationKey, RowId, Strict, Weight


class UpdateEdge(Strict):
    edge_id: RowId
    relation: RelationKey | None = None
    swap_direction: bool = False
    source_id: RowId | None = None
    target_id: RowId | None = None
    weight: Weight | None = None
    new_confidence: Confidence | None = None

    @model_validator(mode="after")
    def _changes_something(self) -> UpdateEdge:
        if not (
            self.relation
            or self.swap_direction
            or self.source_id
            or self.target_id
            or self.weight is not None
            or self.new_confidence is not None
        ):
            raise ValueError("an update must change at least one thing")
        return self


class UpdateEdgeKind(EdgeChangeKind):
    key = "update_edge"
    schema = UpdateEdge
    decision_first = True

    def apply(self, step: Step) -> None:
        proposal = step.proposal
        payload = proposal.payload
        edge = active_edge(payload["edge_id"])
        changes: dict = {}
        if payload.get("relation"):
            changes["relation"] = RelationType.objects.get(key=payload["relation"])
        source_id = payload.get("source_id") or edge.source_id
        target_id = payload.get("target_id") or edge.target_id
        if payload.get("swap_direction"):
            source_id, target_id = target_id, source_id
        if (source_id, target_id) != (edge.source_id, edge.target_id):
            changes["source"] = Concept.objects.get(pk=source_id)
            changes["target"] = Concept.objects.get(pk=target_id)
        if payload.get("weight") is not None:
            changes["weight"] = payload["weight"]
        if payload.get("new_confidence") is not None:
            changes["confidence"] = payload["new_confidence"]
        new = graph.edge_supersede(
            edge=edge,
            why=proposal.reason or "Updated by a reviewer.",
            acting_user=step.acting_user,
            decision=step.audit_row,
            **changes,
        )
        provenance.edge_retired(edge, step.audit_row)
        provenance.edge_made(new, decision=step.audit_row, proposal=proposal)
        step.out.edges.append(new)
        step.out.changes.edges_gone.add(edge.pk)
        step.out.changes.edges_added.add(new.pk)

    def undo(self, step: UndoStep) -> None:
        """Supersede the updated row with the old values."""
        new = Edge.objects.filter(provenance__decision=step.decision).first()
        if new is None or not new.is_active:
            raise StateConflict("The updated edge changed since; it cannot be undone here.")
        old = new.supersedes
        back = graph.edge_supersede(
            edge=new,
            why=step.why,
            acting_user=step.acting_user,
            decision=step.audit_row,
            source=old.source,
            target=old.target,
            relation=old.relation,
            confidence=old.confidence,
            weight=old.weight,
            reason=old.reason,
            evidence=graph.Evidence.of(old),
            valid_at=old.valid_at,
        )
        provenance.edge_retired(new, step.audit_row)
        provenance.edge_made(back, decision=step.audit_row)
        step.changes.edges_gone.add(new.pk)
        step.changes.edges_added.add(back.pk)

    def blocker_reads(self, payload: dict, reads: BlockerReads) -> None:
        super().blocker_reads(payload, reads)
        if payload.get("relation"):
            reads.relation_keys.add(payload["relation"])
        reads.concept_ids |= {payload[k] for k in ("source_id", "target_id") if payload.get(k)}

    def blockers(self, proposal, reads: BlockerReads) -> list[str]:
        """The edge gone, or the updated edge breaking its relation's patterns (the rule
        book's words; the patterns read only for a patterned relation)."""
        words = super().blockers(proposal, reads)
        edge = reads.edges.get(proposal.payload["edge_id"])
        if words or edge is None:
            return words
        payload = proposal.payload
        relation = reads.relations.get(payload.get("relation") or "") or edge.relation
        ids = [
            payload.get("source_id") or edge.source_id,
            payload.get("target_id") or edge.target_id,
        ]
        if payload.get("swap_direction"):
            ids.reverse()
        book = reads.patterns if relation.pk in reads.patterns.patterns else None
        if book is None:
            book = pattern_book.load([relation.pk])
            if not book.of(relation.pk):
                return words
        missing = [i for i in ids if i not in reads.concepts]
        if missing:
            reads.concepts.update(Concept.objects.in_bulk(missing))
        source, target = (reads.concepts.get(i) for i in ids)
        if source is None or target is None:
            return words
        refusal = book.concepts_refusal(relation, source, target)
        return [str(refusal)] if refusal is not None else words

    def claim(self, proposal, relations=None) -> str:
        return self.edge_claim(proposal, "Update")

    def view(self, proposal) -> dict:
        payload = proposal.payload
        return {
            **self.edge_view(proposal),
            "swap_direction": payload.get("swap_direction"),
            "new_relation": payload.get("relation"),
        }
