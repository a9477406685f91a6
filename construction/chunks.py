"""Splitting a long document into chunks an extractor can read in one go.

A lesson is read whole; a handbook or a 200-page PDF is read chunk by chunk. Three
wishes shape the splitting:

* Meaning. A section that fits the bound is one chunk, so its heading, its claims and
  its evidence are read together. A section that does not fit is split into its preamble
  and its subsections, recursively; text without headings is split at paragraphs, then
  sentences, and only an over-long sentence is cut at whitespace (and only an over-long
  "word" at characters).
* Stability. Re-reading a document after a small edit should not re-read (and re-draft
  proposals for) the whole document. Greedy packing would shift every later boundary, so
  inside a long stretch a cut also falls after a unit (paragraph, sentence, tiny section)
  whose content hash is 0 mod ``ANCHOR_EVERY`` once the chunk is ``MIN_FILL`` full: the
  boundaries depend on the content near them, not on where the stretch began, and after
  an edit they fall back into step within a chunk or two.
* Context. A chunk that continues the section of the chunk before starts with that
  chunk's last sentence or two (the overlap), so a claim whose subject was named just
  before the cut can still be quoted. The overlap counts towards the bound.

Offsets always index the original text; ``chunk.text == text[chunk.start:chunk.end]``.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from array import array
from collections import deque
from collections.abc import Sequence
from itertools import accumulate
from dataclasses import dataclass, field

from .text import _blocks, sentences
from .types import Section

RADIUS = 0.4  # share of the bound: a cut's hash beats every unit this near it
TINY = 1 / 8  # sibling sections under this share of the bound are packed together
MAX_OVERLAP_SHARE = 0.25  # the overlap never takes more than this share of the bound
OVERLAP_SENTENCES = 2
MIN_TOKENS = 8

_WORD = re.compile(r"\S+")
_SENTENCES, _LINES, _WORDS, _CHARS = 1, 2, 3, 4


@dataclass(frozen=True)
class Chunk:
    """A stretch of the document text, as one extractor call reads it.

    ``start`` is where the text begins (overlap included), ``body_start`` where the
    chunk's own text begins: the bodies of consecutive chunks tile the document.
    ``section`` is the heading path at ``body_start`` (() outside every section).
    """

    index: int
    start: int
    body_start: int
    end: int
    section: tuple[str, ...]
    text: str
    tokens: int


def estimate_tokens(text: str) -> int:
    """A cheap upper estimate of the tokens a model sees: max(chars / 4, words * 4 / 3).

    English prose runs about 1.3 tokens a word and 4 characters a token; code, numbers
    and long identifiers have more characters a word, so the character rule dominates
    there. Taking the larger of the two keeps the bound honest for both.
    """
    if not text:
        return 0
    return max(-(-len(text) // 4), -(-len(text.split()) * 4 // 3))


@dataclass
class _Node:
    path: tuple[str, ...]
    start: int
    end: int
    children: list[_Node] = field(default_factory=list)


@dataclass
class _Unit:
    """Something the packer places whole: a section, a paragraph, a sentence, a word."""

    start: int
    end: int
    path: tuple[str, ...]
    stretch: int  # units of one heading-free stretch share it; overlap stays inside one
    heading: bool  # begins at a heading: a chunk starting here carries no overlap
    tiny: bool = False


def _tree(sections: Sequence[Section], length: int) -> _Node:
    """Nest the sections by their ranges; clamp what overlaps so every offset has one home."""
    root = _Node((), 0, length)
    valid = sorted(
        (s for s in sections if 0 <= s.start < min(s.end, length)),
        key=lambda s: (s.start, s.level, -s.end),
    )
    stack = [root]
    for section in valid:
        while len(stack) > 1 and section.start >= stack[-1].end:
            stack.pop()
        parent = stack[-1]
        node = _Node(tuple(section.path), section.start, min(section.end, parent.end, length))
        parent.children.append(node)
        stack.append(node)
    return root


class _Chunker:
    """One document's text, indexed once (words, paragraphs, sentences) for bisecting."""

    def __init__(self, text: str, max_tokens: int, overlap_tokens: int) -> None:
        self.text = text
        self.max = max_tokens
        self.overlap = max(0, min(overlap_tokens, int(max_tokens * MAX_OVERLAP_SHARE)))
        self.radius = int(max_tokens * RADIUS)
        self.tiny = max_tokens * TINY
        words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
        self.word_starts = array("q", (s for s, _ in words))
        self.word_ends = array("q", (e for _, e in words))
        blocks = [(s, e, h) for s, e, h in _blocks(text) if e > s]
        self.block_ends = array("q", (e for _, e, _ in blocks))
        self.block_heading = [h for _, _, h in blocks]
        self.sentences = sentences(text)
        self.sentence_ends = array("q", (e for _, e, _ in self.sentences))
        self.stretches = 0

    # --- Measuring ------------------------------------------------------------------

    def tokens(self, a: int, b: int) -> int:
        """``estimate_tokens(text[a:b])`` without slicing: words counted by bisecting."""
        if b <= a:
            return 0
        starts = self.word_starts
        words = bisect.bisect_left(starts, b) - bisect.bisect_left(starts, a)
        if a > 0 and not self.text[a].isspace() and not self.text[a - 1].isspace():
            words += 1  # a word cut at ``a`` still counts once
        return max(-(-(b - a) // 4), -(-words * 4 // 3))

    def trim(self, a: int, b: int) -> tuple[int, int] | None:
        """The range without leading and trailing whitespace, or None if nothing is left."""
        i = bisect.bisect_right(self.word_ends, a)
        if i == len(self.word_ends) or self.word_starts[i] >= b:
            return None
        j = bisect.bisect_left(self.word_starts, b) - 1
        return max(a, self.word_starts[i]), min(b, self.word_ends[j])

    def key(self, unit: _Unit) -> int:
        """A unit's content hash: the same text always ranks the same."""
        data = self.text[unit.start : unit.end].encode("utf-8", "surrogatepass")
        return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")

    # --- Units ----------------------------------------------------------------------

    def cuts(self, a: int, b: int, level: int) -> list[int]:
        """Where a range may be cut at one level: after paragraphs, sentences, lines..."""
        if level < _LINES:
            ends = self.sentence_ends if level == _SENTENCES else self.block_ends
            lo, hi = bisect.bisect_right(ends, a), bisect.bisect_left(ends, b)
            return list(ends[lo:hi])
        if level == _LINES:
            return [a + m.end() for m in re.finditer(r"\n", self.text[a:b])]
        if level == _WORDS:
            ends = self.word_ends
            return list(ends[bisect.bisect_right(ends, a) : bisect.bisect_left(ends, b)])
        return list(range(a + 4 * self.max, b, 4 * self.max))  # pieces of one long word

    def split(self, a: int, b: int, level: int = 0) -> list[tuple[int, int, bool]]:
        """Trimmed pieces tiling the non-space text of [a, b), each within the bound.

        A piece that is still too long is split at the next finer level. The flag says
        the piece is a heading line (level 0 only).
        """
        out: list[tuple[int, int, bool]] = []
        bounds = [a, *self.cuts(a, b, level), b]
        for x, y in zip(bounds, bounds[1:], strict=False):
            piece = self.trim(x, y)
            if piece is None:
                continue
            s, e = piece
            if self.tokens(s, e) <= self.max or level == _CHARS:
                heading = False
                if level == 0:
                    i = bisect.bisect_left(self.block_ends, e)
                    heading = i < len(self.block_ends) and self.block_ends[i] == e
                    heading = heading and self.block_heading[i]
                out.append((s, e, heading))
            else:
                out.extend(self.split(s, e, level + 1))
        return out

    def stretch(self, a: int, b: int, path: tuple[str, ...], heading: bool) -> list[_Unit]:
        """The units of a heading-free stretch; a heading line is glued to what follows."""
        self.stretches += 1
        units: list[_Unit] = []
        glue = False
        for s, e, is_heading in self.split(a, b):
            if glue and self.tokens(units[-1].start, e) <= self.max:
                units[-1].end = e
            else:
                units.append(_Unit(s, e, path, self.stretches, heading or is_heading))
            heading = False
            glue = is_heading
        return units

    # --- Sections -------------------------------------------------------------------

    def walk(self, node: _Node) -> list[list[_Unit]]:
        """Groups of units, in order; a chunk never spans two groups.

        A section that fits is one unit. Otherwise its preamble (and any text between
        subsections) becomes a stretch group and each subsection is walked in turn;
        consecutive tiny sibling sections share one group, and a tiny preamble joins
        the group after it so a lone heading line is not a chunk of its own.
        """
        span = self.trim(node.start, node.end)
        if span is None:
            return []
        if self.tokens(*span) <= self.max:
            tiny = self.tokens(*span) < self.tiny
            return [[_Unit(*span, node.path, self.new_stretch(), bool(node.path), tiny)]]
        groups: list[list[_Unit]] = []
        run_open = False  # the last group is a run of tiny sibling sections
        preamble: list[_Unit] = []
        pos = node.start
        for child in [*node.children, None]:
            until = child.start if child else node.end
            units = self.stretch(pos, until, node.path, pos == node.start and bool(node.path))
            if units:
                groups.append(units)
                run_open = False
                preamble = units if pos == node.start else preamble
            if child is None:
                break
            inner = self.walk(child)
            if len(inner) == 1 and len(inner[0]) == 1 and inner[0][0].tiny:
                if run_open:
                    groups[-1].extend(inner[0])
                else:
                    groups.append(inner[0])
                run_open = True
            elif inner:
                groups.extend(inner)
                run_open = False
            pos = child.end
        if len(preamble) == 1 and len(groups) > 1:
            if self.tokens(preamble[0].start, preamble[0].end) < self.tiny:
                groups[0:2] = [preamble + groups[1]]
        return groups

    def new_stretch(self) -> int:
        self.stretches += 1
        return self.stretches

    # --- Packing --------------------------------------------------------------------

    def overlap_start(self, body_start: int, prev: _Unit, first: _Unit) -> int:
        """Where the overlap begins: the previous body's last sentence or two, if they fit."""
        if not self.overlap or first.heading or prev.stretch != first.stretch:
            return first.start
        i = bisect.bisect_right(self.sentence_ends, prev.end) - 1
        best = first.start
        for k in range(i, max(-1, i - OVERLAP_SENTENCES), -1):
            s, e, is_heading = self.sentences[k]
            if is_heading or s < body_start or (k == i and e != prev.end):
                break
            if self.tokens(s, prev.end) > self.overlap or self.tokens(s, first.end) > self.max:
                break
            best = s
        return best

    def pack(self, group: list[_Unit]) -> list[tuple[int, int, int, tuple[str, ...]]]:
        """(start, body_start, end, section) of each chunk of one group.

        The group is cut after every unit whose hash beats every unit within ``RADIUS``
        of the bound on either side (a local maximum): whether a unit ends a chunk
        depends only on the text around it, so an edit moves at most the cuts near it.
        Cuts are more than ``RADIUS`` apart; a stretch between two cuts that is still
        too long is split where the highest hash lets both sides fit.
        """
        out: list[tuple[int, int, int, tuple[str, ...]]] = []
        if self.tokens(group[0].start, group[-1].end) <= self.max:
            return [(group[0].start, group[0].start, group[-1].end, group[0].path)]
        weights = [self.tokens(u.start, u.end) for u in group]
        ends = list(accumulate(weights))
        keys = [self.key(u) for u in group]
        cuts = self.local_maxima(ends, keys) if ends[-1] > 2 * (self.max - self.overlap) else []
        a = 0
        for cut in [*cuts, len(group) - 1]:
            self.fill(group, a, cut, ends, keys, out)
            a = cut + 1
        return out

    def local_maxima(self, ends: list[int], keys: list[int]) -> list[int]:
        """Cut indices chosen by key, highest first, each over ``radius`` from the others.

        The group's two ends count as chosen. A unit whose key rises only matters if it
        is chosen itself; then it displaces at most the cut on either side of it.
        """
        radius, total = self.radius, ends[-1]
        chosen = [0, total]
        picked = []
        for i in sorted(range(len(ends) - 1), key=lambda i: (-keys[i], i)):
            at = ends[i]
            k = bisect.bisect_left(chosen, at)
            if at - chosen[k - 1] > radius and chosen[k] - at > radius:
                chosen.insert(k, at)
                picked.append(i)
        return sorted(picked)

    def fill(self, group, a, b, ends, keys, out) -> None:
        """Chunks for units a..b: one if they fit, else split at the best-keyed feasible cut."""
        body = self.max - self.overlap
        while a <= b:
            first = group[a]
            start = self.overlap_start(out[-1][1], group[a - 1], first) if a else first.start
            if self.tokens(start, group[b].end) <= self.max:
                out.append((start, first.start, group[b].end, first.path))
                return
            before = ends[a - 1] if a else 0
            weight = ends[b] - before
            need = max(2, -(-weight // body))
            least = max(weight - (need - 1) * body, min(self.radius, weight // need))
            most = weight - self.radius if need == 2 else weight
            best, last = -1, a
            for i in range(a, b):
                if self.tokens(start, group[i].end) > self.max:
                    break
                last = i
                if least <= ends[i] - before <= most and (best < 0 or keys[i] > keys[best]):
                    best = i
            cut = best if best >= 0 else last
            out.append((start, first.start, group[cut].end, first.path))
            a = cut + 1


def chunk_document(
    text: str,
    *,
    sections: Sequence[Section] = (),
    max_tokens: int = 1200,
    overlap_tokens: int = 60,
) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``max_tokens`` (estimated) tokens each.

    ``sections`` (from Markdown headings or a PDF outline) say where the headings are;
    without them the text is split at paragraphs and sentences only. See the module
    docstring for the rules.
    """
    if max_tokens < MIN_TOKENS:
        raise ValueError(f"max_tokens must be at least {MIN_TOKENS}")
    chunker = _Chunker(text, max_tokens, overlap_tokens)
    chunks: list[Chunk] = []
    for group in chunker.walk(_tree(sections, len(text))):
        for start, body_start, end, path in chunker.pack(group):
            piece = text[start:end]
            chunks.append(
                Chunk(len(chunks), start, body_start, end, path, piece, estimate_tokens(piece))
            )
    return chunks
