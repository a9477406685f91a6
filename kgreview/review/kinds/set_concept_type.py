"""set_concept_type: a type for a concept the graph has ("ACCESS EXCLUSIVE" is a lock),
with the quote that shows it. Reviewers decide it.

The payload names the concept by id (and its name, for the queue and the command line),
the type by key, and the type the concept had when it was proposed (``type_from``, ""
untyped), which the card sets beside the proposed one. Its evidence is where an edge's
is: the proposal's quote columns (``proposal_create(evidence=…)``), shown by the card.
The agents propose it for untyped concepts only (``agents.concept_typing``); a reviewer
may still be asked to change a type, and the pattern rule then holds.

Accepting it gives the concept the type (``graph.concept_set_type``, which writes the
type history and refuses, in words, a change that would break a relation pattern of the
concept's active edges); undoing it puts back the type recorded in the decision's
``after`` (``type_from``), while the concept still has the type the decision gave it.
It goes stale when the concept is gone, retired or merged, when the type is gone or
retired, or when the concept has that type already.
"""

from __future__ import annotations

from kgreview.core.errors import DomainError, StateConflict
from kgreview.graph import rules
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, ConceptType
from kgreview.review.decide.outcome import ProposalStale
from kgreview.review.kinds.base import BlockerReads, Kind, Rows, Settle, Step, UndoStep
from kgreview.review.payloads import Name, QuoteIsEvidence, RelationKey, RowId


class SetConceptType(QuoteIsEvidence):
    concept_id: RowId
    concept_name: Name
    type_key: RelationKey
    # The concept's type when it was proposed ("" untyped): what the reviewer replaces.
    type_from: str = ""


def _type(key: str) -> ConceptType | None:
    return ConceptType.objects.filter(key=key).first()


def refusal_of(concept: Concept | None, concept_id: int, type_key: str) -> DomainError | None:
    """Why the concept cannot be given the type now, in the rule book's words: the
    concept gone or not active (retired, merged), the type gone or retired, the concept
    of that type already, or one of its edges' patterns broken by the change."""
    refusal = rules.end_refusal(concept, concept_id)
    if refusal is not None or concept is None:
        return refusal
    new = _type(type_key)
    if new is None:
        return rules.no_type(type_key)
    refusal = rules.type_active_refusal(new) or rules.type_change_refusal(
        concept, concept.type, new
    )
    if refusal is None and concept.type_id is not None:
        refusal = graph.type_change_pattern_refusal(concept, new)
    return refusal


class SetConceptTypeKind(Kind):
    key = "set_concept_type"
    schema = SetConceptType
    # Its concept is its source column: closed when the concept is merged, retired or
    # taken back by an undo.
    settled = frozenset({Settle.CONCEPTS})
    accept_label = "Accept the type"

    def columns(self, payload: dict, rows: Rows) -> dict:
        """The concept as the proposal's source, so the queue's concept filter and
        settling by concepts find it."""
        return {"source_concept_id": payload["concept_id"]}

    def concepts_named(self, payload: object) -> list[int]:
        return [payload["concept_id"]] if isinstance(payload, dict) else []

    def dedup_key(self, payload: dict, *, symmetric: bool | None = None) -> str:
        """The concept and the type: one open proposal per pair, whatever its quote."""
        return f"set_concept_type:c{payload['concept_id']}:{payload['type_key']}"

    def bulk_needs(self, payload: dict) -> set[str]:
        """The type, when the same bulk decision accepts it (types are decided first)."""
        return {f"concept_type:{payload['type_key']}"}

    def apply(self, step: Step) -> None:
        payload = step.proposal.payload
        concept = Concept.objects.select_related("type").filter(pk=payload["concept_id"]).first()
        refusal = refusal_of(concept, payload["concept_id"], payload["type_key"])
        if refusal is not None:
            raise ProposalStale(str(refusal))
        assert concept is not None
        step.record["type_from"] = concept.type.key if concept.type else ""
        step.record["type_to"] = payload["type_key"]
        concept = graph.concept_set_type(
            concept=concept,
            type_key=payload["type_key"],
            acting_user=step.acting_user,
            decision=step.audit_row,
        )
        step.out.concepts.append(concept)

    def undo(self, step: UndoStep) -> None:
        """Put back the type the concept had, while it still has the one given."""
        concept = Concept.objects.select_related("type").get(pk=step.proposal.payload["concept_id"])
        given = step.after.get("type_to", step.proposal.payload["type_key"])
        now = concept.type.key if concept.type else ""
        if now != given:
            held = f"the type {concept.type.label}" if concept.type else "no type"
            raise StateConflict(
                f'"{concept.name}" has {held} since this decision gave it {given}; it can no '
                "longer be undone from here."
            )
        graph.concept_set_type(
            concept=concept,
            type_key=step.after.get("type_from", ""),
            acting_user=step.acting_user,
            decision=step.audit_row,
        )

    def blockers(self, proposal, reads: BlockerReads) -> list[str]:
        """The concept gone or not active, the type gone or retired, the concept of that
        type already, or a relation pattern its edges would break (two queries; three or
        four for a concept typed already)."""
        payload = proposal.payload
        concept = Concept.objects.select_related("type").filter(pk=payload["concept_id"]).first()
        refusal = refusal_of(concept, payload["concept_id"], payload["type_key"])
        return [str(refusal)] if refusal is not None else []

    def claim(self, proposal, relations=None) -> str:
        payload = proposal.payload
        return f"{payload['concept_name']}: type {payload['type_key']}"

    def named_ends(self, proposal, edges, names):
        """As a triple: the concept, "type" as the relation, the type's key."""
        payload = proposal.payload
        return payload["concept_name"], payload["type_key"], "type"

    def view(self, proposal) -> dict:
        payload = proposal.payload
        return {
            "concept_name": payload["concept_name"],
            "concept_id": payload["concept_id"],
            "type_key": payload["type_key"],
            "type_from": payload.get("type_from", ""),
        }

    def card(self, card) -> None:
        """The proposed type as declared (label, description, parent) and the type the
        concept has now, which accepting replaces."""
        super().card(card)
        payload = card.proposal.payload
        card.view["concept_type"] = (
            ConceptType.objects.select_related("parent").filter(key=payload["type_key"]).first()
        )
        concept = Concept.objects.select_related("type").filter(pk=payload["concept_id"]).first()
        card.view["held"] = concept.type if concept is not None else None
