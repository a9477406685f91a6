"""Reading PDFs with PDFium (pypdfium2): the text layer page by page, laid out again.

A PDF states lines, not paragraphs or headings, so the stored text is plain text: each
page's paragraphs (blank lines between), pages separated by a blank line, with the start
offset of every page kept so evidence can cite "page 12". ``doc_pdf_layout`` reads each
line's typography to leave out running headers and footers, to end paragraphs where the
page leaves a gap, and to set headings apart (a heading never runs into the sentence
below it). Sections come from the outline (bookmarks), the structure a PDF states on
purpose; without one, from the headings found in the typography.

Pages are opened, read and closed one at a time: a thousand-page PDF never holds more
than one page's objects, only the lines read from them. Before PDFium opens the file, its
Flate streams are inflated here, a megabyte at a time and kept nowhere, to count what
they unpack to (``ReadLimits``): a stream of gigabytes of spaces is refused in words
before anything holds it. The pages and the characters read are counted as well.
"""

from __future__ import annotations

import re
import zlib

from construction.doc_limits import MB, ReadLimits
from construction.doc_pdf_layout import Block, Line, lay_out, page_lines
from construction.documents import (
    BadDocument,
    Document,
    clean_text,
    nest_sections,
    short_line,
    stem_title,
)
from construction.formats import PDF

__all__ = ["read_pdf"]

ENCRYPTED = "PDF is encrypted: remove the password and import it again"
NO_TEXT = "no text layer: OCR is not supported"

# PDFium joins a word it sees hyphenated across a line end and marks the join with \x02
# (\ufffe from the UCS-2 call); a hyphen it missed is "-" before a line break with
# lower-case letters on both sides. Soft hyphens are invisible and split words.
_PDFIUM_HYPHEN = re.compile("[\x02\ufffe\u00ad]\n?")
_LINE_END_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\u2010]\n(?=[^\W\d_])")
_TRAILING_SPACE = re.compile(r"[ \t]+(?=\n|$)")
_LOAD_ERRORS = {  # PDFium's FPDF_ERR_* codes, in words
    1: "PDFium could not say why",
    2: "the file could not be opened",
    3: "it is damaged, or not a PDF at all",
    6: "a page is missing or damaged",
}
_BLANK_RUN = re.compile(r"\n{3,}")
_ANCHOR_GLYPH = re.compile(r"\s*[¶#\uf0c1]$")
_NUMBERED_LINE = r"^[ \t]*(?:(?:\d+|[A-Z])(?:\.\d+)*\.?[ \t]+)?"
_PLACEHOLDER_TITLES = frozenset({"untitled", "anonymous", "(unspecified)", "unspecified"})


def _read_lines(pdf, limits: ReadLimits) -> list[list[Line]]:
    """The lines of every page of an open ``PdfDocument``, one page at a time."""
    pages: list[list[Line]] = []
    chars = 0
    for index in range(len(pdf)):
        page = pdf.get_page(index)
        try:
            textpage = page.get_textpage()
            try:
                lines = page_lines(page, textpage)
            finally:
                textpage.close()
        finally:
            page.close()
        chars += sum(len(line.text) for line in lines)
        if chars > limits.max_chars:
            raise BadDocument(limits.chars())
        pages.append(lines)
    return pages


# A stream's data starts after "stream" and its line end, its dictionary just before.
_STREAM = re.compile(rb">>\s*stream(?:\r\n|\n|\r)")
_FEED = 64 * 1024


def inflated_size(raw: bytes, cap: int) -> int:
    """What the file's Flate streams unpack to, counted up to just past ``cap``.

    Each stream is fed to zlib ``_FEED`` bytes at a time and inflated a megabyte at a time,
    its output thrown away: counting a bomb costs the time to inflate ``cap`` bytes and no
    memory to speak of, and a file of many streams costs what its streams hold. Data that
    is not a zlib stream (images in other encodings, a false "stream") is skipped at its
    first bytes.
    """
    total = 0
    view = memoryview(raw)
    for match in _STREAM.finditer(raw):
        inflater = zlib.decompressobj()
        at = match.end()
        try:
            while at < len(raw) and not inflater.eof:
                data: bytes | memoryview = view[at : at + _FEED]
                at += len(data)
                while data and not inflater.eof:
                    total += len(inflater.decompress(data, MB))
                    if total > cap:
                        return total
                    data = inflater.unconsumed_tail
        except zlib.error:
            continue
    return total


def _check_inflation(raw: bytes, limits: ReadLimits) -> None:
    cap = min(limits.max_unpacked_bytes, limits.inflation_cap(len(raw)))
    refusal = limits.unpack_refusal(len(raw), inflated_size(raw, cap))
    if refusal is not None:
        raise BadDocument(refusal)


def clean_page(raw: str) -> str:
    """One page's text in stored form: words joined across hyphenated line ends."""
    text = raw.replace("\r\n", "\n").replace("\r", "\n")
    text = _PDFIUM_HYPHEN.sub("", text)
    text = _LINE_END_HYPHEN.sub(lambda m: "" if m.string[m.end()].islower() else m.group(0), text)
    text = _TRAILING_SPACE.sub("", clean_text(text))
    return text.strip()


