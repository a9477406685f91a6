"""The pieces a card is built of: evidence in its paragraph, the recent edges of a
concept, and the two sides of a merge. The kinds build their cards from these."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Case, Q, When

from construction.excerpt import ELLIPSIS, excerpt_bounds
from kgreview.graph import rules
from kgreview.graph import selectors as graph_selectors
from kgreview.graph.models import (
    Concept,
    ConceptAlias,
    Edge,
    RelationType,
    Source,
    SourceConcept,
    SourceRevision,
)
from kgreview.graph.selectors import active_edge_counts
from kgreview.graph.sources import Place, place_of


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


CONTEXT_LIMIT = 420  # characters of context either side: the quote stays near the top


def evidence_context(
    revision: SourceRevision | None,
    start: int | None,
    end: int | None,
    *,
    limit: int = CONTEXT_LIMIT,
) -> Context | None:
    """The quote in its paragraph, or in as many whole sentences around it as fit in
    ``limit`` characters either side (``construction.excerpt``): never from mid-word."""
    if revision is None or start is None or end is None:
        return None
    text = revision.text
    begin, finish, cut_before, cut_after = excerpt_bounds(text, start, end, limit=limit)
    source = revision.source
    return Context(
        before=(ELLIPSIS if cut_before else "") + text[begin:start],
        quote=text[start:end],
        after=text[end:finish] + (ELLIPSIS if cut_after else ""),
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


def neighbours_of(concepts: dict[str, Concept], *, limit: int = 6) -> dict[str, list[Neighbour]]:
    """Recent active edges of each named concept, in one query for all of them."""
    return neighbours_and_fact(concepts, limit=limit)[0]


# A fact asked about: (source id, relation, target id).
Fact = tuple[int, RelationType, int]


def neighbours_and_fact(
    concepts: dict[str, Concept], *, limit: int = 6, fact: Fact | None = None
) -> tuple[dict[str, list[Neighbour]], Edge | None]:
    """``neighbours_of``, and in the same query the active edge holding ``fact`` (either
    way round for a symmetric relation, or its inverse twin: ``rules.fact_keys``), if
    any: the rows come with that edge first, so a card learns whether its proposal is
    already in the graph without a query of its own.
    """
    ids = {c.pk for c in concepts.values()}
    if not ids:
        return {}, None
    first: list = []
    if fact is not None:
        same = graph_selectors.fact_q(*fact)
        first = [Case(When(same, then=0), default=1).asc()]
    rows = list(
        Edge.objects.filter(Q(source_id__in=ids) | Q(target_id__in=ids), status=Edge.Status.ACTIVE)
        .select_related("source", "target", "relation")
        .order_by(*first, "-recorded_at", "-id")[: limit * 4 * len(ids)]
    )
    held = None
    if fact is not None and rows:
        e = rows[0]
        if (e.source_id, e.relation_id, e.target_id) in rules.fact_keys(*fact):
            held = e
    out: dict[str, list[Neighbour]] = {}
    for role, concept in concepts.items():
        mine: list[Neighbour] = []
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
    return out, held


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
