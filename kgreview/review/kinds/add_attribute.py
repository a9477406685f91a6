"""add_attribute: an attribute a concept type should declare ("default value" of a
setting), with its datatype and the quotes that show concepts of that type holding it.
Curators decide it.

Accepting it declares the attribute (``graph.attribute_create``) with the decision as its
audit row; undoing it retires the attribute, while no concept holds a value for it.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from kgreview.core.errors import DomainError
from kgreview.graph import attribute_rules as arules
from kgreview.graph import rules
from kgreview.graph import services as graph
from kgreview.graph.models import Attribute, ConceptType
from kgreview.graph.services.attributes import key_declared_refusal
from kgreview.review.kinds.add_concept_type import TypeExample
from kgreview.review.kinds.base import BlockerReads, ExamplesKind, Step, UndoStep
from kgreview.review.payloads import Name, RelationKey, Strict


class AttributeExample(TypeExample):
    """A quote that shows a concept (``concept_name``) holding a value (``value``) of the
    proposed attribute."""

    value: str = Field(default="", max_length=2000)


class AddAttribute(Strict):
    type_key: RelationKey
    key: RelationKey  # the same slug rule (``attribute_rules.attribute_key_refusal``)
    label: Name
    datatype: str = Field(max_length=16)
    description: str = Field(default="", max_length=5000)
    examples: list[AttributeExample] = Field(default_factory=list, max_length=50)

    @model_validator(mode="after")
    def _rules(self) -> AddAttribute:
        refusal: DomainError | None = (
            arules.attribute_key_refusal(self.key)
            or arules.attribute_words_refusal(self.label, self.description)
            or arules.datatype_refusal(self.datatype)
        )
        if refusal is not None:
            raise ValueError(str(refusal))
        return self


class AddAttributeKind(ExamplesKind):
    key = "add_attribute"
    schema = AddAttribute
    curator_only = True
    bulk_stage = -1  # after the type it belongs to

    def dedup_key(self, payload: dict, *, symmetric: bool | None = None) -> str:
        return f"add_attribute:{payload['type_key']}.{payload['key']}"

    def apply(self, step: Step) -> None:
        payload = step.proposal.payload
        attribute = graph.attribute_create(
            type_key=payload["type_key"],
            key=payload["key"],
            label=payload["label"],
            datatype=payload["datatype"],
            description=payload.get("description", ""),
            acting_user=step.acting_user,
            decision=step.audit_row,
        )
        step.record["attribute"] = attribute.pk

    def undo(self, step: UndoStep) -> None:
        """Retire the attribute, unless a concept holds a value for it already."""
        attribute = Attribute.objects.select_related("concept_type").get(pk=step.after["attribute"])
        refusal = arules.attribute_in_use(attribute, attribute.values.count())
        if refusal is not None:
            raise refusal
        graph.attribute_retire(
            attribute=attribute, acting_user=step.acting_user, decision=step.audit_row
        )

    def blockers(self, proposal, reads: BlockerReads) -> list[str]:
        """The type missing or retired, or the key declared by it or a type above it."""
        payload = proposal.payload
        type_key, key = payload["type_key"], payload["key"]
        concept_type = ConceptType.objects.select_related("parent").filter(key=type_key).first()
        refusal: DomainError | None
        if concept_type is None:
            refusal = rules.no_type(type_key)
        else:
            refusal = rules.type_active_refusal(concept_type) or key_declared_refusal(
                concept_type, key
            )
        return [str(refusal)] if refusal is not None else []

    def claim(self, proposal, relations=None) -> str:
        payload = proposal.payload
        return (
            f"New attribute {payload['label']} ({payload['datatype']}) of the concept type "
            f"{payload['type_key']}"
        )

    def named_ends(self, proposal, edges, names):
        """Like a relation type's: its label, and its key as the relation."""
        return proposal.payload["label"], None, proposal.payload["key"]

    def view(self, proposal) -> dict:
        payload = proposal.payload
        return {
            "type_key": payload["type_key"],
            "key": payload["key"],
            "label": payload["label"],
            "datatype": payload["datatype"],
            "datatype_words": Attribute.Datatype(payload["datatype"]).label,
            "description": payload.get("description", ""),
            "examples": payload.get("examples", []),
        }
