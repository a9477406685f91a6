"""A small file that stands for a huge document is refused in words, naming the limit it
hit, and reading it costs a child process, never the one that asked (issue 25, finding 2).

The bombs are made here, a megabyte at a time, so making them costs no memory either;
the limits are set low through ``ReadLimits`` so that each test stays quick.
"""

from __future__ import annotations

import re
import resource
import sys
import zlib
from dataclasses import replace

import pytest

from benchmarks.synthetic_documents import pages_pdf
from construction import doc_sandbox
from construction.doc_limits import ReadLimits
from construction.doc_pdf import inflated_size
from construction.doc_sandbox import in_child, read_bounded
from construction.documents import BadDocument, read_document

from .bombs import MB, TEXT, docx_with_body, flate_spaces, pdf_with_content, zip_bomb_docx
from .test_documents import canvas_pdf

# Limits that never bite: each test lowers only the one it is about.
OPEN = ReadLimits(
    memory_mb=4096,
    cpu_seconds=600,
    max_pages=10**6,
    max_chars=10**10,
    max_paragraphs=10**8,
    max_inflation=10**6,
    max_unpacked_bytes=10**12,
)
# A reader left to itself grows by about what the bomb inflates to (hundreds of MB);
# the asking process may grow by a few MB of its own bookkeeping at most.
PARENT_GROWTH_KB = 30 * 1024


@pytest.fixture(scope="module")
def pdf_bomb() -> bytes:
    """A PDF of about 200 KB whose one content stream inflates to 200 MB of spaces."""
    return pdf_with_content(flate_spaces(200, TEXT))


def peak_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def refused_bounded(raw: bytes, filename: str, limits: ReadLimits) -> str:
    with pytest.raises(BadDocument) as caught:
        read_bounded(raw, filename=filename, max_bytes=10**9, limits=limits)
    return str(caught.value)


# --- PDF --------------------------------------------------------------------------------


def test_pdf_inflating_hundreds_of_times_its_size_is_refused_before_it_is_opened(pdf_bomb):
    """The default ratio: 200 KB unpacking to 200 MB is a bomb, counted without holding it."""
    before = peak_kb()
    message = refused_bounded(pdf_bomb, "bomb.pdf", ReadLimits())
    assert re.fullmatch(
        r"the file inflates more than 100 times: its [\d,]+ bytes unpack to more than "
        r"[\d,]+ \(KG_READ_MAX_INFLATION\)",
        message,
    )
    assert peak_kb() - before < PARENT_GROWTH_KB


def test_pdf_unpacking_past_the_fixed_size_is_refused(pdf_bomb):
    limits = replace(OPEN, max_unpacked_bytes=50_000_000)
    message = refused_bounded(pdf_bomb, "bomb.pdf", limits)
    assert message.startswith("the file unpacks to more than 50,000,000 bytes (at least ")


def test_pdf_needing_more_memory_than_the_child_has_is_refused_and_the_parent_stays_small(
    pdf_bomb,
):
    """With the inflation checks out of the way, PDFium itself inflates the stream: the
    child's capped address space stops it, and the asking process never holds it."""
    limits = replace(OPEN, memory_mb=150)
    before = peak_kb()
    message = refused_bounded(pdf_bomb, "bomb.pdf", limits)
    assert message.startswith("the document needs more than 150 MB to read (KG_READ_MEMORY_MB)")
    assert peak_kb() - before < PARENT_GROWTH_KB


def test_the_inflation_count_stops_just_past_its_cap(pdf_bomb):
    assert 10 * MB < inflated_size(pdf_bomb, 10 * MB) <= 11 * MB
    assert inflated_size(pdf_bomb, 10**12) == 200 * MB + len(TEXT)


def test_the_inflation_count_adds_up_every_stream_and_skips_what_is_not_zlib():
    """Each stream is fed a piece at a time, so a file of many streams costs what they
    hold, not the rest of the file once per stream."""
    packed = zlib.compress(b"x" * 1_000)
    raw = b"%PDF-1.4\n" + b"".join(
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream\n"
        for _ in range(2_000)
    )
    raw += b"<< /Filter /DCTDecode >>\nstream\n\xff\xd8\xff\xe0 not zlib\nendstream\n"
    assert inflated_size(raw, 10**9) == 2_000 * 1_000


def test_pdf_with_more_pages_than_the_limit_is_refused():
    raw = canvas_pdf([["One."], ["Two."], ["Three."], ["Four."]])
    message = refused_bounded(raw, "pages.pdf", ReadLimits(max_pages=3))
    assert message == "the document has more than 3 pages (KG_READ_MAX_PAGES)"


def test_pdf_with_more_characters_than_the_limit_is_refused():
    raw = pages_pdf(3)
    limits = ReadLimits(max_chars=1_000)
    message = refused_bounded(raw, "long.pdf", limits)
    assert message == "the document has more than 1,000 characters of text (KG_READ_MAX_CHARS)"


