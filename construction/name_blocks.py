"""Comparing concept names for the duplicate finder: normalised names, blocks, passes.

Every name and alias of every concept is normalised (``name_key``) and put in a few small
blocks; names are compared only inside a block, so 50,000 concepts cost a few million
comparisons instead of a billion. Three passes offer pairs to the caller: names equal once
normalised or but for spaces (``exact_and_compact_pass``), names alike word by word
(``fuzzy_pass``, gated by ``word_gate``), and a short name abbreviating a long one
(``abbreviation_pass``). Names that differ in a number or identifier ("GPT-3", "GPT-4")
never pair (``identity_of``).
"""

from __future__ import annotations

import re
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sized
from dataclasses import dataclass
from itertools import combinations

from rapidfuzz import fuzz, process

from .text import ROMAN, identifiers, looks_like_abbreviation

MIN_FUZZY_LENGTH = 5  # names of 4 characters or fewer are too short to fuzzy-match
EXACT_SCORE = 100.0
COMPACT_SCORE = 98.0
ABBREVIATION_SCORE = 92.0
WEAK_BAND = 4.0  # name-likeness scores below threshold + WEAK_BAND are "weak"
# How alike the words in which two names differ must be ("normalisation" /
# "normalization" 92, "embeding" / "embedding" 94) for a name match to count: a whole
# other word ("planner" / "ranker" 77, "training" / "ranking" 80) makes another concept.
WORD_SPELLING = 85.0
# The first pass may under-rate a pair by a few points (see ``fuzzy_pass``); the exact score
# decides.
PREFILTER_SLACK = 8.0
# Blocks of at most this many names are compared pair by pair, larger ones row by row.
SMALL_BLOCK = 8
# Words left out of initials ("Bag of Words" -> "BoW" but also "BW").
INITIAL_STOPWORDS = frozenset({"a", "an", "the", "of", "and", "for", "to", "in", "on", "with"})
_DIGITS = re.compile(r"\d+")
_NO_LETTERS: frozenset[str] = frozenset()
_NO_IDENTITY: tuple[tuple[str, ...], frozenset[str]] = ((), _NO_LETTERS)


@dataclass(frozen=True, slots=True)
class Name:
    """One normalised name of one concept (``owner`` is the concept's position)."""

    owner: int
    key: str
    display: str
    identity: tuple[tuple[str, ...], frozenset[str]]


# Called with (score, kind, name, other name) for every pair a pass finds.
Offer = Callable[[float, str, Name, Name], None]
# Where a pass notes each block it skipped as too large: (the block's key, its size).
Skipped = list[tuple[str, int]]


