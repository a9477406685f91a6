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
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

from django.utils import timezone
from pydantic import ValidationError

from kgreview.core.errors import DomainError, ValidationFailed
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph_services
from kgreview.graph import sources as graph_sources
from kgreview.graph.models import Concept, Edge, RelationType
from kgreview.graph.pattern_book import PatternBook
from kgreview.graph.services import DECIDING
from kgreview.review.decide.changes import GraphChanges
from kgreview.review.decide.outcome import Outcome, ProposalStale
from kgreview.review.models import Decision, Proposal
from kgreview.review.payloads import Strict, describe

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


class Slow(Exception):
    """The set-based path cannot take this batch (a race on a name or an edge): the bulk
    driver falls back to deciding the proposals one by one."""


@dataclass
class SetBatch:
    """What a kind's ``accept_set`` reads: who decides, the ids asked for (in the order
    asked), every proposal the driver locked (with the concept proposals edges wait
    for), the open proposals handed to this set, the note and batch of the decisions, and
    the bulk result each proposal's outcome is told to (``accept``, ``refuse``)."""

    acting_user: User
    asked: list[int]
    locked: dict[int, Proposal]
    proposals: list[Proposal]
    note: str
    batch: uuid.UUID
    result: Any


@dataclass
class SetDone:
    """What an ``accept_set`` did: the ids it leaves to the one-by-one path, the proposals
    it accepted (the driver closes them), what changed in the graph and the first
    decision it wrote (the driver settles the queue by them)."""

    slow: list[int] = field(default_factory=list)
    closed: list[Proposal] = field(default_factory=list)
    changes: GraphChanges = field(default_factory=GraphChanges)
    first: Decision | None = None
    #: Concept proposals accepted -> the concept each now stands for: the driver writes
    #: the link with the close, in the same statement.
    linked: dict[int, int] = field(default_factory=dict)


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
    # The relation of each edge found holding a fact (an inverse twin's is its inverse).
    holders: dict[int, int] = field(default_factory=dict)
    # Relations whose patterns the blockers ask (by key), and the book read for them
    # (``graph.pattern_book``: none read for relations the card's query found open).
    pattern_keys: set[str] = field(default_factory=set)
    patterns: PatternBook = field(default_factory=PatternBook)
    # The proposals a pattern refusal blocks (a curator may widen the pattern instead).
    pattern_refused: set[int] = field(default_factory=set)

    def edge_holding(self, source_id: int, relation: RelationType, target_id: int) -> int | None:
        """The active edge holding a fact (either way round for a symmetric relation, or
        its inverse twin; ``holders`` says the edge's relation)."""
        key = (source_id, relation.pk, target_id)
        if key not in self.facts:
            found = graph_selectors.active_edge_between(
                source_id=source_id, target_id=target_id, relation=relation
            )
            self.hold(key, found)
        return self.facts[key]

    def hold(self, key: tuple[int, int, int], edge: Edge | None) -> None:
        """Remember the active edge found holding ``key``'s fact (None: none does)."""
        self.facts[key] = edge.pk if edge is not None else None
        if edge is not None:
            self.holders[edge.pk] = edge.relation_id


class Settle(Enum):
    """How ``review.reconcile`` settles a kind's open proposals when the graph changes
    under them; a kind lists the ways that apply to it in ``Kind.settled``."""

    # Its payload's source and target ends (an edge's) name concepts or wait for concept
    # proposals: re-pointed when a concept is merged, comes into being or is taken back by
    # an undo; closed when one is retired or rejected for good, or when the same fact
    # (its dedup key) lands in the graph.
    ENDS = "ends"
    # It names concepts by its columns (source and target concept): closed when one of
    # them is merged, retired or taken back by an undo.
    CONCEPTS = "concepts"
    # It proposes a concept by its payload's name: closed as a twin, linked to the
    # concept, when a concept gains that name.
    NAME = "name"
    # It is about one edge (its payload's ``edge_id``): it follows the edge to the row
    # that replaced it, or closes when the edge is gone.
    EDGE = "edge"


# The refusal of a widened accept for a kind that joins no types.
WIDENS_NOTHING = "Only an edge proposal can widen its relation's pattern."

# The one refusal for a kind a reviewer may not correct (the view and the service say it).
NOT_EDITABLE = "Only edge and new-concept proposals can be edited before accepting."


