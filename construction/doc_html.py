"""Reading web pages: the main text without the page around it, as light Markdown.

trafilatura finds the article and drops navigation, footers, adverts, scripts and
styles; its XML keeps headings, lists and tables, which are written out as Markdown
(``#`` headings, ``- `` items, table rows as cells joined by " | ") so that sections come
from the same ``markdown_sections`` as for Markdown files. On a short page trafilatura
may find nothing to keep, or flatten the page into one paragraph; then the page's own
``<body>`` is read, with scripts, styles, navigation, headers, footers and forms removed.
Nothing on the page is ever run, and no markup reaches the text.
"""

from __future__ import annotations

import re

from construction.documents import (
    HTML,
    BadDocument,
    Document,
    clean_text,
    control_notes,
    decode_text,
    finish_text,
    markdown_sections,
    stem_title,
)

__all__ = ["html_markdown", "read_html"]

_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([-\w.:]+)""", re.IGNORECASE)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")

# Never text: code, presentation, page furniture and form controls.
_DROP = frozenset(
    {
        *("script", "style", "noscript", "template", "head", "nav", "header", "footer"),
        *("aside", "form", "iframe", "object", "embed", "svg", "math", "canvas", "button"),
        *("select", "option", "textarea", "input", "label", "dialog", "menu"),
    }
)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_ITEMS = frozenset({"li", "item", "dt", "dd"})
_ROWS = frozenset({"tr", "row"})
_CELLS = frozenset({"td", "th", "cell"})
_BREAKS = frozenset({"br", "lb"})
_BLOCKS = frozenset(
    {
        *("p", "div", "section", "article", "main", "blockquote", "quote", "figure"),
        *("figcaption", "address", "details", "summary", "ul", "ol", "dl", "list", "table"),
        *("thead", "tbody", "tfoot", "caption", "center", "body", "hr"),
    }
)


def read_html(raw: bytes, *, filename: str) -> Document:
    """Read a web page's main text; raises ``BadDocument`` when it has none."""
    from lxml import etree, html

    declared = _CHARSET.search(raw[:4096])
    source = decode_text(raw, declared=declared.group(1).decode("ascii") if declared else None)
    notes = control_notes(source)
    source = _XML_DECLARATION.sub("", clean_text(source))
    try:
        root = html.document_fromstring(source)
    except (etree.ParserError, ValueError):
        raise BadDocument("file has no text") from None
    title = _title(root)  # before the body is pruned: the first <h1> may be in a <header>
    try:
        text = finish_text(clean_text(html_markdown(source, root)))
    except RecursionError:  # lxml stops at 256 levels, so only a hostile page gets here
        raise BadDocument("web page is nested too deeply to read") from None
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


def html_markdown(source: str, root) -> str:
    """The main text of a page as light Markdown (``root`` is ``source`` parsed by lxml)."""
    main = _trafilatura(source)
    plain = _render(_plain_body(root))
    if not main.strip():
        return plain
    # trafilatura kept (nearly) everything but lost the headings: the plain reading is
    # as clean and keeps the structure.
    if (
        not re.search(r"^#", main, re.MULTILINE)
        and re.search(r"^#", plain, re.MULTILINE)
        and len(plain) <= 1.5 * len(main) + 200
    ):
        return plain
    return main


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
    except Exception:  # a page trafilatura chokes on is still read by the plain path
        return ""
    body = getattr(extracted, "body", None)
    return _render(body) if body is not None else ""


def _plain_body(root):
    """The page's ``<body>`` with everything that is never text taken out."""
    body = root.find("body")
    if body is None:
        body = root
    for element in list(body.iter()):
        tag = _tag(element)
        dropped = tag is None or tag in _DROP or element.get("hidden") is not None
        if dropped and element.getparent() is not None:
            element.drop_tree()  # keeps the tail, which belongs to the parent
    return body


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
    tag = _tag(element)  # the tree is already pruned (trafilatura's, or _plain_body's)
    if tag is None:
        pass
    elif tag in _BREAKS:
        writer.inline.append(None)
    elif tag in _ROWS:
        cells = [" ".join(" ".join(c.itertext()).split()) for c in element if _tag(c) in _CELLS]
        writer.add("row", " | ".join(cells))
    elif tag == "pre" or (tag == "code" and "\n" in "".join(element.itertext()).strip("\n")):
        code = "".join(element.itertext()).strip("\n")
        writer.add("code", "```\n" + code.replace("```", "'''") + "\n```")
    else:
        level = _HEADINGS.get(tag)
        if tag == "head":  # trafilatura's heading: <head rend="h2">
            level = _HEADINGS.get(element.get("rend", ""), 2)
        kind = f"h{level}" if level else "item" if tag in _ITEMS else None
        if kind or tag in _BLOCKS:
            writer.flush()
            outer, writer.kind = writer.kind, kind or "para"
            _children(element, writer)
            writer.flush()
            writer.kind = outer
        else:
            _children(element, writer)
    if element.tail:
        writer.inline.append(element.tail)


def _children(element, writer: _Writer) -> None:
    if element.text:
        writer.inline.append(element.text)
    for child in element:
        _walk(child, writer)


def _title(root) -> str:
    for path in ("head/title", ".//h1"):
        found = root.find(path)
        if found is not None:
            title = " ".join(" ".join(found.itertext()).split())
            if title:
                return title
    return ""
