"""Document readers: each format's text, title, sections and pages, and every bad input
refused with a sentence (``BadDocument``), never another exception."""

from __future__ import annotations

import io
import random
import re
import zipfile

import pytest
from reportlab.pdfgen.canvas import Canvas

from benchmarks.synthetic_documents import (
    SAMPLE_LESSONS,
    handbook_docx,
    handbook_html,
    handbook_markdown,
    handbook_pdf,
)
from construction.doc_limits import ReadLimits
from construction.documents import (
    BadDocument,
    Document,
    clean_text,
    markdown_sections,
    media_type_for,
    page_of,
    parse_front_matter,
    read_document,
    section_at,
)
from construction.formats import SUFFIXES
from construction.quotes import QuoteFinder
from construction.types import Section

LIMIT = 10_000_000
SENTENCES = [
    "Open Shortest Path First (OSPF) is a link-state routing protocol used inside "
    "autonomous systems.",
    "Each advertisement carries a sequence number, so stale copies are dropped.",
    "A network advertisement describes one broadcast segment.",
    "Byte-pair encoding starts from single bytes and repeatedly merges the most frequent "
    "adjacent pair into a new symbol.",
    "A retriever ranks passages by their similarity to the question.",
]


def read(raw: bytes | str, filename: str, max_bytes: int = LIMIT) -> Document:
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    return read_document(raw, filename=filename, max_bytes=max_bytes)


def refused(raw: bytes | str, filename: str, max_bytes: int = LIMIT) -> str:
    with pytest.raises(BadDocument) as caught:
        read(raw, filename, max_bytes)
    return str(caught.value)


def canvas_pdf(pages: list[list[str]], **canvas_args) -> bytes:
    """A PDF with the given lines on each page (an empty list is a blank page)."""
    out = io.BytesIO()
    canvas = Canvas(out, **canvas_args)
    for lines in pages:
        text = canvas.beginText(72, 720)
        text.setFont("Helvetica", 11)
        for line in lines:
            text.textLine(line)
        canvas.drawText(text)
        canvas.showPage()
    canvas.save()
    return out.getvalue()


def assert_sections_start_at_headings(document: Document) -> None:
    for section in document.sections:
        heading = document.text[section.start :].split("\n", 1)[0]
        assert section.path[-1] in heading, (section, heading)


# --- Common -----------------------------------------------------------------------------


def test_media_type_for_maps_every_readable_suffix_case_insensitively():
    assert media_type_for("notes/Lesson.MD") == "text/markdown"
    assert media_type_for("a.markdown") == "text/markdown"
    assert media_type_for("a.text") == media_type_for("a.txt") == "text/plain"
    assert media_type_for("page.HTM") == media_type_for("page.html") == "text/html"
    assert media_type_for("paper.pdf") == "application/pdf"
    assert media_type_for("memo.docx").endswith("wordprocessingml.document")
    assert media_type_for("sheet.xlsx") is None
    assert media_type_for(".md") is None
    assert set(SUFFIXES) == {".md", ".markdown", ".txt", ".text", ".html", ".htm", ".pdf", ".docx"}


def test_unknown_extension_is_refused_naming_the_readable_ones():
    assert refused(b"x", "data.xyz") == (
        "unsupported file type '.xyz': "
        "kgreview reads .md, .markdown, .txt, .html, .htm, .pdf, .docx"
    )
    assert "without an extension" in refused(b"x", "README")


def test_file_over_the_limit_is_refused_with_both_sizes():
    message = refused(b"a" * 2_000, "big.md", max_bytes=1_000)
    assert message == "file is 2,000 bytes, over the limit of 1,000 (KG_MAX_SOURCE_BYTES)"


@pytest.mark.parametrize("name", ["empty.md", "empty.txt", "empty.html", "empty.pdf", "e.docx"])
def test_empty_file_has_no_text(name):
    assert refused(b"", name) == "file has no text"
    assert refused(b" \n\r\n\t ", name) == "file has no text"


