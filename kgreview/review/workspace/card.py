"""The focus card: everything a reviewer needs to decide one proposal, in a few queries.

The parts every card has (the evidence in its paragraph, contradictions, history,
blockers, the claim in words) are read here; the proposal's kind fills the rest
(``Kind.card``): ``card.view``, the context of the kind's template partial, and the
shared sections it uses (recent edges of the concepts involved, further support).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

from kgreview.graph.models import Concept, ConceptType, Edge, RelationType, SourceRevision
from kgreview.review.decide.blockers import pattern_blocked
from kgreview.review.kinds import Kind, kind_of
from kgreview.review.models import Decision, Proposal
from kgreview.review.team import votes as team_votes
from kgreview.review.workspace.card_parts import Context, Neighbour, evidence_context


@dataclass
class Conflict:
    kind: str  # "edge" or "proposal"
    id: int
    explanation: str
    rule: str
    edge: Edge | None = None
    proposal: Proposal | None = None
    context: Context | None = None
    # The contradicting proposal (an edge) as its row names it: its ends and relation.
    view: dict = field(default_factory=dict)

    @property
    def is_open(self) -> bool:
        if self.edge is not None:
            return self.edge.is_active
        return self.proposal is not None and self.proposal.is_open


@dataclass(frozen=True)
class EndType:
    """One end of a two-ended card (an edge, a merge) with its concept type: the type the
    concept has, or the ``type_key`` the concept proposal it waits for would give it
    (``proposed``); ``key`` empty: untyped. ``label`` is the key itself for a type the
    vocabulary does not hold yet (proposed alongside)."""

    role: str
    name: str
    key: str = ""
    label: str = ""
    proposed: bool = False


@dataclass
class Card:
    proposal: Proposal
    kind: Kind
    revision: SourceRevision | None
    context: Context | None
    # What the kind's partial shows (built by the kind; templates read no raw payload).
    view: dict = field(default_factory=dict)
    # Recent edges of the concepts involved: (the concept's name, its edges).
    neighbours: list[tuple[str, list[Neighbour]]] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    # Why accepting would be refused right now, in words (the same words the refusal uses).
    blockers: list[str] = field(default_factory=list)
    # A relation's pattern is among them: a curator may accept by widening it.
    pattern_blocked: bool = False
    claim: str = ""
    # Other places in the same revision stating the same edge (long documents).
    support: list[Context] = field(default_factory=list)
    # Why there is no quote, when the kind knows (else the card says so plainly).
    no_quote: str = ""
    # Facts the kind's parts already looked up (``BlockerReads.facts``), for the blockers.
    facts: dict[tuple[int, int, int], int | None] = field(default_factory=dict)
    # The relation of each edge found holding one (an inverse twin's is the inverse).
    holders: dict[int, int] = field(default_factory=dict)
    # Both ends' concept types (none when the card has no two ends, or neither is typed).
    end_types: list[EndType] = field(default_factory=list)
    # In adjudication: what each of the two reviewers decided (``team.votes.ballots``).
    ballots: list = field(default_factory=list)


def _conflicts(proposal: Proposal) -> list[Conflict]:
    """The edges and proposals this one contradicts, each with its evidence in context."""
    conflicts = proposal.payload.get("conflicts") or []
    edge_ids = [c["id"] for c in conflicts if c.get("kind") == "edge"]
    prop_ids = [c["id"] for c in conflicts if c.get("kind") == "proposal"]
    edges = (
        Edge.objects.select_related(
            "source", "target", "relation", "evidence_revision__source"
        ).in_bulk(edge_ids)
        if edge_ids
        else {}
    )
    others = (
        Proposal.objects.select_related("evidence_revision__source").in_bulk(prop_ids)
        if prop_ids
        else {}
    )
    out, seen = [], set()
    for c in conflicts:
        key = (c.get("kind"), c.get("id"))
        if key in seen:
            continue
        seen.add(key)
        item = Conflict(
            kind=c.get("kind", ""),
            id=c.get("id"),
            explanation=c.get("explanation", ""),
            rule=c.get("rule", ""),
        )
        if item.kind == "edge" and item.id in edges:
            e = edges[item.id]
            item.edge = e
            item.context = evidence_context(e.evidence_revision, e.evidence_start, e.evidence_end)
        elif item.kind == "proposal" and item.id in others:
            other = others[item.id]
            item.proposal = other
            item.view = kind_of(other).view(other)
            item.context = evidence_context(
                other.evidence_revision, other.evidence_start, other.evidence_end
            )
        out.append(item)
    return out


def proposal_card(proposal: Proposal) -> Card:
    """Everything a reviewer needs to decide one proposal.

    With the proposal loaded by ``selectors.card_proposals``, an edge proposal's card
    costs one more query (the neighbouring edges of both ends); decisions are read only
    for proposals that have any (version > 1), contradictions only when there are some.
    """
    kind = kind_of(proposal)
    revision = proposal.evidence_revision
    if revision is not None and not SourceRevision.source.is_cached(revision):
        revision = SourceRevision.objects.select_related("source").get(pk=revision.pk)
    card = Card(
        proposal=proposal,
        kind=kind,
        revision=revision,
        context=evidence_context(revision, proposal.evidence_start, proposal.evidence_end),
    )
    kind.card(card)
    card.conflicts = _conflicts(proposal)
    if proposal.version > 1:  # every decision, flag or edit bumps the version
        card.decisions = list(
            proposal.decisions.select_related("user").order_by("created_at", "id")
        )
    if proposal.is_open:
        card.blockers, card.pattern_blocked = pattern_blocked(
            proposal, facts=card.facts, holders=card.holders
        )
    card.claim = kind.claim(proposal)
    card.end_types = _end_types(card)
    if proposal.stage == Proposal.Stage.ADJUDICATE and proposal.is_open:
        card.ballots = team_votes.ballots(proposal)
    return card


def _ends(card: Card) -> list[tuple[str, str, Concept | None, Proposal | None]]:
    """(role, name, concept, the concept proposal it waits for) of each end: the kind's
    resolved endpoints when it lists them, else the proposal's two concept columns."""
    endpoints = card.view.get("endpoints") if isinstance(card.view, dict) else None
    if endpoints:
        return [
            (role, concept.name if concept is not None else end.get("name", ""), concept, needed)
            for role, end, concept, needed in endpoints
        ]
    p = card.proposal
    if p.source_concept_id and p.target_concept_id:
        return [
            ("source", p.source_concept.name, p.source_concept, None),
            ("target", p.target_concept.name, p.target_concept, None),
        ]
    return []


