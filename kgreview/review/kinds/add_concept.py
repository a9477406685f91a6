"""add_concept: a new concept, by name, with its aliases and a description.

Accepting it creates the concept, or links it to the concept that already answers to
the name (adding the names it lacks), or brings back its own concept a curator retired;
undoing it retires a concept it created and takes back the aliases it added. A reviewer
may correct its name, type and description before accepting (``ConceptEdits``); the
decision keeps the proposal as the agent drafted it, for the undo.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from construction import keys
from kgreview.core.errors import ValidationFailed
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, ConceptAlias
from kgreview.graph.search import concept_search
from kgreview.review.decide.ends import concept_for_name, retired_name_words
from kgreview.review.decide.outcome import ProposalStale
from kgreview.review.kinds.base import (
    NOT_EDITABLE,
    BlockerReads,
    Kind,
    Settle,
    Step,
    UndoStep,
    ground,
)
from kgreview.review.kinds.edge_set import accept_edges_and_concepts
from kgreview.review.kinds.edge_set_check import type_refusal
from kgreview.review.payloads import DESCRIPTION_MAX, Name, Offset, RowId, Strict


class Defined(Strict):
    """An alias the document defines, with the sentence defining it (offsets into the
    revision named, or the proposal's own evidence revision when none is)."""

    alias: Name
    quote: str = Field(min_length=1, max_length=5000)
    start: Offset | None = None
    end: Offset | None = None
    revision_id: RowId | None = None


class AddConcept(Strict):
    name: Name
    aliases: list[Name] = Field(default_factory=list, max_length=50)
    description: str = Field(default="", max_length=DESCRIPTION_MAX)
    type_key: str = Field(
        default="",
        pattern=r"^([a-z][a-z0-9_]{0,63})?$",
        description="The concept type the new concept is given when accepted (none: untyped).",
    )
    defined: list[Defined] = Field(
        default_factory=list,
        max_length=50,
        description="The aliases its documents define, each with the defining sentence.",
    )


@dataclass(frozen=True)
class ConceptEdits:
    """A reviewer's corrections to a new concept before accepting it: its name, its type
    (None: kept; "": none) and its description (None: kept)."""

    name: str = ""
    type_key: str | None = None
    description: str | None = None
    confidence: float | None = None

    def proposals_named(self) -> list[int]:
        return []


class AddConceptKind(Kind):
    key = "add_concept"
    schema = AddConcept
    names_a_concept = True
    editable = True
    edit_form = "kgreview.review.workspace.forms.ConceptEditForm"
    edit_hint = "to give it another name or type"
    decided_as_a_set = True
    settled = frozenset({Settle.NAME})
    # Decided as one set with the edges that need them (``edge_set``).
    accept_set = accept_edges_and_concepts

    def dedup_key(self, payload: dict, *, symmetric: bool | None = None) -> str:
        return keys.concept_dedup_key(payload["name"])

    def apply(self, step: Step) -> None:
        """Create the concept, or reuse the one that already answers to the name."""
        proposal, out, record = step.proposal, step.out, step.record
        payload = proposal.payload
        name = payload["name"]
        concept = concept_for_name(name)
        if concept is not None and concept.status == Concept.Status.RETIRED:
            if proposal.concept_id != concept.pk:  # not this proposal's own concept coming back
                raise ProposalStale(retired_name_words(name, concept), concept_id=concept.pk)
            concept = graph.concept_reactivate(
                concept=concept, acting_user=step.acting_user, decision=step.audit_row
            )
            record.update(concept_id=concept.pk, created=True)
        elif concept is not None:
            added = []
            for alias in [name, *payload.get("aliases", [])]:
                if graph_selectors.name_owner(name=alias) is None:
                    added.append(
                        graph.concept_add_alias(
                            concept=concept,
                            name=alias,
                            acting_user=step.acting_user,
                            decision=step.audit_row,
                        ).pk
                    )
            record.update(concept_id=concept.pk, created=False, aliases_added=added)
            out.message = f'"{name}" was already the concept "{concept.name}"; linked to it.'
            if payload.get("type_key") and concept.type_id is None:
                out.message += " Its type is a curator's correction of that concept."
        else:
            free = [
                a for a in payload.get("aliases", []) if graph_selectors.name_owner(name=a) is None
            ]
            concept = graph.concept_create(
                name=name,
                description=payload.get("description", ""),
                aliases=free,
                type_key=payload.get("type_key", ""),
                acting_user=step.acting_user,
                decision=step.audit_row,
            )
            record.update(concept_id=concept.pk, created=True)
        proposal.concept = concept
        ground(proposal, [concept.pk])
        out.concepts.append(concept)
        out.changes.named.add(concept.pk)
        out.changes.resolved[proposal.pk] = concept.pk

    def undo(self, step: UndoStep) -> None:
        """Retire the concept it created; take back the names it gave an existing one."""
        proposal = step.proposal
        concept = proposal.concept
        if concept is None:
            return
        if step.after.get("created", True):
            retired = graph.concept_retire(
                concept=concept, acting_user=step.acting_user, decision=step.audit_row
            )
            step.changes.unmade[retired.pk] = proposal.pk
        for alias_id in step.after.get("aliases_added", []):
            alias = ConceptAlias.objects.filter(pk=alias_id).first()
            if alias is not None:
                graph.concept_remove_alias(
                    concept=concept,
                    name=alias.name,
                    acting_user=step.acting_user,
                    decision=step.audit_row,
                )

    def edits(self, data: dict) -> ConceptEdits:
        return ConceptEdits(
            name=data["name"],
            type_key=data["type_key"],
            description=data["description"],
            confidence=data["confidence"],
        )

    def edited(self, proposal, edits) -> dict:
        """The payload with the reviewer's name, type and description. A new name keeps
        the drafted one's aliases (less the new name itself); a type must be active."""
        if not isinstance(edits, ConceptEdits):
            raise ValidationFailed(NOT_EDITABLE)
        payload = dict(proposal.payload)
        if edits.name:
            payload["name"] = edits.name
            same = keys.concept_dedup_key(edits.name)
            payload["aliases"] = [
                a for a in payload.get("aliases", []) if keys.concept_dedup_key(a) != same
            ]
        if edits.type_key is not None:
            refusal = type_refusal(edits.type_key)
            if refusal is not None:
                raise refusal
            payload["type_key"] = edits.type_key
        if edits.description is not None:
            payload["description"] = edits.description
        return self.validate(payload)

    def blockers(self, proposal, reads: BlockerReads) -> list[str]:
        name = proposal.payload["name"]
        owner = graph_selectors.name_owner(name=name)
        if owner is None:
            refusal = type_refusal(proposal.payload.get("type_key", ""))
            return [str(refusal)] if refusal is not None else []
        retired = owner.concept.status == Concept.Status.RETIRED
        if retired and proposal.concept_id != owner.concept_id:
            return [retired_name_words(name, owner.concept)]
        return []

    def claim(self, proposal, relations=None) -> str:
        type_key = proposal.payload.get("type_key", "")
        return f"New concept {proposal.payload['name']}" + (f" ({type_key})" if type_key else "")

    def named_ends(self, proposal, edges, names):
        return proposal.payload["name"], None, None

    def view(self, proposal) -> dict:
        payload = proposal.payload
        return {
            "name": payload["name"],
            "aliases": payload.get("aliases", []),
            "defined": payload.get("defined", []),
            "type_key": payload.get("type_key", ""),
            "description": payload.get("description", ""),
        }

    def card(self, card) -> None:
        """The name, and existing concepts with a similar name, to spot a duplicate."""
        card.view = self.view(card.proposal)
        if card.proposal.is_open:
            card.view["similar"] = concept_search(q=card.proposal.payload["name"], limit=3)
