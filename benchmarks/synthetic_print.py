"""A web page as a browser prints it to PDF, for tests and benchmarks.

What Chromium's "Save as PDF" makes of a documentation page: no bookmarks, a running
header on every page (the date and time printed, the page's title) and a running footer
(its URL, "3/16"), headings set larger and bold, paragraphs apart, notes with a bold
"Note" label, code in a fixed-pitch font. reportlab is imported on first use.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["PRINTED_AT", "printed_pdf"]

PRINTED_AT = "3/16/25, 10:12 AM"
# kind: (font, size, space above, space below)
_STYLES = {
    "h1": ("Helvetica-Bold", 20.0, 18.0, 10.0),
    "h2": ("Helvetica-Bold", 15.0, 16.0, 8.0),
    "h3": ("Helvetica-Bold", 12.5, 12.0, 6.0),
    "label": ("Helvetica-Bold", 12.5, 10.0, 6.0),
    "p": ("Helvetica", 11.0, 0.0, 9.0),
    "code": ("Courier", 10.0, 0.0, 9.0),
    "bar": ("Helvetica", 11.0, 0.0, 9.0),
}
_FURNITURE = ("Helvetica", 8.0)
_LEADING = 1.3
_MARGIN = 54.0
_FURNITURE_AT = 20.0  # the header's and footer's baselines, from the page's edges


@dataclass(frozen=True)
class _Line:
    font: str
    size: float
    text: str
    y: float


def _layout(blocks: Sequence[tuple[str, str]], width: float, height: float):
    from reportlab.lib.utils import simpleSplit

    pages: list[list[_Line]] = [[]]
    y = height - _MARGIN
    for kind, text in blocks:
        font, size, above, below = _STYLES[kind]
        wrapped = text.split("\n") if kind == "code" else simpleSplit(text, font, size, width)
        y -= above if pages[-1] else 0
        for part in wrapped:
            if y - size * _LEADING < _MARGIN:
                pages.append([])
                y = height - _MARGIN
            y -= size * _LEADING
            pages[-1].append(_Line(font, size, part, y))
        y -= below
    return pages


def printed_pdf(
    blocks: Sequence[tuple[str, str]],
    *,
    title: str,
    url: str = "file:///usr/share/doc/handbook/html/page.html",
    printed: str = PRINTED_AT,
    metadata_title: bool = True,
) -> bytes:
    """``blocks`` as a browser prints them: ``(kind, text)`` with kind ``h1``, ``h2``,
    ``h3``, ``label`` (a note's "Note"), ``p``, ``code`` (lines kept) or ``bar`` (a
    navigation bar as text); letter pages with the running header and footer."""
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen.canvas import Canvas

    width, height = letter
    pages = _layout(blocks, width - 2 * _MARGIN, height)
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=letter, invariant=1)
    if metadata_title:
        canvas.setTitle(title)
    for number, lines in enumerate(pages, 1):
        for line in lines:
            canvas.setFont(line.font, line.size)
            canvas.drawString(_MARGIN, line.y, line.text)
        canvas.setFont(*_FURNITURE)
        canvas.drawString(24, height - _FURNITURE_AT, printed)
        canvas.drawCentredString(width / 2, height - _FURNITURE_AT, title)
        canvas.drawString(24, _FURNITURE_AT, url)
        canvas.drawRightString(width - 24, _FURNITURE_AT, f"{number}/{len(pages)}")
        canvas.showPage()
    canvas.save()
    return out.getvalue()
