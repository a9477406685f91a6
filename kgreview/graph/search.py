"""Fuzzy concept search over canonical names and aliases, for people and agents.

Every current name (canonical, alias, merged-away; any concept status) is held in a
per-process ``NameSearchIndex`` (``construction.name_search``): exact and prefix matches
from its sorted keys, fuzzy ones scored only among names sharing words with the query.
It follows the name journal like the resolver's index (``graph.name_index``): a new
alias, a rename or a merge re-reads the names of the concepts it touched, never all of
them. One cheap query checks the journal on each search.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from construction.name_search import NameSearchIndex, search_key
from construction.text import acronym_words

from .models import Concept, ConceptAlias
from .name_index import JournalFollower, Touched, id_chunks

MIN_SCORE = 60.0
#: Names scored per fuzzy search (those sharing the most words with the query).
FUZZY_POOL = 250


@dataclass(frozen=True)
class SearchHit:
    concept: Concept
    matched_name: str
    match: str  # exact | prefix | fuzzy
    score: float


class SearchNames(JournalFollower[NameSearchIndex]):
    """The search index of every current name, one per process."""

    def _build(self) -> NameSearchIndex:
        index = NameSearchIndex()
        rows = ConceptAlias.objects.order_by("id").values_list("id", "name", "concept_id")
        index.extend(rows.iterator(chunk_size=10_000))
        return index

    def _discard(self, index: NameSearchIndex, touched: Touched) -> None:
        for concept_id in touched.concepts:
            index.discard(concept_id)

    def _add(self, index: NameSearchIndex, touched: Touched) -> None:
        for chunk in id_chunks(touched.concepts):
            rows = ConceptAlias.objects.filter(concept_id__in=chunk).order_by("id")
            index.extend(rows.values_list("id", "name", "concept_id"))


NAME_CACHE = SearchNames()


def concept_search(
    *, q: str, limit: int = 10, at: datetime | None = None, include_inactive: bool = False
) -> list[SearchHit]:
    """Concepts whose names match ``q`` best: exact, then prefix, then fuzzy (rapidfuzz
    WRatio, at least 60). One hit per concept, with the name that matched.

    Only concepts that were nodes of the graph at ``at`` (now when ``None``) are
    returned, unless ``include_inactive``.
    """
    key = search_key(q)
    if not key:
        return []
    best: dict[int, tuple[float, int, str, str]] = {}

    def offer(concept_id: int, score: float, rank: int, name: str, how: str) -> None:
        old = best.get(concept_id)
        if old is None or (rank, -score) < (old[1], -old[0]):
            best[concept_id] = (score, rank, name, how)

    wanted = limit * 4  # concepts considered before the status filter
    with NAME_CACHE.lock:
        names = NAME_CACHE.get()
        for i in names.exact(key):
            name, _key, owner = names.name(i)
            offer(owner, 100.0, 0, name, "exact")
        for i in names.prefixed(key, cap=limit * 20):
            name, found, owner = names.name(i)
            if found != key:
                offer(owner, 95.0, 1, name, "prefix")
        # Fuzzy hits rank after every exact and prefix one: with enough of those, none
        # could make the cut below.
        if len(best) < wanted:
            for i, score in names.fuzzy(
                key, limit=wanted, cutoff=MIN_SCORE, pool=FUZZY_POOL, acronyms=acronym_words(q)
            ):
                name, _key, owner = names.name(i)
                offer(owner, round(score, 1), 2, name, "fuzzy")
    from .history import concepts_as_of

    ranked = sorted(best.items(), key=lambda kv: (kv[1][1], -kv[1][0], len(kv[1][2]), kv[1][2]))
    ids = [cid for cid, _ in ranked[:wanted]]
    qs = Concept.objects.filter(pk__in=ids) if include_inactive else concepts_as_of(at=at)
    concepts = qs.filter(pk__in=ids).in_bulk()
    hits = []
    for cid, (score, _rank, name, how) in ranked:
        if cid in concepts:
            hits.append(SearchHit(concept=concepts[cid], matched_name=name, match=how, score=score))
        if len(hits) >= limit:
            break
    return hits
