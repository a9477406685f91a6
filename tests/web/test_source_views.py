"""The source page of a long document (outline, page marks, quote anchors, plain text kept
plain), the original file's download, and the plain-text renderer behind them."""

from __future__ import annotations

import html as htmllib
import re

import pytest
from django.test import Client
from django.urls import reverse

from benchmarks.render import long_source
from kgreview.core.markup import Span
from kgreview.graph.plain import paragraphs, render_plain
from kgreview.graph.sourcepage import format_label, fragment_for, outline
from kgreview.graph.sources import Structure, revision_structure, source_import
from kgreview.review.models import Proposal

pytestmark = pytest.mark.django_db

PAGES = [
    "Chapter 1 Tokens\nA model reads <script>alert(1)</script> as **tokens**.\nSecond line.",
    "Chapter 2 Vocabulary\nThe vocabulary maps tokens to ids.\n\nA new paragraph on page 2.",
    "Chapter 3 Embeddings\nEach id gets a vector.",
]
PDF_TEXT = "\n\n".join(PAGES) + "\n"
PAGE_STARTS = [PDF_TEXT.index(p) for p in PAGES]
QUOTE = "The vocabulary maps tokens to ids."


def pdf_source(
    slug: str = "book", *, original: bytes | None = b"%PDF-1.4 fake", filename="book.pdf"
):
    """A source read from a PDF: plain text, three pages, a bookmark per chapter."""
    sections = [
        {"path": [p.split("\n")[0]], "start": s, "end": e, "level": 1}
        for p, s, e in zip(PAGES, PAGE_STARTS, [*PAGE_STARTS[1:], len(PDF_TEXT)], strict=True)
    ]
    sections.insert(
        2,
        {
            "path": ["Chapter 2 Vocabulary", "Ids"],
            "start": PDF_TEXT.index(QUOTE),
            "end": PAGE_STARTS[2],
            "level": 2,
        },
    )
    return source_import(
        slug=slug,
        title="The book",
        text=PDF_TEXT,
        media_type="application/pdf",
        text_format="plain",
        structure={"sections": sections, "pages": PAGE_STARTS},
        original=original,
        filename=filename,
        acting_user=None,
    ).source


@pytest.fixture
def viewer(f) -> Client:
    client = Client()
    client.force_login(f.user(role="viewer"))
    return client


def article(response) -> str:
    page = response.content.decode()
    return re.search(r'<article class="source-text.*?</article>', page, re.S).group(0)


# --- plain text stays plain ----------------------------------------------------------------


def test_pdf_text_is_escaped_paragraphs_not_markdown(viewer):
    """<script> and ** show literally; paragraphs split at blank lines keep line breaks."""
    pdf_source()
    body = article(viewer.get("/sources/book/"))
    assert "<script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt; as **tokens**." in body
    assert "<strong>" not in body and "<h" not in body.replace("<hr", "")
    assert '<p class="plain">Chapter 1 Tokens\nA model reads' in body
    assert body.count('<p class="plain">') == 4


def test_page_marks_and_section_anchors_are_in_the_text(viewer):
    """p. 1 to p. 3 as page marks with ids, each section's anchor at its offset."""
    pdf_source()
    body = article(viewer.get("/sources/book/"))
    for number in (1, 2, 3):
        assert f'id="page-{number}" data-page="{number}" aria-label="Page {number}"' in body
    for start in (*PAGE_STARTS, PDF_TEXT.index(QUOTE)):
        assert f'id="s-{start}"' in body
    # The mark comes before its page's first paragraph, never inside a word.
    assert re.search(
        r'id="page-2"[^>]*></div><span class="anchor" id="s-\d+"></span><p class="plain">Chapter 2',
        body,
    )


def test_the_outline_nests_sections_and_links_to_their_anchors(viewer):
    """Chapters with their pages; the sub-section inside its chapter's list."""
    pdf_source()
    page = viewer.get("/sources/book/").content.decode()
    nav = re.search(r'<nav class="source-nav".*?</nav>', page, re.S).group(0)
    assert '<details class="outline" id="outline">' in nav
    assert "3 pages" not in nav  # the count is in the header, the form says "of 3"
    assert re.search(
        rf'<a href="#s-{PAGE_STARTS[1]}">Chapter 2 Vocabulary</a> '
        r'<span class="outline-page">p. 2</span>'
        rf'<ol class="outline-list">\s*<li><a href="#s-{PDF_TEXT.index(QUOTE)}">Ids</a>',
        nav,
    )
    assert 'name="page" min="1" max="3"' in nav


