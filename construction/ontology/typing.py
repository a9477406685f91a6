"""A term's concept type, from the graph's types: what the offline reader's concept
proposals carry as ``type_key``.

The signs, strongest first: a definition "X is a Y" where Y names a type (its label, its
key's words, or their plural); the noun right after an identifier ("the `work_mem`
setting"); the term's own head noun ("ACCESS EXCLUSIVE lock" is a lock); the heading
it sits under ("SQL Commands"); the type its typed neighbours in a list share. A type
is matched on its last one or two words, so "configuration parameter" fits a type
labelled "Configuration parameter" before one labelled "Parameter".

``types_that_fit`` asks the same signs of the quotes stored about the graph's untyped
concepts, when a type is accepted: which of them the new type (or a subtype) fits, with
the quote that shows it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..text import name_key
from .types import KnownType
from .words import is_statement


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


def type_for_term(name: str, types: Sequence[KnownType] | TypeIndex, **signs: Any) -> str:
    """The key of the type that fits ``name`` best, or "" when none does; the signs are
    ``type_sign``'s (``defined_as``, ``classifier``, ``section``, ``neighbours``)."""
    return type_sign(name, types, **signs)[0]


def type_sign(
    name: str,
    types: Sequence[KnownType] | TypeIndex,
    *,
    defined_as: str = "",
    classifier: str = "",
    section: Sequence[str] = (),
    neighbours: Sequence[str] = (),
) -> tuple[str, str]:
    """The key of the type that fits ``name`` best and the sign that gave it, in words
    ("" and "" when none fits): what a proposal typing a concept says as its reason.

    ``defined_as``: Y of "name is a Y"; ``classifier``: the noun after it when it is an
    identifier; ``section``: the heading path it sits under; ``neighbours``: the type
    keys of the terms listed with it.
    """
    index = types if isinstance(types, TypeIndex) else TypeIndex(types)
    if not index:
        return "", ""
    if defined_as:
        found = index.match(defined_as)
        if found:
            return found, f'the text defines it as a "{defined_as}"'
    if classifier:
        found = index.match(classifier)
        if found:
            return found, f'the text names it with the noun "{classifier}"'
    if is_statement(name):  # "ALTER INDEX" is a command, not an index
        found = index.match("command") or index.match("statement")
        if found:
            return found, "it is a statement form"
    words = name.split()
    if len(words) > 1:
        found = index.match(name)
        if found:
            return found, f'its name ends in "{words[-1]}"'
    if neighbours:
        (top, n), *_ = Counter(k for k in neighbours if k).most_common(1) or [("", 0)]
        if top and n >= 2:
            return top, f"{n} of the terms listed with it are of that type"
    return _heading_sign(words, section, index)


def _heading_sign(words: list[str], section: Sequence[str], index: TypeIndex) -> tuple[str, str]:
    """The type the nearest category heading above a term names, unless the term's own
    head noun ("Memory context", "ECPG implementation") says what it is and the heading
    does not name it: a page titled "C-Language Functions" speaks of contexts and macros
    too, while "Cosine similarity" under "Similarity metrics" is one."""
    head = words[-1].lower() if len(words) > 1 and words[-1].isalpha() else ""
    for heading in reversed(section):
        if head and words[-1].islower() and head not in heading.lower().split():
            continue
        if _category_heading(heading):
            found = index.match(heading)
            if found:
                return found, f'it sits under the heading "{heading}"'
    return "", ""


# A heading that joins or weighs several things ("Graphs versus vectors", "Token and
# sentence embeddings", "From one-hot to dense vectors") is about a topic, not a
# category of what it lists.
_JOINED = re.compile(r",|&|\b(?:and|or|versus|vs)\b|^\s*from\b", re.IGNORECASE)


def _category_heading(heading: str) -> bool:
    """Whether a heading names a category of what sits under it: a modifier and a plural
    ("SQL Commands", "Similarity metrics"), joining nothing. A lone plural ("Embeddings")
    names the lesson's topic as often as a kind, so it is no sign."""
    words = heading.split()
    return len(words) >= 2 and words[-1].lower().endswith("s") and not _JOINED.search(heading)


# --- Typing the concepts a graph has -----------------------------------------------------
# When a type is accepted, the concepts already in the graph that it fits are found from
# the quotes stored about them (their edges' and proposals' evidence): each gets the
# type only through a proposal quoting the text that shows it.


@dataclass(frozen=True)
class Quoted:
    """A quote stored about a concept, and the heading path it sits under (if known)."""

    text: str
    section: tuple[str, ...] = ()


