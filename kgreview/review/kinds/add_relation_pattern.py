"""add_relation_pattern: a (domain type, range type) pair a relation should allow
("affects" joins a setting to a process), with the quotes that show edges of that shape
in the documents. Curators decide it.

Accepting it adds the pattern (``graph.pattern_create``, the decision its audit row) and,
once the decision commits, tells whoever listens (``signals.ontology_accepted``) so the
candidates held or dropped for breaking the relation's patterns are verified again;
undoing it retires the pattern. A curator who accepts an edge that breaks a pattern with
a note that widens it makes one of these, accepted in the same transaction
(``review.decide.widen``).
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from pydantic import Field

from construction.verify import PATTERN_FLAG
from kgreview.core.errors import DomainError
from kgreview.graph import rules
from kgreview.graph import services as graph
from kgreview.graph.models import ConceptType, RelationPattern, RelationType
from kgreview.review.kinds.add_relation_type import RelationExample
from kgreview.review.kinds.base import BlockerReads, ExamplesKind, Step, UndoStep
from kgreview.review.models import Proposal
from kgreview.review.payloads import RelationKey, Strict
from kgreview.review.signals import ontology_accepted


class AddRelationPattern(Strict):
    relation_key: RelationKey
    domain_key: RelationKey  # a concept type's key: the same slug rule
    range_key: RelationKey
    description: str = Field(default="", max_length=5000)
    examples: list[RelationExample] = Field(default_factory=list, max_length=50)


def pattern_blocker(relation_key: str, domain_key: str, range_key: str) -> DomainError | None:
    """What stands in the way of allowing the pattern now, in the service's words: the
    relation or a type missing or retired, or the pattern allowed already (two queries)."""
    relation = RelationType.objects.filter(key=relation_key).first()
    if relation is None:
        return rules.no_relation(relation_key)
    refusal: DomainError | None = rules.relation_refusal(relation)
    types = {t.key: t for t in ConceptType.objects.filter(key__in=[domain_key, range_key])}
    for key in (domain_key, range_key):
        if refusal is None:
            found = types.get(key)
            refusal = rules.no_type(key) if found is None else rules.pattern_type_refusal(found)
    if refusal is None:
        domain, range_ = types[domain_key], types[range_key]
        pairs = Q(domain=domain, range=range_)
        if relation.symmetric:
            pairs |= Q(domain=range_, range=domain)
        if RelationPattern.objects.filter(pairs, relation=relation, active=True).exists():
            refusal = rules.pattern_taken(relation, domain, range_)
    return refusal


class AddRelationPatternKind(ExamplesKind):
    key = "add_relation_pattern"
    schema = AddRelationPattern
    curator_only = True
    bulk_stage = -1  # after the relation and the types it names

    def dedup_key(self, payload: dict, *, symmetric: bool | None = None) -> str:
        return (
            f"add_relation_pattern:{payload['relation_key']}:"
            f"{payload['domain_key']}:{payload['range_key']}"
        )

    def apply(self, step: Step) -> None:
        payload = step.proposal.payload
        pattern = graph.pattern_create(
            relation_key=payload["relation_key"],
            domain_key=payload["domain_key"],
            range_key=payload["range_key"],
            description=payload.get("description", ""),
            acting_user=step.acting_user,
            decision=step.audit_row,
        )
        step.record.update(pattern_id=pattern.pk)
        key = payload["relation_key"]
        transaction.on_commit(
            lambda: ontology_accepted.send(sender=self.__class__, relation_keys=[key])
        )

    def undo(self, step: UndoStep) -> None:
        """Retire the pattern it allowed (the relation is open again if it was the last)."""
        payload = step.proposal.payload
        found = RelationPattern.objects.filter(
            relation__key=payload["relation_key"],
            domain__key=payload["domain_key"],
            range__key=payload["range_key"],
            active=True,
        ).first()
        if found is None:
            return
        graph.pattern_retire(pattern=found, acting_user=step.acting_user, decision=step.audit_row)

    def blockers(self, proposal, reads: BlockerReads) -> list[str]:
        payload = proposal.payload
        refusal = pattern_blocker(
            payload["relation_key"], payload["domain_key"], payload["range_key"]
        )
        return [str(refusal)] if refusal is not None else []

    def claim(self, proposal, relations=None) -> str:
        payload = proposal.payload
        return (
            f"Relation {payload['relation_key']} joins {payload['domain_key']} "
            f"to {payload['range_key']}"
        )

    def named_ends(self, proposal, edges, names):
        payload = proposal.payload
        return payload["domain_key"], payload["range_key"], payload["relation_key"]

    def view(self, proposal) -> dict:
        payload = proposal.payload
        return {
            "relation_key": payload["relation_key"],
            "domain_key": payload["domain_key"],
            "range_key": payload["range_key"],
            "description": payload.get("description", ""),
            "examples": payload.get("examples", []),
        }

    def card(self, card) -> None:
        """Its examples as its evidence (``ExamplesKind``), and how many held candidates
        of the relation accepting it would ask again (one query)."""
        super().card(card)
        card.view["held"] = Proposal.objects.filter(
            status=Proposal.Status.HELD,
            relation_key=card.proposal.payload["relation_key"],
            flags_text__contains=f"|{PATTERN_FLAG}|",
        ).count()