def test_the_header_says_type_pages_words_and_the_original(viewer):
    """PDF · 3 pages · words; the file name, its size and a download link."""
    pdf_source()
    page = htmllib.unescape(viewer.get("/sources/book/").content.decode())
    assert re.search(r"· PDF · 3 pages · \d+ words ·", page)
    assert 'Read from <span class="filename">book.pdf</span> (13 bytes)' in page
    assert re.search(
        r'<a class="button" id="download-original" href="/sources/book/original/" download>', page
    )


def test_a_markdown_source_gets_heading_anchors_and_an_outline(viewer, f):
    """Headings found again in an old Markdown revision; each heading keeps its plain markup
    with its anchor just before it."""
    text = "# Intro\n\nSome **bold** words.\n\n## Details\n\nMore.\n"
    f.source(slug="md", text=text)
    page = viewer.get("/sources/md/").content.decode()
    body = article(viewer.get("/sources/md/"))
    assert "<strong>bold</strong>" in body
    assert '<span class="anchor" id="s-0"></span><h2>Intro</h2>' in body
    start = text.index("## Details")
    assert f'<span class="anchor" id="s-{start}"></span><h3>Details</h3>' in body
    assert f'<a href="#s-{start}">Details</a>' in page
    assert "page-jump" not in page  # no pages in Markdown


def test_markdown_anchors_follow_the_headings_the_renderer_makes(viewer, f):
    """A heading inside a fence is no heading; a setext heading is one but no section; a
    section stored where no heading starts gets its anchor on its first line."""
    from kgreview.graph.sources import source_import as store

    text = (
        "# One\n\n```\n# not a heading\n```\n\nSetext\n------\n\nA line named in a bookmark.\n"
        "\n## Two\n\nEnd.\n"
    )
    two, odd = text.index("## Two"), text.index("A line named")
    store(
        slug="mixed",
        title="Mixed",
        text=text,
        structure={
            "sections": [
                {"path": ["One"], "start": 0, "end": len(text), "level": 1},
                {"path": ["One", "Odd"], "start": odd, "end": two, "level": 2},
                {"path": ["One", "Two"], "start": two, "end": len(text), "level": 2},
            ],
            "pages": [],
        },
        acting_user=None,
    )
    body = article(viewer.get("/sources/mixed/"))
    assert '<span class="anchor" id="s-0"></span><h2>One</h2>' in body
    assert "<h3>Setext</h3>" in body
    assert f'<span class="anchor" id="s-{two}"></span><h3>Two</h3>' in body
    assert f'<mark id="s-{odd}" class="heading-anchor" data-spans="s-{odd}">A line' in body
    assert body.count('id="s-') == 3


def test_a_source_without_sections_or_pages_has_no_outline(viewer, f):
    """A short text file: no outline panel at all."""
    source_import(
        slug="note",
        title="Note",
        text="Just words.\n",
        media_type="text/plain",
        text_format="plain",
        acting_user=None,
    )
    page = viewer.get("/sources/note/").content.decode()
    assert 'class="source-nav"' not in page
    assert "· Text ·" in page


# --- quotes ------------------------------------------------------------------------------------


def test_each_quote_has_an_anchor_and_the_list_links_to_it(viewer, f):
    """#q-START on the highlight; the proposal list says its page and section."""
    doc = pdf_source()
    proposal = f.edge_proposal("Vocabulary", "Tokens", doc=doc, quote=QUOTE)
    start = PDF_TEXT.index(QUOTE)
    response = viewer.get("/sources/book/")
    body = article(response)
    href = htmllib.escape(reverse("review:proposal", args=[proposal.pk]))
    assert (
        f'<a id="q-{start}" href="{href}" class="hl status-pending" '
        f'title="#{proposal.pk} pending" data-spans="{proposal.pk}">{QUOTE}</a>'
    ) in body
    page = htmllib.unescape(response.content.decode())
    assert f'data-start="{start}" data-end="{start + len(QUOTE)}"' in page
    assert f'href="#q-{start}">the quote, p. 2 · Chapter 2 Vocabulary › Ids</a>' in page


def test_a_quote_inside_another_still_gets_its_anchor_in_plain_text(viewer, f):
    """The inner quote loses the look to the open outer one but keeps its id."""
    doc = pdf_source()
    outer = f.edge_proposal("Vocabulary", "Ids", doc=doc, quote=PAGES[1].split("\n\n")[0])
    inner = f.edge_proposal("Tokens", "Ids", doc=doc, quote="maps tokens to ids")
    Proposal.objects.filter(pk=inner.pk).update(status="held")
    body = article(viewer.get("/sources/book/"))
    inner_start = PDF_TEXT.index("maps tokens to ids")
    assert f'id="q-{inner_start}"' in body
    assert f'id="q-{PDF_TEXT.index(PAGES[1])}"' in body
    assert re.search(rf'data-spans="{outer.pk} {inner.pk}"', body)


