"""The lesson page in a real browser: Markdown rendered, quotes highlighted as links, HTML inert."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

LESSON = """# Vector search

**Embeddings** map text to vectors; *search* compares them.

Before learning vector search you should understand **embeddings**.

- cosine similarity
- dot product
"""
QUOTE = "Before learning vector search you should understand **embeddings**."

HOSTILE = """# Evil lesson

<script>alert(1)</script> Embeddings come first.

<img src=x onerror=alert(2)> and [click me](javascript:alert(3)) then vector search.
"""


def test_a_markdown_lesson_renders_with_its_quote_highlighted_as_a_link(
    page, live_server, login, f, shot
):
    """Headings and bold render without # or **; the quote is a visible link to its proposal."""
    doc = f.lesson(slug="vectors", text=LESSON)
    proposal = f.edge_proposal("Embeddings", "Vector search", doc=doc, quote=QUOTE)
    login("viewer")
    page.goto(f"{live_server.url}/sources/vectors/")

    article = page.locator("#source-text")
    expect(article).to_have_attribute("data-revision", str(doc.current_revision_id))
    expect(article.locator("h2")).to_have_text("Vector search")  # under the page title
    expect(article.locator("strong").first).to_have_text("Embeddings")
    expect(article.locator("li")).to_have_count(2)
    expect(article).not_to_contain_text("**")
    expect(article).not_to_contain_text("# ")

    pieces = article.locator("a.hl")
    # Split around <strong>, no asterisks inside any piece.
    expect(pieces).to_have_text(
        ["Before learning vector search you should understand ", "embeddings", "."]
    )
    expect(article.locator("strong a.hl")).to_be_visible()
    href = reverse("review:proposal", args=[proposal.pk])
    for i in range(3):
        expect(pieces.nth(i)).to_have_attribute("href", href)
        expect(pieces.nth(i)).to_have_class(re.compile(r"\bstatus-pending\b"))
        expect(pieces.nth(i)).to_have_attribute("title", f"#{proposal.pk} pending")
    expect(page.locator(f"#p{proposal.pk}")).to_be_visible()
    shot("source-markdown")

    pieces.nth(0).click()
    expect(page).to_have_url(re.compile(rf"/review/focus/\?id={proposal.pk}$"))


def test_html_in_a_lesson_is_shown_as_text_and_never_runs(page, live_server, login, f, dialogs):
    """Script, an event handler and a javascript: link in a lesson open no dialog."""
    doc = f.lesson(slug="evil", text=HOSTILE)
    f.edge_proposal(
        "Embeddings",
        "Vector search",
        doc=doc,
        quote="<script>alert(1)</script> Embeddings come first.",
    )
    login("viewer")
    page.goto(f"{live_server.url}/sources/evil/")

    article = page.locator("#source-text")
    expect(article.locator("h2")).to_have_text("Evil lesson")
    expect(article).to_contain_text("<script>alert(1)</script> Embeddings come first.")
    expect(article).to_contain_text("<img src=x onerror=alert(2)>")
    expect(article.locator("a.hl")).to_have_text("<script>alert(1)</script> Embeddings come first.")
    page.wait_for_timeout(300)  # give anything injected the chance to run
    assert article.locator("script, img, svg, iframe").count() == 0
    assert article.locator("a[href^='javascript']").count() == 0
    assert dialogs == []


# --- long documents: pages, outline, jumping to a quote -----------------------------------

LAPTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}


