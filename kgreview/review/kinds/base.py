"""What every proposal kind is: the operations each kind module implements, the defaults
most kinds share, and the small values the operations read and write.

A kind owns everything that differs between kinds: its payload schema, the columns and
dedup key derived from the payload, how an accepted proposal changes the graph and how
that is undone, the words of its claim, what its card shows (the context of its template
partial, ``templates/review/cards/<key>.html``) and what blocks accepting it. The decision
services, the queue and the card dispatch through the registry (``kinds.KINDS``) instead
of branching on the kind.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.utils import timezone
from pydantic import ValidationError

from kgreview.core.errors import ValidationFailed
from kgreview.graph import bulk as graph_bulk
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph_services
from kgreview.graph.models import Concept, Edge, RelationType
from kgreview.graph.services import DECIDING

from ..changes import GraphChanges
from ..models import Decision, Proposal
from ..outcome import Outcome, ProposalStale
from ..payloads import Strict, describe

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from kgreview.graph.services.common import Deciding


@dataclass(kw_only=True)
class Step:
    """One accepted proposal being applied: what a kind's ``apply`` reads and writes.

    ``record`` is kept in the decision's ``after`` (undo reads it); ``out.changes`` says
    what changed in the graph (``reconcile`` reads it). ``accept_needed`` accepts an open
    concept proposal the applied one needs, in the same batch, and returns its concept id.
    """

    proposal: Proposal
    acting_user: User
    decision: Decision | None
    out: Outcome
    record: dict
    accept_needed: Callable[[Proposal], int]

    @property
    def audit_row(self) -> Decision | Deciding:
        """The decision that is the audit row of the change, passed to the graph services
        with ``acting_user`` (``DECIDING`` while it is still to be written, after the
        change)."""
        return self.decision or DECIDING


@dataclass(kw_only=True)
class UndoStep:
    """One accepted proposal whose change to the graph is being compensated."""

    proposal: Proposal
    decision: Decision  # the acceptance being undone
    acting_user: User
    undo: Decision  # the undo decision, which the compensating rows name
    changes: GraphChanges

    @property
    def audit_row(self) -> Decision:
        """The undo decision: the audit row of the compensation, passed to the graph
        services with ``acting_user``."""
        return self.undo

    @property
    def why(self) -> str:
        return f"Undone by {self.acting_user.get_username()} (decision #{self.undo.pk})."

    @property
    def after(self) -> dict:
        """What the acceptance recorded it did."""
        return self.decision.after or {}


@dataclass
class LockRows:
    """The graph rows a decision locks up front, in the lock order (concepts, relation
    types, edges; see ``kgreview.graph.services``), before it changes any of them."""

    concept_ids: set[int] = field(default_factory=set)
    relation_ids: set[int] = field(default_factory=set)
    edge_ids: set[int] = field(default_factory=set)

    def add(self, other: LockRows) -> LockRows:
        self.concept_ids |= other.concept_ids
        self.relation_ids |= other.relation_ids
        self.edge_ids |= other.edge_ids
        return self

    def lock(self) -> None:
        graph_services.lock_graph(
            concept_ids=self.concept_ids, relation_ids=self.relation_ids, edge_ids=self.edge_ids
        )


class Rows:
    """Rows the kinds' columns read, loaded once for a whole batch of proposals."""

    def __init__(
        self,
        relation_ids: dict[str, int] | None = None,
        edges: dict[int, tuple[int, int, int]] | None = None,
    ) -> None:
        self._relation_ids = relation_ids
        self._edges = edges

    def relation_id(self, key: str) -> int | None:
        if self._relation_ids is None:
            self._relation_ids = dict(RelationType.objects.values_list("key", "id"))
        return self._relation_ids.get(key)

    def edge_ends(self, edge_id: int) -> tuple[int, int, int] | None:
        """(source id, target id, relation id) of an edge."""
        if self._edges is None:
            self._edges = edge_ends([edge_id])
        return self._edges.get(edge_id)

    def load_edges(self, edge_ids: Iterable[int]) -> None:
        """Read the ends of these edges in one query (none when there are none)."""
        ids = [i for i in edge_ids if isinstance(i, int)]
        self._edges = edge_ends(ids) if ids else {}


