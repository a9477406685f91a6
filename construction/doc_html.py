"""Reading web pages: the main text without the page around it, as light Markdown.

``doc_html_clean`` first takes away what documentation generators put around the text
(navigation bars, breadcrumbs, sidebars, prev/next tables, "edit this page" and heading
anchor links, the labels of notes and warnings). When the page says where its text is
(``role="main"``, ``<main>``, a generator's own container, or a DocBook, Javadoc or
docutils page's body), that part is read as it is; otherwise trafilatura finds the
article and drops what is left of the page around it. On a short page trafilatura may
find nothing to keep, or flatten the page into one paragraph; then the pruned ``<body>``
is read.

The text is written out as light Markdown: ``#`` headings (so sections come from the
same ``markdown_sections`` as for Markdown files), ``- `` items, definition terms on a
line of their own, table rows as cells joined by " | ", code blocks fenced, and the
inline markup that tells a term apart: code (``<code>``, ``<tt>``, ``<kbd>``, ``<samp>``)
in backticks, emphasis (``<em>``, ``<i>``, ``<dfn>``) as ``*x*`` and strong text as
``**x**``. Nothing on the page is ever run, and no other markup reaches the text.
"""

from __future__ import annotations

import re

from construction.doc_html_clean import generator, main_part, prune
from construction.doc_limits import ReadLimits
from construction.documents import (
    BadDocument,
    Document,
    clean_text,
    control_notes,
    decode_text,
    finish_text,
    markdown_sections,
    stem_title,
)
from construction.formats import HTML

__all__ = ["html_markdown", "read_html"]

