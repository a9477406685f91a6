"""Names for a search box, held in memory: exact and prefix matches from sorted keys,
fuzzy ones from word postings, kept in step one owner at a time.

Every name is stored under its key (lower case, single spaces). Exact and prefix matches
are a range of the sorted keys. A fuzzy match is scored (rapidfuzz ``WRatio``) only
against names that share words with the query: each query word is matched against the
vocabulary of words (the same word; for the last, still being typed, words starting
with it; a misspelt one, the alike words of its block), and the postings of those words
are intersected, smallest first, so a keystroke compares a few hundred names rather than
every name there is. A fuzzy match never takes one acronym for another ("HTTP" is not
"HTTPS"; ``construction.text.acronym_clash``); prefix matches still offer both. ``add``
and ``discard`` cost time proportional to one owner's names, so the index follows
changes without being rebuilt. Pure Python.
"""

from __future__ import annotations

import bisect
import heapq
import re
from collections.abc import Iterable

from rapidfuzz import fuzz, process
from sortedcontainers import SortedList

from .text import acronym_clash, acronym_words

__all__ = ["NameSearchIndex", "search_key"]

_WORD = re.compile(r"\w+")
#: Words too common to narrow a search on their own.
_COMMON = frozenset({"a", "an", "the", "of", "and", "or", "to", "in", "on", "for", "with", "by"})
#: How many vocabulary words a typed prefix may stand for.
PREFIX_WORDS = 40
#: How alike a misspelt word must be to a known one (rapidfuzz ratio).
WORD_SCORE = 75.0
MIN_FUZZY_WORD = 4
#: A word in more names than this keeps them in a set (intersections in C, in the time
#: of the smaller side); rarer words keep a short sorted list.
SET_AT = 64


def search_key(text: str) -> str:
    """The form names are compared in: lower case, runs of white space as one space."""
    return " ".join(str(text).lower().split())


def _words(key: str) -> list[str]:
    return list(dict.fromkeys(_WORD.findall(key)))


def _ids(value: int | tuple[int, ...]) -> tuple[int, ...]:
    return (value,) if isinstance(value, int) else value


def _blocks(word: str) -> tuple[str, str]:
    """A word's vocabulary blocks: its first two letters, its last three."""
    return "^" + word[:2], "$" + word[-3:]