def test_clean_text_normalises_line_ends_drops_control_characters_and_composes():
    assert clean_text("a\r\nb\rc\x00d\x07e\tf\x0cg") == "a\nb\ncd" + "e\tf\ng"
    assert clean_text("cafe\u0301") == "caf\u00e9"


def test_nul_bytes_past_the_first_8_kb_are_removed_not_stored():
    raw = b"Intro line.\n" + b"x" * 9000 + b"\x00tail\x01 end\n"
    document = read(raw, "late-nul.txt")
    assert "\x00" not in document.text and "\x01" not in document.text
    assert document.text.endswith("xtail end\n")


def test_as_structure_holds_sections_and_pages_as_json():
    document = read(handbook_pdf(), "handbook.pdf")
    structure = document.as_structure()
    assert structure["pages"] == list(document.pages)
    assert [Section.from_json(s) for s in structure["sections"]] == list(document.sections)


def test_page_of_counts_pages_from_one_and_is_none_without_pages():
    pages = (0, 10, 25)
    assert [page_of(pages, o) for o in (0, 9, 10, 24, 25, 999)] == [1, 1, 2, 2, 3, 3]
    assert page_of((), 5) is None


def test_section_at_finds_the_innermost_heading_path():
    text = "# A\n\nintro\n\n## B\n\nb body\n\n### C\n\nc body\n\n## D\n\nd body\n"
    sections = markdown_sections(text)
    assert section_at(sections, text.index("intro")) == ("A",)
    assert section_at(sections, text.index("b body")) == ("A", "B")
    assert section_at(sections, text.index("c body")) == ("A", "B", "C")
    assert section_at(sections, text.index("d body")) == ("A", "D")
    assert section_at(markdown_sections("text\n\n# Late\n"), 0) == ()
    assert section_at((), 3) == ()


# --- Markdown ---------------------------------------------------------------------------


def test_markdown_sections_are_atx_headings_outside_fenced_code_with_paths_and_ends():
    text = (
        "# Guide\n\nIntro.\n\n```\n# not a heading\n```\n\n## Setup ##\n\n#hashtag\n\n"
        "### Install\n\nSteps.\n\n~~~\n## still code\n~~~~\n\n## Use\n\n#\n\n# Appendix\n"
    )
    sections = markdown_sections(text)
    assert [(s.path, s.level) for s in sections] == [
        (("Guide",), 1),
        (("Guide", "Setup"), 2),
        (("Guide", "Setup", "Install"), 3),
        (("Guide", "Use"), 2),
        (("Appendix",), 1),
    ]
    guide, setup, install, use, appendix = sections
    assert guide.end == appendix.start and setup.end == install.end == use.start
    assert appendix.end == len(text)
    assert all(text[s.start :].startswith("#") for s in sections)


def test_section_ends_and_paths_follow_heading_levels():
    rng = random.Random(5)
    levels = [rng.randint(1, 6) for _ in range(300)]
    text = "".join(f"{'#' * level} H{i}\n\nbody\n\n" for i, level in enumerate(levels))
    sections = markdown_sections(text)
    assert [s.level for s in sections] == levels
    for i, section in enumerate(sections):
        later = [s.start for s in sections[i + 1 :] if s.level <= section.level]
        assert section.end == (later[0] if later else len(text))
        path, level = [f"H{i}"], section.level
        for j in range(i - 1, -1, -1):
            if levels[j] < level:
                path.insert(0, f"H{j}")
                level = levels[j]
        assert section.path == tuple(path)


def test_markdown_title_and_slug_come_from_front_matter():
    raw = "---\ntitle: 'Vector search'\nslug: vector-search\n# a comment\n---\n\n# Other\n\nBody.\n"
    document = read(raw, "x.md")
    assert (document.title, document.slug) == ("Vector search", "vector-search")
    assert document.text == "# Other\n\nBody.\n"
    assert (document.media_type, document.text_format, document.pages) == (
        "text/markdown",
        "markdown",
        (),
    )


