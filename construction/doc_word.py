"""Reading Word files (.docx) with python-docx, as light Markdown.

The body is walked in document order, paragraphs and tables interleaved (python-docx's
``paragraphs`` and ``tables`` lists would lose where each table stood). Heading styles
become ``#`` lines, so sections come from the same ``markdown_sections`` as for Markdown
files; list paragraphs become ``- `` items and table rows cells joined by " | ".
Paragraph text is read from the XML directly: tracked insertions, hyperlinks, fields and
content controls hold text that ``Paragraph.text`` skips. In paragraphs and list items,
runs that tell a term apart keep it as light Markdown: code (a code character style or a
fixed-pitch font) in backticks, bold (or "Strong") as ``**x**``, italic (or "Emphasis")
as ``*x*``; headings and table cells stay plain.

A part may declare entities in a DOCTYPE and use them in its text (``&co;``); python-docx
does not expand them, so the reader puts in the text each internal entity declares, and
keeps a reference it cannot expand (external, or holding markup or references of its own)
as written, with a note. The archive is checked before it is opened: what it unpacks to
(a fixed size, and a ratio to the file's size), and while the body is walked, its
paragraphs and characters (``ReadLimits``).
"""

from __future__ import annotations

import io
import re
import zipfile

from construction.doc_limits import ReadLimits
from construction.documents import (
    BadDocument,
    Document,
    clean_text,
    finish_text,
    markdown_sections,
    stem_title,
)
from construction.formats import DOCX

__all__ = ["read_docx"]

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_HEADING_NAME = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
# Text that is not in the document as a reader sees it: deleted or moved-away revisions,
# the fallback copy of a drawing (its text is in the mc:Choice already), field codes; and
# properties, whose <w:tab> elements are tab stops, not tabs.
_SKIP = frozenset(
    {W + "del", W + "moveFrom", MC_FALLBACK, W + "instrText", W + "delText", W + "pPr", W + "rPr"}
)


def read_docx(raw: bytes, *, filename: str, limits: ReadLimits | None = None) -> Document:
    """Read a Word file; raises ``BadDocument`` for a damaged or empty one, or one past
    ``limits`` (the defaults when None)."""
    limits = limits or ReadLimits()
    _check_zip(raw, limits)
    import docx

    try:
        document = docx.Document(io.BytesIO(raw))
        body = document.element.body
        reader = _Reader(document, limits)
        reader.walk(body)
        notes = _entity_notes(body, reader.entities)
        core_title = (document.core_properties.title or "").strip()
    except (BadDocument, MemoryError):  # a limit's words; the child's memory cap
        raise
    except Exception as exc:  # python-docx raises KeyError, ValueError, lxml errors...
        raise BadDocument(f"not a readable Word file (.docx): {_reason(exc)}") from None
    text = finish_text(clean_text("\n\n".join(reader.out)))
    sections = markdown_sections(text)
    title = " ".join(core_title.split()) or next((s.path[-1] for s in sections), "")
    return Document(
        title=title or stem_title(filename),
        text=text,
        media_type=DOCX,
        text_format="markdown",
        sections=sections,
        pages=(),
        notes=notes,
    )