class NameSearchIndex:
    """Names by id (a name row's id), each owned by one owner (a concept id)."""

    def __init__(self) -> None:
        self._names: dict[int, tuple[str, str, int]] = {}  # id -> (name, key, owner)
        # owner -> its name id, or a tuple of them (no list per owner: less memory, and
        # nothing the cyclic collector has to walk)
        self._by_owner: dict[int, int | tuple[int, ...]] = {}
        self._sorted: SortedList = SortedList()  # (key, id)
        # word -> ids: a short list (ascending), or a set once the word is common.
        self._postings: dict[str, list[int] | set[int]] = {}
        self._vocabulary: list[str] = []  # every word ever posted, sorted
        self._word_blocks: dict[str, list[str]] = {}
        # Words some name writes as an acronym (never taken out: that only makes fuzzy
        # matching stricter).
        self._acronyms: set[str] = set()

    def __len__(self) -> int:
        return len(self._names)

    # --- Keeping it in step ---------------------------------------------------------------

    def add(self, name_id: int, name: str, owner: int) -> None:
        """Register a name (again, if it changed)."""
        if name_id in self._names:
            self._remove(name_id)
        key = search_key(name)
        self._names[name_id] = (name, key, owner)
        self._acronyms |= acronym_words(name)
        mine = self._by_owner.get(owner)
        self._by_owner[owner] = name_id if mine is None else (*_ids(mine), name_id)
        self._sorted.add((key, name_id))
        for word in _words(key):
            posting = self._postings.get(word)
            if posting is None:
                self._postings[word] = [name_id]
                bisect.insort(self._vocabulary, word)
                for block in _blocks(word):
                    self._word_blocks.setdefault(block, []).append(word)
            elif isinstance(posting, set):
                posting.add(name_id)
            elif len(posting) >= SET_AT:
                self._postings[word] = {*posting, name_id}
            elif not posting or posting[-1] < name_id:
                posting.append(name_id)
            else:
                bisect.insort(posting, name_id)

    def extend(self, rows: Iterable[tuple[int, str, int]]) -> None:
        """Register many (id, name, owner) rows, in ascending id order for speed."""
        for name_id, name, owner in rows:
            self.add(name_id, name, owner)

    def discard(self, owner: int) -> int:
        """Take every name of ``owner`` out; returns how many there were."""
        ids = _ids(self._by_owner.pop(owner, ()))
        for name_id in ids:
            self._remove(name_id, keep_owner=True)
        return len(ids)

    def _remove(self, name_id: int, *, keep_owner: bool = False) -> None:
        _name, key, owner = self._names.pop(name_id)
        self._sorted.discard((key, name_id))
        for word in _words(key):
            posting = self._postings.get(word)
            if isinstance(posting, set):
                posting.discard(name_id)
            elif posting:
                i = bisect.bisect_left(posting, name_id)
                if i < len(posting) and posting[i] == name_id:
                    del posting[i]
        if not keep_owner:
            rest = tuple(i for i in _ids(self._by_owner.pop(owner, ())) if i != name_id)
            if rest:
                self._by_owner[owner] = rest[0] if len(rest) == 1 else rest

    # --- Reading ----------------------------------------------------------------------

    def name(self, name_id: int) -> tuple[str, str, int]:
        """(name, key, owner) of a registered name."""
        return self._names[name_id]

    def exact(self, key: str) -> list[int]:
        """Ids of the names whose key is ``key``."""
        return self.prefixed(key, cap=len(self._names), exact=True)

    def prefixed(self, key: str, *, cap: int, exact: bool = False) -> list[int]:
        """Up to ``cap`` ids of names whose key starts with ``key``, in key order."""
        out: list[int] = []
        start = self._sorted.bisect_left((key, -1))
        for k, name_id in self._sorted.islice(start):
            if len(out) >= cap or not (k == key if exact else k.startswith(key)):
                break
            out.append(name_id)
        return out

    def fuzzy(
        self,
        key: str,
        *,
        limit: int,
        cutoff: float = 60.0,
        pool: int = 200,
        acronyms: Iterable[str] = (),
    ) -> list[tuple[int, float]]:
        """Up to ``limit`` (id, WRatio score) pairs at or above ``cutoff``, best first,
        scored among at most ``pool`` names sharing the most words with ``key``; none
        that clashes with it by an acronym (``acronyms``: words the query wrote so)."""
        candidates = self._candidates(key, pool)
        if not candidates:
            return []
        extra = frozenset(acronyms)

        def acronym(word: str) -> bool:
            return word in extra or word in self._acronyms

        wanted = _words(key)
        choices = {
            i: self._names[i][1]
            for i in candidates
            if not acronym_clash(wanted, _words(self._names[i][1]), acronym)
        }
        found = process.extract(key, choices, scorer=fuzz.WRatio, limit=limit, score_cutoff=cutoff)
        return [(name_id, float(score)) for _k, score, name_id in found]

    def _candidates(self, key: str, pool: int) -> list[int]:
        words = _words(key)
        if len(words) > 1 and any(w not in _COMMON for w in words):
            words = [w for w in words if w not in _COMMON] or words
        # Per query word, the postings of the words it may stand for; the rarest first.
        groups: list[tuple[int, list[list[int] | set[int]]]] = []
        for i, word in enumerate(words):
            alike = self._alike(word, last=i == len(words) - 1)
            postings = [p for p in (self._postings[w] for w in alike) if p]
            if postings:
                groups.append((sum(len(p) for p in postings), postings))
        if not groups:
            return []
        groups.sort(key=lambda g: g[0])
        first = groups[0][1]
        found: set[int] = first[0] if isinstance(first[0], set) and len(first) == 1 else set()
        if not found:
            for posting in first:
                found.update(posting)
        for _size, postings in groups[1:]:
            narrower: set[int] = set()
            for posting in postings:  # a set intersects in the time of the smaller one
                narrower |= found.intersection(posting)
            if narrower:  # a word no candidate shares does not empty the pool
                found = narrower
        if len(found) <= pool:
            return sorted(found)
        return heapq.nsmallest(pool, found)

    def _alike(self, word: str, *, last: bool) -> list[str]:
        """Vocabulary words a query word may stand for."""
        out: list[str] = [word] if word in self._postings else []
        if last:
            start = bisect.bisect_left(self._vocabulary, word)
            for known in self._vocabulary[start : start + PREFIX_WORDS]:
                if not known.startswith(word):
                    break
                if known != word:
                    out.append(known)
        if len(word) >= MIN_FUZZY_WORD:
            block: set[str] = set()
            for b in _blocks(word):
                block.update(self._word_blocks.get(b, ()))
            for known, _score, _ in process.extract(
                word, block, scorer=fuzz.ratio, score_cutoff=WORD_SCORE, limit=5
            ):
                if known not in out:
                    out.append(known)
        return out
