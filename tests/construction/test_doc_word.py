"""Word files keep the inline markup that tells a term apart, as light Markdown."""

from __future__ import annotations

import io
import zipfile

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


def with_doctype(build, doctype: str, replacements: dict[str, str]) -> bytes:
    """A Word file whose body part declares ``doctype`` and has each placeholder word
    replaced by raw XML (an entity reference python-docx would not write)."""
    document = docx.Document()
    build(document)
    saved = io.BytesIO()
    document.save(saved)
    out = io.BytesIO()
    with (
        zipfile.ZipFile(saved) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename == "word/document.xml":
                declaration, rest = data.decode("utf-8").split("?>", 1)
                xml = declaration + "?>\n" + doctype + rest
                for placeholder, raw in replacements.items():
                    xml = xml.replace(placeholder, raw)
                data = xml.encode("utf-8")
            target.writestr(info, data)
    return out.getvalue()


def test_a_paragraph_holding_entity_references_keeps_its_text():
    """Issue 25: a paragraph whose text starts with a declared entity was dropped whole
    (python-docx keeps the reference as a node, and the text before it was empty); each
    reference becomes the text its declaration gives, in paragraphs, headings and cells."""

    def build(document):
        document.add_heading("About COMPANY", 1)
        document.add_paragraph("Before.")
        document.add_paragraph("COMPANY makes gears and sells them.")
        document.add_table(rows=1, cols=1).cell(0, 0).text = "Made by COMPANY."
        document.add_paragraph("After.")

    raw = with_doctype(
        build, '<!DOCTYPE w:document [<!ENTITY co "Acme Corp">]>', {"COMPANY": "&co;"}
    )
    got = read_document(raw, filename="entities.docx", max_bytes=10**7)
    assert got.text == (
        "# About Acme Corp\n\nBefore.\n\nAcme Corp makes gears and sells them.\n\n"
        "Made by Acme Corp.\n\nAfter.\n"
    )
    assert got.notes == ()


def test_an_entity_reference_that_cannot_be_expanded_is_kept_as_written_with_a_note():
    """An external entity is never fetched, and one whose text holds references of its
    own is not expanded (no entity expansion bombs): each stays as written, noted."""

    def build(document):
        document.add_paragraph("SECRET and NESTED, then plain words.")

    raw = with_doctype(
        build,
        '<!DOCTYPE w:document [<!ENTITY ext SYSTEM "file:///etc/passwd">'
        '<!ENTITY a "aa"><!ENTITY nest "&a;&a;">]>',
        {"SECRET": "&ext;", "NESTED": "&nest;"},
    )
    got = read_document(raw, filename="entities.docx", max_bytes=10**7)
    assert got.text == "&ext; and &nest;, then plain words.\n"
    assert got.notes == (
        "kept 2 entity references as written (&ext;, &nest;): the file does not declare "
        "their text plainly",
    )