def long_pdf(slug: str = "book", pages: int = 40):
    """A source as the PDF reader stores it: plain text, page starts, a bookmark a chapter."""
    from kgreview.graph.sources import source_import

    texts = [
        "\n".join(
            [f"Chapter {n // 10 + 1}, page {n + 1}" if n % 10 == 0 else f"Page {n + 1}"]
            + [
                f"Line {k} of page {n + 1} says <b>tokens</b> are **units** of text."
                for k in range(30)
            ]
        )
        for n in range(pages)
    ]
    text = "\n\n".join(texts) + "\n"
    starts, at = [], 0
    for page_text in texts:
        starts.append(at)
        at += len(page_text) + 2
    sections = [
        {
            "path": [f"Chapter {c + 1}"],
            "start": starts[c * 10],
            "end": starts[c * 10 + 10] if c * 10 + 10 < pages else len(text),
            "level": 1,
        }
        for c in range(pages // 10)
    ]
    return source_import(
        slug=slug,
        title="A long book",
        text=text,
        media_type="application/pdf",
        text_format="plain",
        structure={"sections": sections, "pages": starts},
        original=b"%PDF-1.4 stand-in",
        filename="book.pdf",
        acting_user=None,
    ).source


def save(page, output_path: str, name: str) -> None:
    from pathlib import Path

    folder = Path(output_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=False)


def test_a_link_to_a_quote_deep_in_a_pdf_scrolls_to_it_and_focuses_it(
    page, live_server, login, f, output_path, dialogs
):
    """?at=START lands on #q-START: the quote in view, focused and outlined; the proposal
    list's link does the same for another quote; text stays text."""
    from tests.browser.axe import axe_violations, report

    doc = long_pdf()
    text = doc.current_revision.text
    quote = "Line 7 of page 31 says <b>tokens</b> are **units** of text."
    other = "Line 2 of page 12 says <b>tokens</b> are **units** of text."
    first = f.edge_proposal("Tokens", "Text", doc=doc, quote=quote)
    second = f.edge_proposal("Units", "Text", doc=doc, quote=other)
    start = text.index(quote)
    page.set_viewport_size(LAPTOP)
    login("reviewer")
    page.goto(f"{live_server.url}/sources/book/?at={start}")
    expect(page).to_have_url(f"{live_server.url}/sources/book/#q-{start}")
    target = page.locator(f"#q-{start}")
    expect(target).to_have_text(quote)
    expect(target).to_be_focused()
    expect(target).to_be_in_viewport()
    expect(target).to_have_class(re.compile(r"\bis-target\b"))
    expect(target).to_have_attribute("href", reverse("review:proposal", args=[first.pk]))
    expect(page.locator("#outline")).to_have_attribute("open", "")
    expect(page.locator("#outline .outline-list a")).to_have_count(4)
    expect(page.locator("#source-text .page-mark")).to_have_count(40)
    assert page.locator("#source-text b, #source-text strong").count() == 0
    found = axe_violations(page)
    assert not found, report(found, "a long PDF's page")
    save(page, output_path, "source-long-pdf-quote-1366")

    link = page.locator(f"#p{second.pk} .quote-link")
    expect(link).to_have_text("the quote, p. 12 · Chapter 2")
    link.click()
    other_anchor = page.locator(f"#q-{text.index(other)}")
    expect(other_anchor).to_be_focused()
    expect(other_anchor).to_be_in_viewport()
    expect(target).not_to_have_class(re.compile(r"\bis-target\b"))

    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/sources/book/?at={start + 5}")
    expect(page.locator(f"#q-{start}")).to_be_focused()
    expect(page.locator(f"#q-{start}")).to_be_in_viewport()
    expect(page.locator("#outline")).not_to_have_attribute("open", "")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"] + 1
    found = axe_violations(page)
    assert not found, report(found, "a long PDF's page at 390 px")
    save(page, output_path, "source-long-pdf-quote-390")
    assert dialogs == []


def test_a_markdown_quote_hidden_under_another_is_still_found(page, live_server, login, f):
    """A held quote inside a pending one has no element of its own: #q-START still
    outlines and focuses its text; the outline reaches the headings."""
    text = "# Vector search\n\n" + LESSON.split("\n", 2)[2] + "\n## Practice\n\nTry it.\n"
    doc = f.lesson(slug="vectors", text=text)
    outer = f.edge_proposal("Embeddings", "Vector search", doc=doc, quote=QUOTE)
    inner = f.edge_proposal(
        "Vector search",
        "Embeddings",
        "part_of",
        doc=doc,
        quote="learning vector search",
        confidence=0.1,
    )
    assert inner.status == "held"
    inner_start = text.index("learning vector search")
    page.set_viewport_size(LAPTOP)
    login("viewer")
    page.goto(f"{live_server.url}/sources/vectors/#q-{inner_start}")
    # The pending quote wins the look; the held one's anchor is an empty element before it.
    expect(page.locator(f"#q-{inner_start}")).to_have_class("anchor")
    pieces = page.locator(f'#source-text [data-spans~="{inner.pk}"]')
    expect(pieces.first).to_be_focused()
    expect(pieces.first).to_have_class(re.compile(r"\bis-target\b"))
    expect(pieces.first).to_have_attribute("href", reverse("review:proposal", args=[outer.pk]))
    practice = text.index("## Practice")
    page.locator("#outline").get_by_role("link", name="Practice").click()
    expect(page).to_have_url(re.compile(rf"#s-{practice}$"))
    heading = page.locator(f"#s-{practice} + h3")
    expect(heading).to_have_text("Practice")
    expect(heading).to_be_in_viewport()