def test_an_ordinary_pdf_reads_the_same_in_the_child_as_in_process():
    raw = pages_pdf(5)
    bounded = read_bounded(raw, filename="manual.pdf", max_bytes=10**8, limits=ReadLimits())
    assert bounded == read_document(raw, filename="manual.pdf", max_bytes=10**8)
    assert len(bounded.pages) == 5


# --- Word -------------------------------------------------------------------------------


def test_docx_with_a_million_paragraphs_is_refused_in_words():
    """The red team's bomb: a small file holding a million paragraphs."""
    bomb = docx_with_body(1_000_000)
    assert len(bomb) < 500_000
    before = peak_kb()
    message = refused_bounded(bomb, "bomb.docx", ReadLimits())
    assert message.startswith("the file inflates more than 100 times: its ")
    assert peak_kb() - before < PARENT_GROWTH_KB


def test_docx_with_more_paragraphs_than_the_limit_is_refused_while_it_is_walked():
    """Counted as the body is walked, empty paragraphs too: each costs the walk."""
    raw = docx_with_body(5_000)
    message = refused_bounded(raw, "many.docx", ReadLimits(max_paragraphs=1_000))
    assert message == "the document has more than 1,000 paragraphs (KG_READ_MAX_PARAGRAPHS)"


def test_docx_with_more_characters_than_the_limit_is_refused():
    raw = docx_with_body(100, words=b"word " * 20)
    message = refused_bounded(raw, "long.docx", ReadLimits(max_chars=5_000))
    assert message == "the document has more than 5,000 characters of text (KG_READ_MAX_CHARS)"


def test_docx_zip_bomb_is_refused_by_the_fixed_unpacked_size():
    """The unpacked limit is a size of its own, not a multiple of the upload limit."""
    bomb = zip_bomb_docx(60)
    assert len(bomb) < 200_000
    limits = replace(OPEN, max_unpacked_bytes=50_000_000)
    before = peak_kb()
    message = refused_bounded(bomb, "bomb.docx", limits)
    assert message.startswith("the file unpacks to more than 50,000,000 bytes (at least ")
    assert peak_kb() - before < PARENT_GROWTH_KB


def test_docx_needing_more_processor_time_than_the_child_has_is_refused():
    """A million paragraphs with every other limit open take longer than a second."""
    bomb = docx_with_body(1_000_000)
    message = refused_bounded(bomb, "slow.docx", replace(OPEN, cpu_seconds=1))
    assert message == (
        "the document needs more than 1 s of processor time to read (KG_READ_CPU_SECONDS)"
    )


# --- Every format -----------------------------------------------------------------------


def test_html_with_more_paragraphs_than_the_limit_is_refused():
    page = "<html><body>" + "<p>A sentence of its own.</p>" * 50 + "</body></html>"
    message = refused_bounded(page.encode(), "page.html", ReadLimits(max_paragraphs=10))
    assert message == "the document has more than 10 paragraphs (KG_READ_MAX_PARAGRAPHS)"


def test_markdown_is_read_in_process_within_the_character_limit():
    """Markdown and text are never larger than their file: read here, their characters
    still counted."""
    assert not in_child("notes.md") and not in_child("notes.txt")
    assert in_child("a.pdf") and in_child("a.docx") and in_child("a.html")
    text = ("A sentence of the lesson. " * 100).encode()
    message = refused_bounded(text, "notes.md", ReadLimits(max_chars=1_000))
    assert message == "the document has more than 1,000 characters of text (KG_READ_MAX_CHARS)"


def test_limits_survive_the_trip_to_the_child():
    limits = ReadLimits(memory_mb=300, cpu_seconds=7, max_pages=9, max_inflation=3)
    assert ReadLimits.from_json(limits.as_json()) == limits


# --- The child failing otherwise --------------------------------------------------------


@pytest.mark.parametrize(
    ("child", "words"),
    [
        (
            "import sys; sys.stderr.write('KeyError: word/styles.xml\\n'); sys.exit(1)",
            "the reader failed (KeyError: word/styles.xml)",
        ),
        ("print('not an answer')", "the reader failed (its answer could not be read)"),
        (
            "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)",
            "the document needs more than 1,024 MB to read (KG_READ_MEMORY_MB): "
            "the reader stopped (SIGSEGV)",
        ),
        (
            "import os, signal; os.kill(os.getpid(), signal.SIGXCPU)",
            "the document needs more than 120 s of processor time to read (KG_READ_CPU_SECONDS)",
        ),
        ("import os; os._exit(3)", "the document needs more than 1,024 MB to read"),
    ],
    ids=["exception", "garbage", "crash", "cpu-signal", "memory-error"],
)
def test_a_child_that_fails_is_a_refusal_in_words_never_an_exception(monkeypatch, child, words):
    """Whatever the child does, the caller gets a ``BadDocument`` (a batch goes on)."""
    monkeypatch.setattr(doc_sandbox, "_COMMAND", [sys.executable, "-c", child])
    assert refused_bounded(pages_pdf(1), "a.pdf", ReadLimits()).startswith(words)