def _check_zip(raw: bytes, limits: ReadLimits) -> None:
    """Refuses an archive that is no Word file or unpacks too far, before it is opened.

    The sizes are those the archive states: ``zipfile`` (and so python-docx) never reads
    more of a member than its stated size.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            names = set(archive.namelist())
            unpacked = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise BadDocument(
            "not a readable Word file (.docx): it is not a zip archive, or it is cut short"
        ) from None
    if "[Content_Types].xml" not in names:
        raise BadDocument("not a readable Word file (.docx): it holds no Word document")
    refusal = limits.unpack_refusal(len(raw), unpacked)
    if refusal is not None:
        raise BadDocument(refusal)


def _reason(exc: Exception) -> str:
    text = str(exc).strip().strip("'\"")
    if isinstance(exc, KeyError):
        return f"a part is missing ({text})"
    if exc.__class__.__name__ == "XMLSyntaxError":
        return f"a part is not well-formed XML ({text[:120]})"
    return text[:200] or exc.__class__.__name__


class _Reader:
    """Walks the body, appending one Markdown block per paragraph, list run or table."""

    def __init__(self, document, limits: ReadLimits) -> None:
        self.styles = document.styles
        self.kinds: dict[str | None, tuple[str, int]] = {}
        self.out: list[str] = []
        self.items: list[str] = []
        self.limits = limits
        self.seen = 0  # paragraphs met, empty ones too: each costs the walk
        self.chars = 0
        self.entities = _declared_entities(document.element)

    def count(self, text: str) -> str:
        self.chars += len(text)
        if self.chars > self.limits.max_chars:
            raise BadDocument(self.limits.chars())
        return text

    def walk(self, container) -> None:
        for child in container.iterchildren():
            if child.tag == W + "p":
                self.seen += 1
                if self.seen > self.limits.max_paragraphs:
                    raise BadDocument(self.limits.paragraphs())
                self.paragraph(child)
            elif child.tag == W + "tbl":
                self.table(child)
            elif child.tag == W + "sdt":
                content = child.find(W + "sdtContent")
                if content is not None:
                    self.walk(content)
        self.close_list()

    def close_list(self) -> None:
        if self.items:
            self.out.append("\n".join(self.items))
            self.items = []

    def paragraph(self, p) -> None:
        kind, level = self.kind(p)
        ent = self.entities
        text = self.count(_text(p, ent) if kind == "heading" else _marked_text(p, ent)).strip()
        if not text:
            return
        if kind == "item":
            self.items.append("- " + " ".join(text.split()))
            return
        self.close_list()
        if kind == "heading":
            self.out.append("#" * min(level, 6) + " " + " ".join(text.split()))
        else:
            self.out.append(text)

    def table(self, tbl) -> None:
        self.close_list()
        rows = []
        for tr in tbl.iter(W + "tr"):
            if tr.getparent() is not tbl:
                continue  # a nested table's rows are read as its cell's text
            cells = [
                " ".join(self.count(_text(tc, self.entities)).split())
                for tc in tr.iterchildren(W + "tc")
            ]
            if any(cells):
                rows.append(" | ".join(cells))
        if rows:
            self.out.append("\n".join(rows))

    def kind(self, p) -> tuple[str, int]:
        """("heading", level), ("item", 0) or ("para", 0) from the style and numbering."""
        ppr = p.find(W + "pPr")
        style_id = None
        if ppr is not None:
            pstyle = ppr.find(W + "pStyle")
            style_id = pstyle.get(W + "val") if pstyle is not None else None
            outline = ppr.find(W + "outlineLvl")
            if outline is not None and (outline.get(W + "val") or "9").isdigit():
                level = int(outline.get(W + "val")) + 1
                if level <= 9:
                    return ("heading", level)
        if style_id not in self.kinds:
            self.kinds[style_id] = self._style_kind(style_id)
        kind = self.kinds[style_id]
        if kind[0] == "para" and ppr is not None and ppr.find(W + "numPr") is not None:
            return ("item", 0)
        return kind

    def _style_kind(self, style_id: str | None) -> tuple[str, int]:
        style = None
        if style_id is not None:
            style = next((s for s in self.styles if s.style_id == style_id), None)
        for _ in range(5):  # a custom style based on "Heading 2" is a heading too
            if style is None:
                break
            name = style.name or ""
            if name.lower() == "title":
                return ("heading", 1)
            if match := _HEADING_NAME.match(name):
                return ("heading", int(match.group(1)))
            if "list" in name.lower() or style.element.find(f"{W}pPr/{W}numPr") is not None:
                return ("item", 0)
            style = getattr(style, "base_style", None)
        return ("para", 0)


def _declared_entities(root) -> dict[str, str]:
    """The entities a part's DOCTYPE declares whose text is plain (no markup, no further
    reference): each is put in the text where it is used."""
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is None:
        return {}
    return {
        e.name: e.content
        for e in dtd.iterentities()
        if e.content is not None and "&" not in e.content and "<" not in e.content
    }


def _entity_notes(body, entities: dict[str, str]) -> tuple[str, ...]:
    """The note for entity references kept as written (none when every one was expanded)."""
    from lxml import etree

    kept = sorted({node.name for node in body.iter(etree.Entity)} - entities.keys())
    if not kept:
        return ()
    shown = ", ".join(f"&{name};" for name in kept[:5]) + (", …" if len(kept) > 5 else "")
    return (
        f"kept {len(kept)} entity reference{'s' if len(kept) != 1 else ''} as written "
        f"({shown}): the file does not declare their text plainly",
    )


def _t_text(t, entities: dict[str, str]) -> str:
    """A ``<w:t>``'s text, its entity references expanded (or kept as written)."""
    if not len(t):
        return t.text or ""
    from lxml import etree

    parts = [t.text or ""]
    for node in t:  # what follows a child (its tail) is the <w:t>'s text all the same
        if node.tag is etree.Entity:
            parts.append(entities.get(node.name, f"&{node.name};"))
        parts.append(node.tail or "")
    return "".join(parts)


