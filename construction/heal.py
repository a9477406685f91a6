"""The self-healing agent's pure logic: duplicate concepts and cycles in acyclic relations.

Duplicates: every name and alias of every concept is normalised (``name_key``) and put
in a few small blocks; names are compared only inside a block, so 50,000 concepts cost
a few million comparisons instead of a billion. A pair is proposed when two names are
equal once normalised, equal but for spaces, alike word by word (the words they do not
share are spellings of each other; rapidfuzz scores the aligned names), or when one is
an abbreviation of the other. Names that differ in a number or identifier ("GPT-3",
"GPT-4") are never proposed. Shared neighbours add a little confidence; two
well-connected concepts that share none lose a weak name match.

Cycles: strongly connected components per acyclic relation (iterative Tarjan, so deep
graphs do not overflow the stack), then inside each component, node by node: find a
short cycle through the node (bidirectional breadth-first search), report it, drop its
weakest edge, and again until the node lies on no cycle; the side the last search went
through to the end is closed, so it is split off and searched on its own. The weakest
edges reported break every cycle the graph had.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from rapidfuzz import fuzz, process

from .text import (
    ROMAN,
    clean_display,
    identifiers,
    looks_like_abbreviation,
    name_parts,
    split_abbreviation,
)

__all__ = [
    "ConceptRecord",
    "CycleFinding",
    "EdgeRecord",
    "MergeCandidate",
    "find_cycles",
    "find_duplicates",
    "find_duplicates_with_stats",
]

MIN_FUZZY_LENGTH = 5  # names of 4 characters or fewer are too short to fuzzy-match
EXACT_SCORE = 100.0
COMPACT_SCORE = 98.0
ABBREVIATION_SCORE = 92.0
NEIGHBOUR_BOOST = 6.0  # the most shared neighbours can add to a score
WEAK_BAND = 4.0  # name-likeness scores below threshold + WEAK_BAND are "weak"
# Kinds of evidence, strongest first: used to break ties between equal scores.
KIND_RANK = {"exact": 0, "compact": 1, "fuzzy": 2, "abbreviation": 3, "order": 4}
# How alike the words in which two names differ must be ("normalisation" /
# "normalization" 92, "embeding" / "embedding" 94) for a name match to count: a whole
# other word ("planner" / "ranker" 77, "training" / "ranking" 80) makes another concept.
WORD_SPELLING = 85.0
# The first pass may under-rate a pair by a few points (see ``_fuzzy``); the exact score
# decides.
PREFILTER_SLACK = 8.0
# Words left out of initials ("Bag of Words" -> "BoW" but also "BW").
INITIAL_STOPWORDS = frozenset({"a", "an", "the", "of", "and", "for", "to", "in", "on", "with"})
_DIGITS = re.compile(r"\d+")
_NO_LETTERS: frozenset[str] = frozenset()


# --- Duplicates -------------------------------------------------------------------------


@dataclass(frozen=True)
class ConceptRecord:
    """A concept as the duplicate finder needs to know it."""

    id: int
    name: str
    aliases: tuple[str, ...]  # other names (not including name)
    edge_count: int  # active edges touching it
    source_count: int  # sources that ground it
    neighbours: frozenset[int]  # ids of concepts joined to it by an active edge


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


@dataclass(frozen=True)
class _Name:
    """One normalised name of one concept (``owner`` is the concept's position)."""

    owner: int
    key: str
    display: str
    identity: tuple[tuple[str, ...], frozenset[str]]


@dataclass
class _Match:
    score: float
    kind: str
    a: _Name  # the name of the concept with the lower position
    b: _Name


def _identity(key: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """What must be equal for two names to be one concept: their numbers and identifiers.

    Built on ``text.identifiers``, but numbers are compared as digit runs, so "GPT-4" and
    "GPT4" agree (both say 4) while "GPT-3" and "GPT-4", "Llama 2" and "Llama 3", or
    "Layer 1" and "Layer 2" never do.
    """
    digits = tuple(_DIGITS.findall(key))
    if not digits and not any(len(t) == 1 or t in ROMAN for t in key.split()):
        return digits, _NO_LETTERS  # the common case, without the general path below
    letters = frozenset(t for t in identifiers(key) if not any(c.isdigit() for c in t))
    return digits, letters


def _acronym_keys(display: str) -> set[str]:
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


def _initials(display: str, key: str) -> set[str]:
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


def _names_of(
    position: int, record: ConceptRecord
) -> tuple[list[_Name], tuple[tuple[str, ...], frozenset[str]]]:
    """Every distinct normalised name of a concept (name, aliases, both halves of
    "X (Y)"), and the identity of its canonical name."""
    out: list[_Name] = []
    seen: set[str] = set()
    canonical = _identity("")
    for raw in (record.name, *record.aliases):
        display = clean_display(raw)
        long = split_abbreviation(display)[0]
        for part, key in name_parts(display):
            if key not in seen:
                seen.add(key)
                out.append(_Name(position, key, part, _identity(key)))
                if raw is record.name and part is long:
                    canonical = out[-1].identity
    return out, canonical


def _word_gate(a: str, b: str) -> tuple[str, float] | None:
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


def _pairs_in(members: list[int]) -> int:
    return len(members) * (len(members) - 1) // 2


def find_duplicates(
    concepts: Sequence[ConceptRecord], *, threshold: float = 88.0, max_block: int = 400
) -> list[MergeCandidate]:
    """Pairs of concepts that are probably one, best first (see the module docstring)."""
    return find_duplicates_with_stats(concepts, threshold=threshold, max_block=max_block)[0]


def find_duplicates_with_stats(
    concepts: Sequence[ConceptRecord], *, threshold: float = 88.0, max_block: int = 400
) -> tuple[list[MergeCandidate], dict[str, int]]:
    """``find_duplicates`` and what it cost.

    Stats: ``pairs_compared`` (name pairs looked at, over every block), ``blocks``
    (blocks with at least two members) and ``oversized_blocks_skipped`` (blocks larger
    than ``max_block``, left out because they would cost too much and say little).
    """
    records = list(concepts)
    names: list[_Name] = []
    # A concept-level guard: two canonical names that both carry identifiers, different
    # ones, are two things even if an alias collides ("GPT-3" and "GPT-4" both aliased
    # "GPT").
    canonical_identity: list[tuple[tuple[str, ...], frozenset[str]]] = []
    for position, record in enumerate(records):
        own, identity = _names_of(position, record)
        names.extend(own)
        canonical_identity.append(identity)
    stats = {"pairs_compared": 0, "blocks": 0, "oversized_blocks_skipped": 0}
    best: dict[tuple[int, int], _Match] = {}

    def offer(score: float, kind: str, x: _Name, y: _Name) -> None:
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

    _exact_and_compact(names, offer, stats, max_block)
    _fuzzy(names, offer, stats, max_block, threshold)
    _abbreviations(names, offer, stats, max_block)

    candidates = []
    for (i, j), match in best.items():
        candidate = _candidate(records[i], records[j], match, threshold)
        if candidate is not None:
            candidates.append(candidate)
    candidates.sort(key=lambda c: (-c.score, c.survivor_id, c.loser_id))
    return candidates, stats


def _exact_and_compact(names: list[_Name], offer, stats: dict[str, int], max_block: int) -> None:
    """Names equal once normalised (100), or equal but for spaces and hyphens (98)."""
    by_key: dict[str, list[_Name]] = defaultdict(list)
    by_compact: dict[str, list[_Name]] = defaultdict(list)
    for n in names:
        by_key[n.key].append(n)
        compact = n.key.replace(" ", "")
        if len(compact) >= MIN_FUZZY_LENGTH:
            by_compact[compact].append(n)
    for group, score, kind in (
        (by_key, EXACT_SCORE, "exact"),
        (by_compact, COMPACT_SCORE, "compact"),
    ):
        for members in group.values():
            if len(members) < 2:
                continue
            stats["blocks"] += 1
            if len(members) > max_block:
                stats["oversized_blocks_skipped"] += 1
                continue
            stats["pairs_compared"] += _pairs_in(members)
            for x, y in combinations(members, 2):
                if x.owner != y.owner and x.identity == y.identity:
                    offer(score, kind, x, y)


def _fuzzy_block_keys(key: str) -> set[str]:
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


def _fuzzy(
    names: list[_Name], offer, stats: dict[str, int], max_block: int, threshold: float
) -> None:
    """Names alike word by word (see ``_word_gate``), compared only inside blocks."""
    usable = [n for n in names if len(n.key) >= MIN_FUZZY_LENGTH]
    # A cheap first pass in C on a canonical form, then ``_word_gate`` in Python on the
    # few pairs that pass. The form sorts words by their first two letters only, keeping
    # name order among ties, so a misspelt word stays where it was ("compressed
    # compression" / "compressed compresion") while reordered words line up.
    forms = [" ".join(sorted(n.key.split(), key=lambda w: w[:2])) for n in usable]
    cutoff = threshold - PREFILTER_SLACK
    gated: dict[tuple[str, str], tuple[str, float] | None] = {}
    blocks: dict[str, list[int]] = defaultdict(list)
    for index, n in enumerate(usable):
        for block in _fuzzy_block_keys(n.key):
            blocks[block].append(index)
    for members in blocks.values():
        if len(members) < 2:
            continue
        stats["blocks"] += 1
        if len(members) > max_block:
            stats["oversized_blocks_skipped"] += 1
            continue
        stats["pairs_compared"] += _pairs_in(members)
        choices = [forms[m] for m in members]
        for row in range(len(members) - 1):
            x = usable[members[row]]
            for _, _, col in process.extract(
                choices[row],
                choices[row + 1 :],
                scorer=fuzz.ratio,
                processor=None,
                score_cutoff=cutoff,
                limit=None,
            ):
                y = usable[members[row + 1 + col]]
                if x.owner == y.owner or x.key == y.key or x.identity != y.identity:
                    continue
                if (x.key, y.key) in gated:  # the same two names meet in several blocks
                    gate = gated[x.key, y.key]
                else:
                    gate = gated[x.key, y.key] = _word_gate(x.key, y.key)
                if gate is None:
                    continue
                how, score = gate
                if how == "order":
                    # Word order often changes the meaning of a compound ("house dog",
                    # "dog house"): a weak match, left to the neighbours and the reviewer.
                    offer(min(100.0, threshold + WEAK_BAND / 2), "order", x, y)
                elif score >= threshold:
                    offer(score, "fuzzy", x, y)


def _abbreviations(names: list[_Name], offer, stats: dict[str, int], max_block: int) -> None:
    """A short all-caps-ish name of one concept abbreviating a multi-word name of another.

    An abbreviation its own concept already expands ("LR" of "Learning rate") is left
    out: that it also fits another concept ("Logistic regression") is a collision of
    acronyms, not a sign of one concept.
    """
    shorts: dict[str, list[_Name]] = defaultdict(list)
    longs: dict[str, list[_Name]] = defaultdict(list)
    own_longs: dict[int, list[_Name]] = defaultdict(list)
    candidates = [n for n in names if _acronym_keys(n.display)]
    if not candidates:
        return
    owners = {n.owner for n in candidates}
    for n in names:
        if n.owner in owners and " " in n.key:
            own_longs[n.owner].append(n)
    for n in candidates:
        if any(looks_like_abbreviation(n.display, m.display) for m in own_longs[n.owner]):
            continue
        for block in _acronym_keys(n.display):
            shorts[block].append(n)
    if not shorts:
        return
    for n in names:
        if " " in n.key:
            for block in _initials(n.display, n.key):
                if block in shorts:
                    longs[block].append(n)
    budget = _pairs_in(list(range(max_block)))
    for block, short_names in shorts.items():
        long_names = longs.get(block)
        if not long_names:
            continue
        stats["blocks"] += 1
        cost = len(short_names) * len(long_names)
        if cost > budget:
            stats["oversized_blocks_skipped"] += 1
            continue
        stats["pairs_compared"] += cost
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
        short, long = (match.a, match.b) if _acronym_keys(match.a.display) else (match.b, match.a)
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


# --- Cycles -----------------------------------------------------------------------------


@dataclass(frozen=True)
class EdgeRecord:
    """An active edge as the cycle finder needs to know it."""

    id: int
    source_id: int
    target_id: int
    relation: str
    confidence: float


@dataclass(frozen=True)
class CycleFinding:
    """One simple cycle: ``edge_ids[0]`` goes a->b, the next b->c, the last returns to a.

    The cycle starts at its lowest edge id, so the same cycle always reads the same.
    """

    relation: str
    edge_ids: tuple[int, ...]
    weakest_edge_id: int  # lowest confidence; ties: the highest id (newest)


class _Graph:
    """One relation's edges as arrays, with edges switched off as cycles are broken."""

    def __init__(self, edges: list[EdgeRecord]) -> None:
        ids = sorted({e.source_id for e in edges} | {e.target_id for e in edges})
        self.node_ids = ids
        position = {node: i for i, node in enumerate(ids)}
        edges = sorted(edges, key=lambda e: e.id)
        self.edges = edges
        self.src = [position[e.source_id] for e in edges]
        self.dst = [position[e.target_id] for e in edges]
        self.alive = bytearray([1]) * len(edges)
        self.out: list[list[int]] = [[] for _ in ids]
        for index, source in enumerate(self.src):
            self.out[source].append(index)
        # Which component a node belongs to now; only nodes of one label are walked.
        self.label = [0] * len(ids)
        self._index = [-1] * len(ids)
        self._low = [0] * len(ids)
        self._on_stack = bytearray(len(ids))
        self.inc: list[list[int]] = [[] for _ in ids]
        for index, target in enumerate(self.dst):
            self.inc[target].append(index)
        self._fseen = [0] * len(ids)
        self._bseen = [0] * len(ids)
        self._fparent = [-1] * len(ids)
        self._bparent = [-1] * len(ids)
        self._stamp = 0

    def components(self, nodes: list[int], label: int) -> list[list[int]]:
        """Strongly connected components of size >= 2 among ``nodes`` (iterative Tarjan)."""
        index, low, on_stack = self._index, self._low, self._on_stack
        out, dst, alive, labels = self.out, self.dst, self.alive, self.label
        for v in nodes:
            index[v] = -1
        counter = 0
        stack: list[int] = []
        found: list[list[int]] = []
        for root in nodes:
            if index[root] != -1:
                continue
            index[root] = low[root] = counter
            counter += 1
            stack.append(root)
            on_stack[root] = 1
            work = [(root, iter(out[root]))]
            while work:
                v, edges = work[-1]
                descended = False
                for e in edges:
                    if not alive[e]:
                        continue
                    w = dst[e]
                    if labels[w] != label:
                        continue
                    if index[w] == -1:
                        index[w] = low[w] = counter
                        counter += 1
                        stack.append(w)
                        on_stack[w] = 1
                        work.append((w, iter(out[w])))
                        descended = True
                        break
                    if on_stack[w] and index[w] < low[v]:
                        low[v] = index[w]
                if descended:
                    continue
                work.pop()
                if work:
                    u = work[-1][0]
                    if low[v] < low[u]:
                        low[u] = low[v]
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack[w] = 0
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(component)
        return found

    def cycle_through(self, start: int, label: int) -> tuple[list[int] | None, list[int]]:
        """A short cycle through ``start`` inside ``label``, as edge positions in order.

        Bidirectional breadth-first search: out-edges forward from ``start``, in-edges
        backward to it, the cheaper side first, which looks at about the square root of
        what a one-sided search would in a dense component. The first meeting is kept,
        so the cycle is a shortest one or one edge longer; it is simple, as the two trees
        share no node but ``start``.

        Without a cycle, also returns the side searched to the end: every node reachable
        from ``start`` (or every node reaching it). That set is closed in its direction,
        so any cycle touching it lies inside it.
        """
        self._stamp += 1
        stamp = self._stamp
        fseen, bseen, fparent, bparent = self._fseen, self._bseen, self._fparent, self._bparent
        out, inc, src, dst = self.out, self.inc, self.src, self.dst
        alive, labels = self.alive, self.label
        fseen[start] = bseen[start] = stamp
        forward, backward = [start], [start]
        reached: list[int] = []
        behind: list[int] = []
        # A meeting is an edge tail -> head with tail in the forward tree and head in the
        # backward one; it is found when a node would join the second tree.
        tail = head = bridge = -1
        while forward and backward and bridge < 0:
            following = []
            # The smaller frontier goes next; on a tie, the side that has cost less so far,
            # so a search along a chain stops at its shorter end.
            nf, nb = len(forward), len(backward)
            if nf < nb or (nf == nb and len(reached) <= len(behind)):
                for v in forward:
                    for e in out[v]:
                        w = dst[e]
                        if not alive[e] or labels[w] != label:
                            continue
                        if bseen[w] == stamp:
                            tail, head, bridge = v, w, e
                            break
                        if fseen[w] != stamp:
                            fseen[w] = stamp
                            fparent[w] = e
                            following.append(w)
                    if bridge >= 0:
                        break
                forward = following
                reached += following
            else:
                for v in backward:
                    for e in inc[v]:
                        w = src[e]
                        if not alive[e] or labels[w] != label:
                            continue
                        if fseen[w] == stamp:
                            tail, head, bridge = w, v, e
                            break
                        if bseen[w] != stamp:
                            bseen[w] = stamp
                            bparent[w] = e
                            following.append(w)
                    if bridge >= 0:
                        break
                backward = following
                behind += following
        if bridge < 0:
            return None, (reached if not forward else behind)
        edges: list[int] = []
        node = tail
        while node != start:
            e = fparent[node]
            edges.append(e)
            node = src[e]
        edges.reverse()
        edges.append(bridge)
        node = head
        while node != start:
            e = bparent[node]
            edges.append(e)
            node = dst[e]
        return edges, []


def _finding(relation: str, cycle: list[EdgeRecord]) -> CycleFinding:
    lowest = min(range(len(cycle)), key=lambda i: cycle[i].id)
    ordered = cycle[lowest:] + cycle[:lowest]
    weakest = min(cycle, key=lambda e: (e.confidence, -e.id))
    return CycleFinding(relation, tuple(e.id for e in ordered), weakest.id)


def find_cycles(edges: Sequence[EdgeRecord], *, acyclic: Iterable[str]) -> list[CycleFinding]:
    """Cycles in the acyclic relations, each with the edge whose removal breaks it.

    Only relations named in ``acyclic`` are looked at. Self-loops are cycles of length
    one. Each reported cycle is one simple cycle of the graph as it stands after the
    weakest edges of the earlier findings are removed, so the reported weakest edges
    together break every cycle. Ordered by relation, then by edge ids.
    """
    wanted = set(acyclic)
    by_relation: dict[str, list[EdgeRecord]] = defaultdict(list)
    for e in edges:
        if e.relation in wanted:
            by_relation[e.relation].append(e)
    findings: list[CycleFinding] = []
    for relation in sorted(by_relation):
        findings.extend(_relation_cycles(relation, by_relation[relation]))
    findings.sort(key=lambda f: (f.relation, f.edge_ids))
    return findings


def _relation_cycles(relation: str, edges: list[EdgeRecord]) -> list[CycleFinding]:
    graph = _Graph(edges)
    found: list[CycleFinding] = []
    for index, e in enumerate(graph.edges):
        if e.source_id == e.target_id:
            found.append(CycleFinding(relation, (e.id,), e.id))
            graph.alive[index] = 0
    # Labels partition the nodes so that every cycle lies inside one label: first the
    # strongly connected components, then the pieces they fall into as edges go.
    next_label = 1
    work: list[tuple[int, list[int]]] = []
    for component in graph.components(list(range(len(graph.node_ids))), 0):
        for v in component:
            graph.label[v] = next_label
        work.append((next_label, sorted(component)))
        next_label += 1
    while work:
        label, nodes = work.pop()
        for start in nodes:
            if graph.label[start] != label:
                continue
            while True:
                cycle, closed = graph.cycle_through(start, label)
                if cycle is None:
                    break
                found.append(_finding(relation, [graph.edges[i] for i in cycle]))
                weakest = min(cycle, key=lambda i: (graph.edges[i].confidence, -graph.edges[i].id))
                graph.alive[weakest] = 0
            # ``start`` lies on no cycle any more. The side searched to the end is closed
            # (nothing in it leads out of it, or nothing outside leads into it), so its
            # cycles are its own: it becomes a label of its own, checked on its own.
            graph.label[start] = -1
            if closed:
                for v in closed:
                    graph.label[v] = next_label
                work.append((next_label, sorted(closed)))
                next_label += 1
    return found
