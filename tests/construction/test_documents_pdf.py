"""Reading PDFs: text, pages as offsets, bookmarks as sections, and refusals in words.
(The other formats and what they share are in ``test_documents.py``.)"""

from __future__ import annotations

import io

import pypdfium2 as pdfium
import pytest
from reportlab.lib import pdfencrypt
from reportlab.pdfgen.canvas import Canvas

from benchmarks.synthetic_documents import handbook_pdf, pages_pdf
from construction.documents import page_of, section_at
from construction.quotes import QuoteFinder

from .test_documents import SENTENCES, assert_sections_start_at_headings, canvas_pdf, read, refused

# --- PDF --------------------------------------------------------------------------------


def test_pdf_text_title_and_sentences_survive_extraction():
    document = read(handbook_pdf(), "handbook.pdf")
    assert document.title == "AI Engineering Handbook"
    assert (document.media_type, document.text_format) == ("application/pdf", "plain")
    finder = QuoteFinder(document.text)
    for sentence in SENTENCES:
        assert finder.find(sentence) is not None, sentence
    assert "**" not in document.text and "\r" not in document.text


def test_pdf_pages_are_offsets_of_each_pages_own_text():
    raw = handbook_pdf()
    document = read(raw, "handbook.pdf")
    pdf = pdfium.PdfDocument(raw)
    assert len(document.pages) == len(pdf) == 3 and document.pages[0] == 0
    bounds = [*document.pages, len(document.text)]
    for index in range(len(pdf)):
        own = pdf[index].get_textpage().get_text_bounded().replace("\x02", "")
        stored = document.text[bounds[index] : bounds[index + 1]]
        assert stored.split() == own.split()
        assert page_of(document.pages, bounds[index]) == index + 1
    pdf.close()


def test_pdf_outline_becomes_sections_at_their_headings():
    document = read(handbook_pdf(), "handbook.pdf")
    assert [(s.path, s.level) for s in document.sections] == [
        (("Routing",), 1),
        (("Routing", "Link-state advertisements"), 2),
        (("Routing", "Link-state advertisements", "Areas"), 3),
        (("Tokenization",), 1),
        (("Tokenization", "Byte-pair encoding"), 2),
        (("Retrieval",), 1),
        (("Retrieval", "Reranking"), 2),
    ]
    assert_sections_start_at_headings(document)
    pages = [page_of(document.pages, s.start) for s in document.sections]
    assert pages == [1, 1, 1, 2, 2, 3, 3]
    offset = document.text.index("stale copies are dropped")
    assert section_at(document.sections, offset) == ("Routing", "Link-state advertisements")


def test_pdf_bookmarks_without_their_title_on_the_page_start_at_the_page():
    document = read(pages_pdf(25, words_per_page=60), "long.pdf")
    chapters = [s for s in document.sections if s.level == 1]
    assert [page_of(document.pages, s.start) for s in chapters] == [1, 11, 21]
    assert [page_of(document.pages, s.start) for s in document.sections if s.level == 2] == [6, 16]
    assert document.sections[1].path[0] == document.sections[0].path[0]
    assert document.sections[-1].end == len(document.text)


def test_pdf_bookmark_starts_at_the_heading_line_not_an_earlier_mention():
    out = io.BytesIO()
    canvas = Canvas(out)
    canvas.bookmarkPage("areas")
    canvas.addOutlineEntry("Areas", "areas", level=0)
    text = canvas.beginText(72, 720)
    for line in ["Routing splits a network into areas first.", "2.1 Areas", "Areas confine."]:
        text.textLine(line)
    canvas.drawText(text)
    canvas.showPage()
    canvas.save()
    document = read(out.getvalue(), "areas.pdf")
    (section,) = document.sections
    assert document.text[section.start :].startswith("2.1 Areas\n\nAreas confine.")


def test_pdf_bookmarked_heading_line_becomes_a_paragraph_of_its_own():
    """PDF text has no paragraph marks; a bookmarked heading must not run into the
    sentence below it (it would become part of that sentence's subject)."""
    out = io.BytesIO()
    canvas = Canvas(out)
    canvas.bookmarkPage("bpe")
    canvas.addOutlineEntry("Byte-pair encoding", "bpe", level=0)
    text = canvas.beginText(72, 720)
    for line in ["Tokens come first.", "Byte-pair encoding", "The most used method merges pairs."]:
        text.textLine(line)
    canvas.drawText(text)
    canvas.showPage()
    canvas.save()
    document = read(out.getvalue(), "bpe.pdf")
    assert "Tokens come first.\n\nByte-pair encoding\n\nThe most used method" in document.text
    assert [s.path for s in document.sections] == [("Byte-pair encoding",)]


def test_pdf_words_hyphenated_across_line_ends_are_joined():
    lines = ["The cost of compu-", "tation grows with the data-", "base and the co-", "operation."]
    text = read(canvas_pdf([lines + ["Pages 10-", "20 stay apart."]]), "h.pdf").text
    assert "computation grows with the database and the cooperation." in text
    assert "Pages 10-\n20 stay apart." in text


def test_pdf_blank_page_keeps_its_offset():
    document = read(canvas_pdf([["First page text."], [], ["Third page text."]]), "b.pdf")
    assert document.text == "First page text.\n\n\n\nThird page text.\n"
    assert document.pages == (0, 18, 20)
    assert page_of(document.pages, document.text.index("Third")) == 3
    assert document.title == "First page text."


def test_pdf_of_200_pages_reads_with_200_page_offsets():
    """Every page has an offset of its own. (How fast: ``manage.py bench render``.)"""
    document = read(pages_pdf(200), "long.pdf")
    assert len(document.pages) == 200 and len(set(document.pages)) == 200
    assert len([s for s in document.sections if s.level == 1]) == 20


def test_encrypted_pdf_asks_for_the_password_to_be_removed():
    raw = canvas_pdf([["Secret text."]], encrypt="hunter2")
    assert refused(raw, "locked.pdf") == "PDF is encrypted: remove the password and import it again"


def test_pdf_with_only_an_owner_password_is_read():
    encrypt = pdfencrypt.StandardEncryption("", ownerPassword="owner", canCopy=0)
    assert read(canvas_pdf([["Readable text."]], encrypt=encrypt), "o.pdf").text == (
        "Readable text.\n"
    )


def test_scanned_pdf_without_a_text_layer_is_refused():
    out = io.BytesIO()
    canvas = Canvas(out)
    canvas.rect(72, 72, 300, 400, fill=1)
    canvas.circle(300, 500, 40)
    canvas.showPage()
    canvas.save()
    assert refused(out.getvalue(), "scan.pdf") == "no text layer: OCR is not supported"


@pytest.mark.parametrize(
    "raw",
    [b"%PDF-1.4\n1 0 obj garbage", b"not a pdf at all", handbook_pdf()[:2000]],
    ids=["garbage", "not-pdf", "truncated"],
)
def test_corrupt_pdf_is_not_a_readable_pdf(raw):
    assert refused(raw, "bad.pdf").startswith("not a readable PDF (")