def test_markdown_title_falls_back_to_first_h1_then_the_file_name():
    assert read("## Minor\n\n# Main topic #\n\ntext\n", "x.md").title == "Main topic"
    assert read("Just text.\n", "notes/vector-search_basics.md").title == "Vector Search Basics"
    assert read("```\n# code\n```\n", "code-only.md").title == "Code Only"


def test_markdown_body_is_trimmed_of_blank_lines_and_ends_in_one_newline():
    document = read("\r\n  \r\n  Indented first line.\r\nSecond.\r\n\r\n\r\n", "t.md")
    assert document.text == "  Indented first line.\nSecond.\n"


def test_markdown_sections_of_a_document_point_at_their_headings():
    document = read(handbook_markdown(SAMPLE_LESSONS), "handbook.md")
    assert document.title == "AI Engineering Handbook"
    paths = [s.path for s in document.sections]
    assert ("AI Engineering Handbook", "Routing", "Link-state advertisements", "Areas") in paths
    assert ("AI Engineering Handbook", "Retrieval", "Reranking") in paths
    assert_sections_start_at_headings(document)


def test_handbook_markdown_demotes_each_lessons_headings_one_level():
    markdown = handbook_markdown(
        [("Alpha", "---\ntitle: Alpha\n---\n# Alpha\n\nText.\n\n## Part\n\n```\n# code\n```\n")]
        + [("Beta", "No heading here.\n")]
    )
    assert markdown == (
        "# AI Engineering Handbook\n\n## Alpha\n\nText.\n\n### Part\n\n```\n# code\n```\n\n"
        "## Beta\n\nNo heading here.\n"
    )


def test_front_matter_rules_and_errors_are_those_of_the_importer():
    assert parse_front_matter("no front matter\n") == ({}, "no front matter\n")
    assert parse_front_matter('---\nTitle: "A"\n...\nbody') == ({"title": "A"}, "body")
    with pytest.raises(BadDocument, match="front matter opened with '---' on line 1 is never"):
        parse_front_matter("---\ntitle: A\nbody\n")
    with pytest.raises(BadDocument, match=r"front matter line 3 is not a 'key: value' pair"):
        parse_front_matter("---\ntitle: A\njust words\n---\n")
    assert refused("---\ntitle: A\n---\n\n", "a.md") == "file has no text after its front matter"


def test_markdown_text_is_normalised_to_nfc():
    assert read("# Cafe\u0301\n", "c.md").text == "# Caf\u00e9\n"


# --- Encodings and binary files ---------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b"\xef\xbb\xbfCaf\xc3\xa9 cr\xc3\xa8me\n",
        "Café crème\n".encode("utf-16"),
        "\ufeffCafé crème\n".encode("utf-16-be"),
        "Café crème\n".encode("utf-32"),
    ],
    ids=["utf-8-bom", "utf-16-le-bom", "utf-16-be-bom", "utf-32-bom"],
)
def test_byte_order_marks_decide_the_encoding(raw):
    assert read(raw, "bom.txt").text == "Café crème\n"


@pytest.mark.parametrize("encoding", ["cp1252", "latin-1"])
def test_legacy_western_encodings_are_detected(encoding):
    text = "Le café crème coûte cher à Noël. Über große Straßen fährt man schön.\n"
    if encoding == "cp1252":
        text = "The naïve café — “quoted” — costs €5.\n"
    assert read(text.encode(encoding), "legacy.txt").text == text


def test_cyrillic_single_byte_text_is_detected():
    text = "Привет, мир. Это проверка кодировки текста для маршрутизации.\n"
    assert read(text.encode("cp1251"), "ru.txt").text == text


def test_binary_files_look_binary_not_text():
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    assert refused(png, "image.md") == "file looks binary, not text"
    rng = random.Random(1)
    noise = bytes(rng.randrange(1, 256) for _ in range(4000))
    assert refused(noise, "noise.txt") == "file looks binary, not text"


# --- Plain text -------------------------------------------------------------------------


