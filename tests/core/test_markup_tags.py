"""The markup template tags, and the lesson page that uses them."""

from __future__ import annotations

import re

import pytest
from django.template import Context as TemplateContext
from django.template import Template
from django.urls import reverse

from kgreview.core.markup import Span
from kgreview.review.workspace.card import Context, evidence_context

pytestmark = pytest.mark.django_db


def render(source: str, **context) -> str:
    return Template("{% load markup_tags %}" + source).render(TemplateContext(context))


def excerpt(before: str, quote: str, after: str) -> Context:
    return Context(before, quote, after, source=None, revision=None, is_current=True)


def test_markdown_filter_renders_and_escapes():
    """``|markdown`` renders Markdown and keeps raw HTML as text."""
    out = render("{{ text|markdown }}", text="# Title\n\n**bold** <b>x</b>")
    assert out == "<h1>Title</h1>\n<p><strong>bold</strong> &lt;b&gt;x&lt;/b&gt;</p>\n"


def test_markdown_html_highlights_spans_and_demotes_headings():
    """``{% markdown_html text spans heading_offset=1 %}`` puts the spans in and moves
    headings a level down."""
    text = "# Title\n\nA quoted sentence."
    spans = [Span(text.index("quoted"), text.index(" sentence"), attrs={"class": "hl"})]
    out = render("{% markdown_html text spans heading_offset=1 %}", text=text, spans=spans)
    assert out == '<h2>Title</h2>\n<p>A <mark class="hl">quoted</mark> sentence.</p>\n'


def test_evidence_html_marks_the_quote_inside_its_markdown():
    """The excerpt renders as Markdown with exactly the quote in <mark>, even mid-paragraph."""
    ctx = excerpt("…the model **thinks** and then ", "it *acts* on it", ", twice.\n\n- next")
    out = render("{% evidence_html ctx %}", ctx=ctx)
    assert out == (
        "<p>…the model <strong>thinks</strong> and then <mark>it </mark><em><mark>acts</mark>"
        "</em><mark> on it</mark>, twice.</p>\n<ul>\n<li>next</li>\n</ul>\n"
    )


def test_evidence_html_clips_and_handles_no_context():
    """``clip=`` shortens either side at a word; no context renders nothing."""
    ctx = excerpt("word " * 40, "the quote", " more" * 40)
    out = render("{% evidence_html ctx clip=30 %}", ctx=ctx)
    assert "<mark>the quote</mark>" in out and out.count("word") < 10 and "…" in out
    assert render("{% evidence_html ctx %}", ctx=None) == ""


def test_evidence_html_renders_a_quote_once_and_a_long_paragraph_every_time(monkeypatch):
    """The same quote in the same words is rendered once (a revision never changes: the
    card fetched ahead, then shown); another quote in the same words is its own entry, and
    a paragraph over the cached size is rendered each time, never kept."""
    from kgreview.graph.templatetags import markup_tags

    calls = []
    real = markup_tags.render_markdown

    def counting(text, spans=(), **kw):
        calls.append(text)
        return real(text, spans, **kw)

    monkeypatch.setattr(markup_tags, "render_markdown", counting)
    markup_tags._evidence.cache_clear()
    ctx = excerpt("A cached ", "quote", " here.")
    first = render("{% evidence_html ctx %}", ctx=ctx)
    assert render("{% evidence_html ctx %}", ctx=ctx) == first and len(calls) == 1
    assert "<mark>quote</mark>" in first
    other = render("{% evidence_html ctx %}", ctx=excerpt("A cached quote ", "here", "."))
    assert "<mark>here</mark>" in other and len(calls) == 2
    long = excerpt("x " * markup_tags.EVIDENCE_CACHED_UP_TO, "long", ".")
    render("{% evidence_html ctx %}", ctx=long)
    render("{% evidence_html ctx %}", ctx=long)
    assert len(calls) == 4


def test_evidence_html_from_a_stored_revision(f):
    """evidence_context's split renders with the quote highlighted and the heading demoted."""
    doc = f.lesson(text="# Vectors\n\nEmbeddings come **first**, then search.\n")
    revision = doc.current_revision
    start = revision.text.index("**first**")
    ctx = evidence_context(revision, start, start + len("**first**, then"))
    out = render("{% evidence_html ctx %}", ctx=ctx)
    assert "<strong><mark>first</mark></strong><mark>, then</mark>" in out


def test_source_page_links_overlapping_quotes_to_their_proposals(client, f):
    """Overlapping quotes: each piece links to the most open proposal and lists them all."""
    text = "# Vectors\n\nBefore learning **vector search** you should understand embeddings.\n"
    doc = f.lesson(slug="vectors", text=text)
    wide = f.edge_proposal(
        "Embeddings",
        "Vector search",
        doc=doc,
        quote="Before learning **vector search** you should understand embeddings.",
    )
    narrow = f.edge_proposal("Vector search", "Search", doc=doc, quote="vector search")
    client.force_login(f.user(role="viewer"))
    html = client.get(reverse("source-detail", args=["vectors"])).content.decode()

    article = re.search(r'<article class="source-text card md" (.*?)</article>', html, re.S)
    assert article, html
    body = article.group(0)
    assert f'data-revision="{doc.current_revision_id}"' in body
    assert "<h2>Vectors</h2>" in body and "**" not in body
    links = re.findall(r'<a href="([^"]+)" class="hl status-(\w+)" title="([^"]+)"[^>]*>', body)
    wide_url = reverse("review:proposal", args=[wide.pk])
    both = f"#{wide.pk} pending, #{narrow.pk} pending"
    assert links == [
        (wide_url, "pending", f"#{wide.pk} pending"),
        (wide_url, "pending", both),
        (wide_url, "pending", f"#{wide.pk} pending"),
    ]
    assert f'id="p{wide.pk}"' in html and f'id="p{narrow.pk}"' in html