def test_markdown_quotes_get_an_anchor_before_their_first_piece(viewer, f):
    """Highlights keep their markup; each quote, even one inside another, has its anchor."""
    text = "# Vectors\n\nBefore learning **vector search** you should understand embeddings.\n"
    doc = f.lesson(slug="vectors", text=text)
    wide = f.edge_proposal("Embeddings", "Vector search", doc=doc, quote=text.splitlines()[2])
    narrow = f.edge_proposal("Vector search", "Search", doc=doc, quote="vector search")
    body = article(viewer.get("/sources/vectors/"))
    href = htmllib.escape(reverse("review:proposal", args=[wide.pk]))
    assert f'<span class="anchor" id="q-{text.index("Before")}"></span><a href="{href}"' in body
    narrow_anchor = f'<span class="anchor" id="q-{text.index("vector search")}"></span>'
    assert re.search(
        f'<strong>{narrow_anchor}<a href="{href}" class="hl status-pending" '
        f'title="#{wide.pk} pending, #{narrow.pk} pending" '
        f'data-spans="{wide.pk} {narrow.pk}"[^>]*>vector search</a></strong>',
        body,
    )
    assert body.count('class="anchor" id="q-') == 2


def test_two_quotes_from_one_offset_share_one_anchor(viewer, f):
    """Ids stay unique: the open proposal's highlight carries it."""
    doc = pdf_source()
    f.edge_proposal("Vocabulary", "Tokens", doc=doc, quote=QUOTE)
    f.edge_proposal("Vocabulary", "Ids", rel="part_of", doc=doc, quote=QUOTE)
    body = article(viewer.get("/sources/book/"))
    assert body.count(f'id="q-{PDF_TEXT.index(QUOTE)}"') == 1


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("at={quote}", "#q-{quote}"),
        ("at={inside}", "#q-{quote}"),
        ("at=3", "#page-1"),
        ("at={page3}", "#page-3"),
        ("at=nonsense", ""),
        ("page=2", "#page-2"),
        ("page=99", "#page-3"),
        ("page=-4", "#page-1"),
        ("page=two", ""),
    ],
)
def test_at_and_page_redirect_to_an_anchor(viewer, f, query, fragment):
    """?at=OFFSET and ?page=N become #q-, #page- anchors (so they work without script)."""
    doc = pdf_source()
    f.edge_proposal("Vocabulary", "Tokens", doc=doc, quote=QUOTE)
    offsets = {
        "quote": PDF_TEXT.index(QUOTE),
        "inside": PDF_TEXT.index(QUOTE) + 5,
        "page3": PAGE_STARTS[2] + 2,
    }
    response = viewer.get("/sources/book/?" + query.format(**offsets))
    assert response.status_code == 302
    assert response["Location"] == "/sources/book/" + fragment.format(**offsets)


def test_at_keeps_the_revision_asked_for(viewer, f):
    """?rev=1&at=... stays on revision 1."""
    pdf_source()
    source_import(
        slug="book", title="The book", text="New text.\n", text_format="plain", acting_user=None
    )
    response = viewer.get("/sources/book/?rev=1&page=2")
    assert response["Location"] == "/sources/book/?rev=1#page-2"


def test_at_in_markdown_goes_to_the_section(viewer, f):
    """Without pages, an offset outside quotes lands on its section's heading."""
    text = "# Intro\n\nWords.\n\n## Details\n\nMore words here.\n"
    f.source(slug="md", text=text)
    at = text.index("More words")
    response = viewer.get(f"/sources/md/?at={at}")
    assert response["Location"] == f"/sources/md/#s-{text.index('## Details')}"


# --- the original file -----------------------------------------------------------------------


