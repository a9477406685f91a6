"""One sentence as tokens, and the small word-shape rules the reader applies to them.

``Tok``, ``Sent``, ``Run`` and ``Arg`` are the values the reader passes around: a word
with its offsets, a tokenised sentence, a run of content words (a noun-phrase guess) and
one side of an edge. ``gram_key`` is ``name_key`` of consecutive tokens, computed from
pieces kept on each token because it runs for every n-gram of every sentence.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from ..text import ARTICLES, NAME_PUNCT, TYPOGRAPHIC, clean_display, display_case, singular
from .lexicon import (
    CLAUSE_VERBS,
    CONTAINERS,
    FUNCTION_WORDS,
    GENERIC_WORDS,
    ING_NOUNS,
    KNOWING,
    LY_NOUNS,
    SUBJECT_VERBS,
)

# An en dash inside a word joins it: "Diels-Alder", "Kullback-Leibler" written with one.
TOKEN = re.compile(r"\w+(?:[-./+#\u2013]\w+)*(?:\+\+|#)?")
SOFT_GAP = re.compile(r"[\s*_`]*")


@dataclass(frozen=True)
class Tok:
    """A word with its offsets; ``pieces`` are its name-key words, computed once."""

    start: int
    end: int
    text: str
    low: str
    pieces: tuple[str, ...]
    func: bool


@dataclass
class Sent:
    """A sentence as tokens; ``mentions`` and ``blocked`` are filled while it is read."""

    index: int
    start: int
    end: int
    heading: bool
    toks: tuple[Tok, ...]
    soft: tuple[bool, ...]  # soft[i]: only spaces or emphasis between token i-1 and i
    comma: tuple[bool, ...]  # comma[i]: a comma between token i-1 and i
    mentions: dict[int, tuple[int, str]]  # token index -> (end token index, concept id)
    blocked: set[int]  # tokens inside a cue phrase: never part of an argument


@dataclass(frozen=True)
class Run:
    """Consecutive content words (and whole concept mentions): a noun-phrase candidate."""

    lo: int
    hi: int
    parts: tuple[tuple[int, int, str | None], ...]  # (lo, hi, concept id or None)


@dataclass(frozen=True)
class Arg:
    """One side of an edge: a concept id, where the text names it, and how unsure we are."""

    cid: str
    lo: int  # character offsets, for the reason snippet
    hi: int
    penalty: float = 0.0


def word_pieces(token: str) -> tuple[str, ...]:
    """The words ``name_key`` would make of one token, before articles and plurals."""
    if token.isalnum() and token.isascii():
        return (token.lower(),)
    if token.isascii():
        low = token.lower()
    else:
        low = unicodedata.normalize("NFKC", token).translate(TYPOGRAPHIC).casefold()
        low = NAME_PUNCT.sub(" ", low)
    return tuple(p for p in re.split(r"[-_/\s]+", low) if p)


def gram_key(toks: Sequence[Tok]) -> str:
    """``name_key`` of consecutive tokens, built from their pieces (this runs per n-gram)."""
    words = [p for t in toks for p in t.pieces]
    while len(words) > 1 and words[0] in ARTICLES:
        words = words[1:]
    if not words:
        return ""
    words[-1] = singular(words[-1])
    return " ".join(words)


def is_function(low: str) -> bool:
    if low in FUNCTION_WORDS or len(low) == 1 or low.isdigit():
        return True
    return low.endswith("ly") and len(low) > 4 and low not in LY_NOUNS


def tokenize(text: str, start: int, end: int) -> list[Tok]:
    toks = []
    for m in TOKEN.finditer(text, start, end):
        low = m.group().lower()
        toks.append(
            Tok(m.start(), m.end(), m.group(), low, word_pieces(m.group()), is_function(low))
        )
    return toks


def display_name(name: str) -> str:
    """People's spelling of a new name: cleaned, and cased as ``display_case`` says."""
    return display_case(clean_display(name))


