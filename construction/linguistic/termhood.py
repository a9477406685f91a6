"""Termhood: a candidate name, where the chunk says it, and how sure we are it is a term.

The signs (``TERM_WEIGHTS``) are read off all of a candidate's mentions in one chunk:
how rare its words are in general English (``wordfreq``), how the text marks it (code,
emphasis, headings, definitions), its shape. A parameter's placeholder, an empty head or
an everyday word of documentation on its own is never a term; a name the graph knows
always is.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from .words import EMPTY_HEADS, GENERIC_WORDS, METASYNTACTIC

TERM_SCORE = 0.5  # the score from which a candidate counts as a term
ACRONYM = re.compile(r"^[A-Z][A-Z0-9]{1,9}s?$")


@functools.cache
def _zipf(word: str) -> float:
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en")


def zipf(word: str) -> float:
    """How common a word is in general English, on the Zipf scale (0 unknown, 7 "the")."""
    return _zipf(word.lower())


@dataclass
class Mention:
    """One place a candidate stands in one sentence (token indices, clean offsets)."""

    sentence: int
    first: int  # first token
    last: int  # last token (inclusive), the head
    kinds: frozenset[str]  # "code", "strong", "emphasis", "link", "heading"
    capital: bool  # capitalised mid-sentence (a proper name or an acronym)
    placeholder: bool = False  # a parameter's name standing for a value ("*size* is ...")


@dataclass
class Candidate:
    """A candidate name and every mention of it in the chunk."""

    key: str
    name: str
    words: int
    rarity: float  # lowest Zipf frequency of its words
    head_rarity: float
    identifier: bool
    mentions: list[Mention] = field(default_factory=list)
    known: bool = False
    defined: bool = False
    of_phrase: bool = False
    adjective_first: bool = False
    head_word: str = ""
    head_count: int = 0  # mentions in the chunk of names with the same head word
    score: float = 0.0

    @property
    def count(self) -> int:
        return len(self.mentions)

    @property
    def placeholder(self) -> bool:
        """Whether the text uses it as a placeholder: a parameter or a variable of a
        signature ("*size* is an optional numeric argument", "*`count`* rows"), which
        names a value of one call, not a thing of the manual."""
        return any(m.placeholder for m in self.mentions)

    def kinds(self) -> set[str]:
        return {k for m in self.mentions for k in m.kinds}


# What each sign of termhood adds to a candidate's score (from 0.25), set by reading the
# manuals' and lessons' candidates by hand.
TERM_WEIGHTS = {
    "code": 0.45,  # inline code: an identifier, a command, a setting
    "code_word": 0.2,  # ... an everyday word in code ("`count`", "`string`")
    "set_apart": 0.35,  # strong or emphasised where it stands
    "set_apart_word": 0.1,  # ... an everyday word emphasised (a parameter: "*size*")
    "heading": 0.25,  # a heading names it
    "defined": 0.3,  # the subject of "is a ..."
    "several_words": 0.2,
    "compound": 0.1,  # nouns in a row, not an adjective and a noun
    "rare": 0.3,  # its rarest word is rare in general English (Zipf < 3)
    "uncommon": 0.15,  # ... or uncommon (Zipf < 4)
    "repeated": 0.1,  # said twice in the chunk
    "frequent": 0.1,  # ... or four times
    "proper": 0.2,  # an acronym, or capitalised mid-sentence
    "upper_case": 0.25,  # written in capitals: a command, a keyword, a mode
    "common_word": -0.45,  # one common word of general English, nowhere set apart
    "common_words": -0.2,  # every word of it common ("good way")
    "of_phrase": -0.5,  # "X of Y": a name only where it is set apart or said again
    "plain_words": -0.15,  # several everyday words, nowhere set apart ("output row")
    "hyphenated": 0.15,  # words made one with a hyphen ("write-ahead", "point-in-time")
    "adjective_once": -0.2,  # "explicit use", "inverse operation": said once, unmarked
    "empty_head": -0.25,  # its head says nothing on its own ("query type", "field value")
}


def term_signs(cand: Candidate) -> dict[str, bool]:
    """The signs of termhood a candidate shows (``TERM_WEIGHTS``' keys)."""
    kinds = cand.kinds()
    single = cand.words == 1
    marked = bool(kinds & {"code", "strong", "emphasis"})
    everyday = single and cand.rarity >= 4.0  # a common English word on its own
    emphasised = bool(kinds & {"strong", "emphasis"})
    return {
        "code": "code" in kinds and not everyday,
        "code_word": "code" in kinds and everyday,
        "set_apart": emphasised and not everyday,
        "set_apart_word": emphasised and everyday,
        "heading": "heading" in kinds,
        "defined": cand.defined,
        "several_words": not single,
        "compound": not single and not cand.adjective_first,
        "rare": cand.rarity < 3.0,
        "uncommon": 3.0 <= cand.rarity < 4.0,
        "repeated": cand.count >= 2,
        "frequent": cand.count >= 4,
        "proper": any(m.capital for m in cand.mentions) or bool(ACRONYM.match(cand.name)),
        "upper_case": any(len(w) > 2 and w.isupper() and w.isalpha() for w in cand.name.split()),
        "common_word": single and cand.rarity >= 4.5 and not marked,
        "common_words": not single and cand.head_rarity >= 5.5 and cand.rarity >= 5.0,
        "of_phrase": cand.of_phrase,
        "hyphenated": "-" in cand.name.strip("-"),
        "plain_words": not single
        and cand.rarity >= 4.3
        and not marked
        and not any(m.capital for m in cand.mentions)
        and not any(w.isupper() for w in cand.name.split()),
        "adjective_once": not single
        and cand.adjective_first
        and cand.count == 1
        and not marked
        and (cand.head_count < 2 or cand.head_word in GENERIC_WORDS),
        "empty_head": not single and cand.head_word in EMPTY_HEADS,
    }


def termhood(cand: Candidate) -> float:
    """How sure we are that the candidate is a term of the text (0..1)."""
    if cand.placeholder:
        return 0.0
    if cand.known:
        return 1.0
    if cand.words == 1 and cand.key in EMPTY_HEADS:
        return 0.0
    if _generic_word(cand) or _example_name(cand.name):
        return 0.0
    score = 0.25 + sum(TERM_WEIGHTS[k] for k, shown in term_signs(cand).items() if shown)
    return max(0.0, min(1.0, score))


def _generic_word(cand: Candidate) -> bool:
    """One everyday word of documentation on its own, in prose ("Function", "Pointers"):
    no concept of the manual, however often it is said or emphasised."""
    if cand.words != 1 or cand.identifier or cand.key not in GENERIC_WORDS:
        return False
    return "code" not in cand.kinds() and not (cand.name.isupper() and len(cand.name) > 1)


# A dotted name on a one-letter variable: "x.f", "z.imag" (an example's expression).
ON_A_VARIABLE = re.compile(r"^[A-Za-z]\.\w")


def _example_name(name: str) -> bool:
    """A name an example made up: a metasyntactic word ("foo", "obj.name", "spam") or an
    attribute of a one-letter variable ("x.f", "z.imag")."""
    words = re.split(r"[\s.()]+", name.lower())
    on_variable = any(ON_A_VARIABLE.match(w) for w in name.split())
    return on_variable or any(w in METASYNTACTIC for w in words)