_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([-\w.:]+)""", re.IGNORECASE)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")

_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_ITEMS = frozenset({"li", "item"})
_TERMS = frozenset({"dt"})
_CODE = frozenset({"code", "tt", "kbd", "samp"})
_EMPHASIS = {"em": "*", "i": "*", "dfn": "*", "var": "*", "strong": "**", "b": "**"}
_CODE_SPANS = re.compile(r"(`+)[^`]*\1")
_RENDITION = {"#i": "*", "#b": "**", "#t": "`"}  # trafilatura's <hi rend="...">
_ROWS = frozenset({"tr", "row"})
_CELLS = frozenset({"td", "th", "cell"})
_BREAKS = frozenset({"br", "lb"})
_BLOCKS = frozenset(
    {
        *("p", "div", "section", "article", "main", "blockquote", "quote", "figure"),
        *("figcaption", "address", "details", "summary", "ul", "ol", "dl", "list", "table"),
        *("thead", "tbody", "tfoot", "caption", "center", "body", "hr", "dd", "dl"),
        *("header", "main"),
    }
)


def read_html(raw: bytes, *, filename: str, limits: ReadLimits | None = None) -> Document:
    """Read a web page's main text; raises ``BadDocument`` when it has none. (The limits
    are checked on the text by ``read_document``; none applies while parsing.)"""
    from lxml import etree, html

    declared = _CHARSET.search(raw[:4096])
    source = decode_text(raw, declared=declared.group(1).decode("ascii") if declared else None)
    notes = control_notes(source)
    source = _XML_DECLARATION.sub("", clean_text(source))
    parser = html.HTMLParser()
    try:
        root = html.document_fromstring(source, parser=parser)
    except (etree.ParserError, ValueError):
        if _too_deep(parser):
            raise BadDocument(TOO_DEEP) from None
        raise BadDocument("file has no text") from None
    if _too_deep(parser):  # libxml2 drops what lies deeper, silently: say so
        if not _has_words(root):
            raise BadDocument(TOO_DEEP)
        notes = (*notes, TOO_DEEP_NOTE)
    title = _title(root)  # before the body is pruned: the first <h1> may be in a <header>
    visible = _has_words(root)
    try:
        text = finish_text(clean_text(html_markdown(root)))
    except RecursionError:  # lxml stops at 256 levels, so only a hostile page gets here
        raise BadDocument("web page is nested too deeply to read") from None
    except BadDocument:
        if visible:
            raise BadDocument(NAVIGATION_ONLY) from None
        raise
    sections = markdown_sections(text)
    return Document(
        title=title or next((s.path[-1] for s in sections), "") or stem_title(filename),
        text=text,
        media_type=HTML,
        text_format="markdown",
        sections=sections,
        pages=(),
        notes=notes,
    )


NAVIGATION_ONLY = "web page has no text of its own: only navigation, menus and other page furniture"
MAX_DEPTH = 255  # libxml2's limit without XML_PARSE_HUGE, which would lift every bound
TOO_DEEP = (
    f"web page nests its elements more than {MAX_DEPTH} levels deep, and all its text "
    "lies deeper: the HTML reader stops there"
)
TOO_DEEP_NOTE = (
    f"text nested more than {MAX_DEPTH} levels deep was left out (the HTML reader stops "
    "there); the rest was imported"
)


def _too_deep(parser) -> bool:
    return any("Excessive depth" in entry.message for entry in parser.error_log)


def _has_words(root) -> bool:
    body = root.find("body")
    if body is None:
        return False
    skipped = {"script", "style", "noscript", "template"}
    return any(
        (node.text or "").strip() and _tag(node) not in skipped for node in body.iter()
    ) or any((node.tail or "").strip() for node in body.iter())


def html_markdown(root) -> str:
    """The main text of a page parsed by lxml, as light Markdown (``root`` is pruned in
    place)."""
    from lxml import html

    made_by = generator(root)
    prune(root)
    main = main_part(root, made_by)
    if main is not None:
        return _render(main)
    body = root.find("body")
    plain = _render(body if body is not None else root)
    found = _trafilatura(html.tostring(root, encoding="unicode"))
    if not found.strip():
        return plain
    # trafilatura kept (nearly) everything but lost the headings: the plain reading is
    # as clean and keeps the structure.
    if (
        not re.search(r"^#", found, re.MULTILINE)
        and re.search(r"^#", plain, re.MULTILINE)
        and len(plain) <= 1.5 * len(found) + 200
    ):
        return plain
    return found


def _trafilatura(source: str) -> str:
    import trafilatura

    try:
        extracted = trafilatura.bare_extraction(
            source,
            include_comments=False,
            include_tables=True,
            include_formatting=True,
            include_links=False,
            include_images=False,
            favor_recall=True,
            with_metadata=False,
        )
    except MemoryError:  # the child's memory cap: the plain path would not fare better
        raise
    except Exception:  # a page trafilatura chokes on is still read by the plain path
        return ""
    body = getattr(extracted, "body", None)
    return _render(body) if body is not None else ""


def _tag(element) -> str | None:
    tag = element.tag
    if not isinstance(tag, str):
        return None  # a comment or processing instruction
    return tag.rsplit("}", 1)[-1].lower()


class _Writer:
    """Collects inline text into blocks and writes them out as Markdown."""

    def __init__(self) -> None:
        self.blocks: list[tuple[str, str]] = []  # (kind, markdown line or lines)
        self.inline: list[str | None] = []  # None marks a hard line break
        self.kind = "para"
        self.open_item = False  # a list item whose "- " is still to be written
        self.in_cell = False  # a table cell is one line: its code is inline too

    @property
    def plain(self) -> bool:
        """Headings carry no inline markup: their words are a section's path."""
        return self.kind.startswith("h")

    def flush(self) -> None:
        lines: list[str] = []
        line: list[str] = []
        for piece in [*self.inline, None]:
            if piece is None:
                lines.append(" ".join("".join(line).split()))
                line = []
            else:
                line.append(piece)
        self.inline = []
        text = "\n".join(x for x in lines if x)
        if not text:
            return
        if self.kind == "item":
            text = "- " + text.replace("\n", " ")
            self.open_item = False
        elif self.kind.startswith("h"):
            text = "#" * int(self.kind[1]) + " " + text.replace("\n", " ")
        self.blocks.append((self.kind, text))

    def add(self, kind: str, text: str) -> None:
        self.flush()
        if text.strip("\n"):
            self.blocks.append((kind, text))

    def markdown(self) -> str:
        self.flush()
        out: list[str] = []
        previous = ""
        for kind, text in self.blocks:
            if out:
                out.append("\n" if kind == previous and kind in {"item", "row"} else "\n\n")
            out.append(text)
            previous = kind
        return "".join(out)


