"""The layout of PDF pages: lines with their typography, what is page furniture, headings
and paragraphs.

A PDF's text layer has lines but no paragraphs or headings, and a page printed from a
browser or a word processor carries a running header and footer (date, title, URL,
"3/16") on every page. PDFium gives each character its font size, font and position
(``FPDFText_GetFontSize``, ``FPDFText_GetFontInfo``, ``FPDFText_GetFontWeight``,
``FPDFText_GetCharOrigin``), which is what a reader sees, so:

- a line in the top or bottom band of its page is furniture when the same line (digits
  aside) recurs there on other pages, or when it holds nothing but dates, URLs, page
  numbers and the document's title; a browser's "Prev | Up | Home | Next" bar is too;
- the body size is the size most characters are set in; a short line set larger, or in
  bold and apart from its neighbours, is a heading, its level from the rank of its style;
  an admonition label ("Note", "Tip") set like a heading is neither heading nor text;
- a vertical gap wider than the body's line pitch ends a paragraph.

Only a few characters of each line are asked about (PDFium is called through ctypes, and
one call per character would cost more than reading the page).
"""

from __future__ import annotations

import ctypes
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from construction.doc_labels import BARE_LABELS, navigation_lines

__all__ = ["Block", "Line", "lay_out", "page_lines"]

_LINE = re.compile(r"[^\r\n]+")
_BOLD_FONT = re.compile(r"bold|black|heavy|demi|semibold|cmbx|,b$", re.IGNORECASE)
_MONO_FONT = re.compile(r"mono|courier|consol|menlo|cmtt|typewriter|code|fixed", re.IGNORECASE)
FIXED_PITCH = 1  # bit 1 of a PDF font descriptor's flags
BOLD_WEIGHT = 700
ZONE = 0.1  # the top and bottom tenth of a page hold running headers and footers
ZONE_LINES = 3  # ... in their first and last three lines
BIGGER = 1.1  # a line this much larger than the body, set apart, is a heading
SAME_SIZE = 0.9  # smaller than this is a footnote or a caption, not a heading
APART = 1.3  # a line with a gap this many line pitches wide is set apart
PARAGRAPH_GAP = 1.45  # a gap wider than this many line pitches ends a paragraph
MAX_HEADING_WORDS = 24
MAX_HEADING_SHARE = 0.15  # a style holding more of the text than this is not headings...
FEW_HEADINGS = 3  # ... unless it is only a few lines (a short page has a large title)
MAX_LEVEL = 6


@dataclass(slots=True)
class Line:
    """One line of a page as PDFium reads it, with the typography of its characters."""

    text: str
    y: float  # baseline, in points down from the top of the page
    size: float  # font size in points (the median of the characters asked about)
    bold: bool
    mono: bool  # set in a fixed-pitch font: code, never a heading
    page_height: float

    @property
    def key(self) -> str:
        """The line with digits and case ignored: a running header on page 3 and 4 alike."""
        return " ".join(re.sub(r"\d+", "#", self.text.lower()).split())


@dataclass(frozen=True)
class Block:
    """A paragraph (``level`` 0) or a heading (``level`` 1 to 6) of one page."""

    lines: tuple[str, ...]
    level: int = 0


