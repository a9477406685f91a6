"""Concepts named in a piece of question text, found through the name index.

Exact keys first (``construction.text.name_key``, so "the Transformers" finds
"Transformer" and "RAG" finds the concept whose alias or abbreviation it is), longest
match first and never overlapping; what is left over is tried whole against
``index.fuzzy``; words that resolve to nothing are reported as unknown names, never
turned into concepts. An acronym is found only by its own letters: "HTTP" never finds
"HTTPS" (``construction.text.acronym_clash``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..resolve import STOPWORDS
from ..text import TYPOGRAPHIC, acronym_words, name_key
from ..types import IndexEntry
from .protocols import NameIndex
from .types import Found

# Words that carry no name in a question's slot ("my understanding of X", "X and Y").
FILLERS = STOPWORDS | frozenset(
    {
        "my",
        "understanding",
        "knowledge",
        "grasp",
        "concept",
        "concepts",
        "topic",
        "topics",
        "idea",
        "ideas",
        "notion",
        "both",
        "between",
        "vs",
        "versus",
        "other",
        "others",
        "things",
        "thing",
        "something",
        "learning",
        "studying",
        "using",
        "first",
        "etc",
        "all",
        "any",
        "about",
        "into",
        "exactly",
        "really",
        "actually",
        "please",
        "me",
        "us",
        "one",
        "wrong",
    }
)
TOKEN = re.compile(r"[^\s,;:!?()\"\[\]{}]+")
POSSESSIVE = re.compile(r"'s$|'$")


@dataclass(frozen=True)
class _Word:
    text: str
    start: int
    end: int


def words_of(text: str) -> list[_Word]:
    """The words of ``text`` with their offsets; possessives and end dots dropped."""
    out = []
    for match in TOKEN.finditer(text):
        word = POSSESSIVE.sub("", match.group().rstrip("."))
        if word:
            out.append(_Word(word, match.start(), match.start() + len(word)))
    return out


def _filler(word: str) -> bool:
    return word.casefold().strip(".'-") in FILLERS


def _found(said: str, entry: IndexEntry, match: str, score: float = 100.0) -> Found | None:
    if entry.concept_id is None:  # a name only proposed so far is not in the graph
        return None
    kind = match if match == "fuzzy" else ("exact" if entry.is_canonical else "alias")
    return Found(
        said=said, concept_id=entry.concept_id, name=entry.canonical, match=kind, score=score
    )


def _exact_matches(text: str, words: list[_Word], index: NameIndex) -> list[tuple[int, int, Found]]:
    """Every (first word, word count, concept) with an exact key, longest first."""
    hits: list[tuple[int, int, Found]] = []
    longest = max(1, index.max_words)
    for size in range(min(longest, len(words)), 0, -1):
        for first in range(0, len(words) - size + 1):
            span = words[first : first + size]
            if all(_filler(w.text) for w in span):
                continue
            said = text[span[0].start : span[-1].end]
            key = name_key(said)
            entry = index.exact(key) if key else None
            found = _found(said, entry, "exact") if entry else None
            if found is not None:
                hits.append((first, size, found))
    return hits


def _leftover_runs(words: list[_Word], taken: list[bool]) -> list[tuple[int, int]]:
    """Runs of words no match took, trimmed of filler words at both ends."""
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(words):
        if taken[i] or _filler(words[i].text):
            i += 1
            continue
        j = i
        while j < len(words) and not taken[j]:
            j += 1
        end = j
        while end > i and _filler(words[end - 1].text):
            end -= 1
        runs.append((i, end))
        i = j
    return runs


def find_concepts(text: str, index: NameIndex) -> tuple[list[tuple[int, Found]], list[str]]:
    """The concepts ``text`` names, as (offset, found) in reading order, and the names in
    it that the graph does not know."""
    text = text.translate(TYPOGRAPHIC)
    words = words_of(text)
    taken = [False] * len(words)
    chosen: list[tuple[int, Found]] = []
    for first, size, found in _exact_matches(text, words, index):
        if any(taken[first : first + size]):
            continue
        taken[first : first + size] = [True] * size
        chosen.append((words[first].start, found))
    unknown: list[str] = []
    for first, end in _leftover_runs(words, taken):
        said = text[words[first].start : words[end - 1].end]
        hit = index.fuzzy(name_key(said), acronyms=acronym_words(said))
        fuzzy = _found(said, hit[0], "fuzzy", hit[1]) if hit else None
        if fuzzy is None:
            unknown.append(said.strip(" '\"-."))
        else:
            chosen.append((words[first].start, fuzzy))
    chosen.sort(key=lambda pair: pair[0])
    return _distinct(chosen), [u for u in unknown if u]


def _distinct(chosen: list[tuple[int, Found]]) -> list[tuple[int, Found]]:
    seen: set[int] = set()
    out = []
    for offset, found in chosen:
        if found.concept_id not in seen:
            seen.add(found.concept_id)
            out.append((offset, found))
    return out
