"""merge_concepts: two concepts that are one; the loser's names and edges move to the
survivor. Curators decide it, and may keep the other concept than the one suggested.

Accepting it merges; undoing it splits the loser off again with its edges.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from construction import keys
from kgreview.core.errors import ValidationFailed
from kgreview.graph import services as graph
from kgreview.graph.models import Concept
from kgreview.review import provenance
from kgreview.review.kinds.base import BlockerReads, Kind, Rows, Settle, Step, UndoStep
from kgreview.review.payloads import RowId, Score, Strict
from kgreview.review.workspace.card_parts import merge_sides, neighbours_of


class MergeConcepts(Strict):
    survivor_id: RowId
    loser_id: RowId
    score: Score | None = None
    why: str = Field(min_length=1, max_length=2000)

    @model_validator(mode="after")
    def _two_concepts(self) -> MergeConcepts:
        if self.survivor_id == self.loser_id:
            raise ValueError("a concept cannot be merged into itself")
        return self


class MergeConceptsKind(Kind):
    key = "merge_concepts"
    schema = MergeConcepts
    curator_only = True
    decision_first = True
    settled = frozenset({Settle.CONCEPTS})
    accept_label = "Merge"

    def columns(self, payload: dict, rows: Rows) -> dict:
        """The loser as source and the survivor as target."""
        return {
            "source_concept_id": payload["loser_id"],
            "target_concept_id": payload["survivor_id"],
        }

    def concepts_named(self, payload: object) -> list[int]:
        """Both concepts (checked for the whole batch before anything is queued)."""
        if not isinstance(payload, dict):
            return []
        ids = (payload.get("survivor_id"), payload.get("loser_id"))
        return [v for v in ids if isinstance(v, int)]

    def dedup_key(self, payload: dict, *, symmetric: bool | None = None) -> str:
        return keys.merge_dedup_key(payload["survivor_id"], payload["loser_id"])

    def apply(self, step: Step) -> None:
        payload = step.proposal.payload
        merged = graph.concept_merge(
            loser=Concept.objects.get(pk=payload["loser_id"]),
            survivor=Concept.objects.get(pk=payload["survivor_id"]),
            reason=payload.get("why", ""),
            acting_user=step.acting_user,
            decision=step.audit_row,
        )
        retired = [old for old, _ in merged.superseded] + merged.invalidated
        provenance.edges_retired({old.pk: step.audit_row for old in retired})
        provenance.edges_made(
            provenance.made(
                new, decision=step.audit_row, proposal=step.proposal, like=old, keep_decision=True
            )
            for old, new in merged.superseded
        )
        out = step.out
        out.concepts.append(merged.survivor)
        out.edges += [new for _, new in merged.superseded]
        out.changes.merged[merged.loser.pk] = merged.survivor.pk
        out.changes.edges_gone |= {old.pk for old, _ in merged.superseded}
        out.changes.edges_gone |= {old.pk for old in merged.invalidated}
        out.changes.edges_added |= {new.pk for _, new in merged.superseded}

    def undo(self, step: UndoStep) -> None:
        """Split the loser off again, with the edges it brought."""
        loser = Concept.objects.get(pk=step.proposal.payload["loser_id"])
        result = graph.concept_unmerge(
            loser=loser, reason=step.why, acting_user=step.acting_user, decision=step.audit_row
        )
        unmerged(result, decision=step.audit_row)
        step.changes.named.add(loser.pk)
        step.changes.edges_added |= {e.pk for e in result.restored}

    def keep(self, payload: dict, concept_id: int) -> dict | None:
        """The payload with the two concepts swapped when the curator keeps the loser."""
        if concept_id not in (payload["survivor_id"], payload["loser_id"]):
            raise ValidationFailed("The concept to keep must be one of the two being merged.")
        if concept_id == payload["survivor_id"]:
            return None
        return {**payload, "survivor_id": payload["loser_id"], "loser_id": payload["survivor_id"]}

    def blocker_reads(self, payload: dict, reads: BlockerReads) -> None:
        reads.concept_ids |= {payload["survivor_id"], payload["loser_id"]}

    def blockers(self, proposal, reads: BlockerReads) -> list[str]:
        words = []
        for key in ("survivor_id", "loser_id"):
            concept = reads.concepts.get(proposal.payload[key])
            if concept is None:
                words.append(f"Concept #{proposal.payload[key]} does not exist.")
            elif not concept.is_active:
                words.append(graph.inactive_words(concept))
        return words

    def claim(self, proposal, relations=None) -> str:
        if proposal.source_concept_id and proposal.target_concept_id:
            return f"Merge {proposal.source_concept.name} into {proposal.target_concept.name}"
        payload = proposal.payload
        return f"Merge concept #{payload['loser_id']} into #{payload['survivor_id']}"

    def named_ends(self, proposal, edges, names):
        payload = proposal.payload
        return names.get(payload["loser_id"]), names.get(payload["survivor_id"]), None

    def view(self, proposal) -> dict:
        payload = proposal.payload
        return {
            "loser_id": payload["loser_id"],
            "survivor_id": payload["survivor_id"],
            "loser": proposal.source_concept,
            "survivor": proposal.target_concept,
            "why": payload.get("why", ""),
        }

    def card(self, card) -> None:
        """Both concepts side by side: names, sources, edge counts, recent edges."""
        payload = card.proposal.payload
        view = self.view(card.proposal)
        concepts = Concept.objects.in_bulk({payload["survivor_id"], payload["loser_id"]})
        ends = {
            role: concepts[payload[key]]
            for role, key in (("survivor", "survivor_id"), ("loser", "loser_id"))
            if payload[key] in concepts
        }
        found = neighbours_of(ends, limit=12)
        card.neighbours = [(ends[role].name, rows) for role, rows in found.items()]
        view["loser_name"] = concepts.get(payload["loser_id"], payload["loser_id"])
        view["survivor_name"] = concepts.get(payload["survivor_id"], payload["survivor_id"])
        view["sides"] = merge_sides(ends)
        card.view = view


def unmerged(result: graph.UnmergeOutcome, *, decision) -> None:
    """Record an undone merge's edges: the rows it retired again, by ``decision``, and the
    rows it brought back, each with the proposal of the row it restores."""
    provenance.edges_retired({e.pk: decision for e in result.retired})
    provenance.edges_made(
        provenance.made(new, decision=decision, like=old) for old, new in result.restored_from
    )