def page_lines(page, textpage) -> list[Line]:
    """The lines of one open page, in PDFium's reading order."""
    import pypdfium2.raw as pdfium_c

    handle = textpage.raw
    count = pdfium_c.FPDFText_CountChars(handle)
    if count <= 0:
        return []
    text = textpage.get_text_range()
    if len(text) != count:  # characters outside UCS-2: one call per character, exact
        text = "".join(_char(pdfium_c.FPDFText_GetUnicode(handle, i)) for i in range(count))
    height = page.get_height()
    probe = _Probe(pdfium_c, handle)
    lines: list[Line] = []
    for match in _LINE.finditer(text):
        picks = _picks(match.group())
        if not picks:
            continue
        sizes, ys, bolds, monos = [], [], 0, 0
        for mark in picks:
            size, y, bold, mono = probe.char(match.start() + mark)
            sizes.append(size)
            ys.append(y)
            bolds += bold
            monos += mono
        lines.append(
            Line(
                text=match.group(),
                y=height - sorted(ys)[len(ys) // 2],
                size=sorted(sizes)[len(sizes) // 2],
                bold=2 * bolds > len(picks),
                mono=2 * monos > len(picks),
                page_height=height,
            )
        )
    return lines


def _picks(line: str) -> list[int]:
    """The first, a middle and the last character of a line that are not spaces."""
    first = len(line) - len(line.lstrip())
    if first == len(line):
        return []
    last = len(line.rstrip()) - 1
    middle = (first + last) // 2
    while line[middle].isspace():
        middle += 1
    return sorted({first, middle, last})


def _char(code: int) -> str:
    return "\ufffd" if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF else chr(code)


class _Probe:
    """PDFium's answers about one character, through buffers reused for the whole page;
    what a font's name and weight say is worked out once per font."""

    def __init__(self, pdfium_c, handle) -> None:
        self.c, self.handle = pdfium_c, handle
        self.x, self.y = ctypes.c_double(), ctypes.c_double()
        self.x_ref, self.y_ref = ctypes.byref(self.x), ctypes.byref(self.y)
        self.flags = ctypes.c_int()
        self.flags_ref = ctypes.byref(self.flags)
        self.name = ctypes.create_string_buffer(128)
        self.fonts: dict[tuple[bytes, int], tuple[bool, bool]] = {}

    def char(self, index: int) -> tuple[float, float, bool, bool]:
        """Font size, baseline, and whether the font is bold and fixed-pitch."""
        c, handle = self.c, self.handle
        size = float(c.FPDFText_GetFontSize(handle, index))
        c.FPDFText_GetCharOrigin(handle, index, self.x_ref, self.y_ref)
        self.name.value = b""
        c.FPDFText_GetFontInfo(handle, index, self.name, len(self.name), self.flags_ref)
        key = (self.name.value, self.flags.value)
        style = self.fonts.get(key)
        if style is None:
            name = key[0].decode("latin-1")
            bold = bool(_BOLD_FONT.search(name))
            if not bold:
                bold = c.FPDFText_GetFontWeight(handle, index) >= BOLD_WEIGHT
            style = self.fonts[key] = (bold, bool(key[1] & FIXED_PITCH or _MONO_FONT.search(name)))
        return size, self.y.value, style[0], style[1]


# --- Furniture --------------------------------------------------------------------------

_URL = re.compile(r"\b(?:https?|file|ftp)://\S+|\bwww\.\S+", re.IGNORECASE)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"  # English months
_DATE = re.compile(
    r"\b\d{1,2}[/-]\d{1,2}[/-]\d{2,4}\b|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}\.\d{1,2}\.\d{4}\b"
    rf"|\b{_MONTH}\s+\d{{1,2}},?\s+\d{{4}}\b|\b\d{{1,2}}\s+{_MONTH}\s+\d{{4}}\b"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?(?![\w])",
    re.IGNORECASE,
)
_PAGE_NUMBER = re.compile(
    r"\b\d+\s*/\s*\d+\b|\bpage\s+\d+(?:\s+of\s+\d+)?\b|\b\d+\s+of\s+\d+\b"
    r"|^\W*(?:\d+|[ivxlcdm]+)\W*$",
    re.IGNORECASE,
)


def _furniture_shaped(text: str, title: str) -> bool:
    """Whether a line holds only dates, times, URLs and page numbers, or those and the
    document's title (a browser's header: "3/16/25, 10:12 AM  Routine Vacuuming")."""
    rest = text
    for pattern in (_URL, _DATE, _PAGE_NUMBER):
        rest = pattern.sub(" ", rest)
    rest = " ".join(rest.split()).strip(" -–—|·•,")
    if not re.search(r"\w", rest):
        return True
    if rest == " ".join(text.split()) or not title:
        return False
    folded, whole = rest.rstrip("…. ").casefold(), " ".join(title.split()).casefold()
    return bool(folded) and whole.startswith(folded)


def _zone_indices(lines: Sequence[Line]) -> list[tuple[str, int]]:
    """(band, index) of the lines a running header or footer can be: the top-most and
    bottom-most few lines of a page, within its top or bottom tenth."""
    order = sorted(range(len(lines)), key=lambda i: lines[i].y)
    found = []
    for i in order[:ZONE_LINES]:
        if lines[i].y <= ZONE * lines[i].page_height:
            found.append(("top", i))
    for i in order[-ZONE_LINES:]:
        if lines[i].y >= (1 - ZONE) * lines[i].page_height and ("top", i) not in found:
            found.append(("bottom", i))
    return found


def furniture(pages: Sequence[Sequence[Line]], title: str) -> list[set[int]]:
    """Per page, the indices of its lines that are page furniture, not text."""
    zones = [_zone_indices(lines) for lines in pages]
    seen: Counter[tuple[str, str]] = Counter()
    for lines, zone in zip(pages, zones, strict=True):
        seen.update({(band, lines[i].key) for band, i in zone if re.search(r"\w", lines[i].key)})
    recurring = 2 if len(pages) <= 6 else 3
    dropped: list[set[int]] = []
    for lines, zone in zip(pages, zones, strict=True):
        out = {
            i
            for band, i in zone
            if seen[(band, lines[i].key)] >= recurring or _furniture_shaped(lines[i].text, title)
        }
        out |= navigation_lines([line.text for line in lines])
        dropped.append(out)
    if all(len(out) == len(lines) for lines, out in zip(pages, dropped, strict=True)):
        return [set() for _ in pages]  # every line alike: nothing tells furniture from text
    return dropped


# --- Headings and paragraphs ------------------------------------------------------------


@dataclass(frozen=True)
class _Measure:
    body: float  # the size most characters are set in
    pitch: float  # the usual distance between two lines of body text
    body_bold: bool


def _measure(pages: Sequence[Sequence[Line]]) -> _Measure:
    sizes: Counter[float] = Counter()
    bold_chars = chars = 0
    for lines in pages:
        for line in lines:
            n = len(line.text.strip())
            sizes[round(line.size, 1)] += n
            chars += n
            bold_chars += n if line.bold else 0
    body = sizes.most_common(1)[0][0] if sizes else 10.0
    body = body if body > 0 else 10.0
    gaps = sorted(
        b.y - a.y
        for lines in pages
        for a, b in zip(lines, lines[1:], strict=False)
        if abs(a.size - body) < 0.5 and abs(b.size - body) < 0.5 and 0 < b.y - a.y < 3 * body
    )
    pitch = gaps[len(gaps) // 2] if gaps else 1.2 * body
    return _Measure(body=body, pitch=pitch, body_bold=2 * bold_chars > chars)


def _style(line: Line) -> tuple[float, bool]:
    return round(line.size * 2) / 2, line.bold


# "25.1.5.1. Multixacts and Wraparound": a numbered heading set like the body.
_NUMBERED_HEADING = re.compile(r"^\s*\d+(?:\.\d+)+\.?\s+[^\W\d_][^.!?:]{0,100}$")


def _heading_text(text: str) -> bool:
    words = text.split()
    return (
        bool(re.search(r"[^\W\d_]", text))
        and len(words) <= MAX_HEADING_WORDS
        and not text.rstrip().endswith((",", ";"))
    )


def _candidates(lines: Sequence[Line], kept: Sequence[int], m: _Measure) -> set[int]:
    """Indices of lines set like headings: apart from the line above, and larger than
    the body, or bold and apart from the line below too."""
    found = set()
    for n, i in enumerate(kept):
        line = lines[i]
        if line.mono or line.size < SAME_SIZE * m.body or not _heading_text(line.text):
            continue
        step = m.pitch * line.size / m.body
        before = line.y - lines[kept[n - 1]].y if n else None
        after = lines[kept[n + 1]].y - line.y if n + 1 < len(kept) else None
        if before is not None and before < APART * step:
            continue
        alone = after is None or after >= APART * step
        if (
            line.size >= BIGGER * m.body
            or (alone and line.bold and not m.body_bold)
            or (alone and _NUMBERED_HEADING.match(line.text))
        ):
            found.add(i)
    return found


def _levels(pages, kept, candidates, m: _Measure) -> dict[tuple[float, bool], int]:
    """A level for each heading style, from its rank (largest first, bold before plain);
    a style of many lines holding much of the text is left out: it is body text set
    apart, not headings."""
    share: Counter[tuple[float, bool]] = Counter()
    count: Counter[tuple[float, bool]] = Counter()
    total = 0
    for lines, keep, found in zip(pages, kept, candidates, strict=True):
        for i in keep:
            total += len(lines[i].text)
            if i in found:
                share[_style(lines[i])] += len(lines[i].text)
                count[_style(lines[i])] += 1
    styles = [
        s
        for s, n in share.items()
        if n <= MAX_HEADING_SHARE * max(total, 1) or count[s] <= FEW_HEADINGS
    ]
    styles.sort(key=lambda s: (-s[0], not s[1]))
    return {style: min(rank + 1, MAX_LEVEL) for rank, style in enumerate(styles)}


def lay_out(pages: Sequence[Sequence[Line]], *, title: str) -> list[list[Block]]:
    """Each page as paragraphs and headings, furniture left out (``title`` is the
    document's own, which a browser prints in its running header)."""
    dropped = furniture(pages, title)
    kept = [
        [i for i in range(len(lines)) if i not in out]
        for lines, out in zip(pages, dropped, strict=True)
    ]
    m = _measure([[lines[i] for i in keep] for lines, keep in zip(pages, kept, strict=True)])
    candidates = [_candidates(lines, keep, m) for lines, keep in zip(pages, kept, strict=True)]
    levels = _levels(pages, kept, candidates, m)
    return [
        _page_blocks(lines, keep, found, levels, m)
        for lines, keep, found in zip(pages, kept, candidates, strict=True)
    ]


def _page_blocks(lines, keep, found, levels, m: _Measure) -> list[Block]:
    blocks: list[tuple[list[str], int, Line]] = []  # (lines, level, last line)
    previous: Line | None = None
    for i in keep:
        line = lines[i]
        level = levels.get(_style(line), 0) if i in found else 0
        if level and line.text.strip().rstrip(":").casefold() in BARE_LABELS:
            # "Note" set as a heading labels the paragraph below: not text, but a break
            previous = line
            blocks.append(([], 0, line))
            continue
        step = m.pitch * max(line.size, previous.size if previous else 0) / m.body
        gap = line.y - previous.y if previous is not None else 0.0
        last = blocks[-1] if blocks else None
        if (
            last is not None
            and level
            and last[1] == level
            and _style(last[2]) == _style(line)
            and 0 <= gap <= 1.6 * line.size
        ):
            last[0].append(line.text)  # a heading set on two lines
            blocks[-1] = (last[0], level, line)
        elif (
            last is not None
            and not level
            and not last[1]
            and -0.5 * step <= gap <= PARAGRAPH_GAP * step
        ):
            last[0].append(line.text)
            blocks[-1] = (last[0], 0, line)
        else:
            blocks.append(([line.text], level, line))
        previous = line
    out = [Block(lines=tuple(texts), level=level) for texts, level, _ in blocks if texts]
    return [
        block
        for n, block in enumerate(out)
        if not (
            block.level
            and n + 1 < len(out)
            and out[n + 1].level
            and _words(out[n + 1]) == _words(block)
        )
    ]


def _words(block: Block) -> str:
    return " ".join(" ".join(block.lines).split()).casefold()