def _render(root) -> str:
    writer = _Writer()
    _walk(root, writer)
    return writer.markdown()


def _walk(element, writer: _Writer) -> None:
    tag = _tag(element)  # the tree is already pruned (trafilatura's, or doc_html_clean's)
    if tag is None:
        pass
    elif tag in _BREAKS:
        writer.inline.append(None)
    elif tag in _ROWS:
        cells = [_cell(c) for c in element if _tag(c) in _CELLS]
        writer.add("row", " | ".join(cells))
    elif not writer.in_cell and (
        tag == "pre" or (tag == "code" and "\n" in "".join(element.itertext()).strip("\n"))
    ):
        code = "".join(element.itertext()).strip("\n")
        writer.add("code", "```\n" + code.replace("```", "'''") + "\n```")
    elif (marker := _marker(element, tag)) and not writer.plain:
        if marker == "`":
            writer.inline.append(_code_span("".join(element.itertext())))
        else:
            _emphasis(element, writer, marker)
    else:
        _block_or_inline(element, tag, writer)
    if element.tail:
        writer.inline.append(element.tail)


def _marker(element, tag: str) -> str:
    if tag in _CODE or tag == "pre":
        return "`"
    if tag == "hi":
        return _RENDITION.get(element.get("rend", ""), "")
    return _EMPHASIS.get(tag, "")


def _block_or_inline(element, tag: str, writer: _Writer) -> None:
    level = _HEADINGS.get(tag)
    if tag == "head":  # trafilatura's heading: <head rend="h2">
        level = _HEADINGS.get(element.get("rend", ""), 2)
    kind = f"h{level}" if level else "item" if tag in _ITEMS else "term" if tag in _TERMS else None
    if not kind and tag not in _BLOCKS:
        _children(element, writer)
        return
    writer.flush()
    outer, opened = writer.kind, writer.open_item
    if kind is None and outer == "item" and writer.open_item:
        kind = "item"  # an item's first paragraph carries its "- "
    writer.kind = kind or "para"
    writer.open_item = kind == "item"
    _children(element, writer)
    writer.flush()
    writer.kind = outer
    writer.open_item = opened and writer.open_item


def _children(element, writer: _Writer) -> None:
    if element.text:
        writer.inline.append(element.text)
    for child in element:
        _walk(child, writer)


def _code_span(text: str) -> str:
    """Inline code in backticks; a code holding a backtick is fenced with two."""
    text = " ".join(text.split())
    if not text:
        return ""
    if "`" not in text:
        return f"`{text}`"
    return f"`` {text} ``"


def _emphasis(element, writer: _Writer, marker: str) -> None:
    """``*x*`` or ``**x**`` around what the element holds, its outer spaces outside.

    Emphasis across a line break or a block, or around a ``*`` of its own, would not
    read back as emphasis: those are left as plain words.
    """
    mark, blocks = len(writer.inline), len(writer.blocks)
    _children(element, writer)
    pieces = writer.inline[mark:]
    if len(writer.blocks) != blocks or None in pieces:
        return
    inner = "".join(p for p in pieces if p is not None)
    core = " ".join(inner.split())
    if not core or "*" in _CODE_SPANS.sub("", core):
        return
    lead = " " if inner[:1].isspace() else ""
    trail = " " if inner[-1:].isspace() else ""
    writer.inline[mark:] = [f"{lead}{marker}{core}{marker}{trail}"]


def _cell(element) -> str:
    writer = _Writer()
    writer.in_cell = True
    _children(element, writer)
    return " ".join(writer.markdown().split())


def _title(root) -> str:
    for path in ("head/title", ".//h1"):
        found = root.find(path)
        if found is not None:
            title = " ".join(" ".join(found.itertext()).split())
            if title:
                return title
    return ""
