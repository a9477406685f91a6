"""set_attribute: a concept's value for an attribute its type declares ("the default of
work_mem is 4MB"), with the quote that states it. Reviewers decide it.

The payload names the concept as an edge names an end (``add_edge.Endpoint``: a known
concept, an open add_concept proposal accepted with the value, or a name), the attribute
by its type's key and its own, and the value as the document writes it. Its evidence is
where an edge's is: the proposal's quote columns (``proposal_create(evidence=…)``),
checked against its revision when queued, shown by the card and copied onto the value.

Accepting it sets the value (``graph.attribute_value_set``, which supersedes the value
the concept held); undoing it takes the value off and gives back the one it superseded.
Which decision set a value is the decision's own record: its ``after`` holds
``attribute_value`` (the row it made) and ``previous_value`` (the row it superseded, or
none); ``review.provenance.value_decisions`` reads it back for a set of value rows.
"""

from __future__ import annotations

import hashlib

from pydantic import Field

from kgreview.core.errors import DomainError, StateConflict
from kgreview.graph import attribute_rules as arules
from kgreview.graph import rules
from kgreview.graph import services as graph
from kgreview.graph.models import Attribute, AttributeValue, Concept
from kgreview.graph.services.attributes import type_chain
from kgreview.review.decide.ends import concept_for_name, open_concept_proposal
from kgreview.review.decide.outcome import ProposalStale
from kgreview.review.kinds.add_edge import Endpoint, endpoint_key
from kgreview.review.kinds.base import BlockerReads, Kind, Rows, Settle, Step, UndoStep
from kgreview.review.kinds.edge_set_check import end_gone_words
from kgreview.review.models import Proposal
from kgreview.review.payloads import QuoteIsEvidence, RelationKey


class SetAttribute(QuoteIsEvidence):
    concept: Endpoint
    type_key: RelationKey
    attribute_key: RelationKey
    value: str = Field(min_length=1, max_length=arules.VALUE_MAX)


def _attribute(payload: dict) -> Attribute | None:
    return (
        Attribute.objects.select_related("concept_type")
        .filter(concept_type__key=payload["type_key"], key=payload["attribute_key"])
        .first()
    )


def _concept_now(end: dict) -> tuple[Concept | None, str]:
    """The concept the end stands for now, without changing anything, or why none does
    ("" when it waits for an open concept proposal, accepted with the value)."""
    if end.get("concept_id"):
        concept = Concept.objects.select_related("type").filter(pk=end["concept_id"]).first()
        return concept, "" if concept else str(rules.no_concept(end["concept_id"]))
    if end.get("proposal_id"):
        needed = Proposal.objects.filter(pk=end["proposal_id"]).first()
        if needed is None:
            return None, f'The proposal for "{end["name"]}" does not exist.'
        if needed.is_open:
            return None, ""
        if needed.concept_id:
            return Concept.objects.select_related("type").get(pk=needed.concept_id), ""
        return None, end_gone_words(end["name"], needed)
    concept = concept_for_name(end["name"])
    if concept is None and open_concept_proposal(end["name"]) is None:
        return None, f'No concept is named "{end["name"]}".'
    return concept, ""


def _concept_for(end: dict, step: Step) -> Concept:
    """The concept the end stands for, accepting the open concept proposal it waits for
    (in the same batch); refused in words when none does."""
    if end.get("concept_id"):
        return Concept.objects.get(pk=end["concept_id"])
    waiting: Proposal | None = None
    if end.get("proposal_id"):
        waiting = (
            Proposal.objects.select_for_update(no_key=True).filter(pk=end["proposal_id"]).first()
        )
        if waiting is not None and not waiting.is_open and waiting.concept_id:
            return Concept.objects.get(pk=waiting.concept_id)
    concept = concept_for_name(end["name"])
    if concept is not None:
        return concept
    if waiting is None or not waiting.is_open:
        waiting = open_concept_proposal(end["name"])
        if waiting is not None:
            waiting = Proposal.objects.select_for_update(no_key=True).get(pk=waiting.pk)
    if waiting is not None and waiting.is_open:
        return Concept.objects.get(pk=step.accept_needed(waiting))
    raise ProposalStale(f'No concept is named "{end["name"]}".')


