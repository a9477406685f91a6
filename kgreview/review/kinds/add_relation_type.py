"""add_relation_type: a relation the graph lacks, drafted from the candidates that were
dropped for lacking it. Curators decide it.

Accepting it creates the type with the patterns it lists (which types it may join)
and, once the decision commits, tells whoever listens (``signals.relation_type_accepted``)
so the dropped candidates are verified again; undoing it retires the type (and those
patterns) while no edge uses it.
"""

from __future__ import annotations

from typing import Annotated

from django.db import transaction
from pydantic import Field, model_validator

from construction import keys
from kgreview.core.errors import StateConflict
from kgreview.graph import rules
from kgreview.graph import services as graph
from kgreview.graph.models import ConceptType, Edge, RelationPattern, RelationType
from kgreview.review.kinds.base import BlockerReads, ExamplesKind, Step, UndoStep
from kgreview.review.payloads import Name, Offset, RelationKey, RowId, Strict
from kgreview.review.signals import relation_type_accepted


class RelationExample(Strict):
    quote: str = Field(min_length=1, max_length=2000)
    source_slug: str
    revision_id: RowId | None = None
    start: Offset | None = None
    end: Offset | None = None
    source_name: str = ""
    target_name: str = ""


class PatternPair(Strict):
    """A (domain type, range type) pair the new relation allows (``graph.RelationPattern``)."""

    domain_key: RelationKey
    range_key: RelationKey


class AddRelationType(Strict):
    key: RelationKey
    label: Name
    verb: Name
    description: str = Field(default="", max_length=5000)
    directed: bool = True
    symmetric: bool = False
    acyclic: bool = False
    examples: list[RelationExample] = Field(default_factory=list, max_length=50)
    labels: list[Annotated[str, Field(max_length=100)]] = Field(
        default_factory=list,
        max_length=50,
        description="The raw relation labels of the dropped candidates this type covers.",
    )
    patterns: list[PatternPair] = Field(
        default_factory=list,
        max_length=50,
        description="The (domain type, range type) pairs it allows; none: it is open.",
    )
    inverse: RelationKey | None = Field(
        default=None,
        description="The key of an existing relation stating its facts the other way round "
        "(declared its inverse on acceptance; a symmetric relation is its own).",
    )

    @model_validator(mode="after")
    def _shape(self) -> AddRelationType:
        if self.directed == self.symmetric:
            raise ValueError("a relation is either directed or symmetric")
        if self.acyclic and not self.directed:
            raise ValueError("only a directed relation can be acyclic")
        if self.inverse is not None and self.symmetric:
            raise ValueError("a symmetric relation is its own inverse and names no other")
        if self.inverse == self.key:
            raise ValueError("a directed relation is not its own inverse")
        return self


class AddRelationTypeKind(ExamplesKind):
    key = "add_relation_type"
    schema = AddRelationType
    curator_only = True
    bulk_stage = -2  # after the types its patterns name, before patterns of it

    def dedup_key(self, payload: dict, *, symmetric: bool | None = None) -> str:
        return keys.relation_type_dedup_key(payload["key"])

    def apply(self, step: Step) -> None:
        payload = step.proposal.payload
        key = payload["key"]
        # Once the type exists, the candidates dropped for lacking it are verified again.
        transaction.on_commit(lambda: relation_type_accepted.send(sender=self.__class__, key=key))
        graph.relation_type_create(
            key=key,
            label=payload["label"],
            verb=payload["verb"],
            description=payload.get("description", ""),
            directed=payload.get("directed", True),
            symmetric=payload.get("symmetric", False),
            acyclic=payload.get("acyclic", False),
            inverse=graph.inverse_named(payload.get("inverse") or ""),
            acting_user=step.acting_user,
            decision=step.audit_row,
        )
        made = []
        pairs = {(p["domain_key"], p["range_key"]): p for p in payload.get("patterns", [])}
        for pair in pairs.values():
            made.append(
                graph.pattern_create(
                    relation_key=key,
                    domain_key=pair["domain_key"],
                    range_key=pair["range_key"],
                    acting_user=step.acting_user,
                    decision=step.audit_row,
                ).pk
            )
        if made:
            step.record.update(pattern_ids=made)

    def undo(self, step: UndoStep) -> None:
        """Retire the type, unless active edges use it (the edges a batch undo
        invalidated keep it, as a retired relation's edges do)."""
        relation = RelationType.objects.get(key=step.proposal.payload["key"])
        if relation.edges.filter(status=Edge.Status.ACTIVE).exists():
            raise StateConflict(
                f'The relation "{relation.key}" already has edges; retire it instead.'
            )
        for pattern in RelationPattern.objects.filter(
            pk__in=step.after.get("pattern_ids", []), active=True
        ):
            graph.pattern_retire(
                pattern=pattern, acting_user=step.acting_user, decision=step.audit_row
            )
        if relation.inverse_id:  # the pair it made goes with it
            relation = graph.relation_type_pair(
                relation=relation,
                inverse=None,
                acting_user=step.acting_user,
                decision=step.audit_row,
            )
        graph.relation_type_retire(
            relation=relation, acting_user=step.acting_user, decision=step.audit_row
        )

    def blockers(self, proposal, reads: BlockerReads) -> list[str]:
        """A type its patterns name that is missing or retired (one query, when it has
        patterns)."""
        keys = {k for p in proposal.payload.get("patterns", []) for k in p.values()}
        if not keys:
            return []
        found = {t.key: t for t in ConceptType.objects.filter(key__in=keys)}
        words = []
        for key in sorted(keys):
            refusal = (
                rules.no_type(key) if key not in found else rules.pattern_type_refusal(found[key])
            )
            if refusal is not None:
                words.append(str(refusal))
        return words

    def claim(self, proposal, relations=None) -> str:
        payload = proposal.payload
        return f"New relation {payload['label']} (“source {payload['verb']} target”)"

    def named_ends(self, proposal, edges, names):
        return proposal.payload["label"], None, proposal.payload["key"]

    def view(self, proposal) -> dict:
        payload = proposal.payload
        shape = "symmetric" if payload.get("symmetric") else "directed"
        return {
            "label": payload["label"],
            "verb": payload.get("verb", ""),
            "description": payload.get("description", ""),
            "shape": shape
            + (", acyclic" if payload.get("acyclic") else "")
            + (f", inverse of {payload['inverse']}" if payload.get("inverse") else ""),
            "examples": payload.get("examples", []),
            "labels": payload.get("labels", []),
            "patterns": payload.get("patterns", []),
        }