class Edits(Protocol):
    """A reviewer's corrections to a proposal of an editable kind: the kind's own fields,
    and the confidence (None: kept as it is)."""

    @property
    def confidence(self) -> float | None: ...

    def proposals_named(self) -> list[int]:
        """Open proposals the corrections name, locked with the corrected one."""
        ...


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
    # A reviewer may correct it before accepting: ``edit_form`` (the dotted path of a
    # ``review.forms.DecisionForm``, imported by the view) reads the corrections, which
    # its template partial's ``edit`` part shows; ``edits`` makes them a value and
    # ``edited`` applies them to the payload.
    editable = False
    edit_form: str | None = None
    # What an edit can change, after "Edit it (e)" where accepting it would be refused.
    edit_hint = ""
    # Contradictions found later are kept in its payload, for the card and for
    # "keep this, retire what it contradicts".
    keeps_conflicts = False
    # Bulk undo takes acceptances of this kind as one set (``review.undo_set``); bulk
    # accept asks the kind's ``accept_set``.
    decided_as_a_set = False
    # The bulk accept decides the selection in stages, lowest first: the kinds that
    # define the vocabulary (negative stages: types, then relations, then patterns and
    # attributes) one by one before the sets (concepts and edges), which may name what
    # they define; the rest (0) after the sets. Within a stage a proposal comes after the
    # ones of the selection it needs (``bulk_needs`` of a ``bulk_gives``); bulk undo goes
    # the other way round.
    bulk_stage = 0
    # Which graph changes settle its open proposals (``review.reconcile``).
    settled: frozenset[Settle] = frozenset()
    accept_label = "Accept"

    @property
    def partial(self) -> str:
        """The template whose partials show this kind: row, claim, main, side, log."""
        return f"review/cards/{self.key}.html"

    def guided_by(self, proposal: Proposal) -> tuple[str, str] | None:
        """The type whose guideline and examples guide a reviewer on this proposal:
        ``("relation", key)`` for one about a relation (its ``relation_key``),
        ``("concept_type", key)`` for one that gives a concept a type (its payload's
        ``type_key``); ``None`` when neither (``review.talk`` reads it)."""
        if proposal.relation_key:
            return ("relation", proposal.relation_key)
        payload = proposal.payload if isinstance(proposal.payload, dict) else {}
        type_key = payload.get("type_key")
        if isinstance(type_key, str) and type_key:
            return ("concept_type", type_key)
        return None

    @property
    def label(self) -> str:
        """The kind in words ("Merge concepts"), as the database's choice names it."""
        return str(Proposal.KindChoice(self.key).label)

    def curators_only(self) -> str:
        """The refusal when someone who is not a curator decides a curator-only kind."""
        return f"Only curators decide {self.label.lower()} proposals."

    def __repr__(self) -> str:
        return f"<Kind {self.key}>"

    def refused_field(self, exc: DomainError) -> str:
        """The field of the edit form a refused edit is about (the card puts the focus
        there), or "" when the words name none: the refusal's ``field`` detail here; a
        kind maps its own refusals too."""
        return str(exc.details.get("field") or "")

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

    def twin_keys(self, payload: dict, relation=None) -> tuple[str, ...]:
        """The dedup keys of other proposals that ask for the same change in other words
        (an edge's inverse twin); the queue holds one of them open at most. None by
        default: the dedup key says it alone."""
        return ()

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

    def edits(self, data: dict) -> Edits:
        """A reviewer's corrections, from the cleaned data of ``edit_form``."""
        raise ValidationFailed(NOT_EDITABLE)

    def edited(self, proposal: Proposal, edits: Edits | None) -> dict:
        """The payload with a reviewer's corrections, validated (editable kinds only)."""
        raise ValidationFailed(NOT_EDITABLE)

    def bulk_gives(self, payload: dict) -> set[str]:
        """What accepting it defines that others of a bulk selection may need
        (``"concept_type:router"``)."""
        return set()

    def bulk_needs(self, payload: dict) -> set[str]:
        """What it needs defined first when a proposal of the same stage gives it."""
        return set()

    def accept_set(self, batch: SetBatch) -> SetDone:
        """Accept ``batch.proposals`` as one set, in a few statements, inside the bulk
        driver's transaction (``review.bulk_accept``), and report each to
        ``batch.result``; return what it leaves to the one-by-one path, what it accepted
        and what changed. Raise ``Slow`` when a race makes the set impossible.

        The driver hands kinds whose classes share one ``accept_set`` function to it
        together (an edge and the concept proposals it needs are decided as one set),
        after locking every proposal; the function takes the graph's locks in the lock
        order (``decisions``). By default a kind is decided one by one, through the
        single path.
        """
        return SetDone(slow=[p.pk for p in batch.proposals])

    def pattern_to_widen(self, proposal: Proposal) -> dict:
        """The pattern a curator's accept would have to allow for this proposal to pass
        (an ``add_relation_pattern`` payload, without its description), read with the
        proposal's graph rows locked; refused in words when there is none to widen."""
        raise ValidationFailed(WIDENS_NOTHING)

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

    # --- On the command line -----------------------------------------------------------

    def named_ends(
        self, proposal: Proposal, edges: dict[int, Edge], names: dict[int, str]
    ) -> tuple[str | None, str | None, str | None]:
        """What the proposal is about, by name, for the command line's JSON: its source,
        target and relation (None where it has none). ``edges`` holds the edges its
        ``edge_ids`` name, ``names`` the names of the concepts its ``concepts_named`` name."""
        return None, None, None

    def support(self, payload: dict) -> list[dict] | None:
        """The further places in the evidence's revision that state the same claim, for
        the command line's JSON; None: the kind keeps none."""
        return None


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
    graph_sources.sources_ground(grounds_of(proposal, concept_ids))


def examples_note(examples: list) -> str:
    """What a vocabulary proposal's card says where an edge's quote would stand: its
    evidence is its examples, each quoted from a document ("" when it has none)."""
    if not examples:
        return ""
    n = len(examples)
    return (
        f"No single quote: its evidence is the {n} example{'s' if n != 1 else ''} below, "
        "each quoted from a document."
    )


class ExamplesKind(Kind):
    """A kind of the vocabulary (a concept type, relation type, pattern or attribute):
    its evidence is its examples (``view()["examples"]``), each quoted from a document,
    and its card says so where an edge's quote would stand."""

    def card(self, card) -> None:
        super().card(card)
        card.no_quote = examples_note(card.view["examples"])


def grounds_of(proposal: Proposal, concept_ids) -> dict[tuple[int, int], int]:
    """What the proposal's source grounds: (source id, concept id) -> its revision id, or
    nothing for a proposal without a quoted source."""
    if not (proposal.document_id and proposal.evidence_revision_id):
        return {}
    return {(proposal.document_id, cid): proposal.evidence_revision_id for cid in concept_ids}


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
