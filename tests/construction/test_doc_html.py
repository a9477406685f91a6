"""Web pages of documentation generators read as their text alone: navigation bars,
breadcrumbs, prev/next tables, sidebars, edit and anchor links and admonition labels
left out, headings kept as sections, inline code and emphasis kept as light Markdown.

The pages under fixtures/html/ are real pages from Debian documentation packages,
trimmed (see the README there)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from construction.documents import BadDocument, Document, markdown_sections, read_document

FIXTURES = Path(__file__).parent / "fixtures" / "html"
LIMIT = 5_000_000


def read(name_or_page: str | bytes, filename: str = "page.html") -> Document:
    if isinstance(name_or_page, str) and name_or_page.endswith(".html"):
        return read_document(
            (FIXTURES / name_or_page).read_bytes(), filename=name_or_page, max_bytes=LIMIT
        )
    raw = name_or_page.encode() if isinstance(name_or_page, str) else name_or_page
    return read_document(raw, filename=filename, max_bytes=LIMIT)


def lines(document: Document) -> list[str]:
    return [line.strip() for line in document.text.split("\n")]


def assert_sections_are_the_headings(document: Document) -> None:
    """Sections are the stored text's own headings, each starting at its ``#`` line."""
    assert document.sections == markdown_sections(document.text)
    for section in document.sections:
        assert document.text[section.start :].startswith("#")


NAV_WORDS = re.compile(
    r"^(?:Prev|Previous|Next|Up|Home|previous|next|modules|index|Overview|Package|Class|"
    r"Use|Tree|Deprecated|Index|Help|Navigation|Table of Contents|This Page|Show Source|"
    r"Report a Bug|Quick search|Skip navigation links|Edit this page|Edit this file)$"
)


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.html")))
def test_no_navigation_word_stands_as_a_line_of_any_generators_page(name):
    """Every fixture: no line of the text is a navigation word, no heading anchor glyph
    ("¶", "#", an icon font's link) is left, and the sections are the text's headings."""
    document = read(name)
    assert not [line for line in lines(document) if NAV_WORDS.match(line)]
    assert not re.search(r"[¶\uf0c1]|#$", document.text, re.MULTILINE)
    assert not re.search(r"\bPrev\b.*\bNext\b", document.text)
    assert_sections_are_the_headings(document)


# --- DocBook (PostgreSQL) ---------------------------------------------------------------


def test_docbook_navigation_tables_and_table_of_contents_are_not_text():
    """The "Prev | Up | Chapter 25 … | Home | Next" tables above and below the page and
    the page's table of contents (links to other pages) are gone."""
    text = read("docbook-postgresql-vacuum.html").text
    assert "Routine Database Maintenance Tasks" not in text  # the bars' chapter title
    assert "Routine Reindexing" not in text  # the next page, named in the footer bar
    assert "25.1.6. The Autovacuum Daemon" not in text  # a table-of-contents entry
    assert text.startswith("## 25.1. Routine Vacuuming\n\nPostgreSQL databases require")


def test_docbook_admonition_label_is_neither_a_heading_nor_text_but_its_words_stay():
    """A DocBook tip's "Tip" title is not a section; the tip's sentences are kept."""
    document = read("docbook-postgresql-vacuum.html")
    assert [s.path for s in document.sections] == [
        ("25.1. Routine Vacuuming",),
        ("25.1. Routine Vacuuming", "25.1.1. Vacuuming Basics"),
        ("25.1. Routine Vacuuming", "25.1.2. Recovering Disk Space"),
    ]
    assert "Tip" not in lines(document)
    assert "Plain `VACUUM` may not be satisfactory" in document.text


def test_docbook_inline_code_and_first_terms_are_marked():
    """``<code class="command">`` becomes backticks, ``<em class="firstterm">`` emphasis."""
    text = read("docbook-postgresql-vacuum.html").text
    assert "maintenance known as *vacuuming*." in text
    assert "performed by the *autovacuum daemon*, which" in text
    assert "`VACUUM FULL`, or alternatively `CLUSTER`" in text


def test_docbook_variable_list_terms_stand_on_their_own_line():
    """A setting's name and type are a line of their own, its description the paragraph
    after it, not a list item running into the description."""
    text = read("docbook-postgresql-autovacuum-settings.html").text
    assert "\n\n`autovacuum` (`boolean`)\n\nControls whether the server should run" in text
    assert "\n\n`autovacuum_max_workers` (`integer`)\n\nSpecifies the maximum number" in text


# --- Sphinx (Python) --------------------------------------------------------------------


def test_sphinx_related_bars_sidebar_and_permalinks_are_not_text():
    """The "index | modules | next | previous" bars, the sidebar and "¶" links are gone."""
    document = read("sphinx-python-functions.html")
    text = document.text
    for furniture in ("Built-in Constants", "Introduction", "3.11.2 Documentation", "»"):
        assert furniture not in text
    assert text.startswith("# Built-in Functions\n\nThe Python interpreter has")
    assert [s.path for s in document.sections] == [("Built-in Functions",)]