@dataclass(frozen=True)
class Untyped:
    """An untyped concept: its names (the canonical one first) and its stored quotes."""

    concept_id: int
    names: tuple[str, ...]
    quotes: tuple[Quoted, ...]


@dataclass(frozen=True)
class TypeFound:
    """A type that fits a concept: which of its quotes shows it, and the sign, in words."""

    concept_id: int
    type_key: str
    quote: int
    sign: str


# The words "X is a Y" put between X and Y ("is a", "is the", "are one of the"): an
# article or "one of" is needed, so "are closely related to Y" defines nothing.
_DEFINED = re.compile(
    r"^[`'\"”’)\]]*\s+(?:is|are)\s+(?:(?:one|any|a kind|a type) of\s+(?:the\s+)?|(?:a|an|the)\s+)"
)
# Words that end the noun phrase Y: what follows them is about something else.
_PHRASE_ENDS = frozenset(
    [
        "of",
        "to",
        "for",
        "in",
        "on",
        "with",
        "by",
        "from",
        "that",
        "which",
        "who",
        "where",
        "when",
        "and",
        "or",
        "but",
        "as",
        "than",
        "at",
        "into",
        "between",
        "about",
        "over",
        "under",
    ]
)
_WORD = re.compile(r"[A-Za-z][\w\-]*")


def types_below(types: Iterable[KnownType], key: str) -> set[str]:
    """The active type ``key`` and its active subtypes, however deep."""
    children: dict[str, list[str]] = {}
    active = set()
    for t in types:
        children.setdefault(t.parent_key, []).append(t.key)
        if t.active:
            active.add(t.key)
    found, todo = set(), [key]
    while todo:
        at = todo.pop()
        if at in found:
            continue
        found.add(at)
        todo.extend(children.get(at, ()))
    return found & active


_TOKEN = re.compile(r"\w+")


def _named_at(text: str, names: Sequence[str]) -> tuple[str, int, int] | None:
    """The first of ``names`` the text writes, as whole words in any case, whatever
    punctuation or spacing stands between them ("foreign key constraint" names
    "Foreign-key constraint"), its last word perhaps in the plural: (name, start, end)."""
    tokens = [(m.group().casefold(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    for name in names:
        words = [w.casefold() for w in _TOKEN.findall(name)]
        if not words or len(name.strip()) < 2:
            continue
        n, last = len(words), words[-1]
        plurals = {last, last + "s", last + "es"}
        for i in range(len(tokens) - n + 1):
            if tokens[i + n - 1][0] in plurals and all(
                tokens[i + k][0] == words[k] for k in range(n - 1)
            ):
                return name, tokens[i][1], tokens[i + n - 1][2]
    return None


def _after(text: str, index: TypeIndex) -> tuple[str, str]:
    """From the text after a concept's name: Y of "is a Y" (the longest run of up to four
    words naming a type) and the noun right after the name ("work_mem setting")."""
    defined = _DEFINED.match(text)
    defined_as = ""
    if defined:
        words = []
        for word in _WORD.findall(text[defined.end() :])[:4]:
            if word.lower() in _PHRASE_ENDS:  # "a component of RAG evaluation": a component
                break
            words.append(word)
        for n in range(len(words), 0, -1):
            if index.match(" ".join(words[:n])):
                defined_as = " ".join(words[:n])
                break
    nxt = re.match(r"^[`'\"”’]*\s+([A-Za-z][\w\-]*)", text)
    return defined_as, nxt.group(1) if nxt else ""


def types_that_fit(
    concepts: Iterable[Untyped], types: Sequence[KnownType], wanted: Collection[str]
) -> list[TypeFound]:
    """For each untyped concept, the type of ``wanted`` that fits it best (as
    ``type_sign`` weighs the signs over all active types, so a closer type elsewhere wins)
    with the first of its quotes that names it and shows the sign; none for a concept no
    quote names, or whose quotes show no wanted type."""
    index = TypeIndex(types)
    if not index or not wanted:
        return []
    found = []
    for concept in concepts:
        for i, quote in enumerate(concept.quotes):
            named = _named_at(quote.text, concept.names)
            if named is None:
                continue
            name, _, end = named
            defined_as, classifier = _after(quote.text[end:], index)
            key, sign = type_sign(
                concept.names[0],
                index,
                defined_as=defined_as,
                classifier=classifier,
                section=quote.section,
            )
            if key in wanted:
                found.append(TypeFound(concept.concept_id, key, i, sign))
                break
    return found
