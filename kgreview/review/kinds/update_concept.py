"""update_concept: a curator's correction of a concept: its name, its aliases, its type,
or whether it is in use (retire, reactivate). Made by hand (``review.mend``).

Accepting it applies the correction; undoing it applies the reverse. A type change is
written to the concept's type history (``graph.concept_set_type``), so as-of reads see
the type the concept had then, and its undo is one more change back.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from kgreview.graph import rules
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, ConceptAlias
from kgreview.review.decide.outcome import ProposalStale
from kgreview.review.kinds.base import Kind, Rows, Step, UndoStep
from kgreview.review.payloads import Name, RowId, Strict


class UpdateConcept(Strict):
    """A person's correction of a concept: its name, its aliases, or whether it is in use."""

    concept_id: RowId
    name: Name | None = None
    add_aliases: list[Name] = Field(default_factory=list, max_length=50)
    remove_aliases: list[Name] = Field(default_factory=list, max_length=50)
    status: Literal["retired", "active"] | None = None
    # The concept's new type by key; "" takes its type away; None leaves it.
    type_key: str | None = Field(default=None, max_length=64)

    @model_validator(mode="after")
    def _changes_something(self) -> UpdateConcept:
        retyped = self.type_key is not None
        if not (self.name or self.add_aliases or self.remove_aliases or self.status or retyped):
            raise ValueError("a concept update must change at least one thing")
        if self.status and (self.name or self.add_aliases or self.remove_aliases or retyped):
            raise ValueError("retire or reactivate a concept on its own, not with other changes")
        if self.type_key and rules.type_key_refusal(self.type_key) is not None:
            raise ValueError(str(rules.no_type(self.type_key)))
        return self


class UpdateConceptKind(Kind):
    key = "update_concept"
    schema = UpdateConcept
    curator_only = True

    def columns(self, payload: dict, rows: Rows) -> dict:
        return {"source_concept_id": payload["concept_id"]}

    def dedup_key(self, payload: dict, *, symmetric: bool | None = None) -> str:
        # A payload that leaves the type alone keys as it did before types existed.
        if payload.get("type_key") is None:
            payload = {k: v for k, v in payload.items() if k != "type_key"}
        return super().dedup_key(payload, symmetric=symmetric)

    def apply(self, step: Step) -> None:
        payload, out, record = step.proposal.payload, step.out, step.record
        concept = Concept.objects.filter(pk=payload["concept_id"]).first()
        if concept is None:
            raise ProposalStale(f"There is no concept #{payload['concept_id']}.")
        status = payload.get("status")
        if status == "retired":
            concept = graph.concept_retire(
                concept=concept, acting_user=step.acting_user, decision=step.audit_row
            )
            out.changes.retired.add(concept.pk)
        elif status == "active":
            concept = graph.concept_reactivate(
                concept=concept, acting_user=step.acting_user, decision=step.audit_row
            )
            out.changes.named.add(concept.pk)
        else:
            if payload.get("name"):
                old = concept.name
                concept, was_alias = graph.concept_rename(
                    concept=concept,
                    name=payload["name"],
                    acting_user=step.acting_user,
                    decision=step.audit_row,
                )
                record.update(renamed_from=old, renamed_to=concept.name, was_alias=was_alias)
            record["aliases_added"] = [
                graph.concept_add_alias(
                    concept=concept,
                    name=name,
                    acting_user=step.acting_user,
                    decision=step.audit_row,
                ).pk
                for name in payload.get("add_aliases", [])
            ]
            record["aliases_removed"] = [
                graph.concept_remove_alias(
                    concept=concept,
                    name=name,
                    acting_user=step.acting_user,
                    decision=step.audit_row,
                ).pk
                for name in payload.get("remove_aliases", [])
            ]
            if payload.get("type_key") is not None:
                concept = self._retype(step, concept, payload["type_key"])
            out.changes.named.add(concept.pk)
        out.concepts.append(concept)

    def _retype(self, step: Step, concept: Concept, type_key: str) -> Concept:
        """Give the concept its new type, recording the one it had for the undo."""
        concept = Concept.objects.select_related("type").get(pk=concept.pk)
        step.record["type_from"] = concept.type.key if concept.type else ""
        step.record["type_to"] = type_key
        return graph.concept_set_type(
            concept=concept,
            type_key=type_key,
            acting_user=step.acting_user,
            decision=step.audit_row,
        )

    def undo(self, step: UndoStep) -> None:
        """Reactivate what it retired, retire what it reactivated, or put the names back."""
        payload, after, changes = step.proposal.payload, step.after, step.changes
        concept = Concept.objects.get(pk=payload["concept_id"])
        status = payload.get("status")
        if status == "retired":
            graph.concept_reactivate(
                concept=concept, acting_user=step.acting_user, decision=step.audit_row
            )
            changes.named.add(concept.pk)
            return
        if status == "active":
            graph.concept_retire(
                concept=concept, acting_user=step.acting_user, decision=step.audit_row
            )
            changes.retired.add(concept.pk)
            return
        if "type_from" in after:
            graph.concept_set_type(
                concept=concept,
                type_key=after["type_from"],
                acting_user=step.acting_user,
                decision=step.audit_row,
            )
        for alias_id in after.get("aliases_removed", []):
            graph.concept_restore_alias(
                alias_id=alias_id, acting_user=step.acting_user, decision=step.audit_row
            )
        for alias_id in after.get("aliases_added", []):
            alias = ConceptAlias.objects.filter(pk=alias_id).first()
            if alias is not None:
                graph.concept_remove_alias(
                    concept=concept,
                    name=alias.name,
                    acting_user=step.acting_user,
                    decision=step.audit_row,
                )
        if after.get("renamed_from"):
            concept, _ = graph.concept_rename(
                concept=concept,
                name=after["renamed_from"],
                acting_user=step.acting_user,
                decision=step.audit_row,
            )
            if not after.get("was_alias"):
                graph.concept_remove_alias(
                    concept=concept,
                    name=after["renamed_to"],
                    acting_user=step.acting_user,
                    decision=step.audit_row,
                )
        changes.named.add(concept.pk)

    def claim(self, proposal, relations=None) -> str:
        payload = proposal.payload
        name = proposal.source_concept.name if proposal.source_concept_id else "a concept"
        parts = []
        if payload.get("name"):
            parts.append(f"rename to {payload['name']}")
        if payload.get("add_aliases"):
            parts.append("add " + ", ".join(payload["add_aliases"]))
        if payload.get("remove_aliases"):
            parts.append("remove " + ", ".join(payload["remove_aliases"]))
        if payload.get("status"):
            parts.append("retire" if payload["status"] == "retired" else "reactivate")
        if payload.get("type_key") is not None:
            parts.append(f"type {payload['type_key']}" if payload["type_key"] else "untyped")
        return f"{name}: " + "; ".join(parts)

    def view(self, proposal) -> dict:
        payload = proposal.payload
        return {
            "concept": proposal.source_concept,
            "name": payload.get("name"),
            "status": payload.get("status"),
            "add_aliases": payload.get("add_aliases", []),
            "remove_aliases": payload.get("remove_aliases", []),
            "type_key": payload.get("type_key"),
        }
