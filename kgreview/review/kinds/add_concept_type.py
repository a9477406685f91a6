"""add_concept_type: a type of concept the graph lacks ("setting", "command"), with the
quotes that show concepts of that type in the documents. Curators decide it.

Accepting it adds the type to the concept vocabulary (``graph.concept_type_create``),
under its parent when it names one, with the decision as its audit row; undoing it
retires the type, while no concept has it.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from pydantic import Field, model_validator

from kgreview.core.errors import DomainError, StateConflict
from kgreview.graph import rules
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, ConceptType
from kgreview.review.kinds.base import BlockerReads, ExamplesKind, Step, UndoStep
from kgreview.review.payloads import Name, Offset, RelationKey, RowId, Strict
from kgreview.review.signals import ontology_accepted


class TypeExample(Strict):
    """A quote that shows a concept of the proposed type (``concept_name``, when known)."""

    quote: str = Field(min_length=1, max_length=2000)
    source_slug: str = Field(min_length=1, max_length=200)
    revision_id: RowId | None = None
    start: Offset | None = None
    end: Offset | None = None
    concept_name: str = Field(default="", max_length=200)


class AddConceptType(Strict):
    key: RelationKey  # the same slug rule as a relation's key (``rules.type_key_refusal``)
    label: Name
    description: str = Field(default="", max_length=5000)
    parent_key: str = Field(default="", max_length=64)
    examples: list[TypeExample] = Field(default_factory=list, max_length=50)

    @model_validator(mode="after")
    def _rules(self) -> AddConceptType:
        refusal: DomainError | None = rules.type_words_refusal(self.label, self.description)
        if refusal is None and self.parent_key:
            if rules.type_key_refusal(self.parent_key) is not None:
                refusal = rules.no_type(self.parent_key)
            elif self.parent_key == self.key:
                refusal = rules.parent_cycle_refusal(self.key, [self.key])
        if refusal is not None:
            raise ValueError(str(refusal))
        return self


class AddConceptTypeKind(ExamplesKind):
    key = "add_concept_type"
    schema = AddConceptType
    curator_only = True
    bulk_stage = -3  # a type before its subtypes, relations, patterns and attributes

    def bulk_gives(self, payload: dict) -> set[str]:
        return {f"concept_type:{payload['key']}"}

    def bulk_needs(self, payload: dict) -> set[str]:
        parent = payload.get("parent_key", "")
        return {f"concept_type:{parent}"} if parent else set()

    def dedup_key(self, payload: dict, *, symmetric: bool | None = None) -> str:
        return f"add_concept_type:{payload['key']}"

    def apply(self, step: Step) -> None:
        payload = step.proposal.payload
        # Once the type exists, the candidates held for breaking a pattern are asked again,
        # and the untyped concepts it fits are proposed it (``type_key``).
        transaction.on_commit(
            lambda: ontology_accepted.send(
                sender=self.__class__, relation_keys=None, type_key=payload["key"]
            )
        )
        graph.concept_type_create(
            key=payload["key"],
            label=payload["label"],
            description=payload.get("description", ""),
            parent_key=payload.get("parent_key", ""),
            acting_user=step.acting_user,
            decision=step.audit_row,
        )

    def undo(self, step: UndoStep) -> None:
        """Retire the type, unless active concepts have it (or subtypes hang under it): the
        concepts a batch undo retires keep it, as a retired type's concepts do."""
        concept_type = ConceptType.objects.get(key=step.proposal.payload["key"])
        given = concept_type.concepts.filter(status=Concept.Status.ACTIVE).count()
        if given:
            raise StateConflict(
                f'The concept type "{concept_type.key}" is already given to {given} '
                f"concept{'s' if given != 1 else ''}; change their types, or retire it instead."
            )
        graph.concept_type_retire(
            concept_type=concept_type, acting_user=step.acting_user, decision=step.audit_row
        )

    def blockers(self, proposal, reads: BlockerReads) -> list[str]:
        """A key already taken, or a parent missing or retired (one query)."""
        payload = proposal.payload
        key, parent_key = payload["key"], payload.get("parent_key", "")
        found = {
            t.key: t for t in ConceptType.objects.filter(Q(key=key) | Q(key=parent_key or key))
        }
        refusal: DomainError | None = rules.type_taken(key) if key in found else None
        if refusal is None and parent_key:
            parent = found.get(parent_key)
            refusal = (
                rules.no_type(parent_key)
                if parent is None
                else rules.type_active_refusal(parent, as_parent=True)
            )
        return [str(refusal)] if refusal is not None else []

    def claim(self, proposal, relations=None) -> str:
        payload = proposal.payload
        parent = payload.get("parent_key", "")
        return f"New concept type {payload['label']}" + (f", a kind of {parent}" if parent else "")

    def named_ends(self, proposal, edges, names):
        return proposal.payload["label"], None, None

    def view(self, proposal) -> dict:
        payload = proposal.payload
        return {
            "key": payload["key"],
            "label": payload["label"],
            "description": payload.get("description", ""),
            "parent_key": payload.get("parent_key", ""),
            "examples": payload.get("examples", []),
        }
