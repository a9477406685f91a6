"""The focus card: everything a reviewer needs to decide one proposal, in a few queries."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

from kgreview.graph.models import (
    Concept,
    ConceptAlias,
    Edge,
    RelationType,
    Source,
    SourceConcept,
    SourceRevision,
)
from kgreview.graph.search import concept_search
from kgreview.graph.selectors import active_edge_counts
from kgreview.graph.sources import Place, place_of

from .blockers import proposal_blockers
from .models import Decision, Proposal


@dataclass
class Context:
    """The paragraph around a quote, split so the quote can be highlighted."""

    before: str
    quote: str
    after: str
    source: Source | None
    revision: SourceRevision | None
    is_current: bool
    place: Place = field(default_factory=lambda: Place(page=None, section=()))
    start: int | None = None

    @property
    def found(self) -> bool:
        return bool(self.quote)

    @property
    def plain(self) -> bool:
        """Text extracted from a PDF or a .txt file: shown as it is, not as Markdown."""
        return (
            self.revision is not None
            and self.revision.text_format == SourceRevision.TextFormat.PLAIN
        )


def evidence_context(
    revision: SourceRevision | None, start: int | None, end: int | None, *, limit: int = 900
) -> Context | None:
    if revision is None or start is None or end is None:
        return None
    text = revision.text
    para_start = text.rfind("\n\n", 0, start)
    para_start = 0 if para_start == -1 else para_start + 2
    para_end = text.find("\n\n", end)
    para_end = len(text) if para_end == -1 else para_end
    para_start = max(para_start, start - limit)
    para_end = min(para_end, end + limit)
    before = ("…" if para_start > 0 and text[para_start - 1] != "\n" else "") + text[
        para_start:start
    ]
    after = text[end:para_end] + ("…" if para_end < len(text) and text[para_end] != "\n" else "")
    source = revision.source
    return Context(
        before=before,
        quote=text[start:end],
        after=after,
        source=source,
        revision=revision,
        is_current=source.current_revision_id == revision.pk,
        place=place_of(revision, start),
        start=start,
    )


@dataclass
class Neighbour:
    edge: Edge
    direction: str  # "out" or "in"
    other: Concept


@dataclass
class Conflict:
    kind: str  # "edge" or "proposal"
    id: int
    explanation: str
    rule: str
    edge: Edge | None = None
    proposal: Proposal | None = None
    context: Context | None = None

    @property
    def is_open(self) -> bool:
        if self.edge is not None:
            return self.edge.is_active
        return self.proposal is not None and self.proposal.is_open


@dataclass
class Card:
    proposal: Proposal
    relation: RelationType | None
    context: Context | None
    endpoints: list[tuple[str, dict, Concept | None, Proposal | None]] = field(default_factory=list)
    neighbours: dict[str, list[Neighbour]] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)
    target_edge: Edge | None = None
    concepts: dict[int, Concept] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)
    # For a merge: both concepts side by side (role, concept, names, sources, edge count).
    merge_sides: list[dict] = field(default_factory=list)
    # For a cycle-breaking invalidation: the cycle's edges in order, each with its
    # evidence in context, the weakest being the one proposed for retirement.
    cycle: list[tuple[Edge, Context | None]] = field(default_factory=list)
    # Why accepting would be refused right now, in words (the same words the refusal uses).
    blockers: list[str] = field(default_factory=list)
    # For a new concept: existing concepts with a similar name, to spot a duplicate.
    similar: list = field(default_factory=list)
    claim: str = ""
    # Other places in the same revision stating the same edge (long documents).
    support: list[Context] = field(default_factory=list)


def _neighbours_of(concepts: dict[str, Concept], *, limit: int = 6) -> dict[str, list[Neighbour]]:
    """Recent active edges of each named concept, in one query for all of them."""
    ids = {c.pk for c in concepts.values()}
    if not ids:
        return {}
    rows = list(
        Edge.objects.filter(Q(source_id__in=ids) | Q(target_id__in=ids), status=Edge.Status.ACTIVE)
        .select_related("source", "target", "relation")
        .order_by("-recorded_at", "-id")[: limit * 4 * len(ids)]
    )
    out: dict[str, list[Neighbour]] = {}
    for role, concept in concepts.items():
        mine = []
        for e in rows:
            if concept.pk in (e.source_id, e.target_id) and len(mine) < limit:
                out_edge = e.source_id == concept.pk
                mine.append(
                    Neighbour(
                        edge=e,
                        direction="out" if out_edge else "in",
                        other=e.target if out_edge else e.source,
                    )
                )
        out[role] = mine
    return out


def merge_sides(ends: dict[str, Concept]) -> list[dict]:
    """Names, sources and edge counts of the two concepts a merge would join."""
    ids = [c.pk for c in ends.values()]
    names: dict[int, list[str]] = {i: [] for i in ids}
    for cid, name in ConceptAlias.objects.filter(concept_id__in=ids).values_list(
        "concept_id", "name"
    ):
        names[cid].append(name)
    sources: dict[int, list[str]] = {i: [] for i in ids}
    for cid, slug in SourceConcept.objects.filter(concept_id__in=ids).values_list(
        "concept_id", "source__slug"
    ):
        sources[cid].append(slug)
    counts = active_edge_counts(ids)
    return [
        {
            "role": role,
            "concept": c,
            "names": sorted(names[c.pk]),
            "sources": sorted(sources[c.pk]),
            "edges": counts[c.pk],
        }
        for role, c in ends.items()
    ]


def proposal_card(proposal: Proposal) -> Card:
    """Everything a reviewer needs to decide one proposal.

    With the proposal loaded with ``CARD_RELATED``, an edge proposal's card costs one more
    query (the neighbouring edges of both ends); decisions are read only for proposals
    that have any (version > 1), contradictions only when there are some.
    """
    payload = proposal.payload
    relation = proposal.relation if proposal.kind == "add_edge" else None
    revision = proposal.evidence_revision
    if revision is not None and not SourceRevision.source.is_cached(revision):
        revision = SourceRevision.objects.select_related("source").get(pk=revision.pk)
    card = Card(
        proposal=proposal,
        relation=relation,
        context=evidence_context(revision, proposal.evidence_start, proposal.evidence_end),
    )
    if proposal.kind == "add_edge" and revision is not None:
        card.support = [
            context
            for item in payload.get("support") or ()
            if (context := evidence_context(revision, item["start"], item["end"], limit=200))
        ]
    concepts: dict[int, Concept] = {}
    if proposal.kind == "add_edge":
        for concept in (proposal.source_concept, proposal.target_concept):
            if concept is not None:
                concepts[concept.pk] = concept
        proposal_ids = {
            payload[role]["proposal_id"]
            for role in ("source", "target")
            if payload[role].get("proposal_id")
        }
        needed = Proposal.objects.in_bulk(proposal_ids) if proposal_ids else {}
        ends = {}
        for role in ("source", "target"):
            end = payload[role]
            concept = concepts.get(end.get("concept_id"))
            card.endpoints.append((role, end, concept, needed.get(end.get("proposal_id"))))
            if concept is not None:
                ends[role] = concept
        card.neighbours = _neighbours_of(ends)
    elif proposal.kind == "merge_concepts":
        concepts = Concept.objects.in_bulk({payload["survivor_id"], payload["loser_id"]})
        ends = {
            role: concepts[payload[key]]
            for role, key in (("survivor", "survivor_id"), ("loser", "loser_id"))
            if payload[key] in concepts
        }
        card.neighbours = _neighbours_of(ends, limit=12)
        card.merge_sides = merge_sides(ends)
    card.concepts = concepts
    if proposal.kind in ("invalidate_edge", "update_edge"):
        cycle_ids = [int(i) for i in payload.get("cycle_edge_ids") or []][:50]
        wanted = {payload["edge_id"], *cycle_ids}
        found = Edge.objects.select_related(
            "source", "target", "relation", "evidence_revision__source"
        ).in_bulk(wanted)
        card.target_edge = found.get(payload["edge_id"])
        card.cycle = [
            (e, evidence_context(e.evidence_revision, e.evidence_start, e.evidence_end))
            for e in (found.get(i) for i in cycle_ids)
            if e is not None
        ]
    conflicts = payload.get("conflicts") or []
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
    seen = set()
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
            item.context = evidence_context(
                other.evidence_revision, other.evidence_start, other.evidence_end
            )
        card.conflicts.append(item)
    if proposal.version > 1:  # every decision, flag or edit bumps the version
        card.decisions = list(
            proposal.decisions.select_related("user").order_by("created_at", "id")
        )
    if proposal.kind == "add_edge":
        # A merged end names its survivor (one query, only when there is one).
        merged = [c for c in concepts.values() if c.status == Concept.Status.MERGED]
        if merged:
            survivors = Concept.objects.in_bulk({c.merged_into_id for c in merged})
            for c in merged:
                c.survivor = survivors.get(c.merged_into_id)
    elif proposal.kind == "add_concept" and proposal.is_open:
        card.similar = concept_search(q=payload["name"], limit=3)
    if proposal.is_open:
        card.blockers = proposal_blockers(proposal)
    card.claim = claim_words(proposal)
    return card


# --- Words for a proposal ----------------------------------------------------------------


def claim_words(proposal: Proposal, relations: dict[str, RelationType] | None = None) -> str:
    """What the proposal asks for, as one sentence of plain text."""
    payload = proposal.payload
    kind = proposal.kind
    if kind == "add_edge":
        relation = (relations or {}).get(payload["relation"]) or proposal.relation
        verb = relation.verb if relation is not None else payload["relation"].replace("_", " ")
        return f"{payload['source']['name']} {verb} {payload['target']['name']}"
    if kind == "add_concept":
        return f"New concept {payload['name']}"
    if kind in ("invalidate_edge", "update_edge"):
        what = "Retire" if kind == "invalidate_edge" else "Update"
        if proposal.source_concept_id and proposal.target_concept_id:
            return (
                f"{what} edge #{payload['edge_id']}: {proposal.source_concept.name} "
                f"{proposal.relation.verb if proposal.relation else ''} "
                f"{proposal.target_concept.name}"
            ).replace("  ", " ")
        return f"{what} edge #{payload['edge_id']}"
    if kind == "merge_concepts":
        if proposal.source_concept_id and proposal.target_concept_id:
            return f"Merge {proposal.source_concept.name} into {proposal.target_concept.name}"
        return f"Merge concept #{payload['loser_id']} into #{payload['survivor_id']}"
    if kind == "add_relation_type":
        return f"New relation {payload['label']} (“source {payload['verb']} target”)"
    if kind == "update_concept":
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
        return f"{name}: " + "; ".join(parts)
    return proposal.get_kind_display()