def read_pdf(raw: bytes, *, filename: str, limits: ReadLimits | None = None) -> Document:
    """Read a PDF's text layer; raises ``BadDocument`` for encrypted, damaged or scanned
    ones, and for one past ``limits`` (the defaults when None)."""
    limits = limits or ReadLimits()
    _check_inflation(raw, limits)
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        pdf = pdfium.PdfDocument(raw)
    except pdfium.PdfiumError as exc:
        if exc.err_code in (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY):
            raise BadDocument(ENCRYPTED) from None
        why = _LOAD_ERRORS.get(exc.err_code, _reason(exc))
        raise BadDocument(f"not a readable PDF ({why})") from None
    except MemoryError:
        raise
    except Exception as exc:  # PDFium is C code; anything it throws means "cannot read"
        raise BadDocument(f"not a readable PDF ({exc.__class__.__name__})") from None
    try:
        if len(pdf) > limits.max_pages:
            raise BadDocument(limits.pages())
        try:
            lines = _read_lines(pdf, limits)
            outline = _outline(pdf)
            meta_title = (pdf.get_metadata_value("Title") or "").strip()
        except (BadDocument, MemoryError):  # a limit's words; the child's memory cap
            raise
        except Exception as exc:
            raise BadDocument(f"not a readable PDF ({_reason(exc)})") from None
    finally:
        pdf.close()
    if meta_title.lower() in _PLACEHOLDER_TITLES:
        meta_title = ""
    laid = lay_out(lines, title=meta_title)
    texts, headings = _page_texts(laid)
    if not any(texts):
        raise BadDocument(NO_TEXT)
    if outline:
        texts = _headings_apart(outline, texts)
    pages: list[int] = []
    at = 0
    for page_text in texts:
        pages.append(at)
        at += len(page_text) + 2
    text = "\n\n".join(texts) + "\n"
    if outline:
        sections = _sections(outline, texts, pages, len(text))
    else:
        found = [(pages[index] + offset, level, title) for index, offset, level, title in headings]
        sections = nest_sections(found, len(text))
    first_heading = next((s.path[-1] for s in sections if s.level == 1), "")
    return Document(
        title=" ".join(meta_title.split())
        or first_heading
        or short_line(text)
        or stem_title(filename),
        text=text,
        media_type=PDF,
        text_format="plain",
        sections=sections,
        pages=tuple(pages),
    )


def _page_texts(laid: list[list[Block]]) -> tuple[list[str], list[tuple[int, int, int, str]]]:
    """Each page's text, its blocks a blank line apart, and (page index, offset in the
    page, level, title) of each heading."""
    texts: list[str] = []
    headings: list[tuple[int, int, int, str]] = []
    for index, blocks in enumerate(laid):
        parts: list[str] = []
        at = 0
        for block in blocks:
            body = clean_page("\n".join(block.lines))
            if block.level:  # a web page's heading anchor ("¶", "#") is printed after it
                body = _ANCHOR_GLYPH.sub("", " ".join(body.split()))
            if not body:
                continue
            if parts:
                at += 2
            if block.level:
                headings.append((index, at, block.level, body))
            parts.append(body)
            at += len(body)
        texts.append("\n\n".join(parts))
    return texts, headings


def _reason(exc: Exception) -> str:
    message = str(exc).strip().rstrip(".")
    inner = re.search(r"\(PDFium: (.*)\)", message)
    return (inner.group(1) if inner else message or exc.__class__.__name__).lower()


def _outline(pdf) -> list[tuple[int, str, int]]:
    """(level, title, page index) of each bookmark that points at a page of this file."""
    entries = []
    for bookmark in pdf.get_toc():
        title = " ".join(bookmark.get_title().split())
        dest = bookmark.get_dest()
        index = dest.get_index() if dest is not None else None
        if title and index is not None and 0 <= index < len(pdf):
            entries.append((bookmark.level + 1, clean_text(title), index))
    return entries


def _headings_apart(outline, texts: list[str]) -> list[str]:
    """A bookmarked heading that fills a line of its page becomes a paragraph of its own.

    PDF text has no paragraph marks: without this, "Byte-pair encoding" would run into
    the sentence below it and become part of that sentence's subject.
    """
    texts = list(texts)
    for _, title, index in outline:
        words = r"\s+".join(re.escape(word) for word in title.split())
        if not words or not 0 <= index < len(texts):
            continue
        line = re.compile(_NUMBERED_LINE + words + r"[ \t]*$", re.IGNORECASE | re.MULTILINE)
        texts[index] = line.sub(lambda m: "\n" + m.group(0) + "\n", texts[index], count=1)
        texts[index] = _BLANK_RUN.sub("\n\n", texts[index]).strip("\n")
    return texts


def _sections(outline, texts: list[str], pages: list[int], length: int):
    """Bookmarks as sections, each starting at the line where its title appears on its page.

    A bookmark names a page, not a line; finding the title on that page (after the
    previous heading found there) lets two headings on one page govern their own text.
    A line that starts with the title, perhaps after a number ("2.1 Areas" for "Areas"),
    wins over the title inside a sentence. When the title is not on the page as text,
    the section starts with the page.
    """
    found: list[tuple[int, int, str]] = []
    floor: dict[int, int] = {}
    for level, title, index in outline:
        words = r"\s+".join(re.escape(word) for word in title.split())
        page, after = texts[index], floor.get(index, 0)
        match = re.compile(_NUMBERED_LINE + words, re.IGNORECASE | re.MULTILINE).search(
            page, after
        ) or re.compile(words, re.IGNORECASE).search(page, after)
        if match:
            floor[index] = match.end()
        found.append((pages[index] + (match.start() if match else after), level, title))
    found.sort(key=lambda item: item[0])
    return nest_sections(found, length)