@dataclass
class BlockerReads:
    """What the blockers of many open proposals need, gathered by the kinds, then read
    in a handful of queries for all of them."""

    concept_ids: set[int] = field(default_factory=set)
    needed_ids: set[int] = field(default_factory=set)  # concept proposals edges wait for
    edge_ids: set[int] = field(default_factory=set)
    relation_keys: set[str] = field(default_factory=set)
    concepts: dict[int, Concept] = field(default_factory=dict)
    needed: dict[int, Proposal] = field(default_factory=dict)
    relations: dict[str, RelationType] = field(default_factory=dict)
    edges: dict[int, Edge] = field(default_factory=dict)
    # (source id, relation id, target id) -> the active edge holding it, or None; what a
    # card already read is passed in, the rest is read when asked.
    facts: dict[tuple[int, int, int], int | None] = field(default_factory=dict)

    def edge_holding(self, source_id: int, relation: RelationType, target_id: int) -> int | None:
        """The active edge holding a fact (either way round for a symmetric relation)."""
        key = (source_id, relation.pk, target_id)
        if key not in self.facts:
            found = graph_selectors.active_edge_between(
                source_id=source_id, target_id=target_id, relation=relation
            )
            self.facts[key] = found.pk if found is not None else None
        return self.facts[key]


class Kind(ABC):
    """One proposal kind. Subclasses set ``key`` and ``schema`` and implement the
    abstract operations; the others have defaults that most kinds share."""

    key: str
    schema: type[Strict]
    # Decided by curators only (reviewers see the card read-only).
    curator_only = False
    # Its graph rows link to the decision, so the decision is written before it is
    # applied; the others are applied first, so the decision can record what they did.
    decision_first = False
    # It proposes a concept by name: open ones are in the name index (the picker offers
    # them), an accepted or superseded one links to its concept, and accepting or
    # rejecting one settles the edges waiting for it.
    names_a_concept = False
    # A reviewer may correct it before accepting (``edited``).
    editable = False
    # Contradictions found later are kept in its payload, for the card and for
    # "keep this, retire what it contradicts".
    keeps_conflicts = False
    # Bulk accept and bulk undo take proposals of this kind as one set (``review.bulk``).
    decided_as_a_set = False
    accept_label = "Accept"

    @property
    def partial(self) -> str:
        """The template whose partials show this kind: row, claim, main, side, log."""
        return f"review/cards/{self.key}.html"

    def __repr__(self) -> str:
        return f"<Kind {self.key}>"

    # --- The payload ---------------------------------------------------------------

    def validate(self, payload: object) -> dict:
        """The payload in canonical JSON form, or ``ValidationFailed`` saying what is wrong."""
        if not isinstance(payload, dict):
            raise ValidationFailed(f"A {self.key} payload must be a JSON object.")
        try:
            model = self.schema.model_validate(payload)
        except ValidationError as exc:
            raise ValidationFailed(f"Invalid {self.key} payload: {describe(exc)}") from None
        return model.model_dump(mode="json", exclude_none=False)

    def columns(self, payload: dict, rows: Rows) -> dict:
        """The denormalised endpoint columns of a proposal, from its payload."""
        return {}

    def edge_ids(self, payload: object) -> list[int]:
        """The edges whose ends ``columns`` reads (so a batch reads them at once)."""
        return []

    def concepts_named(self, payload: object) -> list[int]:
        """Concepts the proposal names that must exist for it to be queued."""
        return []

    def dedup_key(self, payload: dict, *, symmetric: bool | None = None) -> str:
        """A key that is equal for two proposals asking for the same change."""
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:32]
        return f"{self.key}:{digest}"

    # --- Deciding ------------------------------------------------------------------

    @abstractmethod
    def apply(self, step: Step) -> None:
        """Change the graph for an accepted proposal (inside the decision's transaction);
        raise ``ProposalStale`` in words when it cannot be applied as it stands."""

    @abstractmethod
    def undo(self, step: UndoStep) -> None:
        """Compensate what ``apply`` did; raise ``StateConflict`` in words when the graph
        moved on so that it cannot be."""

    def keep(self, payload: dict, concept_id: int) -> dict | None:
        """The payload to accept when the reviewer chose which concept to keep (a merge);
        None: accept it as it is."""
        return None

    def edited(self, proposal: Proposal, edits) -> dict:
        """The payload with a reviewer's corrections, validated (editable kinds only)."""
        raise ValidationFailed("Only edge proposals can be edited before accepting.")

    def lock_rows(self, proposal: Proposal) -> LockRows:
        """The graph rows accepting it changes, for a decision that locks them up front
        because it changes more than this proposal: by default ``rows_named``."""
        return rows_named(self, proposal)

    def blocker_reads(self, payload: dict, reads: BlockerReads) -> None:  # noqa: B027
        """Say which rows ``blockers`` needs (by default none)."""

    def blockers(self, proposal: Proposal, reads: BlockerReads) -> list[str]:
        """Why accepting the open proposal would be refused right now, in the words the
        refusal uses (none: it can be accepted)."""
        return []

    # --- Showing it ------------------------------------------------------------------

    @abstractmethod
    def claim(self, proposal: Proposal, relations: dict[str, RelationType] | None = None) -> str:
        """What the proposal asks for, as one sentence of plain text."""

    @abstractmethod
    def view(self, proposal: Proposal) -> dict:
        """What its queue row and log line show, from the proposal as loaded (no query)."""

    def card(self, card) -> None:
        """Fill the card's kind-specific parts (``card.view`` and the shared sections)."""
        card.view = self.view(card.proposal)


