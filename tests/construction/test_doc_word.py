"""Word files keep the inline markup that tells a term apart, as light Markdown."""

from __future__ import annotations

import io

import docx
from docx.shared import Pt

from construction.documents import read_document


def word(build) -> str:
    document = docx.Document()
    build(document)
    out = io.BytesIO()
    document.save(out)
    return read_document(out.getvalue(), filename="spec.docx", max_bytes=10**7).text


def test_code_bold_and_italic_runs_become_backticks_and_asterisks():
    """A run in a fixed-pitch font is code, a bold run strong, an italic run emphasis;
    spaces stay outside the markers and runs alike are joined."""

    def build(document):
        p = document.add_paragraph("Set ")
        p.add_run("min_wal_size").font.name = "Courier New"
        p.add_run(" to keep ")
        p.add_run("old ").bold = True
        p.add_run("segments").bold = True
        p.add_run("; a ")
        p.add_run("checkpoint").italic = True
        p.add_run(" flushes them.")
        styled = document.add_paragraph("The ")
        styled.add_run("WAL", style="Strong")
        styled.add_run(" is written first.")

    assert word(build) == (
        "Set `min_wal_size` to keep **old segments**; a *checkpoint* flushes them.\n\n"
        "The **WAL** is written first.\n"
    )


def test_headings_stay_plain_and_a_bold_space_is_not_marked():
    """A heading's runs carry no markers (its words are a section's path); a bold run of
    only spaces adds nothing."""

    def build(document):
        heading = document.add_heading("", 1)
        heading.add_run("The ")
        heading.add_run("WAL").italic = True
        p = document.add_paragraph("Two")
        p.add_run("   ").bold = True
        run = p.add_run("words")
        run.font.size = Pt(11)

    assert word(build) == "# The WAL\n\nTwo   words\n"