def test_sphinx_admonition_labels_go_and_literals_become_code():
    """ "Note" and "Warning" labels are gone, their text stays; ``docutils literal`` spans
    are code, a signature is its own line with its parameters emphasised."""
    document = read("sphinx-python-functions.html")
    assert "Note" not in lines(document) and "Warning" not in lines(document)
    assert "\n\nWhen compiling a string with multi-line code in `'single'` or `'eval'`" in (
        document.text
    )
    assert "an object implementing `__abs__()`." in document.text
    assert "\n\nabs(*x*)\n\nReturn the absolute value of a number." in document.text


# --- MkDocs -----------------------------------------------------------------------------


def test_mkdocs_theme_navbar_sidebar_and_note_label_are_not_text():
    """The mkdocs theme's navbar, its table-of-contents sidebar and the note's title go;
    the note's sentence stays, and headings carry no anchor glyph."""
    document = read("mkdocs-writing-your-docs.html")
    assert [s.path for s in document.sections] == [
        ("Writing your docs",),
        ("Writing your docs", "File layout"),
    ]
    assert "Note" not in lines(document)
    assert "\n\nFiles and directories with names which begin with a dot" in document.text
    assert "named `docs` and will exist" in document.text
    for furniture in ("Search", "Previous", "Next", "GitHub", "Index pages"):
        assert furniture not in document.text


def test_mkdocs_material_header_tabs_sidebars_footer_and_edit_button_are_not_text():
    """Material's header, tabs, both sidebars, footer and "Edit this page" go; strong
    text stays strong; an admonition with its own title keeps it, not as a heading."""
    document = read("mkdocs-material-literate-nav.html")
    text = document.text
    assert text.startswith("# Reference\n\n## Literate nav syntax\n\n")
    assert "**last-encountered Markdown list**" in text
    assert "\n\nSUMMARY.md\n\n```" in text
    assert all("SUMMARY" not in s.path[-1] for s in document.sections)
    for furniture in ("Edit this page", "Overview", "Made with", "Material for MkDocs"):
        assert furniture not in text


# --- Javadoc ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("javadoc-argparse4j-ArgumentParsers.html", "Class ArgumentParsers"),
        ("javadoc-jsr330-Inject.html", "Annotation Type Inject"),
    ],
)
def test_javadoc_navigation_bars_go_and_the_class_is_the_first_section(name, title):
    """Old (frames) and new (HTML5) javadoc: "Skip navigation links", the Overview …
    Help bars and the method tabs go; the class title heads the sections."""
    document = read(name)
    assert document.sections[0].path == (title,)
    for furniture in ("Skip navigation links", "All Classes", "Frames", "All Methods"):
        assert furniture not in document.text


def test_javadoc_summary_tables_keep_their_code():
    """A summary table's cells keep their code spans, on one line per row."""
    text = read("javadoc-argparse4j-ArgumentParsers.html").text
    assert "\n`static int` | `DEFAULT_FORMAT_WIDTH` | Default format width of text output.\n" in (
        text
    )


# --- GitHub-flavoured Markdown exports --------------------------------------------------


def test_gfm_export_and_githubs_own_page_read_alike():
    """cmark-gfm's export and the page GitHub shows for the same file give one text: the
    alert's label (raw "[!NOTE]" or GitHub's "Note") and heading anchors gone, GitHub's
    header, breadcrumbs, edit button and footer gone."""
    exported, shown = read("gfm-cmark-wal.html"), read("gfm-github-wal.html")
    assert exported.text == shown.text
    assert shown.text.startswith(
        "# Write-ahead log\n\nThe **write-ahead log** (WAL) records every change"
    )
    assert "\n\n`min_wal_size` keeps old segments for reuse" in shown.text
    assert "[!NOTE]" not in shown.text and "Note" not in lines(shown)
    for furniture in ("Pull requests", "Edit this file", "Raw", "Terms", "handbook /"):
        assert furniture not in shown.text
    assert "\n`wal_level` | how much information is written to the WAL\n" in shown.text
    assert [s.path for s in shown.sections] == [
        ("Write-ahead log",),
        ("Write-ahead log", "Settings"),
    ]


# --- Any page: rules that do not need a generator ---------------------------------------


