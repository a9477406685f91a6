"""Fuzzy concept search over canonical names and aliases, for people and agents.

Every name (canonical, alias, merged-away) is held in a per-process list that is
rebuilt only when names change: a new alias row, or a bump of ``NameIndexVersion``
(merges and undone concepts). One cheap query checks that on each search.
"""

from __future__ import annotations

import bisect
import itertools
import threading
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from rapidfuzz import fuzz, process

from .models import Concept, ConceptAlias, NameIndexVersion

MIN_SCORE = 60.0


@dataclass(frozen=True)
class SearchHit:
    concept: Concept
    matched_name: str
    match: str  # exact | prefix | fuzzy
    score: float


class _NameList:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._signature: tuple | None = None
        self.keys: list[str] = []
        self.names: list[str] = []
        self.concepts: list[int] = []
        self.by_key: dict[str, list[int]] = {}
        self.sorted_keys: list[tuple[str, int]] = []

    @staticmethod
    def _current_signature() -> tuple:
        """One round trip: the newest alias row and the name-index version (bumped when
        an existing name changes meaning: a merge, an undone concept)."""
        alias = ConceptAlias._meta.db_table
        version = NameIndexVersion._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT (SELECT COALESCE(MAX(id), 0) FROM {alias}),"
                f" (SELECT COALESCE(MAX(version), 0) FROM {version})"
            )
            return tuple(cursor.fetchone())

    def refresh(self) -> None:
        signature = self._current_signature()
        if signature == self._signature:
            return
        with self._lock:
            rows = list(ConceptAlias.objects.values_list("name", "concept_id").order_by("id"))
            self.names = [n for n, _ in rows]
            self.keys = [" ".join(n.lower().split()) for n in self.names]
            self.concepts = [c for _, c in rows]
            by_key: dict[str, list[int]] = {}
            for i, k in enumerate(self.keys):
                by_key.setdefault(k, []).append(i)
            self.by_key = by_key
            self.sorted_keys = sorted((k, i) for i, k in enumerate(self.keys))
            self._signature = signature

    def clear(self) -> None:
        """Forget the list; the next search reads the names again."""
        with self._lock:
            self._signature = None

    def exact(self, key: str) -> list[int]:
        return self.by_key.get(key, [])

    def prefixed(self, key: str, cap: int) -> list[int]:
        """Up to ``cap`` names that start with ``key`` (a range of the sorted keys)."""
        out: list[int] = []
        start = bisect.bisect_left(self.sorted_keys, (key, -1))
        for k, i in itertools.islice(self.sorted_keys, start, None):
            if not k.startswith(key) or len(out) >= cap:
                break
            out.append(i)
        return out


_NAMES = _NameList()
NAME_CACHE = _NAMES


def concept_search(
    *, q: str, limit: int = 10, at: datetime | None = None, include_inactive: bool = False
) -> list[SearchHit]:
    """Concepts whose names match ``q`` best: exact, then prefix, then fuzzy (rapidfuzz
    WRatio, at least 60). One hit per concept, with the name that matched.

    Only concepts that were nodes of the graph at ``at`` (now when ``None``) are
    returned, unless ``include_inactive``.
    """
    key = " ".join(str(q).lower().split())
    if not key:
        return []
    _NAMES.refresh()
    best: dict[int, tuple[float, int, str, str]] = {}

    def offer(concept_id: int, score: float, rank: int, name: str, how: str) -> None:
        old = best.get(concept_id)
        if old is None or (rank, -score) < (old[1], -old[0]):
            best[concept_id] = (score, rank, name, how)

    for i in _NAMES.exact(key):
        offer(_NAMES.concepts[i], 100.0, 0, _NAMES.names[i], "exact")
    for i in _NAMES.prefixed(key, cap=limit * 20):
        if _NAMES.keys[i] != key:
            offer(_NAMES.concepts[i], 95.0, 1, _NAMES.names[i], "prefix")
    for _k, score, i in process.extract(
        key, _NAMES.keys, scorer=fuzz.WRatio, limit=limit * 4, score_cutoff=MIN_SCORE
    ):
        offer(_NAMES.concepts[i], round(float(score), 1), 2, _NAMES.names[i], "fuzzy")
    from .history import concepts_as_of

    ranked = sorted(best.items(), key=lambda kv: (kv[1][1], -kv[1][0], len(kv[1][2]), kv[1][2]))
    ids = [cid for cid, _ in ranked[: limit * 4]]
    qs = Concept.objects.filter(pk__in=ids) if include_inactive else concepts_as_of(at=at)
    concepts = qs.filter(pk__in=ids).in_bulk()
    hits = []
    for cid, (score, _rank, name, how) in ranked:
        if cid in concepts:
            hits.append(SearchHit(concept=concepts[cid], matched_name=name, match=how, score=score))
        if len(hits) >= limit:
            break
    return hits
