"""add_alias: one more name for a concept, because a document defines it ("Transmission
Control Protocol (TCP)"), with the sentence that does as its evidence. The agents queue
it (``construction.drafts.alias_drafts``) for a concept that lacks the name; reviewers
decide it.

Accepting it adds the name; undoing it takes the name off again.
"""

from __future__ import annotations

from construction import keys
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, ConceptAlias
from kgreview.review.decide.outcome import ProposalStale
from kgreview.review.kinds.base import BlockerReads, Kind, Rows, Step, UndoStep, ground
from kgreview.review.payloads import Name, RowId, Strict


class AddAlias(Strict):
    """A name for a concept, and the concept's name as the agent knew it."""

    concept_id: RowId
    alias: Name
    name: Name | None = None


def _taken_words(alias: str, owner: ConceptAlias) -> str:
    return f'The name "{alias}" already belongs to the concept "{owner.concept.name}".'


class AddAliasKind(Kind):
    key = "add_alias"
    schema = AddAlias
    accept_label = "Add the name"

    def columns(self, payload: dict, rows: Rows) -> dict:
        return {"source_concept_id": payload["concept_id"]}

    def concepts_named(self, payload: object) -> list[int]:
        """The concept (checked for the whole batch before anything is queued)."""
        if not isinstance(payload, dict) or not isinstance(payload.get("concept_id"), int):
            return []
        return [payload["concept_id"]]

    def dedup_key(self, payload: dict, *, symmetric: bool | None = None) -> str:
        return keys.alias_dedup_key(payload["concept_id"], payload["alias"])

    def apply(self, step: Step) -> None:
        """Add the name, unless the concept has it already."""
        payload, out, record = step.proposal.payload, step.out, step.record
        concept = Concept.objects.filter(pk=payload["concept_id"]).first()
        if concept is None:
            raise ProposalStale(f"There is no concept #{payload['concept_id']}.")
        if not concept.is_active:
            raise ProposalStale(graph.inactive_words(concept), concept_id=concept.pk)
        alias = payload["alias"]
        owner = graph_selectors.name_owner(name=alias)
        if owner is not None and owner.concept_id != concept.pk:
            raise ProposalStale(_taken_words(alias, owner), concept_id=owner.concept_id)
        if owner is None:
            added = graph.concept_add_alias(
                concept=concept, name=alias, acting_user=step.acting_user, decision=step.audit_row
            )
            record["aliases_added"] = [added.pk]
        else:
            record["aliases_added"] = []
            out.message = f'"{concept.name}" already answers to "{alias}".'
        record["concept_id"] = concept.pk
        ground(step.proposal, [concept.pk])
        out.concepts.append(concept)
        out.changes.named.add(concept.pk)

    def undo(self, step: UndoStep) -> None:
        """Take the name off again (if it is still on the concept)."""
        concept = Concept.objects.get(pk=step.proposal.payload["concept_id"])
        for alias_id in step.after.get("aliases_added", []):
            alias = ConceptAlias.objects.filter(pk=alias_id, removed_at__isnull=True).first()
            if alias is not None:
                graph.concept_remove_alias(
                    concept=concept,
                    name=alias.name,
                    acting_user=step.acting_user,
                    decision=step.audit_row,
                )
        step.changes.named.add(concept.pk)

    def blocker_reads(self, payload: dict, reads: BlockerReads) -> None:
        reads.concept_ids.add(payload["concept_id"])

    def blockers(self, proposal, reads: BlockerReads) -> list[str]:
        payload = proposal.payload
        concept = reads.concepts.get(payload["concept_id"])
        if concept is None:
            return [f"Concept #{payload['concept_id']} does not exist."]
        if not concept.is_active:
            return [graph.inactive_words(concept)]
        owner = graph_selectors.name_owner(name=payload["alias"])
        if owner is not None and owner.concept_id != concept.pk:
            return [_taken_words(payload["alias"], owner)]
        return []

    def claim(self, proposal, relations=None) -> str:
        payload = proposal.payload
        name = (
            proposal.source_concept.name
            if proposal.source_concept_id
            else payload.get("name") or f"Concept #{payload['concept_id']}"
        )
        return f"{name} is also called {payload['alias']}"

    def view(self, proposal) -> dict:
        payload = proposal.payload
        return {
            "concept": proposal.source_concept,
            "concept_id": payload["concept_id"],
            "name": payload.get("name") or "",
            "alias": payload["alias"],
        }
