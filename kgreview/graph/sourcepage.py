"""What the source page shows besides the text's words: its format, its outline, and the
anchors a link can jump to.

Anchors on the page (the review card and the outline link to them):

- ``#q-START``: the quote whose evidence starts at offset ``START`` of the revision;
- ``#s-START``: the section whose heading starts at ``START``;
- ``#page-N``: the start of page ``N`` (paged revisions: PDFs).

``?at=OFFSET`` and ``?page=N`` are turned into one of these by a redirect, so a link or a
form without script lands on the right place too.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from construction.documents import page_of
from construction.formats import format_label, format_of
from construction.types import Section
from kgreview.core.markup import Span, render_markdown

from .models import SourceRevision
from .plain import render_plain
from .sources import Structure, revision_structure
from .upload import clean_name

__all__ = [
    "OutlineItem",
    "download_name",
    "format_label",
    "fragment_for",
    "outline",
    "quote_anchor",
    "render_revision",
    "safe_media_type",
    "section_anchor",
]

# A heading's highlight loses to any quote over it: the quote's link matters more there.
HEADING_RANK = 1_000
_MEDIA_TYPE = re.compile(r"[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+\Z")
# The blocks alone, parsed as kgreview.core.markup parses them (same rules enabled), to
# know which line each rendered heading starts on.
_BLOCKS = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_BLOCKS.core.ruler.disable(["inline", "text_join"])
# Sanitised output: a heading element has no attributes, and "<h2>" in text is escaped;
# attribute values are quoted and escaped, so data-spans="..." ends at the next quote.
_HEADING_TAG = re.compile(r"<h[1-6]>")
_PIECE = re.compile(r'<(?:a|mark)\s[^>]*?\bdata-spans="([^"]*)"')


def quote_anchor(start: int) -> str:
    return f"q-{start}"


def section_anchor(section: Section) -> str:
    return f"s-{section.start}"


@dataclass
class OutlineItem:
    title: str
    anchor: str
    page: int | None
    children: list[OutlineItem] = field(default_factory=list)


def outline(structure: Structure) -> list[OutlineItem]:
    """The sections as a tree (by heading path), each with its anchor and page."""
    roots: list[OutlineItem] = []
    stack: list[tuple[int, OutlineItem]] = []  # (depth, item)
    for section in structure.sections:
        depth = len(section.path)
        page = None
        if structure.pages:
            page = page_of(structure.pages, section.start)
        item = OutlineItem(
            title=section.path[-1] if section.path else "",
            anchor=section_anchor(section),
            page=page,
        )
        while stack and stack[-1][0] >= depth:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(item)
        stack.append((depth, item))
    return roots


def _heading_spans(text: str, sections: Sequence[Section]) -> list[Span]:
    """A highlight over each heading's line carrying its anchor id (styled as nothing):
    for sections that start where no rendered heading does."""
    spans: list[Span] = []
    seen: set[int] = set()
    for section in sections:
        if section.start in seen or not 0 <= section.start < len(text):
            continue
        seen.add(section.start)
        end = text.find("\n", section.start)
        anchor = section_anchor(section)
        spans.append(
            Span(
                section.start,
                len(text) if end < 0 else end,
                attrs={"id": anchor, "class": "heading-anchor"},
                key=anchor,
                rank=HEADING_RANK,
            )
        )
    return spans


def _heading_lines(text: str) -> list[int]:
    """The offset of the line each heading the renderer makes starts on, in order."""
    line_starts = [0, *(m.end() for m in re.finditer("\n", text))]
    return [
        line_starts[token.map[0]]
        for token in _BLOCKS.parse(text)
        if token.type == "heading_open" and token.map and token.map[0] < len(line_starts)
    ]


def _anchor_quotes(html: str, anchors: Mapping[str, str]) -> str:
    """An empty anchor element before the first piece of each quote (by span key).

    Every piece lists the keys of all the quotes covering it, so a quote whose look is
    taken by another (a narrow one inside a wide, more open one) is found all the same.
    """
    pending = dict(anchors)
    out: list[str] = []
    pos = 0
    for match in _PIECE.finditer(html):
        if not pending:
            break
        ids = [pending.pop(key) for key in match.group(1).split() if key in pending]
        if ids:
            out.append(html[pos : match.start()])
            out.extend(f'<span class="anchor" id="{anchor}"></span>' for anchor in ids)
            pos = match.start()
    out.append(html[pos:])
    return "".join(out)


def _markdown(
    text: str, spans: Sequence[Span], sections: Sequence[Section], quotes: Mapping[str, str]
) -> SafeString:
    """Markdown with an empty anchor element before each quote and each section's heading.

    Headings and highlights keep their markup (``<h2>Routing</h2>``, ``<a href=...>``); a
    section that starts where no heading is rendered gets its anchor on a highlight of
    its first line instead.
    """
    anchors = {section.start: section_anchor(section) for section in sections}
    lines = _heading_lines(text) if anchors else []
    placed = set(lines)
    unplaced = [s for s in sections if s.start not in placed]
    html = render_markdown(text, [*spans, *_heading_spans(text, unplaced)], heading_offset=1)
    if len(unplaced) < len(sections):
        if len(_HEADING_TAG.findall(html)) == len(lines):
            starts = iter(lines)

            def place(match: re.Match[str]) -> str:
                anchor = anchors.get(next(starts, -1))
                if anchor is None:
                    return match.group()
                return f'<span class="anchor" id="{anchor}"></span>{match.group()}'

            html = _HEADING_TAG.sub(place, html)
        else:  # never expected; anchors on the headings' lines rather than wrong ones
            every = [*spans, *_heading_spans(text, sections)]
            html = render_markdown(text, every, heading_offset=1)
    return mark_safe(_anchor_quotes(html, quotes) if quotes else html)


def render_revision(
    revision: SourceRevision, spans: Sequence[Span], quotes: Mapping[str, str] | None = None
) -> SafeString:
    """The revision's text as HTML with its quotes highlighted and its anchors placed.

    ``quotes`` maps a span's key to the anchor id its first piece gets (``q-START``).
    Plain text (PDF, .txt) is escaped paragraphs, never Markdown, the id on the quote's
    first piece itself; Markdown is rendered with its headings one level down, under the
    page's title.
    """
    structure = revision_structure(revision)
    quotes = quotes or {}
    if revision.text_format == SourceRevision.TextFormat.PLAIN:
        anchored = [
            replace(span, attrs={**span.attrs, "id": quotes[span.key]})
            if span.key in quotes
            else span
            for span in spans
        ]
        sections = {section.start: section_anchor(section) for section in structure.sections}
        return render_plain(
            revision.text, anchored, pages=structure.pages, anchors=sorted(sections.items())
        )
    return _markdown(revision.text, spans, structure.sections, quotes)


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def fragment_for(
    *,
    at: str | None,
    page: str | None,
    structure: Structure,
    quotes: Sequence[tuple[int, int]],
) -> str:
    """The anchor for ``?page=N`` or ``?at=OFFSET``; "" when there is none.

    ``at`` goes to the quote starting there, else the latest quote covering it, else its
    page, else its section. ``quotes`` are the highlighted (start, end) pairs.
    """
    number = _int(page)
    if number is not None and structure.pages:
        return f"page-{min(max(number, 1), len(structure.pages))}"
    offset = _int(at)
    if offset is None:
        return ""
    starts = {start for start, _ in quotes}
    if offset in starts:
        return quote_anchor(offset)
    covering = [start for start, end in quotes if start <= offset < end]
    if covering:
        return quote_anchor(max(covering))
    if structure.pages:
        return f"page-{max(bisect_right(structure.pages, offset), 1)}"
    inside = [s for s in structure.sections if s.start <= offset < s.end]
    if inside:
        return section_anchor(inside[-1])
    return ""


# --- the original file ----------------------------------------------------------------------


def safe_media_type(media_type: str) -> str:
    """The stored type if it is a well-formed ``type/subtype``, else octet-stream."""
    return media_type if _MEDIA_TYPE.match(media_type or "") else "application/octet-stream"


def download_name(revision: SourceRevision, slug: str, media_type: str) -> str:
    """The imported file's own name (no folders or control characters), or one made up
    from the slug and revision when there is none."""
    name = clean_name(revision.filename or "").replace('"', "'")
    found = format_of(media_type)
    return name or f"{slug}-r{revision.number}{found.suffixes[0] if found else ''}"