def test_plain_text_has_no_sections_and_its_first_short_line_is_the_title():
    document = read("\n\nRouting notes\n\n# not a heading in plain text\nOSPF floods.\n", "r.txt")
    assert document.title == "Routing notes"
    assert (document.sections, document.pages, document.text_format) == ((), (), "plain")
    assert document.text == "Routing notes\n\n# not a heading in plain text\nOSPF floods.\n"
    assert read("word " * 40 + "\n", "long-first-line.text").title == "Long First Line"


# --- HTML -------------------------------------------------------------------------------


def test_html_main_text_is_light_markdown_with_headings_lists_and_tables():
    document = read(handbook_html(), "handbook.html")
    text = document.text
    assert document.title == "AI Engineering Handbook"
    assert (document.media_type, document.text_format) == ("text/html", "markdown")
    assert text.startswith("# AI Engineering Handbook\n\n## Routing\n\n")
    assert "\n- A router advertisement describes the links of one router.\n- A network" in text
    assert "\nMethod | Unit\nByte-pair encoding | merged bytes\nWordPiece | word pieces\n" in text
    assert "\n\n### Link-state advertisements\n\n" in text
    assert [s.path for s in document.sections][:3] == [
        ("AI Engineering Handbook",),
        ("AI Engineering Handbook", "Routing"),
        ("AI Engineering Handbook", "Routing", "Link-state advertisements"),
    ]
    assert_sections_start_at_headings(document)


def test_html_boilerplate_scripts_and_styles_never_reach_the_text():
    text = read(handbook_html(), "handbook.html").text
    for boilerplate in ("SCRIPT-MARKER", "trackingId", "font-family", "Sign in", "newsletter"):
        assert boilerplate not in text
    assert "Copyright" not in text and "Privacy policy" not in text
    assert "Related posts" not in text and "cookies" not in text  # trafilatura's doing
    assert not re.search(r"</?[a-zA-Z][^>]*>", text)


def test_short_html_page_falls_back_to_its_body_without_scripts():
    page = (
        b"<html><head><title>Tiny</title><style>p{color:red}</style></head><body>"
        b"<nav>Home | About</nav><h1>Tiny page</h1><p>A short note about OSPF areas.</p>"
        b"<script>document.write('SECRET')</script><ul><li>one</li><li>two<br>lines</li></ul>"
        b"<p>Second <b>bold</b> line.<!-- a comment --></p><footer>(c) Us</footer></body></html>"
    )
    document = read(page, "tiny.htm")
    assert document.title == "Tiny"
    assert document.text == (
        "# Tiny page\n\nA short note about OSPF areas.\n\n- one\n- two lines\n\n"
        "Second **bold** line.\n"
    )
    assert [s.path for s in document.sections] == [("Tiny page",)]


def test_html_without_text_is_refused_and_declared_charset_is_honoured():
    assert refused(b"<html><body><script>var a = 1;</script></body></html>", "s.html") == (
        "file has no text"
    )
    page = '<html><head><meta charset="windows-1252"></head><body><p>Café — €5</p></body></html>'
    document = read(page.encode("cp1252"), "cp.html")
    assert document.text == "Café — €5\n" and document.title == "Cp"


# --- Word -------------------------------------------------------------------------------


def test_docx_text_is_light_markdown_in_document_order():
    document = read(handbook_docx(), "handbook.docx")
    text = document.text
    assert document.title == "AI Engineering Handbook"
    assert (document.media_type, document.text_format) == (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "markdown",
    )
    assert text.startswith(
        "# AI Engineering Handbook\n\nLesson | Title\n1 | Routing\n2 | Tokenization\n"
        "3 | Retrieval\n\n# Routing\n\nOpen Shortest Path First"
    )
    assert "\n\n- A router advertisement describes the links of one router.\n- A network" in text
    assert (
        text.index("## Byte-pair encoding")
        < text.index("Method | Unit")
        < text.index("# Retrieval")
    )
    finder = QuoteFinder(text)
    assert all(finder.find(s) for s in SENTENCES)


def test_docx_heading_styles_become_sections():
    document = read(handbook_docx(), "handbook.docx")
    assert [(s.path, s.level) for s in document.sections][:4] == [
        (("AI Engineering Handbook",), 1),
        (("Routing",), 1),
        (("Routing", "Link-state advertisements"), 2),
        (("Routing", "Link-state advertisements", "Areas"), 3),
    ]
    assert_sections_start_at_headings(document)


