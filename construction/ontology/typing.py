"""A term's concept type, from the graph's types: what the offline reader's concept
proposals carry as ``type_key``.

The signs, strongest first: a definition "X is a Y" where Y names a type (its label, its
key's words, or their plural); the noun right after an identifier ("the `work_mem`
setting"); the term's own head noun ("ACCESS EXCLUSIVE lock" is a lock); the heading
it sits under ("SQL Commands"); the type its typed neighbours in a list share. A type
is matched on its last one or two words, so "configuration parameter" fits a type
labelled "Configuration parameter" before one labelled "Parameter".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from ..text import name_key
from .types import KnownType


class TypeIndex:
    """Active types by the words that name them."""

    def __init__(self, types: Iterable[KnownType]) -> None:
        self.words: dict[str, str] = {}
        for t in types:
            if not t.active:
                continue
            for said in (t.label, t.key.replace("_", " ")):
                key = name_key(said)
                if key:
                    self.words.setdefault(key, t.key)

    def __bool__(self) -> bool:
        return bool(self.words)

    def match(self, phrase: str) -> str:
        """The type a phrase's last two words, else its last word, name."""
        words = name_key(phrase).split()
        for n in (2, 1):
            if len(words) >= n:
                found = self.words.get(" ".join(words[-n:]))
                if found:
                    return found
        return ""


def type_for_term(
    name: str,
    types: Sequence[KnownType] | TypeIndex,
    *,
    defined_as: str = "",
    classifier: str = "",
    section: Sequence[str] = (),
    neighbours: Sequence[str] = (),
) -> str:
    """The key of the type that fits ``name`` best, or "" when none does.

    ``defined_as``: Y of "name is a Y"; ``classifier``: the noun after it when it is an
    identifier; ``section``: the heading path it sits under; ``neighbours``: the type
    keys of the terms listed with it.
    """
    index = types if isinstance(types, TypeIndex) else TypeIndex(types)
    if not index:
        return ""
    for phrase in (defined_as, classifier):
        found = index.match(phrase) if phrase else ""
        if found:
            return found
    if len(name.split()) > 1:
        found = index.match(name)
        if found:
            return found
    if neighbours:
        (top, n), *_ = Counter(k for k in neighbours if k).most_common(1) or [("", 0)]
        if top and n >= 2:
            return top
    for heading in reversed(section):
        words = heading.split()
        if words and words[-1].lower().endswith("s"):
            found = index.match(heading)
            if found:
                return found
    return ""
