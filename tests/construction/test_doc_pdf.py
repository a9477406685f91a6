"""PDFs printed from a browser (no bookmarks, a running header and footer on every page)
read as their text: furniture left out but every page's offset kept, headings found from
the typography as sections and never run into the sentence below, paragraphs apart."""

from __future__ import annotations

import io
import re

import pytest
from reportlab.lib.pagesizes import letter
from reportlab.pdfgen.canvas import Canvas

from benchmarks.synthetic_print import PRINTED_AT, printed_pdf
from construction.documents import BadDocument, Document, page_of, read_document, section_at
from construction.sentences import sentences

URL = "file:///usr/share/doc/handbook/html/speculative-sampling.html"
TITLE = "7.3. Speculative Sampling"


def read(raw: bytes, name: str = "printed.pdf") -> Document:
    return read_document(raw, filename=name, max_bytes=10_000_000)


def paragraph(topic: str, n: int) -> str:
    return " ".join(
        f"Step {i} of {topic} keeps the target model's distribution while the draft model "
        f"proposes tokens number {i * 7} to {i * 7 + 6} for it to check."
        for i in range(1, n + 1)
    )


BLOCKS = [
    ("bar", "Prev Up Chapter 7. Decoding Home Next"),
    ("h1", TITLE),
    (
        "p",
        "Speculative sampling speeds up decoding without changing what the model says. "
        + paragraph("drafting", 6),
    ),
    ("p", paragraph("scoring", 5)),
    ("h2", "7.3.1. Draft Models"),
    (
        "p",
        "A draft model is a smaller model that shares the target's tokenizer. "
        + paragraph("proposing", 9),
    ),
    ("label", "Note"),
    ("p", "The draft and target models must share one vocabulary."),
    ("h2", "7.3.2. Verification"),
    (
        "p",
        "Verification accepts the longest prefix of drafted tokens that the target "
        "model would have sampled itself. " + paragraph("verifying", 12),
    ),
    ("code", "accepted = verify(draft, target)\nreturn accepted"),
    ("h3", "Rejection and Resampling"),
    ("p", paragraph("resampling", 14)),
    ("h2", "7.3.3. Choosing the Draft Length"),
    ("p", paragraph("tuning", 16)),
    ("p", paragraph("measuring", 16)),
    ("p", paragraph("reporting", 16)),
]


@pytest.fixture(scope="module")
def printed() -> Document:
    return read(printed_pdf(BLOCKS, title=TITLE, url=URL))


def test_the_printed_fixture_has_several_pages_with_header_and_footer_on_each():
    """The material itself: four pages or more, each with the browser's furniture."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(printed_pdf(BLOCKS, title=TITLE, url=URL))
    assert len(pdf) >= 4
    for index in range(len(pdf)):
        text = pdf[index].get_textpage().get_text_range()
        assert PRINTED_AT in text and URL in text and f"{index + 1}/{len(pdf)}" in text
    pdf.close()


def test_running_header_and_footer_are_not_text(printed):
    """No date, time, title line, URL or "n/m" page number is left in the text."""
    text = printed.text
    assert PRINTED_AT not in text and "10:12" not in text
    assert "file://" not in text and "speculative-sampling.html" not in text
    assert not re.search(r"\b\d+/\d+\b", text)
    assert text.count(TITLE) == 1  # the heading, not the running title


def test_every_page_keeps_its_offset_and_quotes_name_their_page(printed):
    """Leaving the furniture out moves no page: each page still starts where its own
    text does, and a sentence printed on page 3 is on page 3."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(printed_pdf(BLOCKS, title=TITLE, url=URL))
    assert len(printed.pages) == len(pdf)
    bounds = [*printed.pages, len(printed.text)]
    for index in range(len(pdf)):
        own = pdf[index].get_textpage().get_text_range().split("\r\n")
        body = [line for line in own if line.strip() and URL not in line and PRINTED_AT not in line]
        stored = printed.text[bounds[index] : bounds[index + 1]]
        first = body[0] if body[0] != "Prev Up Chapter 7. Decoding Home Next" else body[1]
        assert stored.lstrip().startswith(first), index
        assert page_of(printed.pages, bounds[index] + 1) == index + 1
    pdf.close()


def test_headings_are_found_from_size_and_weight_without_bookmarks(printed):
    """Larger bold lines are sections, nested by their size; each starts at its line."""
    assert [(s.path[-1], s.level) for s in printed.sections] == [
        (TITLE, 1),
        ("7.3.1. Draft Models", 2),
        ("7.3.2. Verification", 2),
        ("Rejection and Resampling", 3),
        ("7.3.3. Choosing the Draft Length", 2),
    ]
    for section in printed.sections:
        assert printed.text[section.start :].startswith(section.path[-1] + "\n\n")
    offset = printed.text.index("Step 3 of resampling")
    assert section_at(printed.sections, offset) == (
        TITLE,
        "7.3.2. Verification",
        "Rejection and Resampling",
    )
    assert printed.title == TITLE


def test_a_heading_never_runs_into_the_sentence_after_it(printed):
    """ "Speculative Sampling Speculative sampling…" must not be one sentence: each
    heading is a paragraph of its own, and the sentence splitter sees it alone."""
    assert f"{TITLE}\n\nSpeculative sampling speeds up decoding" in printed.text
    heads = {s.path[-1] for s in printed.sections}
    for start, end, _ in sentences(printed.text):
        words = printed.text[start:end]
        assert not any(h in words and words.strip() != h for h in heads), words


