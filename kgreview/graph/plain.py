"""Plain text (from a PDF or a .txt file) as safe HTML, with highlights and anchors placed
by exact offsets of the stored text.

Plain text is never Markdown: ``**`` and ``<script>`` are words of the document and show as
written. Paragraphs are split at blank lines and keep their line breaks (the page shows
them with ``white-space: pre-wrap``). Highlights are the same ``Span`` values the Markdown
renderer takes (``kgreview.core.markup``), with the same rules: where spans overlap, a
piece of text gets the tag and attributes of the covering span with the lowest ``rank``,
``data-spans`` lists every covering span's ``key`` and ``title`` joins their labels. A
span's ``id`` always lands on the first piece of it, even where another span wins the
piece's look, so ``#q-123`` finds every quote.

Page starts become ``<div class="page-mark" id="page-N">`` between paragraphs (or an
inline ``<span>`` when a page starts inside one); anchors (a section's start) become an
empty ``<span id=...>`` at their offset. The marks carry their label in ``data-page`` and
CSS shows it, so selecting text across a page break never picks up "p. 12".

Everything is built in one pass over the sorted boundaries: a 500 KB text with hundreds of
spans renders in a few milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

from django.utils.safestring import SafeString, mark_safe

from kgreview.core.markup import Span, cover_attrs

__all__ = ["paragraphs", "render_plain"]

_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)*")


def paragraphs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each paragraph: text between blank lines, trailing newlines off."""
    found: list[tuple[int, int]] = []
    at = 0
    for gap in _BLANK_LINES.finditer(text):
        if gap.start() > at:
            found.append((at, gap.start()))
        at = gap.end()
    end = len(text.rstrip("\n"))
    if end > at:
        found.append((at, end))
    return [(a, b) for a, b in found if text[a:b].strip()]


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


