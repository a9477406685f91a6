"""Duplicate concepts: pairs of concepts that are probably one, for ``merge_concepts``.

Names are compared in blocks (``name_blocks``): a pair is proposed when two names are
equal once normalised, equal but for spaces, alike word by word (the words they do not
share are spellings of each other; rapidfuzz scores the aligned names), or when one is
an abbreviation of the other. Names that differ in a number or identifier ("GPT-3",
"GPT-4") are never proposed. Shared neighbours add a little confidence; two
well-connected concepts that share none lose a weak name match. The survivor is the
better-connected concept, and every proposal says why in words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .name_blocks import (
    WEAK_BAND,
    Name,
    abbreviation_pass,
    acronym_keys,
    exact_and_compact_pass,
    fuzzy_pass,
    identity_of,
)
from .text import clean_display, name_parts, split_abbreviation

__all__ = [
    "ConceptRecord",
    "DuplicateSearch",
    "MergeCandidate",
    "find_duplicates",
    "find_duplicates_with_stats",
    "search_duplicates",
]

NEIGHBOUR_BOOST = 6.0  # the most shared neighbours can add to a score
# Kinds of evidence, strongest first: used to break ties between equal scores.
KIND_RANK = {"exact": 0, "compact": 1, "fuzzy": 2, "abbreviation": 3, "order": 4}


@dataclass(frozen=True, slots=True)
class ConceptRecord:
    """A concept as the duplicate finder needs to know it.

    Names alone find the pairs; the counts and neighbours only weigh a pair once found,
    so a caller with many concepts may leave them out and hand them in later, for the
    few concepts that matched (``search_duplicates``'s ``details``).
    """

    id: int
    name: str
    aliases: tuple[str, ...] = ()  # other names (not including name)
    edge_count: int = 0  # active edges touching it
    source_count: int = 0  # sources that ground it
    neighbours: frozenset[int] = frozenset()  # concepts joined to it by an active edge


@dataclass(frozen=True)
class MergeCandidate:
    """Two concepts that look like one; the reviewer decides.

    ``matched`` is (the survivor's name, the loser's name) that matched. Neighbour names
    are the caller's to resolve, from ``shared_neighbours``.
    """

    survivor_id: int
    loser_id: int
    score: float  # 0..100
    reasons: tuple[str, ...]
    matched: tuple[str, str]
    shared_neighbours: tuple[int, ...]
    why_survivor: str


@dataclass
class _Match:
    score: float
    kind: str
    a: Name  # the name of the concept with the lower position
    b: Name


def _names_of(
    position: int, record: ConceptRecord
) -> tuple[list[Name], tuple[tuple[str, ...], frozenset[str]]]:
    """Every distinct normalised name of a concept (name, aliases, both halves of
    "X (Y)"), and the identity of its canonical name."""
    out: list[Name] = []
    seen: set[str] = set()
    canonical = identity_of("")
    for raw in (record.name, *record.aliases):
        display = clean_display(raw)
        long = split_abbreviation(display)[0]
        for part, key in name_parts(display):
            if key not in seen:
                seen.add(key)
                out.append(Name(position, key, part, identity_of(key)))
                if raw is record.name and part is long:
                    canonical = out[-1].identity
    return out, canonical


def find_duplicates(
    concepts: Sequence[ConceptRecord], *, threshold: float = 88.0, max_block: int = 400
) -> list[MergeCandidate]:
    """Pairs of concepts that are probably one, best first (see the module docstring)."""
    return search_duplicates(concepts, threshold=threshold, max_block=max_block).candidates


def find_duplicates_with_stats(
    concepts: Sequence[ConceptRecord], *, threshold: float = 88.0, max_block: int = 400
) -> tuple[list[MergeCandidate], dict[str, int]]:
    """``find_duplicates`` and what it cost (``DuplicateSearch.stats``)."""
    found = search_duplicates(concepts, threshold=threshold, max_block=max_block)
    return found.candidates, found.stats


@dataclass
class DuplicateSearch:
    """What ``search_duplicates`` found and what it cost.

    Stats: ``pairs_compared`` (name pairs looked at, over every block), ``blocks``
    (blocks with at least two members) and ``oversized_blocks_skipped`` (blocks larger
    than ``max_block``, left out because they would cost too much and say little).
    ``skipped`` names each skipped block: (its key, how many names it held), largest
    first. A key says how the block was made: ``exact:`` or ``compact:`` and the name,
    ``w:`` and the words its names share, ``p:``/``q:`` and the first letters with a
    length bucket, ``a:`` and an abbreviation's letters.
    """

    candidates: list[MergeCandidate]
    stats: dict[str, int]
    skipped: list[tuple[str, int]] = field(default_factory=list)


Details = Callable[[list[int]], Mapping[int, ConceptRecord]]


def search_duplicates(
    concepts: Sequence[ConceptRecord],
    *,
    threshold: float = 88.0,
    max_block: int = 400,
    details: Details | None = None,
) -> DuplicateSearch:
    """Pairs of concepts that are probably one (see the module docstring), with stats.

    ``details``, when given, is called once with the ids of the concepts that matched a
    name of another, and returns their full records (counts and neighbours), which then
    weigh the pairs in place of the records given: so the many concepts that match
    nothing need only their names.
    """
    records = list(concepts)
    best, stats, skipped = _name_matches(records, threshold, max_block)
    if details is not None and best:
        wanted = sorted({records[i].id for pair in best for i in pair})
        full = details(wanted)
        for position in {i for pair in best for i in pair}:
            records[position] = full.get(records[position].id, records[position])
    candidates = []
    for (i, j), match in best.items():
        candidate = _candidate(records[i], records[j], match, threshold)
        if candidate is not None:
            candidates.append(candidate)
    candidates.sort(key=lambda c: (-c.score, c.survivor_id, c.loser_id))
    skipped.sort(key=lambda s: (-s[1], s[0]))
    return DuplicateSearch(candidates, stats, skipped)


def _name_matches(
    records: list[ConceptRecord], threshold: float, max_block: int
) -> tuple[dict[tuple[int, int], _Match], dict[str, int], list[tuple[str, int]]]:
    """The best name match of each pair of concepts (by position), the blocks' stats and
    the blocks skipped."""
    names: list[Name] = []
    # A concept-level guard: two canonical names that both carry identifiers, different
    # ones, are two things even if an alias collides ("GPT-3" and "GPT-4" both aliased
    # "GPT").
    canonical_identity: list[tuple[tuple[str, ...], frozenset[str]]] = []
    for position, record in enumerate(records):
        own, identity = _names_of(position, record)
        names.extend(own)
        canonical_identity.append(identity)
    stats = {"pairs_compared": 0, "blocks": 0, "oversized_blocks_skipped": 0}
    skipped: list[tuple[str, int]] = []
    best: dict[tuple[int, int], _Match] = {}

    def offer(score: float, kind: str, x: Name, y: Name) -> None:
        if x.owner == y.owner:
            return
        if x.owner > y.owner:
            x, y = y, x
        ix, iy = canonical_identity[x.owner], canonical_identity[y.owner]
        if (ix[0] or ix[1]) and (iy[0] or iy[1]) and ix != iy:
            return
        pair = (x.owner, y.owner)
        current = best.get(pair)
        if (
            current is None
            or score > current.score
            or (score == current.score and KIND_RANK[kind] < KIND_RANK[current.kind])
        ):
            best[pair] = _Match(score, kind, x, y)

    exact_and_compact_pass(names, offer, stats, max_block, skipped)
    fuzzy_pass(names, offer, stats, max_block, threshold, skipped)
    abbreviation_pass(names, offer, stats, max_block, skipped)
    return best, stats, skipped


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _survivor(a: ConceptRecord, b: ConceptRecord) -> tuple[ConceptRecord, ConceptRecord, str]:
    """More active edges, then more sources, then more aliases, then the older (lower id)."""

    def rank(r: ConceptRecord) -> tuple[int, int, int, int]:
        return (-r.edge_count, -r.source_count, -len(r.aliases), r.id)

    keep, lose = (a, b) if rank(a) <= rank(b) else (b, a)
    kept = f'"{keep.name}" is kept'
    if (keep.edge_count, keep.source_count) != (lose.edge_count, lose.source_count):
        why = (
            f"{kept}: {_plural(keep.edge_count, 'edge')} and "
            f"{_plural(keep.source_count, 'source')} against "
            f"{lose.edge_count} and {lose.source_count}."
        )
    else:
        same = (
            f"both have {_plural(keep.edge_count, 'edge')} and "
            f"{_plural(keep.source_count, 'source')}"
        )
        if len(keep.aliases) != len(lose.aliases):
            why = (
                f"{kept}: {same}, and it has more other names "
                f"({len(keep.aliases)} against {len(lose.aliases)})."
            )
        else:
            why = f"{kept}: {same} and as many other names; it is the older concept."
    return keep, lose, why


def _candidate(
    a: ConceptRecord, b: ConceptRecord, match: _Match, threshold: float
) -> MergeCandidate | None:
    keep, lose, why = _survivor(a, b)
    first, second = (match.a, match.b) if keep is a else (match.b, match.a)
    na = a.neighbours - {b.id}
    nb = b.neighbours - {a.id}
    shared = na & nb
    union = na | nb
    if (
        match.kind in ("fuzzy", "order")
        and match.score < threshold + WEAK_BAND
        and not shared
        and len(na) >= 2
        and len(nb) >= 2
    ):
        # Two well-connected concepts that share no neighbour, on a weak name match, are
        # more likely two things with similar names than one thing named twice.
        return None
    if match.kind == "exact" and first.display.casefold() == second.display.casefold():
        reason = f'Both are named "{first.display}".'
    elif match.kind == "exact":
        reason = (
            "The names are the same once case, punctuation, plurals and articles are set "
            f'aside ("{first.display}" / "{second.display}").'
        )
    elif match.kind == "compact":
        reason = (
            f'The names differ only in spaces or hyphens ("{first.display}" / "{second.display}").'
        )
    elif match.kind == "fuzzy":
        reason = f'The names are {match.score:.0f}% alike ("{first.display}" / "{second.display}").'
    elif match.kind == "order":
        reason = (
            f'The names have the same words in another order ("{first.display}" / '
            f'"{second.display}").'
        )
    else:
        short, long = (match.a, match.b) if acronym_keys(match.a.display) else (match.b, match.a)
        reason = f'"{short.display}" abbreviates "{long.display}".'
    reasons = [reason]
    score = match.score
    if shared:
        jaccard = len(shared) / len(union)
        score = min(100.0, score + NEIGHBOUR_BOOST * jaccard)
        reasons.append(
            f"They share {_plural(len(shared), 'neighbour')} "
            f"({len(shared)} of the {len(union)} concepts either is joined to)."
        )
    elif na and nb:
        reasons.append("They share no neighbours.")
    return MergeCandidate(
        survivor_id=keep.id,
        loser_id=lose.id,
        score=round(score, 1),
        reasons=tuple(reasons),
        matched=(first.display, second.display),
        shared_neighbours=tuple(sorted(shared)),
        why_survivor=why,
    )
