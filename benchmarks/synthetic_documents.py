"""Generated documents in every format kgreview reads, for tests and benchmarks.

The same lessons come out as one Markdown handbook, a PDF with bookmarks, an HTML page
wrapped in real boilerplate and a Word file, so a test can check that each reader finds
the same sentences and headings. ``pages_pdf`` makes long PDFs fast (a thousand pages in
seconds) to measure the PDF reader. reportlab and python-docx are imported on first use.
"""

from __future__ import annotations

import html
import io
import random
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.synthetic import ADJECTIVES, NOUNS, concept_names
from construction.documents import BadDocument, parse_front_matter

__all__ = [
    "SAMPLE_LESSONS",
    "handbook_docx",
    "handbook_html",
    "handbook_markdown",
    "handbook_pdf",
    "pages_pdf",
]

TITLE = "AI Engineering Handbook"

SAMPLE_LESSONS: tuple[tuple[str, str], ...] = (
    (
        "Routing",
        "# Routing\n\n"
        "Open Shortest Path First (**OSPF**) is a link-state routing protocol used inside "
        "autonomous systems. It computes shortest paths with Dijkstra's algorithm over the "
        "link-state database.\n\n"
        "## Link-state advertisements\n\n"
        "Routers flood link-state advertisements to every neighbour in their area. Each "
        "advertisement carries a sequence number, so stale copies are dropped.\n\n"
        "- A router advertisement describes the links of one router.\n"
        "- A network advertisement describes one broadcast segment.\n\n"
        "### Areas\n\n"
        "An area confines flooding to part of the network. The backbone area connects all "
        "other areas, and border routers summarise routes between them.\n",
    ),
    (
        "Tokenization",
        "# Tokenization\n\n"
        "A language model never sees raw text. The input is cut into tokens, and each token "
        "is mapped to an integer from a fixed vocabulary.\n\n"
        "## Byte-pair encoding\n\n"
        "Byte-pair encoding starts from single bytes and repeatedly merges the most frequent "
        "adjacent pair into a new symbol.\n\n"
        "| Method | Unit |\n|---|---|\n| Byte-pair encoding | merged bytes |\n"
        "| WordPiece | word pieces |\n",
    ),
    (
        "Retrieval",
        "# Retrieval\n\n"
        "Retrieval-augmented generation grounds an answer in documents found at query time. "
        "A retriever ranks passages by their similarity to the question.\n\n"
        "## Reranking\n\n"
        "A cross-encoder reranker reads the question and each passage together and orders "
        "the candidates again before the model answers.\n",
    ),
)


# --- A small Markdown block reader, enough for the lessons ------------------------------


@dataclass(frozen=True)
class _Block:
    kind: str  # heading, para, item, code, row
    text: str = ""
    level: int = 0
    cells: tuple[str, ...] = ()


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
_RULE_ROW = re.compile(r"^\s*\|?\s*:?-{2,}")


def _body(markdown: str) -> str:
    try:
        return parse_front_matter(markdown.replace("\r\n", "\n"))[1]
    except BadDocument:
        return markdown


def _blocks(markdown: str) -> list[_Block]:
    blocks: list[_Block] = []
    para: list[str] = []
    code: list[str] | None = None

    def close() -> None:
        if para:
            blocks.append(_Block("para", " ".join(para)))
            para.clear()

    for line in _body(markdown).split("\n"):
        if code is not None:
            if line.strip().startswith("```"):
                blocks.append(_Block("code", "\n".join(code)))
                code = None
            else:
                code.append(line)
            continue
        stripped = line.strip()
        if stripped.startswith("```"):
            close()
            code = []
        elif heading := _HEADING.match(stripped):
            close()
            blocks.append(_Block("heading", heading.group(2), level=len(heading.group(1))))
        elif item := _ITEM.match(line):
            close()
            blocks.append(_Block("item", item.group(1).strip()))
        elif stripped.startswith("|"):
            close()
            if not _RULE_ROW.match(stripped):
                cells = tuple(c.strip() for c in stripped.strip("|").split("|"))
                blocks.append(_Block("row", cells=cells))
        elif not stripped:
            close()
        else:
            para.append(stripped)
    close()
    if code is not None:
        blocks.append(_Block("code", "\n".join(code)))
    return blocks


def _plain(text: str) -> str:
    """Inline Markdown removed: emphasis, code ticks, links keep only their words."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", text)
    return text.replace("`", "")


def _lesson_blocks(lesson_title: str, markdown: str) -> list[_Block]:
    """A lesson's blocks, opening with its level-1 heading (added when it has none)."""
    blocks = _blocks(markdown)
    if not blocks or blocks[0].kind != "heading" or blocks[0].level != 1:
        blocks.insert(0, _Block("heading", lesson_title, level=1))
    return blocks


# --- Markdown ---------------------------------------------------------------------------