def _end_types(card: Card) -> list[EndType]:
    """Both ends with their types. A card loaded by ``selectors.with_card`` has its two
    concepts' types already (``source_type_key``, ``source_type_label``, ``target_…``);
    otherwise, and for a type named only by a concept proposal's ``type_key``, one query
    reads all of them."""
    ends = _ends(card)
    if not ends:
        return []
    p = card.proposal
    known: dict[int, tuple[str, str]] = {}  # concept id -> (type key, label)
    for role, column in (("source", p.source_concept_id), ("target", p.target_concept_id)):
        if column is not None and hasattr(p, f"{role}_type_key"):
            known[column] = (
                getattr(p, f"{role}_type_key") or "",
                getattr(p, f"{role}_type_label") or "",
            )
    wanted_ids = {
        c.type_id for _, _, c, _ in ends if c is not None and c.pk not in known and c.type_id
    }
    wanted_keys = {
        key
        for _, _, c, needed in ends
        if c is None and needed is not None and (key := _proposed_key(needed))
    }
    rows: list[ConceptType] = []
    if wanted_ids or wanted_keys:
        rows = list(ConceptType.objects.filter(Q(pk__in=wanted_ids) | Q(key__in=wanted_keys)))
    by_id = {t.pk: t for t in rows}
    labels = {t.key: t.label for t in rows}
    out = []
    for role, name, concept, needed in ends:
        if concept is not None:
            if concept.pk in known:
                key, label = known[concept.pk]
            else:
                t = by_id.get(concept.type_id) if concept.type_id else None
                key, label = (t.key, t.label) if t is not None else ("", "")
            out.append(EndType(role, name, key, label))
        elif needed is not None and (key := _proposed_key(needed)):
            out.append(EndType(role, name, key, labels.get(key, key), proposed=True))
        else:
            out.append(EndType(role, name))
    return out if any(e.key for e in out) else []


def _proposed_key(proposal: Proposal) -> str:
    """The type a concept proposal would give its concept (its payload's ``type_key``)."""
    payload = proposal.payload if isinstance(proposal.payload, dict) else {}
    key = payload.get("type_key")
    return key if isinstance(key, str) else ""


def claim_words(proposal: Proposal, relations: dict[str, RelationType] | None = None) -> str:
    """What the proposal asks for, as one sentence of plain text."""
    return kind_of(proposal).claim(proposal, relations)