def test_download_original_is_an_attachment_with_its_type(viewer):
    """Content-Type from the stored file, attachment, nosniff, the file's own name."""
    pdf_source()
    response = viewer.get("/sources/book/original/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == 'attachment; filename="book.pdf"'
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Length"] == "13"
    assert response.content == b"%PDF-1.4 fake"


def test_an_html_original_is_never_served_inline(viewer):
    """text/html stays text/html, but as an attachment in a sandbox."""
    source_import(
        slug="page",
        title="Page",
        text="Words.\n",
        media_type="text/html",
        original=b"<script>alert(1)</script><p>Words.</p>",
        filename="page.html",
        acting_user=None,
    )
    response = viewer.get("/sources/page/original/")
    assert response["Content-Type"] == "text/html"
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in response["Content-Security-Policy"]


@pytest.mark.parametrize(
    ("filename", "disposition"),
    [
        ('evil"; filename="x.exe.pdf', "attachment; filename=\"evil'; filename='x.exe.pdf\""),
        ("bad\r\nSet-Cookie: x=1.pdf", 'attachment; filename="badSet-Cookie: x=1.pdf"'),
        ("résumé.pdf", "attachment; filename*=utf-8''r%C3%A9sum%C3%A9.pdf"),
        ("", 'attachment; filename="book-r1.pdf"'),
    ],
)
def test_the_download_name_is_safe(viewer, filename, disposition):
    """Quotes, line breaks and non-ASCII cannot break the header; no name, a made-up one."""
    pdf_source(filename=filename)
    response = viewer.get("/sources/book/original/")
    assert response["Content-Disposition"] == disposition


def test_a_revision_without_an_original_is_a_404_in_words(viewer, f):
    """Revisions imported as text alone have nothing to download; the page says so."""
    f.source(slug="old")
    response = viewer.get("/sources/old/original/")
    assert response.status_code == 404
    assert "Revision 1 of old has no original file" in htmllib.unescape(response.content.decode())
    assert "download-original" not in viewer.get("/sources/old/").content.decode()


def test_an_older_revisions_original_is_asked_for_by_number(viewer):
    """?rev=N picks the file; a revision that does not exist is a 404."""
    pdf_source()
    source_import(
        slug="book",
        title="The book",
        text="Changed.\n",
        text_format="plain",
        original=b"second file",
        filename="book-2.txt",
        media_type="text/plain",
        acting_user=None,
    )
    assert viewer.get("/sources/book/original/").content == b"second file"
    assert viewer.get("/sources/book/original/?rev=1").content == b"%PDF-1.4 fake"
    assert viewer.get("/sources/book/original/?rev=9").status_code == 404
    assert viewer.get("/sources/book/original/?rev=x").status_code == 404
    assert viewer.get("/sources/book/original/?rev=99999999999999999999999").status_code == 404
    assert (
        'href="/sources/book/original/?rev=1"'
        in viewer.get("/sources/book/?rev=1").content.decode()
    )


def test_downloads_need_a_role_and_a_get(f):
    """Anonymous users go to login, users without a role get 403, POST is 405."""
    pdf_source()
    assert Client().get("/sources/book/original/").status_code == 302
    no_role = Client()
    no_role.force_login(f.user())
    assert no_role.get("/sources/book/original/").status_code == 403
    viewer = Client()
    viewer.force_login(f.user(role="viewer"))
    assert viewer.post("/sources/book/original/").status_code == 405


# --- a long document stays fast ---------------------------------------------------------------


def test_a_200_page_pdf_with_hundreds_of_quotes_renders_in_bounded_markup(viewer, f):
    """~500 kB of text, 300 highlighted quotes: the page carries every page mark and quote
    and a few hundred bytes of markup per quote, not more. (How fast it renders is
    ``manage.py bench render``.)"""
    doc, text = long_source()
    assert doc.proposals.count() == 300
    assert len(text) > 450_000
    response = viewer.get("/sources/long/")
    assert response.status_code == 200
    assert len(response.content) < len(text) + 300 * 1_000
    body = article(response)
    assert body.count('class="page-mark"') == 200
    assert body.count("hl status-pending") >= 300


# --- pieces -------------------------------------------------------------------------------------


def test_format_labels():
    """What a person calls each kind of file."""
    assert [
        format_label(t) for t in ("application/pdf", "text/html", "text/markdown", "text/plain", "")
    ] == [
        "PDF",
        "HTML",
        "Markdown",
        "Text",
        "Markdown",
    ]
    assert (
        format_label("application/vnd.openxmlformats-officedocument.wordprocessingml.document")
        == "Word"
    )


def test_paragraphs_split_at_blank_lines():
    """Lines with only spaces count as blank; whitespace-only paragraphs are dropped."""
    text = "a\nb\n\n  \n\nc\n \t\nd\n\n\n"
    assert [text[a:b] for a, b in paragraphs(text)] == ["a\nb", "c", "d"]


def test_render_plain_escapes_everything_and_keeps_line_breaks():
    """No tag from the text survives; attributes are quoted."""
    out = render_plain('<b onclick="x">"hi"</b> & **no**\nnext\n\nnew')
    assert out == (
        '<p class="plain">&lt;b onclick="x"&gt;"hi"&lt;/b&gt; &amp; **no**\nnext</p>\n'
        '<p class="plain">new</p>\n'
    )


def test_render_plain_splits_a_highlight_at_paragraphs_and_overlaps():
    """A span across a blank line is two pieces; the lower rank wins the look; the id goes
    on each span's first piece; labels and keys of every covering span are kept."""
    text = "one two\n\nthree four"
    spans = [
        Span(
            4,
            14,
            tag="a",
            attrs={"href": "/p/1", "class": "hl", "id": "q-4"},
            key="1",
            label="#1",
            rank=1,
        ),
        Span(9, 19, attrs={"id": "q-9"}, key="2", label="#2", rank=0),
    ]
    out = render_plain(text, spans)
    assert out == (
        '<p class="plain">one <a id="q-4" href="/p/1" class="hl" title="#1" data-spans="1">'
        "two</a></p>\n"
        '<p class="plain"><mark id="q-9" title="#1, #2" data-spans="1 2">three</mark>'
        '<mark title="#2" data-spans="2"> four</mark></p>\n'
    )


def test_render_plain_places_pages_and_anchors():
    """A page starting a paragraph is a block mark before it; one inside is inline; an
    anchor in a gap goes with the next paragraph; a mark past the end still appears."""
    text = "first page\n\nsecond starts mid\nline"
    mid = text.index("line")
    out = render_plain(text, pages=[0, text.index("second"), mid], anchors=[(10, "s-gap")])
    assert out.startswith('<div class="page-mark" role="separator" id="page-1"')
    assert (
        '<span class="anchor" id="s-gap"></span><div class="page-mark" role="separator" '
        'id="page-2" data-page="2" aria-label="Page 2"></div><p class="plain">second'
    ) in out
    assert (
        '\n<span class="page-mark" role="separator" id="page-3" data-page="3" '
        'aria-label="Page 3"></span>line</p>' in out
    )
    assert render_plain("x", pages=[0, 1]).endswith(
        'id="page-2" data-page="2" aria-label="Page 2"></div>'
    )


def test_render_plain_ignores_empty_and_out_of_range_spans():
    """Spans that cover nothing render nothing; the text is whole."""
    out = render_plain("abc", [Span(2, 2), Span(5, 9), Span(-3, 1, key="k")])
    assert out == '<p class="plain"><mark data-spans="k">a</mark>bc</p>\n'


def test_outline_nests_by_heading_path():
    """Depth follows the path; pages come from the page starts."""
    structure = revision_structure_for(
        [(("A",), 0), (("A", "a1"), 10), (("A", "a1", "x"), 15), (("B",), 30)], pages=(0, 20)
    )
    tree = outline(structure)
    assert [i.title for i in tree] == ["A", "B"]
    assert [i.title for i in tree[0].children] == ["a1"]
    assert tree[0].children[0].children[0].anchor == "s-15"
    assert (tree[0].page, tree[1].page) == (1, 2)


def revision_structure_for(items, pages=()):
    from construction.types import Section

    return Structure(
        sections=tuple(Section(path=p, start=s, end=s + 5, level=len(p)) for p, s in items),
        pages=tuple(pages),
    )


def test_fragment_for_prefers_quotes_then_pages_then_sections():
    """The order ?at= looks in."""
    structure = revision_structure_for([(("A",), 0), (("B",), 50)])
    assert (
        fragment_for(at="12", page=None, structure=structure, quotes=[(10, 20), (12, 14)]) == "q-12"
    )
    assert (
        fragment_for(at="13", page=None, structure=structure, quotes=[(10, 20), (12, 14)]) == "q-12"
    )
    assert fragment_for(at="52", page=None, structure=structure, quotes=[]) == "s-50"
    assert fragment_for(at="99", page=None, structure=structure, quotes=[]) == ""
    assert fragment_for(at=None, page="3", structure=structure, quotes=[]) == ""


def test_revision_structure_of_the_stored_pdf(f):
    """The structure the page uses is the stored one."""
    doc = pdf_source()
    structure = revision_structure(doc.current_revision)
    assert structure.pages == tuple(PAGE_STARTS)
    assert len(structure.sections) == 4


def test_the_curriculum_links_each_source(viewer):
    """The list's title link leads to the page these tests read."""
    pdf_source()
    assert f'href="{reverse("source-detail", args=["book"])}"' in viewer.get("/").content.decode()