def sentence_case(words: list[str]) -> str:
    """ "Bread Baking" -> "Bread baking"; acronyms and inner capitals ("LoRA") stay."""
    rest = [w.lower() if w[:1].isupper() and w[1:].islower() else w for w in words[1:]]
    return " ".join([words[0], *rest])


def is_generic(low: str) -> bool:
    return singular(low) in GENERIC_WORDS or low in GENERIC_WORDS


def is_participle(low: str) -> bool:
    """ "trained", "used": a verb form, not the head of a name ("speed", "seed" are fine)."""
    return low.endswith("ed") and not low.endswith("eed") and len(low) > 3


def verb_after(prev: Tok, tok: Tok, following: str) -> bool:
    """Where a guessed subject ends: "fermentation works", "linked lists grow".

    Without a part-of-speech tagger this is a guess: a known verb ("document stores are"
    keeps its noun), or any lowercase word after a plural, which rarely continues a name.
    """
    if tok.low in SUBJECT_VERBS and following not in CLAUSE_VERBS:
        return True
    plural = singular(prev.low) != prev.low and prev.low.isalpha()
    return plural and tok.text.islower() and tok.text.isalpha()


def is_activity(s: Sent, run: Run) -> bool:
    """ "Building agents", "Understanding accounts": a gerund acting on an object.

    "Baking soda" looks the same, so only a known object or a verb of knowing counts.
    """
    first = s.toks[run.lo]
    if len(run.parts) < 2 or run.parts[0][2] is not None or not is_gerund(first):
        return False
    return first.low in KNOWING or (run.parts[1][2] is not None and first.low not in ING_NOUNS)


def is_gerund(tok: Tok) -> bool:
    return tok.low.endswith("ing") and len(tok.low) > 5 and "-" not in tok.low


def content_runs(s: Sent, lo: int, hi: int) -> list[Run]:
    """Runs of content words (noun-phrase candidates) between two token positions."""
    out: list[Run] = []
    parts: list[tuple[int, int, str | None]] = []
    piece: tuple[int, int, str | None] | None
    i = lo
    while i < hi:
        mention = s.mentions.get(i)
        if i in s.blocked:
            piece = None
        elif mention and mention[0] <= hi:
            piece = (i, mention[0], mention[1])
        elif not s.toks[i].func:
            piece = (i, i + 1, None)
        else:
            piece = None
        if piece and parts and not s.soft[i]:
            out.append(Run(parts[0][0], parts[-1][1], tuple(parts)))
            parts = []
        if piece:
            parts.append(piece)
            i = piece[1]
            continue
        if parts:
            out.append(Run(parts[0][0], parts[-1][1], tuple(parts)))
            parts = []
        i += 1
    if parts:
        out.append(Run(parts[0][0], parts[-1][1], tuple(parts)))
    return of_phrases(s, out)


def of_phrases(s: Sent, runs: list[Run]) -> list[Run]:
    """ "locality of reference", "separation of concerns": names with "of" inside.

    Only short phrases of unknown words join, and never after a container ("the idea
    of X" is about X) or before a determiner ("the size of the collection").
    """
    out: list[Run] = []
    for run in runs:
        prev = out[-1] if out else None
        if (
            prev is not None
            and run.lo == prev.hi + 1
            and s.toks[prev.hi].low == "of"
            and s.soft[prev.hi]
            and s.soft[run.lo]
            and prev.hi not in s.blocked
            and all(p[2] is None for p in (*prev.parts, *run.parts))
            and singular(s.toks[prev.hi - 1].low) not in CONTAINERS
            and (prev.hi - prev.lo) + (run.hi - run.lo) <= 4
        ):
            of = (prev.hi, prev.hi + 1, None)
            out[-1] = Run(prev.lo, run.hi, (*prev.parts, of, *run.parts))
        else:
            out.append(run)
    return out
