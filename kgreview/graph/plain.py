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
    size = len(text)
    spans = list(spans)
    cuts: list[tuple[int, int, int]] = []  # (start, end, span index)
    for index, span in enumerate(spans):
        start, end = min(max(span.start, 0), size), min(max(span.end, 0), size)
        if start < end:
            cuts.append((start, end, index))
    opens: dict[int, list[int]] = {}
    closes: dict[int, list[int]] = {}
    for start, end, index in cuts:
        opens.setdefault(start, []).append(index)
        closes.setdefault(end, []).append(index)

    # What goes in at an offset before the text there: page marks, then anchors.
    inserts: dict[int, list[tuple[str, str]]] = {}  # offset -> [(kind, html attrs)]
    for number, offset in enumerate(pages, start=1):
        if 0 <= offset <= size:
            label = f'id="page-{number}" data-page="{number}" aria-label="Page {number}"'
            inserts.setdefault(offset, []).append(("page", label))
    for offset, anchor_id in anchors:
        if 0 <= offset <= size:
            inserts.setdefault(offset, []).append(("anchor", f'id="{_attr(anchor_id)}"'))

    paras = paragraphs(text)
    boundaries = sorted(
        {p for start, end, _ in cuts for p in (start, end)}
        | set(inserts)
        | {p for a, b in paras for p in (a, b)}
    )
    looks = _Looks(spans)
    active: set[int] = set()
    pending_ids: list[int] = []  # spans whose id has not been placed yet
    emitted_ids: set[str] = set()
    out: list[str] = []
    para_index = 0
    in_para = False
    held: list[tuple[str, str]] = []  # inserts met between paragraphs

    def place(kind: str, attrs: str, *, block: bool) -> None:
        if kind == "page":
            tag = "div" if block else "span"
            out.append(f'<{tag} class="page-mark" role="separator" {attrs}></{tag}>')
        else:
            out.append(f'<span class="anchor" {attrs}></span>')

    for k, pos in enumerate(boundaries):
        for index in closes.get(pos, ()):
            active.discard(index)
        for index in opens.get(pos, ()):
            active.add(index)
            if spans[index].attrs.get("id"):
                pending_ids.append(index)
        here = inserts.get(pos, ())
        if in_para and pos >= paras[para_index][1]:
            out.append("</p>\n")
            in_para = False
            para_index += 1
        if not in_para:
            if para_index < len(paras) and pos == paras[para_index][0]:
                for kind, attrs in held:
                    place(kind, attrs, block=kind == "page")
                held = []
                for kind, attrs in here:
                    place(kind, attrs, block=kind == "page")
                out.append('<p class="plain">')
                in_para = True
            else:
                held.extend(here)
                continue
        else:
            for kind, attrs in here:
                place(kind, attrs, block=False)
        nxt = boundaries[k + 1] if k + 1 < len(boundaries) else size
        piece = text[pos:nxt]
        if not piece:
            continue
        escaped = escape(piece, quote=False)
        if not active:
            out.append(escaped)
            continue
        cover = tuple(sorted(active))
        tag, attrs = looks.opening(cover)
        id_attr = ""
        if pending_ids:
            waiting = [i for i in pending_ids if i in active]
            pending_ids = [i for i in pending_ids if i not in active]
            for index in waiting:
                span_id = spans[index].attrs["id"]
                if span_id in emitted_ids:
                    continue
                emitted_ids.add(span_id)
                if not id_attr:
                    id_attr = f' id="{_attr(span_id)}"'
                else:  # a second quote starting here: its own empty anchor
                    out.append(f'<span class="anchor" id="{_attr(span_id)}"></span>')
        out.append(f"<{tag}{id_attr}{attrs}>{escaped}</{tag}>")
    if in_para:
        out.append("</p>\n")
    for kind, attrs in held:  # marks after the last paragraph (an empty last page)
        place(kind, attrs, block=kind == "page")
    return mark_safe("".join(out))