def handbook_markdown(lessons: Sequence[tuple[str, str]], title: str = TITLE) -> str:
    """One Markdown handbook: ``# title``, then each lesson one heading level deeper."""
    parts = [f"# {title}"]
    for lesson_title, markdown in lessons:
        body = _body(markdown).strip("\n")
        lines, fence = [], False
        for line in body.split("\n"):
            if line.strip().startswith(("```", "~~~")):
                fence = not fence
            elif not fence and (heading := _HEADING.match(line)):
                line = "#" * min(6, len(heading.group(1)) + 1) + " " + heading.group(2)
            lines.append(line)
        if not _HEADING.match(body.split("\n", 1)[0]):
            lines[:0] = [f"## {lesson_title}", ""]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


# --- PDF --------------------------------------------------------------------------------


def handbook_pdf(
    sections: Sequence[tuple[str, str]] = SAMPLE_LESSONS,
    *,
    title: str = TITLE,
    page_break: bool = True,
) -> bytes:
    """The lessons as a PDF: one outline entry per heading (lessons at the top level).

    Plain Helvetica, ragged right, no hyphenation, so PDFium gives the sentences back
    whole and the quote matcher finds them.
    """
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer

    styles = getSampleStyleSheet()

    class Handbook(SimpleDocTemplate):
        def afterFlowable(self, flowable) -> None:  # noqa: N802 (reportlab's hook name)
            outline = getattr(flowable, "outline", None)
            if outline:
                key = f"h{id(flowable)}"
                self.canv.bookmarkPage(key)
                self.canv.addOutlineEntry(outline[0], key, level=outline[1], closed=False)

    story: list = [Paragraph(html.escape(title), styles["Title"]), Spacer(1, 12)]
    depth = -1
    for index, (lesson_title, markdown) in enumerate(sections):
        if index and page_break:
            story.append(PageBreak())
        for block in _lesson_blocks(lesson_title, markdown):
            text = html.escape(_plain(block.text))
            if block.kind == "heading":
                level = min(block.level - 1, depth + 1)  # an outline cannot skip a level
                depth = level
                para = Paragraph(text, styles[f"Heading{min(level + 1, 4)}"])
                para.outline = (_plain(block.text), level)
                story.append(para)
            elif block.kind == "item":
                story.append(Paragraph("- " + text, styles["BodyText"]))
            elif block.kind == "row":
                row = " | ".join(html.escape(_plain(c)) for c in block.cells)
                story.append(Paragraph(row, styles["BodyText"]))
            elif block.kind == "code":
                for line in block.text.split("\n"):
                    story.append(Paragraph(html.escape(line) or "&nbsp;", styles["Code"]))
            else:
                story.append(Paragraph(text, styles["BodyText"]))
    out = io.BytesIO()
    doc = Handbook(out, pagesize=A4, title=title, author="kgreview", invariant=True)
    doc.build(story)
    return out.getvalue()


_VERBS = ("improves", "extends", "depends on", "replaces", "is compared with", "builds on")
_FRAMES = (
    "{a} {verb} {b} when the {noun} is {adj}.",
    "In practice, {a} {verb} {b}, which keeps the {noun} small.",
    "Engineers often choose {a} because it {verb} {b} without a {adj} {noun}.",
    "The {adj} {noun} explains why {a} {verb} {b} in most systems.",
    "A careful reader will notice that {a} {verb} {b} only for a {adj} {noun}.",
)


def _sentence(rng: random.Random, names: Sequence[str]) -> str:
    a, b = rng.sample(names, 2)
    sentence = rng.choice(_FRAMES).format(
        a=a.lower(),
        b=b.lower(),
        verb=rng.choice(_VERBS),
        noun=rng.choice(NOUNS),
        adj=rng.choice(ADJECTIVES),
    )
    return sentence[0].upper() + sentence[1:]


def pages_pdf(n_pages: int, *, words_per_page: int = 400, seed: int = 0) -> bytes:
    """``n_pages`` pages of plausible sentences, a chapter bookmark every ten pages and a
    section bookmark (one level down) five pages into each chapter.

    Drawn line by line on the low-level canvas: platypus would take minutes for a
    thousand pages, this takes seconds.
    """
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen.canvas import Canvas

    rng = random.Random(seed)
    names = concept_names(300, seed=seed + 1)
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=letter, pageCompression=1, invariant=1)
    canvas.setTitle(f"Synthetic document of {n_pages} pages")
    width, height = letter
    margin, leading = 72, 12
    max_lines = int((height - 2 * margin) / leading) - 3
    for page in range(n_pages):
        y = height - margin
        heading = None
        if page % 10 == 0:
            heading = (f"Chapter {page // 10 + 1}: {rng.choice(names)}", 0)
        elif page % 10 == 5:
            heading = (f"Section {page // 10 + 1}.2: {rng.choice(names)}", 1)
        if heading:
            key = f"p{page}"
            canvas.bookmarkPage(key)
            canvas.addOutlineEntry(heading[0], key, level=heading[1], closed=False)
            canvas.setFont("Helvetica-Bold", 14)
            canvas.drawString(margin, y, heading[0])
            y -= 2 * leading
        words: list[str] = []
        while len(words) < words_per_page:
            words += _sentence(rng, names).split()
        lines = textwrap.wrap(" ".join(words), 95, break_long_words=False)[:max_lines]
        text = canvas.beginText(margin, y)
        text.setFont("Helvetica", 10, leading)
        for line in lines:
            text.textLine(line)
        canvas.drawText(text)
        canvas.showPage()
    canvas.save()
    return out.getvalue()