def identity_of(key: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """What must be equal for two names to be one concept: their numbers and identifiers.

    Built on ``text.identifiers``, but numbers are compared as digit runs, so "GPT-4" and
    "GPT4" agree (both say 4) while "GPT-3" and "GPT-4", "Llama 2" and "Llama 3", or
    "Layer 1" and "Layer 2" never do.
    """
    digits = tuple(_DIGITS.findall(key))
    if not digits and not any(len(t) == 1 or t in ROMAN for t in key.split()):
        return _NO_IDENTITY if not digits else (digits, _NO_LETTERS)  # the common cases
    letters = frozenset(t for t in identifiers(key) if not any(c.isdigit() for c in t))
    return digits, letters


def acronym_keys(display: str) -> set[str]:
    """Blocking keys of a short all-caps-ish name ("RAG", "TF-IDF", "LoRA", "kNN")."""
    if len(display.split()) != 1:
        return set()
    letters = [c for c in display if c.isalnum()]
    uppers = [c for c in letters if c.isupper()]
    if not 2 <= len(letters) <= 10 or len(uppers) < 2 or len(uppers) * 2 < len(letters):
        return set()
    found = {"".join(letters).lower()}
    found.add("".join(uppers).lower())
    return found


def initials(display: str, key: str) -> set[str]:
    """Initials of a multi-word name, with and without small words, hyphens split or not."""
    found: set[str] = set()
    for words in (key.split(), display.lower().split()):
        every: list[str] = []
        meaningful: list[str] = []
        for word in words:
            first = word[0] if word[0].isalnum() else next((c for c in word if c.isalnum()), "")
            if first:
                every.append(first)
                if word not in INITIAL_STOPWORDS:
                    meaningful.append(first)
        for firsts in (every, meaningful):
            if len(firsts) >= 2:
                found.add("".join(firsts))
    return found


def word_gate(a: str, b: str) -> tuple[str, float] | None:
    """How two alike names differ, word by word: ("spelling" | "order", score), or None.

    ``token_sort_ratio`` alone rates "Normalized planner search" and "Normalized ranker
    search" 90% alike, and on 50,000 synthetic names it paired 18,000 distinct concepts;
    it also sorts a misspelt word away from its original ("compresion" lands before
    "compressed"), which rates a plain typo 81%. So words are aligned first: the words
    both names have, then the ones each has alone, in name order. The words a name has
    alone must be a spelling of the other's (same first letter, 85% alike joined, which
    also covers "multi head" / "multihead"), and the score is the ratio of the aligned
    names. A name that is the other plus a word ("Causal sampler" / "Dense causal
    sampler") is another concept, as is one with a whole other word ("encoder" /
    "decoder", "supervised" / "unsupervised").
    """
    shared: list[str] = []
    only_a: list[str] = []
    only_b = b.split()
    for word in a.split():
        if word in only_b:
            only_b.remove(word)
            shared.append(word)
        else:
            only_a.append(word)
    if not only_a and not only_b:
        return "order", 100.0
    if not only_a or not only_b:
        return None
    joined_a, joined_b = "".join(only_a), "".join(only_b)
    if joined_a[0] != joined_b[0] or fuzz.ratio(joined_a, joined_b) < WORD_SPELLING:
        return None
    shared.sort()
    score = fuzz.ratio(" ".join(shared + only_a), " ".join(shared + only_b))
    return "spelling", round(float(score), 1)


def pairs_in(members: Sized) -> int:
    return len(members) * (len(members) - 1) // 2


def _named(kind: str, block: Callable[[], str]) -> Callable[[], str]:
    return lambda: f"{kind}:{block()}"


def _counted(
    members: Sized,
    stats: dict[str, int],
    max_block: int,
    key: str | Callable[[], str] = "",
    skipped: Skipped | None = None,
) -> bool:
    """Whether a block's members are to be compared, counted in ``stats`` either way:
    a block of one is no block, one over ``max_block`` is skipped (and noted in
    ``skipped``, when given, with its ``key``)."""
    if len(members) < 2:
        return False
    stats["blocks"] += 1
    if len(members) > max_block:
        stats["oversized_blocks_skipped"] += 1
        if skipped is not None:
            skipped.append((key() if callable(key) else key, len(members)))
        return False
    stats["pairs_compared"] += pairs_in(members)
    return True


def shared_blocks(
    keys_of: Callable[[int], Iterable[str]], count: int
) -> Iterator[tuple[Callable[[], str], list[int]]]:
    """Each block two or more of members ``0 .. count - 1`` share: its members in order,
    and how to name its key (asked only of a block skipped; ``keys_of(i)`` names the
    blocks member ``i`` joins).

    Most keys name one member alone (a name's own words), and a dict of millions of
    one-member lists costs hundreds of megabytes; so each (key, member) is one machine
    integer, the key's hash above the member's number, sorted a quarter at a time. Two
    keys whose hashes agree there share a block: a few more names compared, never fewer.
    """
    bits = max(1, count.bit_length())
    low = (1 << bits) - 1
    high = (1 << (64 - bits)) - 1
    packed = array("Q")
    for i in range(count):
        for key in keys_of(i):
            packed.append((hash(key) & high) << bits | i)

    def namer(head: int, member: int) -> Callable[[], str]:
        return lambda: next((k for k in keys_of(member) if hash(k) & high == head), "")

    for part in range(4):
        ordered = sorted(v for v in packed if v >> 62 == part)
        heads = [v >> bits for v in ordered]
        # Where a run of one head goes on: few places, as most keys name one member.
        joins = [i for i in range(1, len(heads)) if heads[i] == heads[i - 1]]
        run: list[int] = []
        last = -2
        for j in joins:
            if j != last + 1:
                if len(run) > 1:
                    yield namer(heads[last], run[0]), run
                run = [ordered[j - 1] & low]
            member = ordered[j] & low
            if member != run[-1]:
                run.append(member)
            last = j
        if len(run) > 1:
            yield namer(heads[last], run[0]), run


def exact_and_compact_pass(
    names: list[Name],
    offer: Offer,
    stats: dict[str, int],
    max_block: int,
    skipped: Skipped | None = None,
) -> None:
    """Names equal once normalised (100), or equal but for spaces and hyphens (98)."""

    def compact_of(i: int) -> list[str]:
        compact = names[i].key.replace(" ", "")
        return [compact] if len(compact) >= MIN_FUZZY_LENGTH else []

    for keys_of, score, kind in (
        (lambda i: [names[i].key], EXACT_SCORE, "exact"),
        (compact_of, COMPACT_SCORE, "compact"),
    ):
        for block, positions in shared_blocks(keys_of, len(names)):
            members = [names[i] for i in positions]
            if not _counted(members, stats, max_block, _named(kind, block), skipped):
                continue
            for x, y in combinations(members, 2):
                if x.owner != y.owner and x.identity == y.identity:
                    offer(score, kind, x, y)


def fuzzy_block_keys(key: str) -> set[str]:
    """Blocks a name joins for fuzzy comparison.

    - its sorted words, and every "all words but one" subset of them: a name that gains,
      loses or misspells one word still shares a block with the original;
    - the first four letters of the name without spaces, with its length in buckets of
      four on two grids offset by two (so lengths within two always share one): catches
      joined or split words ("Fine tuning" / "Finetuning") and typos in short names.
    """
    words = sorted(key.split())
    blocks = {"w:" + " ".join(words)}
    if len(words) >= 2:
        for skip in range(len(words)):
            rest = words[:skip] + words[skip + 1 :]
            blocks.add("w:" + " ".join(rest))
    compact = key.replace(" ", "")
    head, size = compact[:4], len(compact)
    blocks.add(f"p:{head}:{size // 4}")
    blocks.add(f"q:{head}:{(size + 2) // 4}")
    return blocks


def fuzzy_pass(
    names: list[Name],
    offer: Offer,
    stats: dict[str, int],
    max_block: int,
    threshold: float,
    skipped: Skipped | None = None,
) -> None:
    """Names alike word by word (see ``word_gate``), compared only inside blocks."""
    usable = [n for n in names if len(n.key) >= MIN_FUZZY_LENGTH]
    # A cheap first pass in C on a canonical form, then ``word_gate`` in Python on the
    # few pairs that pass. The form sorts words by their first two letters only, keeping
    # name order among ties, so a misspelt word stays where it was ("compressed
    # compression" / "compressed compresion") while reordered words line up.
    forms = [" ".join(sorted(n.key.split(), key=lambda w: w[:2])) for n in usable]
    cutoff = threshold - PREFILTER_SLACK
    # The pairs that passed, for the blocks they meet in again; a pair that failed is
    # gated again when it meets (under a tenth of them do, and a million failed pairs
    # would hold hundreds of megabytes).
    gated: dict[tuple[str, str], tuple[str, float]] = {}
    for block, members in shared_blocks(lambda i: fuzzy_block_keys(usable[i].key), len(usable)):
        if not _counted(members, stats, max_block, block, skipped):
            continue
        for row, col in _alike([forms[m] for m in members], cutoff):
            x, y = usable[members[row]], usable[members[col]]
            if x.owner == y.owner or x.key == y.key or x.identity != y.identity:
                continue
            gate = gated.get((x.key, y.key)) or word_gate(x.key, y.key)
            if gate is None:
                continue
            gated[x.key, y.key] = gate
            how, score = gate
            if how == "order":
                # Word order often changes the meaning of a compound ("house dog",
                # "dog house"): a weak match, left to the neighbours and the reviewer.
                offer(min(100.0, threshold + WEAK_BAND / 2), "order", x, y)
            elif score >= threshold:
                offer(score, "fuzzy", x, y)


def _alike(choices: list[str], cutoff: float) -> Iterator[tuple[int, int]]:
    """The pairs (i, j), i < j, of ``choices`` that ``fuzz.ratio`` rates ``cutoff`` or
    more: pair by pair in a small block, a row at a time in a larger one (most blocks
    hold a few names, where a call per row costs more than the comparisons)."""
    if len(choices) <= SMALL_BLOCK:
        for i in range(len(choices) - 1):
            first = choices[i]
            for j in range(i + 1, len(choices)):
                if fuzz.ratio(first, choices[j], score_cutoff=cutoff):
                    yield i, j
        return
    for i in range(len(choices) - 1):
        for _, _, col in process.extract(
            choices[i],
            choices[i + 1 :],
            scorer=fuzz.ratio,
            processor=None,
            score_cutoff=cutoff,
            limit=None,
        ):
            yield i, i + 1 + col


def abbreviation_pass(
    names: list[Name],
    offer: Offer,
    stats: dict[str, int],
    max_block: int,
    skipped: Skipped | None = None,
) -> None:
    """A short all-caps-ish name of one concept abbreviating a multi-word name of another.

    An abbreviation its own concept already expands ("LR" of "Learning rate") is left
    out: that it also fits another concept ("Logistic regression") is a collision of
    acronyms, not a sign of one concept.
    """
    shorts = _abbreviations_by_block(names)
    if not shorts:
        return
    longs = _expansions_by_block(names, shorts)
    budget = pairs_in(list(range(max_block)))
    for block, short_names in shorts.items():
        long_names = longs.get(block)
        if long_names and _counted_cross(
            len(short_names) * len(long_names),
            stats,
            budget,
            f"a:{block}",
            skipped,
            len(short_names) + len(long_names),
        ):
            _offer_abbreviations(short_names, long_names, offer)


def _abbreviations_by_block(names: list[Name]) -> dict[str, list[Name]]:
    """Abbreviation-like names under their acronym keys, less those their own concept
    already expands."""
    shorts: dict[str, list[Name]] = defaultdict(list)
    candidates = [n for n in names if acronym_keys(n.display)]
    owners = {n.owner for n in candidates}
    own_longs: dict[int, list[Name]] = defaultdict(list)
    for n in names:
        if n.owner in owners and " " in n.key:
            own_longs[n.owner].append(n)
    for n in candidates:
        if any(looks_like_abbreviation(n.display, m.display) for m in own_longs[n.owner]):
            continue
        for block in acronym_keys(n.display):
            shorts[block].append(n)
    return shorts


def _expansions_by_block(names: list[Name], shorts: dict[str, list[Name]]) -> dict[str, list[Name]]:
    """Multi-word names under each of their initials that some abbreviation has."""
    longs: dict[str, list[Name]] = defaultdict(list)
    for n in names:
        if " " in n.key:
            for block in initials(n.display, n.key):
                if block in shorts:
                    longs[block].append(n)
    return longs


def _counted_cross(
    cost: int,
    stats: dict[str, int],
    budget: int,
    key: str = "",
    skipped: Skipped | None = None,
    size: int = 0,
) -> bool:
    """Whether a block of two sides costing ``cost`` pairs is to be compared, counted in
    ``stats`` either way (as ``_counted`` does for a block of one side)."""
    stats["blocks"] += 1
    if cost > budget:
        stats["oversized_blocks_skipped"] += 1
        if skipped is not None:
            skipped.append((key, size))
        return False
    stats["pairs_compared"] += cost
    return True


def _offer_abbreviations(short_names: list[Name], long_names: list[Name], offer: Offer) -> None:
    """Each short name with each long name of another concept that it abbreviates."""
    for s in short_names:
        for n in long_names:
            # Numbers must still agree ("GPT-4" is not "Generative pre-trained
            # transformer 3"); single letters are the acronym's own letters here.
            if (
                s.owner != n.owner
                and s.identity[0] == n.identity[0]
                and looks_like_abbreviation(s.display, n.display)
            ):
                offer(ABBREVIATION_SCORE, "abbreviation", s, n)