def test_prev_next_bar_without_a_class_is_removed_and_a_plain_note_title_is_no_heading():
    """A navigation table no generator marked, and a note's "Note" heading, are left out;
    a note with a title of its own keeps it as a paragraph."""
    page = (
        "<html><body><table><tr><td><a href='a.html'>Prev</a></td><td><a href='b.html'>"
        "Up</a></td><td><a href='i.html'>Home</a></td><td><a href='c.html'>Next</a></td>"
        "</tr></table><h1>Locks</h1><p>Locks serialise writers.</p>"
        "<div class='note'><h3>Note</h3><p>Readers never block.</p></div>"
        "<div class='admonition warning'><h4>Deadlocks ahead</h4><p>Lock in one order.</p>"
        "</div></body></html>"
    )
    document = read(page)
    assert document.text == (
        "# Locks\n\nLocks serialise writers.\n\nReaders never block.\n\nDeadlocks ahead\n\n"
        "Lock in one order.\n"
    )
    assert [s.path for s in document.sections] == [("Locks",)]


def test_edit_and_permalink_links_go_and_other_links_keep_their_words():
    """ "Edit on GitHub", "View page source", "Improve this page" and "¶" links are not
    text; a link inside a sentence keeps its words."""
    page = (
        "<html><body><main><a href='e'>Edit on GitHub</a> <a href='s'>View page source</a>"
        "<h1>Replication<a class='x' href='#r'>¶</a></h1><p>See <a href='w'>the WAL</a>"
        " first.</p><p><a href='i'>Improve this page</a></p></main></body></html>"
    )
    assert read(page).text == "# Replication\n\nSee the WAL first.\n"


def test_inline_markup_is_kept_as_light_markdown():
    """Code-like elements become backticks (a backtick inside is fenced with two),
    emphasis and strong text asterisks, spaces stay outside the markers; headings and
    code blocks carry none."""
    page = (
        "<html><body><main><h2>The <code>wal_level</code> <em>setting</em></h2>"
        "<p>Press <kbd>Ctrl</kbd>, read <samp>ok</samp>, run <tt>psql</tt>, quote "
        "<code>a`b</code>; a <dfn>checkpoint</dfn> is<em> not </em>a <strong>lock"
        "</strong>; <b><i>both</i></b>; <em>*</em>.</p>"
        "<pre><code>SELECT *\nFROM t;</code></pre></main></body></html>"
    )
    assert read(page).text == (
        "## The wal_level setting\n\nPress `Ctrl`, read `ok`, run `psql`, quote `` a`b ``; "
        "a *checkpoint* is *not* a **lock**; *both*; *.\n\n```\nSELECT *\nFROM t;\n```\n"
    )


def test_list_items_keep_their_marker_when_their_text_is_in_paragraphs():
    """``<li><p>…</p></li>`` (DocBook, Sphinx) is still an item."""
    page = (
        "<html><body><main><ul><li><p>First point.</p><p>More on it.</p></li>"
        "<li><p>Second point.</p></li></ul></main></body></html>"
    )
    assert read(page).text == "- First point.\n\nMore on it.\n\n- Second point.\n"


# --- Hostile pages ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "markup",
    [
        "<html><body><div class='navheader'><table><tr><td><a href='p'>Prev</a></td>"
        "<td><a href='u'>Up</a></td><td><a href='n'>Next</a></td></tr></table></div>"
        "<div class='navfooter'>Home</div></body></html>",
        "<html><body><nav><a href='/'>Home</a> <a href='/a'>About</a></nav>"
        "<div role='navigation'><a href='/x'>Docs</a></div><p>Prev | Up | Home | Next</p>"
        "<footer>© Us</footer></body></html>",
    ],
)
def test_a_page_of_nothing_but_navigation_is_refused_in_words(markup):
    """A page whose every word is navigation is refused, saying so, not stored empty."""
    with pytest.raises(BadDocument, match="only navigation, menus and other page furniture"):
        read(markup)


def test_furniture_classes_nested_deep_and_repeated_are_all_removed():
    """Hundreds of nested sidebars and bars around one paragraph leave the paragraph."""
    bars = "".join("<div class='related'><a href='n'>next</a></div>" for _ in range(300))
    nested = "<div class='sphinxsidebar'>" * 100 + "menu" + "</div>" * 100
    page = f"<html><body>{bars}{nested}<div role='main'><p>Only this.</p></div>{bars}</body>"
    assert read(page + "</html>").text == "Only this.\n"


def test_text_nested_past_the_parsers_depth_is_said_not_silently_lost():
    """libxml2 drops what lies more than 255 elements deep without a word: a page whose
    text all lies there is refused saying so (not "no text"); a page with text above it
    is imported with a note that the deeper text was left out."""
    deep = b"<div>" * 300 + b"<p>Deep text says autovacuum uses statistics.</p>" + b"</div>" * 300
    with pytest.raises(BadDocument, match="more than 255 levels deep"):
        read(b"<html><body>" + deep + b"</body></html>", "deep.html")
    doc = read(b"<html><body><p>Top text of the page.</p>" + deep + b"</body></html>")
    assert "Top text of the page." in doc.text and "Deep text" not in doc.text
    assert any("more than 255 levels deep was left out" in note for note in doc.notes)
    shallow = read(b"<html><body><p>Plain page.</p></body></html>")
    assert shallow.notes == ()