# --- HTML -------------------------------------------------------------------------------

_STYLE = "body { font-family: sans-serif } nav a { margin-right: 1em } .ad { color: red }"
_SCRIPT = "window.trackingId = 'UA-SCRIPT-MARKER'; document.title += ' (tracked)';"


def handbook_html(lessons: Sequence[tuple[str, str]] = SAMPLE_LESSONS, title: str = TITLE) -> str:
    """The lessons as a web page: the handbook in ``<article>``, with a navigation bar,
    a sidebar advert, a footer, a stylesheet and scripts around it, as real pages have."""
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        f"<style>{_STYLE}</style>",
        f"<script>{_SCRIPT}</script>",
        "</head><body>",
        '<nav><ul><li><a href="/">Home</a></li><li><a href="/courses">Courses</a></li>'
        '<li><a href="/about">About us</a></li><li><a href="/login">Sign in</a></li></ul></nav>',
        '<aside class="ad"><p>Subscribe to our newsletter for weekly tips!</p></aside>',
        f"<main><article><h1>{esc(title)}</h1>",
    ]
    for lesson_title, markdown in lessons:
        rows: list[str] = []
        items: list[str] = []
        for block in [*_lesson_blocks(lesson_title, markdown), _Block("end")]:
            if items and block.kind != "item":
                parts.append("<ul>" + "".join(items) + "</ul>")
                items = []
            if rows and block.kind != "row":
                parts.append("<table>" + "".join(rows) + "</table>")
                rows = []
            text = esc(_plain(block.text))
            if block.kind == "heading":
                level = min(block.level + 1, 6)
                parts.append(f"<h{level}>{text}</h{level}>")
            elif block.kind == "item":
                items.append(f"<li>{text}</li>")
            elif block.kind == "row":
                cells = "".join(f"<td>{esc(_plain(c))}</td>" for c in block.cells)
                rows.append(f"<tr>{cells}</tr>")
            elif block.kind == "code":
                parts.append(f"<pre><code>{esc(block.text)}</code></pre>")
            elif block.kind == "para":
                parts.append(f"<p>{text}</p>")
        parts.append(f"<script>console.log({lesson_title!r} + ' SCRIPT-MARKER');</script>")
    parts += [
        "</article>",
        '<div class="related"><h3>Related posts</h3><ul>'
        + "".join(
            f'<li><a href="/posts/{n}">Ten tips for prompt number {n}</a></li>' for n in range(8)
        )
        + "</ul></div>",
        '<div class="cookie-banner">We use cookies to improve your experience. '
        '<a href="/cookies">Accept all cookies</a></div>',
        "</main>",
        "<footer><p>Copyright 2024 Example Learning Ltd. All rights reserved.</p>"
        '<p><a href="/privacy">Privacy policy</a> <a href="/terms">Terms</a></p></footer>',
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


# --- Word -------------------------------------------------------------------------------


def handbook_docx(lessons: Sequence[tuple[str, str]] = SAMPLE_LESSONS, title: str = TITLE) -> bytes:
    """The lessons as a Word file: Title and Heading styles, bulleted lists, a contents
    table, and the lessons' own tables as Word tables."""
    import docx

    document = docx.Document()
    document.core_properties.title = title
    document.add_heading(title, 0)
    contents = document.add_table(rows=1, cols=2)
    contents.rows[0].cells[0].text = "Lesson"
    contents.rows[0].cells[1].text = "Title"
    for number, (lesson_title, _) in enumerate(lessons, 1):
        row = contents.add_row()
        row.cells[0].text = str(number)
        row.cells[1].text = lesson_title
    for lesson_title, markdown in lessons:
        rows: list[tuple[str, ...]] = []
        for block in [*_lesson_blocks(lesson_title, markdown), _Block("end")]:
            if rows and block.kind != "row":
                table = document.add_table(rows=0, cols=max(len(r) for r in rows))
                for cells in rows:
                    row = table.add_row()
                    for index, cell in enumerate(cells):
                        row.cells[index].text = cell
                rows = []
            text = _plain(block.text)
            if block.kind == "heading":
                document.add_heading(text, min(block.level, 9))
            elif block.kind == "item":
                document.add_paragraph(text, style="List Bullet")
            elif block.kind == "row":
                rows.append(tuple(_plain(c) for c in block.cells))
            elif block.kind == "code":
                document.add_paragraph(block.text)
            elif block.kind == "para":
                document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()
