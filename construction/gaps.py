"""The "missing link" search's first step: sentences of a text that mention both ends of
a gap, by any of their names (canonical or alias), compared by name key.

A name is found in a sentence when its key's words appear there in order, side by side,
each word compared by its own key (case, punctuation, a plural: "Embeddings" finds
"embedding"). Pure: no Django, no database.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .sentences import sentences
from .text import name_key, name_keys

_WORD = re.compile(r"[^\W_]+(?:[.'’][^\W_]+)*", re.UNICODE)


@dataclass(frozen=True)
class Mention:
    """A sentence of the text that names both ends: its offsets and its text."""

    start: int
    end: int
    text: str


def name_patterns(names: Iterable[str]) -> tuple[tuple[str, ...], ...]:
    """Each name's keys as word tuples (both halves of "Long Name (ABBR)"), each word
    keyed as a sentence's words are, no repeats."""
    seen: list[tuple[str, ...]] = []
    for name in names:
        for key in name_keys(name):
            words = tuple(name_key(w) for w in key.split())
            if words and words not in seen:
                seen.append(words)
    return tuple(seen)


def _sentence_words(text: str) -> list[str]:
    return [name_key(w.group()) for w in _WORD.finditer(text)]


def _has(words: Sequence[str], patterns: Sequence[tuple[str, ...]]) -> bool:
    for pattern in patterns:
        size = len(pattern)
        for i in range(len(words) - size + 1):
            if tuple(words[i : i + size]) == pattern:
                return True
    return False


def keyed_sentences(text: str) -> list[tuple[int, int, list[str]]]:
    """The text's sentences (headings left out) with their words keyed: read once for
    every gap a search looks for in the same text."""
    return [
        (start, end, _sentence_words(text[start:end]))
        for start, end, heading in sentences(text)
        if not heading
    ]


def sentences_mentioning_both(
    text: str,
    first: Sequence[tuple[str, ...]],
    second: Sequence[tuple[str, ...]],
    *,
    limit: int = 20,
    keyed: Sequence[tuple[int, int, list[str]]] | None = None,
) -> list[Mention]:
    """Up to ``limit`` sentences (headings left out) naming an end of each side, in the
    text's order; ``keyed`` is ``keyed_sentences(text)`` when the caller has it."""
    if not first or not second:
        return []
    out: list[Mention] = []
    for start, end, words in keyed_sentences(text) if keyed is None else keyed:
        if _has(words, first) and _has(words, second):
            out.append(Mention(start=start, end=end, text=text[start:end]))
            if len(out) >= limit:
                break
    return out


def mentions_both(
    quote: str, first: Sequence[tuple[str, ...]], second: Sequence[tuple[str, ...]]
) -> bool:
    """Whether a quote names both ends (a gap proposal's evidence must)."""
    words = _sentence_words(quote)
    return _has(words, first) and _has(words, second)
