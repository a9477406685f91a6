"""``locate_quote``: from text a person selected on the rendered page back to offsets
of the raw text, comparing only the characters that rendering shows."""

from __future__ import annotations

import html as html_lib
import re
from bisect import bisect_right
from dataclasses import dataclass

from .layout import ENTITY, Layout, layout_of
from .spans import normalise

_MARKUP = "*_~`#>|[]\\!"  # "!" of an image; a shown "!" is ignored on both sides alike
_SELECTION_RUN = re.compile(r"[^\s" + re.escape(_MARKUP) + r"]+")
_NON_SPACE_RUN = re.compile(r"\S+")
_SHOWN_RUN = re.compile(
    ENTITY.pattern + r"|[^\s&" + re.escape(_MARKUP) + r"]+|&",
)
_BEFORE_LIMIT = 300


def _squash(rendered: str) -> str:
    return "".join(_SELECTION_RUN.findall(rendered or ""))


@dataclass
class _Projection:
    """The shown characters of a raw text, markup and whitespace dropped, with offsets."""

    text: str
    starts: list[int]  # projected index where each run starts
    raw_starts: list[int]
    raw_ends: list[int]
    atomic: list[bool]  # an entity: one run of projected text for the whole raw entity

    def raw_start(self, j: int) -> int:
        r = bisect_right(self.starts, j) - 1
        return self.raw_starts[r] if self.atomic[r] else self.raw_starts[r] + j - self.starts[r]

    def raw_end(self, j: int) -> int:
        """Raw offset just after the raw character behind projected index ``j``."""
        r = bisect_right(self.starts, j) - 1
        return self.raw_ends[r] if self.atomic[r] else self.raw_starts[r] + j - self.starts[r] + 1


def _project(layout: Layout) -> _Projection:
    text = layout.text
    parts: list[str] = []
    starts: list[int] = []
    raw_starts: list[int] = []
    raw_ends: list[int] = []
    atomic: list[bool] = []
    length = 0
    hidden = layout.hidden
    h = 0
    for a, b, is_code, _ in layout.content:
        pieces = [(a, b)]
        if not is_code:
            pieces = []
            cursor = a
            while h < len(hidden) and hidden[h][1] <= a:
                h += 1
            k = h
            while k < len(hidden) and hidden[k][0] < b:
                lo, hi = hidden[k]
                if lo > cursor:
                    pieces.append((cursor, lo))
                cursor = max(cursor, hi)
                k += 1
            if cursor < b:
                pieces.append((cursor, b))
        for x, y in pieces:
            for m in _SHOWN_RUN.finditer(text, x, y):
                run = m.group()
                is_entity = run.startswith("&") and run.endswith(";") and len(run) > 1
                shown = _squash(html_lib.unescape(run)) if is_entity else run
                if not shown:
                    continue
                starts.append(length)
                raw_starts.append(m.start())
                raw_ends.append(m.end())
                atomic.append(is_entity)
                parts.append(shown)
                length += len(shown)
    return _Projection("".join(parts), starts, raw_starts, raw_ends, atomic)


def _common_suffix(a: str, a_end: int, b: str) -> int:
    n = 0
    limit = min(a_end, len(b))
    while n < limit and a[a_end - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    return n


def _plain_projection(text: str) -> _Projection:
    """Text shown as it is (a PDF's or a .txt file's): only whitespace is dropped."""
    pieces, starts, raw_starts, raw_ends = [], [], [], []
    at = 0
    for match in _NON_SPACE_RUN.finditer(text):
        pieces.append(match.group())
        starts.append(at)
        raw_starts.append(match.start())
        raw_ends.append(match.end())
        at += len(match.group())
    return _Projection(
        text="".join(pieces),
        starts=starts,
        raw_starts=raw_starts,
        raw_ends=raw_ends,
        atomic=[False] * len(pieces),
    )


def locate_quote(
    text: str, selected: str, before: str = "", *, plain: bool = False
) -> tuple[int, int] | None:
    """Raw offsets ``(start, end)`` of a selection made on the rendered ``text``.

    ``plain``: the text was shown as it is, not as Markdown (a PDF's or a .txt file's),
    so "#", "-" or "*" in it are characters the reader selected, not markup.

    Characters that rendering removes (emphasis markers, backticks, heading hashes, list
    bullets, link targets) and all whitespace are ignored on both sides. When the
    selection occurs more than once, ``before`` (rendered text just before it) picks the
    occurrence it matches best; otherwise the first wins. ``text[start:end]`` starts and
    ends on shown characters of the selection. None if it does not occur.
    """
    wanted = "".join(_NON_SPACE_RUN.findall(selected or "")) if plain else _squash(selected)
    if not wanted or not text:
        return None
    if plain:
        projection = _plain_projection(text)
    else:
        norm, newlines = normalise(text)
        projection = _project(layout_of(norm))
    shown = projection.text
    hits: list[int] = []
    at = shown.find(wanted)
    while at >= 0:
        hits.append(at)
        at = shown.find(wanted, at + 1)
    if not hits:
        return None
    best = hits[0]
    if len(hits) > 1:
        context = ("".join(_NON_SPACE_RUN.findall(before)) if plain else _squash(before))[
            -_BEFORE_LIMIT:
        ]
        if context:
            best = max(hits, key=lambda hit: (_common_suffix(shown, hit, context), -hit))
    start = projection.raw_start(best)
    end = projection.raw_end(best + len(wanted) - 1)
    if plain:
        return start, end
    return newlines.to_raw(start), newlines.to_raw(end)