class SetAttributeKind(Kind):
    key = "set_attribute"
    schema = SetAttribute
    # Its concept is its source column: closed when the concept is merged, retired or
    # taken back by an undo (a value for the survivor is proposed again by its source).
    settled = frozenset({Settle.CONCEPTS})

    def columns(self, payload: dict, rows: Rows) -> dict:
        """The concept as the proposal's source, so the queue's concept filter and
        settling by concepts find it."""
        return {
            "source_key": endpoint_key(payload["concept"]),
            "source_concept_id": payload["concept"].get("concept_id"),
        }

    def dedup_key(self, payload: dict, *, symmetric: bool | None = None) -> str:
        """The concept, the attribute and a digest of the value as written."""
        value = hashlib.sha256(payload["value"].strip().encode()).hexdigest()[:24]
        return (
            f"set_attribute:{payload['type_key']}.{payload['attribute_key']}={value}:"
            f"{endpoint_key(payload['concept'])}"
        )

    def apply(self, step: Step) -> None:
        proposal = step.proposal
        payload = proposal.payload
        concept = _concept_for(payload["concept"], step)
        attribute = _attribute(payload)
        if attribute is None:
            raise ProposalStale(
                str(arules.no_attribute(payload["type_key"], payload["attribute_key"]))
            )
        row = graph.attribute_value_set(
            concept=concept,
            attribute=attribute,
            value=payload["value"],
            evidence=graph.Evidence.of(proposal),
            acting_user=step.acting_user,
            decision=step.audit_row,
        )
        previous = (
            AttributeValue.objects.filter(
                concept=row.concept_id,
                attribute=attribute,
                status=AttributeValue.Status.SUPERSEDED,
                invalid_at=row.recorded_at,
            )
            .exclude(pk=row.pk)
            .values_list("pk", flat=True)
            .first()
        )
        step.record["attribute_value"] = row.pk
        step.record["previous_value"] = previous

    def undo(self, step: UndoStep) -> None:
        """Take the value off and give back the one it superseded."""
        row = AttributeValue.objects.select_related("concept", "attribute").get(
            pk=step.after["attribute_value"]
        )
        if row.status != AttributeValue.Status.ACTIVE:
            raise StateConflict(
                f'The {row.attribute.label} "{row.value}" this decision gave '
                f'"{row.concept.name}" was {row.status} since; it can no longer be undone '
                "from here."
            )
        graph.attribute_value_retire(
            value=row, acting_user=step.acting_user, decision=step.audit_row
        )
        previous = step.after.get("previous_value")
        if previous:
            graph.attribute_value_restore(
                value=AttributeValue.objects.get(pk=previous),
                acting_user=step.acting_user,
                decision=step.audit_row,
            )

    def blockers(self, proposal, reads: BlockerReads) -> list[str]:
        """The concept missing or not active, the attribute missing or retired, the
        concept's type not declaring it, the value outside its datatype, or held already."""
        payload = proposal.payload
        concept, gone = _concept_now(payload["concept"])
        if gone:
            return [gone]
        attribute = _attribute(payload)
        if attribute is None:
            return [str(arules.no_attribute(payload["type_key"], payload["attribute_key"]))]
        refusal: DomainError | None
        if concept is None:  # waits for a concept proposal: only the attribute's own rules
            refusal = arules.attribute_active_refusal(attribute) or arules.value_refusal(
                attribute, payload["value"]
            )
        else:
            refusal = arules.value_refusal_first(
                concept, type_chain(concept.type), attribute, payload["value"]
            )
            if refusal is None:
                held = _held(concept, attribute)
                value = arules.canonical_value(attribute.datatype, payload["value"])
                if held is not None and held.value == value:
                    refusal = arules.unchanged_refusal(concept, attribute, value)
        return [str(refusal)] if refusal is not None else []

    def claim(self, proposal, relations=None) -> str:
        payload = proposal.payload
        return (
            f"{payload['concept']['name']}: {payload['attribute_key'].replace('_', ' ')} "
            f"= {payload['value']}"
        )

    def named_ends(self, proposal, edges, names):
        """As a triple: the concept, the attribute's key as the relation, the value."""
        payload = proposal.payload
        return payload["concept"]["name"], payload["value"], payload["attribute_key"]

    def view(self, proposal) -> dict:
        payload = proposal.payload
        return {
            "concept_name": payload["concept"]["name"],
            "concept_id": payload["concept"].get("concept_id"),
            "type_key": payload["type_key"],
            "attribute_key": payload["attribute_key"],
            "attribute_words": payload["attribute_key"].replace("_", " "),
            "value": payload["value"],
        }

    def card(self, card) -> None:
        """The attribute as declared (label, datatype, description) and the value the
        concept holds now, which accepting would supersede."""
        super().card(card)
        payload = card.proposal.payload
        attribute = _attribute(payload)
        card.view["attribute"] = attribute
        concept_id = payload["concept"].get("concept_id")
        card.view["held"] = (
            _held(concept_id, attribute) if attribute is not None and concept_id else None
        )


def _held(concept, attribute: Attribute) -> AttributeValue | None:
    """The value a concept (a row or an id) holds now for an attribute."""
    return AttributeValue.objects.filter(
        concept=concept, attribute=attribute, status=AttributeValue.Status.ACTIVE
    ).first()