# --- Helpers the kinds share ----------------------------------------------------------


def rows_named(kind: Kind, proposal: Proposal) -> LockRows:
    """The graph rows a proposal's columns and payload name, read from the row in hand:
    the concepts at its ends and the one it links, its relation, the edge it is about."""
    concepts = (proposal.source_concept_id, proposal.target_concept_id, proposal.concept_id)
    return LockRows(
        concept_ids={i for i in concepts if i is not None},
        relation_ids={proposal.relation_id} if proposal.relation_id else set(),
        edge_ids=set(kind.edge_ids(proposal.payload)),
    )


def edge_ends(edge_ids) -> dict[int, tuple[int, int, int]]:
    """Edge id -> (source id, target id, relation id), in one query."""
    return {
        pk: (source, target, relation)
        for pk, source, target, relation in Edge.objects.filter(pk__in=set(edge_ids)).values_list(
            "pk", "source_id", "target_id", "relation_id"
        )
    }


def ground(proposal: Proposal, concept_ids) -> None:
    """Record that the proposal's source grounds these concepts (one upsert)."""
    if proposal.document_id and proposal.evidence_revision_id:
        graph_bulk.sources_ground(
            {(proposal.document_id, cid): proposal.evidence_revision_id for cid in concept_ids}
        )


def active_edge(edge_id: int) -> Edge:
    """The edge a proposal is about, refused in words when it is gone or no longer active."""
    edge = Edge.objects.filter(pk=edge_id).first()
    if edge is None:
        raise ProposalStale(f"Edge #{edge_id} does not exist.")
    if not edge.is_active:
        raise ProposalStale(
            f"Edge #{edge.pk} is no longer active ({edge.status} "
            f"{timezone.localtime(edge.invalid_at):%Y-%m-%d %H:%M})."
        )
    return edge