class _Looks:
    """The opening tag for each set of covering spans, built once per set."""

    def __init__(self, spans: Sequence[Span]) -> None:
        self.spans = spans
        self._cache: dict[tuple[int, ...], tuple[str, str]] = {}

    def opening(self, cover: tuple[int, ...]) -> tuple[str, str]:
        cached = self._cache.get(cover)
        if cached is None:
            primary = min(cover, key=lambda i: (self.spans[i].rank, i))
            span = self.spans[primary]
            attrs = {k: v for k, v in span.attrs.items() if k != "id"}
            attrs.update(cover_attrs(self.spans, cover))
            rendered = "".join(f' {k}="{_attr(v)}"' for k, v in attrs.items())
            cached = (span.tag, rendered)
            self._cache[cover] = cached
        return cached


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the pass walks, gathered before it: where spans open and close, what goes in
    at an offset before its text (page marks, then anchors), the paragraphs, and every
    offset where any of these changes, sorted."""

    opens: dict[int, list[int]]
    closes: dict[int, list[int]]
    inserts: dict[int, list[tuple[str, str]]]  # offset -> [(kind, html attrs)]
    paras: list[tuple[int, int]]
    boundaries: list[int]


def _plan(
    text: str, spans: Sequence[Span], pages: Sequence[int], anchors: Iterable[tuple[int, str]]
) -> _Plan:
    size = len(text)
    opens: dict[int, list[int]] = {}
    closes: dict[int, list[int]] = {}
    for index, span in enumerate(spans):
        start, end = min(max(span.start, 0), size), min(max(span.end, 0), size)
        if start < end:
            opens.setdefault(start, []).append(index)
            closes.setdefault(end, []).append(index)
    inserts: dict[int, list[tuple[str, str]]] = {}
    for number, offset in enumerate(pages, start=1):
        if 0 <= offset <= size:
            label = f'id="page-{number}" data-page="{number}" aria-label="Page {number}"'
            inserts.setdefault(offset, []).append(("page", label))
    for offset, anchor_id in anchors:
        if 0 <= offset <= size:
            inserts.setdefault(offset, []).append(("anchor", f'id="{_attr(anchor_id)}"'))
    paras = paragraphs(text)
    boundaries = sorted(
        set(opens) | set(closes) | set(inserts) | {p for a, b in paras for p in (a, b)}
    )
    return _Plan(opens, closes, inserts, paras, boundaries)


class _Writer:
    """The one pass's state: the spans covering the text now, the ids still to place, the
    paragraph the text is in, and the marks met between paragraphs."""

    def __init__(self, spans: Sequence[Span], paras: list[tuple[int, int]]) -> None:
        self.spans = spans
        self.paras = paras
        self.looks = _Looks(spans)
        self.out: list[str] = []
        self.active: set[int] = set()
        self.pending_ids: list[int] = []  # spans whose id has not been placed yet
        self.emitted_ids: set[str] = set()
        self.para_index = 0
        self.in_para = False
        self.held: list[tuple[str, str]] = []  # inserts met between paragraphs

    def cover(self, closing: Iterable[int], opening: Iterable[int]) -> None:
        """Spans end and start here; an opening span's id waits for its first piece."""
        for index in closing:
            self.active.discard(index)
        for index in opening:
            self.active.add(index)
            if self.spans[index].attrs.get("id"):
                self.pending_ids.append(index)

    def reach(self, pos: int, here: Sequence[tuple[str, str]]) -> bool:
        """Close or open a paragraph at ``pos`` and place what goes in there; whether the
        text from ``pos`` on is inside a paragraph (outside, the inserts wait for the next)."""
        if self.in_para and pos >= self.paras[self.para_index][1]:
            self.out.append("</p>\n")
            self.in_para = False
            self.para_index += 1
        if self.in_para:
            self._place_all(here, between=False)
            return True
        if self.para_index < len(self.paras) and pos == self.paras[self.para_index][0]:
            self._place_all(self.held, between=True)
            self.held = []
            self._place_all(here, between=True)
            self.out.append('<p class="plain">')
            self.in_para = True
            return True
        self.held.extend(here)
        return False

    def write(self, piece: str) -> None:
        """A piece of text, in the look of the spans covering it, with any ids waiting."""
        escaped = escape(piece, quote=False)
        if not self.active:
            self.out.append(escaped)
            return
        tag, attrs = self.looks.opening(tuple(sorted(self.active)))
        id_attr = self._id_attr()
        self.out.append(f"<{tag}{id_attr}{attrs}>{escaped}</{tag}>")

    def finish(self) -> str:
        if self.in_para:
            self.out.append("</p>\n")
        self._place_all(self.held, between=True)  # marks after the last paragraph
        return "".join(self.out)

    def _id_attr(self) -> str:
        """The id of the first waiting span that covers this piece; a second one starting
        here gets its own empty anchor before the piece."""
        id_attr = ""
        if not self.pending_ids:
            return id_attr
        waiting = [i for i in self.pending_ids if i in self.active]
        self.pending_ids = [i for i in self.pending_ids if i not in self.active]
        for index in waiting:
            span_id = self.spans[index].attrs["id"]
            if span_id in self.emitted_ids:
                continue
            self.emitted_ids.add(span_id)
            if not id_attr:
                id_attr = f' id="{_attr(span_id)}"'
            else:
                self.out.append(f'<span class="anchor" id="{_attr(span_id)}"></span>')
        return id_attr

    def _place_all(self, inserts: Iterable[tuple[str, str]], *, between: bool) -> None:
        """Page marks (a block between paragraphs, inline inside one) and anchors."""
        for kind, attrs in inserts:
            if kind == "page":
                tag = "div" if between else "span"
                self.out.append(f'<{tag} class="page-mark" role="separator" {attrs}></{tag}>')
            else:
                self.out.append(f'<span class="anchor" {attrs}></span>')


def render_plain(
    text: str,
    spans: Sequence[Span] = (),
    *,
    pages: Sequence[int] = (),
    anchors: Iterable[tuple[int, str]] = (),
) -> SafeString:
    """``text`` as ``<p class="plain">`` paragraphs with each span highlighted.

    ``pages`` are the offsets where pages 1, 2, ... start; ``anchors`` are (offset, id)
    pairs that get an empty element to link to. Empty or out-of-range spans are ignored;
    an anchor or page start between paragraphs goes with the paragraph after it.
    """
    text = text or ""
    spans = list(spans)
    plan = _plan(text, spans, pages, anchors)
    writer = _Writer(spans, plan.paras)
    boundaries = plan.boundaries
    for k, pos in enumerate(boundaries):
        writer.cover(plan.closes.get(pos, ()), plan.opens.get(pos, ()))
        if not writer.reach(pos, plan.inserts.get(pos, ())):
            continue
        piece = text[pos : boundaries[k + 1] if k + 1 < len(boundaries) else len(text)]
        if piece:
            writer.write(piece)
    return mark_safe(writer.finish())