def test_note_label_and_navigation_bar_are_left_out(printed):
    """A note's "Note" label set like a heading is neither a section nor a line; the
    printed "Prev Up … Home Next" bar is not text; the note's sentence stays."""
    lines = [line.strip() for line in printed.text.split("\n")]
    assert "Note" not in lines and all(s.path[-1] != "Note" for s in printed.sections)
    assert "Home Next" not in printed.text
    assert "\n\nThe draft and target models must share one vocabulary.\n\n" in printed.text


def test_paragraphs_are_a_blank_line_apart_and_their_lines_are_not(printed):
    """The gap between paragraphs becomes a blank line; a paragraph's wrapped lines
    stay one paragraph."""
    start = printed.text.index("A draft model is a smaller model")
    end = printed.text.index("\n\n", start)
    assert "Step 9 of proposing" in printed.text[start:end]
    assert printed.text[start:end].count("\n") >= 3
    code = printed.text.index("accepted = verify(draft, target)")
    assert printed.text[code - 2 : code] == "\n\n"


def test_a_one_page_print_loses_its_header_and_footer_too():
    """With nothing to repeat, a line of only a date, the title, a URL and "1/1" is
    still the browser's, not the page's."""
    document = read(
        printed_pdf([("h1", "Locks"), ("p", "Locks serialise writers.")], title="Locks")
    )
    assert document.text == "Locks\n\nLocks serialise writers.\n"
    assert [s.path for s in document.sections] == [("Locks",)]


def book_pdf(pages: int) -> bytes:
    """A book's pages: the chapter title at the top, a bare page number at the foot."""
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=letter)
    for number in range(1, pages + 1):
        canvas.setFont("Times-Italic", 9)
        canvas.drawString(72, 760, "Chapter 4 · Query Planning")
        canvas.setFont("Times-Roman", 11)
        for row in range(30):
            canvas.drawString(72, 700 - 14 * row, f"Page {number} line {row} explains cost {row}.")
        canvas.setFont("Times-Roman", 9)
        canvas.drawCentredString(306, 36, str(number + 40))
        canvas.showPage()
    canvas.save()
    return out.getvalue()


def test_book_running_title_and_bare_page_numbers_are_not_text():
    """A running chapter title and printed page numbers (41, 42, …) go; the pages stay."""
    document = read(book_pdf(5))
    assert "Query Planning" not in document.text
    assert not re.search(r"^\s*4\d\s*$", document.text, re.MULTILINE)
    assert len(document.pages) == 5
    assert page_of(document.pages, document.text.index("Page 4 line 0")) == 4


def test_a_pdf_whose_every_line_repeats_is_read_whole():
    """When every page is the same, nothing tells furniture from text: nothing is left
    out, nothing is refused, and every page keeps its offset."""
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=letter)
    for _ in range(4):
        canvas.setFont("Helvetica", 11)
        for row, words in enumerate(["Same header", "Same words on every page.", "Same footer"]):
            canvas.drawString(72, 770 - 350 * row, words)
        canvas.showPage()
    canvas.save()
    document = read(out.getvalue())
    assert document.text.count("Same words on every page.") == 4
    assert len(document.pages) == 4 and len(set(document.pages)) == 4


def test_bold_code_and_a_bold_lead_in_are_not_headings():
    """A bold fixed-pitch code line and a paragraph opening with a bold line that runs on
    are not sections; a bold line set apart is."""
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=letter)
    body = "A checkpoint writes every dirty page to disk and then records where it ended."
    rows = [
        ("Helvetica-Bold", "Checkpoints"),
        None,
        *[("Helvetica", f"{body} ({n})") for n in range(4)],
        None,
        ("Courier-Bold", "CHECKPOINT;"),
        None,
        *[("Helvetica", f"The command above forces one at once ({n}).") for n in range(3)],
        None,
        ("Helvetica-Bold", "Spread checkpoints out"),
        ("Helvetica", "so that their writes do not arrive in one burst."),
        ("Helvetica", "The default spreads them over most of the interval."),
    ]
    y = 700.0
    for row in rows:
        if row is None:
            y -= 10  # the gap between paragraphs
            continue
        canvas.setFont(row[0], 11)
        canvas.drawString(72, y, row[1])
        y -= 14
    canvas.showPage()
    canvas.save()
    document = read(out.getvalue())
    assert [s.path for s in document.sections] == [("Checkpoints",)]
    assert "Spread checkpoints out\nso that their writes" in document.text


def test_a_pdf_of_only_furniture_is_read_as_it_is_not_refused():
    """Two pages holding only a date line and a page number keep that text: a PDF is
    never emptied by the furniture rule (it would be refused as having no text)."""
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=letter)
    for number in (1, 2):
        canvas.setFont("Helvetica", 8)
        canvas.drawString(24, 772, PRINTED_AT)
        canvas.drawString(560, 20, f"{number}/2")
        canvas.showPage()
    canvas.save()
    try:
        document = read(out.getvalue())
    except BadDocument as exc:  # pragma: no cover - the assertion below says why
        pytest.fail(f"refused: {exc}")
    assert PRINTED_AT in document.text and len(document.pages) == 2