def test_docx_title_falls_back_to_first_heading_then_file_name():
    import docx

    word = docx.Document()
    word.add_paragraph("Intro paragraph.")
    word.add_heading("First heading", 2)
    numbered = word.add_paragraph("Numbered by numPr only")
    numbered._p.get_or_add_pPr().get_or_add_numPr().get_or_add_ilvl().val = 0
    out = io.BytesIO()
    word.save(out)
    document = read(out.getvalue(), "memo.docx")
    assert document.title == "First heading"
    assert document.text == "Intro paragraph.\n\n## First heading\n\n- Numbered by numPr only\n"

    plain = docx.Document()
    plain.add_paragraph("Only a paragraph.")
    out = io.BytesIO()
    plain.save(out)
    assert read(out.getvalue(), "meeting-notes.docx").title == "Meeting Notes"


def test_empty_docx_has_no_text():
    import docx

    out = io.BytesIO()
    docx.Document().save(out)
    assert refused(out.getvalue(), "empty.docx") == "file has no text"


def zip_of(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return out.getvalue()


@pytest.mark.parametrize(
    "raw",
    [
        b"plain bytes, not a zip",
        handbook_docx()[:3000],
        zip_of({"junk.txt": b"junk"}),
        zip_of({"[Content_Types].xml": b"<Types", "word/document.xml": b"<w:document"}),
    ],
    ids=["not-zip", "truncated", "zip-of-junk", "broken-xml"],
)
def test_corrupt_docx_is_not_a_readable_word_file(raw):
    assert refused(raw, "bad.docx").startswith("not a readable Word file (.docx): ")


def test_docx_unpacking_past_a_fixed_size_or_ratio_is_refused_in_words():
    """The archive's stated sizes are checked before it is opened: a fixed size (not a
    multiple of the upload limit) and, past a floor, a ratio to the file's size."""
    bomb = zip_of({"[Content_Types].xml": b"<a/>", "word/document.xml": b" " * 2_000_000})
    fixed = ReadLimits(max_unpacked_bytes=1_000_000)
    with pytest.raises(BadDocument, match=r"unpacks to more than 1,000,000 bytes \(at least "):
        read_document(bomb, filename="bomb.docx", max_bytes=LIMIT, limits=fixed)
    ratio = ReadLimits(max_inflation=50, inflation_floor_bytes=100_000)
    with pytest.raises(BadDocument, match=r"^the file inflates more than 50 times: its "):
        read_document(bomb, filename="bomb.docx", max_bytes=LIMIT, limits=ratio)


# --- Every format, hostile input --------------------------------------------------------


def test_same_lessons_read_alike_in_every_format():
    documents = [
        read(handbook_markdown(SAMPLE_LESSONS), "h.md"),
        read(handbook_html(), "h.html"),
        read(handbook_pdf(), "h.pdf"),
        read(handbook_docx(), "h.docx"),
    ]
    for document in documents:
        finder = QuoteFinder(document.text)
        assert all(finder.find(s) for s in SENTENCES), document.media_type
        assert any(s.path[-1] == "Reranking" for s in document.sections)


@pytest.mark.parametrize("suffix", sorted(SUFFIXES))
def test_hostile_bytes_raise_only_bad_document(suffix):
    rng = random.Random(suffix)
    samples = [bytes(rng.randrange(256) for _ in range(3000)) for _ in range(3)]
    samples += [
        b"PK\x03\x04" + bytes(200),
        b"%PDF-1.7\n" + bytes(rng.randrange(256) for _ in range(500)),
    ]
    samples += [handbook_pdf()[:5000], handbook_docx()[:5000], b"<html><body>\x00\x01</body>"]
    for raw in samples:
        try:
            document = read(raw, "x" + suffix)
        except BadDocument as exc:
            assert str(exc)
        else:
            assert "\x00" not in document.text and document.text.endswith("\n")