def _text(element, entities: dict[str, str]) -> str:
    """The visible text under a paragraph or cell: tabs and breaks kept."""
    parts: list[str] = []

    def visit(node) -> None:
        for child in node.iterchildren():
            tag = child.tag
            if tag in _SKIP:
                continue
            if tag == W + "t":
                parts.append(_t_text(child, entities))
            elif tag == W + "tab":
                parts.append("\t")
            elif tag in (W + "br", W + "cr"):
                parts.append("\n")
            elif tag == W + "noBreakHyphen":
                parts.append("-")
            elif tag == W + "p" and parts:
                parts.append("\n")  # paragraphs in a cell or text box
                visit(child)
            else:
                visit(child)

    visit(element)
    return "".join(parts)


_OFF = frozenset({"0", "false", "off", "none"})
_MONO = ("courier", "consolas", "mono", "menlo", "source code", "lucida console", "fira code")


def _toggled(rpr, name: str) -> bool:
    found = rpr.find(W + name)
    return found is not None and (found.get(W + "val") or "true").lower() not in _OFF


def _marker(run) -> str:
    """The Markdown a run's formatting stands for: "`", "**", "*" or ""."""
    rpr = run.find(W + "rPr")
    if rpr is None:
        return ""
    style = rpr.find(W + "rStyle")
    style_id = (style.get(W + "val") or "").lower() if style is not None else ""
    fonts = rpr.find(W + "rFonts")
    font = (fonts.get(W + "ascii") or fonts.get(W + "hAnsi") or "") if fonts is not None else ""
    if "code" in style_id or "verbatim" in style_id or any(m in font.lower() for m in _MONO):
        return "`"
    if _toggled(rpr, "b") or style_id == "strong":
        return "**"
    if _toggled(rpr, "i") or style_id == "emphasis":
        return "*"
    return ""


_RUN_HOLDERS = frozenset(
    {W + name for name in ("hyperlink", "ins", "moveTo", "smartTag", "sdt", "sdtContent")}
    | {W + "fldSimple", W + "customXml"}
)


def _marked_text(p, entities: dict[str, str]) -> str:
    """A paragraph's text with its runs' code, bold and italic as light Markdown."""
    pieces: list[tuple[str, str]] = []  # (marker, text), adjacent runs alike merged
    for child in p.iterchildren():
        if child.tag in _SKIP:
            continue
        if child.tag == W + "r":
            marker, text = _marker(child), _text(child, entities)
        elif child.tag in _RUN_HOLDERS:
            marker, text = "", _marked_text(child, entities)
        else:
            marker, text = "", _text(child, entities)
        if pieces and pieces[-1][0] == marker:
            pieces[-1] = (marker, pieces[-1][1] + text)
        else:
            pieces.append((marker, text))
    return "".join(_wrap(marker, text) for marker, text in pieces)


def _wrap(marker: str, text: str) -> str:
    core = " ".join(text.split())
    if not marker or not core or "\n" in text.strip() or (marker != "`" and "*" in core):
        return text
    lead = " " if text[:1].isspace() else ""
    trail = " " if text[-1:].isspace() else ""
    if marker == "`" and "`" in core:
        return f"{lead}`` {core} ``{trail}"
    return f"{lead}{marker}{core}{marker}{trail}"
