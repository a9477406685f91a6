"""The vocabulary's own phrasebook: questions asked in the words of the graph's relations.

The phrasebook (``phrases``) knows the curriculum's idioms ("What should I learn before
X?"). A graph with another vocabulary (a team's manuals: "requires", "is a kind of",
"configures") is asked in the words of its own relations, so each relation's verb
("source <verb> target") is read into three question shapes:

- outgoing, what the concept <verb>: "What does autovacuum use?", "What is a B-tree
  index a kind of?";
- incoming, what <verb> the concept: "What uses the statistics collector?", "What is a
  kind of index?";
- yes / no: "Does autovacuum use the statistics collector?", "Is a B-tree index a kind
  of index?".

A copular verb ("is a kind of", "is part of", "is an alternative to") is asked with
is / are; any other verb ("requires", "contrasts with") with does / do and its base form.
A verb of another shape (a modal, a past tense) gets no phrasing: its relation is still
walked by connection questions. ``phrasing_for`` also writes the questions, so what the
Ask page suggests is what this module reads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..types import RelationSpec
from .phrases import Reading, clean

COPULAS = frozenset({"is", "are"})
ARTICLES = frozenset({"a", "an", "the"})
# Third-person forms whose base is not the form less its "s".
IRREGULAR = {"has": "have", "does": "do", "goes": "go"}
WORD = re.compile(r"^[a-z][a-z-]*$")


@dataclass(frozen=True)
class Phrasing:
    """How one relation is asked about. ``third`` is the verb's first word as the
    vocabulary writes it ("requires", "is"), ``base`` its base form ("require"), ``rest``
    the words after it ("with", "a kind of"; may be empty)."""

    relation: str
    copular: bool
    third: str
    base: str
    rest: str

    def outgoing(self, x: str) -> str:
        """The question "what does x <verb>?"."""
        if self.copular:
            return f"What is {x} {self.rest}?"
        return f"What does {x} {_join(self.base, self.rest)}?"

    def incoming(self, x: str) -> str:
        """The question "what <verb> x?"."""
        if self.copular:
            return f"What is {self.rest} {x}?"
        return f"What {_join(self.third, self.rest)} {x}?"

    def yes_no(self, a: str, b: str) -> str:
        """The question "does a <verb> b?"."""
        if self.copular:
            return f"Is {a} {self.rest} {b}?"
        return f"Does {a} {_join(self.base, self.rest)} {b}?"


def _join(*words: str) -> str:
    return " ".join(w for w in words if w)


def base_form(third: str) -> str | None:
    """The base form of a third-person verb ("requires" -> "require", "applies" ->
    "apply", "contrasts" -> "contrast"); None for a word that is not one."""
    if third in IRREGULAR:
        return IRREGULAR[third]
    if not third.endswith("s") or third.endswith("ss") or len(third) < 3:
        return None
    if third.endswith("ies"):
        return third[:-3] + "y"
    if third.endswith(("sses", "shes", "ches", "xes", "zes")):
        return third[:-2]
    return third[:-1]


@lru_cache(maxsize=512)
def _phrasing(relation: str, verb: str) -> Phrasing | None:
    words = verb.strip().lower().split()
    if not words or not all(WORD.match(w) for w in words):
        return None
    first, rest = words[0], " ".join(words[1:])
    if first in COPULAS:
        if not rest or words[1] in COPULAS:
            return None
        return Phrasing(relation, True, first, "be", rest)
    base = base_form(first)
    if base is None:
        return None
    return Phrasing(relation, False, first, base, rest)


def phrasing_for(spec: RelationSpec) -> Phrasing | None:
    """How questions about ``spec`` are worded, or None when its verb has no shape
    this module reads."""
    return _phrasing(spec.key, spec.verb)


# --- Reading -----------------------------------------------------------------------------

X = r"(?P<x>.+?)"
A = r"(?P<a>.+?)"
B = r"(?P<b>.+?)"


def _words(text: str) -> str:
    """Words as a pattern; a leading article is optional ("Is X an alternative to Y?"
    and "Is X alternative to Y?" both read)."""
    words = text.split()
    if not words:
        return ""
    head = ""
    if words[0] in ARTICLES and len(words) > 1:
        head, words = r"(?:an? |the )?", words[1:]
    return head + " ".join(re.escape(w) for w in words)


@lru_cache(maxsize=512)
def _patterns(p: Phrasing) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(family, pattern) for one relation, yes / no first; each matches a whole
    cleaned question, ignoring case."""
    rest = _words(p.rest)
    if p.copular:
        shapes = (
            ("yes_no", rf"(?:is|are) {A} {rest} {B}"),
            ("outgoing", rf"(?:what|which)(?: \w+)? (?:is|are) {X} {rest}"),
            ("incoming", rf"(?:what|which)(?: \w+)? (?:is|are) {rest} {X}"),
        )
    else:
        verb = rf"{re.escape(p.base)}{' ' + rest if rest else ''}"
        either = rf"(?:{re.escape(p.third)}|{re.escape(p.base)}){' ' + rest if rest else ''}"
        shapes = (
            ("yes_no", rf"(?:does|do) {A} {verb} {B}"),
            ("outgoing", rf"(?:what|which)(?: \w+)? (?:does|do) {X} {verb}"),
            ("incoming", rf"(?:what|which)(?: \w+)? {either} {X}"),
        )
    return tuple((family, re.compile(rf"^{pattern}$", re.IGNORECASE)) for family, pattern in shapes)


def read_by_verbs(question: str, vocabulary: Sequence[RelationSpec]) -> Reading | None:
    """The question read in the words of one of the vocabulary's relations, or None.
    Longer verbs are tried first, so "is a kind of" wins over a shorter verb that its
    words also end with."""
    text = clean(question)
    phrasings = [p for p in (phrasing_for(s) for s in vocabulary) if p is not None]
    phrasings.sort(key=lambda p: (-len(_join(p.third, p.rest)), p.relation))
    for shape in ("yes_no", "outgoing", "incoming"):
        for p in phrasings:
            for family, pattern in _patterns(p):
                if family != shape:
                    continue
                match = pattern.match(text)
                if match:
                    slots = {k: v.strip() for k, v in match.groupdict().items() if v is not None}
                    return Reading(family, p.relation, slots)
    return None
