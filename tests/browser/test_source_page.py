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
