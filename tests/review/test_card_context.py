"""The review card shows a quote in whole sentences: its context starts where a sentence
or paragraph starts and ends where one ends, in PDFs (long paragraphs, no Markdown) and
in Markdown alike."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from benchmarks.synthetic_print import printed_pdf
from construction.sentences import sentences
from kgreview.graph.importing import read_upload, store_document
from kgreview.review.workspace.card import evidence_context

pytestmark = pytest.mark.django_db

CLAIM = "The guarantee we offer is that the target model's distribution is kept exactly."


def long_paragraph(n: int = 40) -> str:
    return " ".join(
        (CLAIM if i == n // 2 else f"Step {i} checks drafted token number {i} against the target.")
        for i in range(n)
    )


def import_pdf(f):
    raw = printed_pdf(
        [("h1", "Speculative Sampling"), ("p", long_paragraph()), ("p", "Closing words.")],
        title="Speculative Sampling",
    )
    slug, document = read_upload(raw, filename="speculative.pdf", max_bytes=10**7)
    return store_document(
        slug=slug,
        document=document,
        raw=raw,
        filename="speculative.pdf",
        origin="t",
        acting_user=None,
    ).source


def evidence_text(client, f, proposal) -> str:
    client.force_login(f.user("rv", role="reviewer"))
    page = client.get(reverse("review:focus") + f"?id={proposal.pk}").content.decode()
    inner = re.search(r'<blockquote id="evidence-text"[^>]*>(.*?)</blockquote>', page, re.S)
    assert inner is not None
    return html.unescape(re.sub(r"<[^>]+>", "", inner.group(1))).strip()


def test_a_pdf_quote_deep_in_a_long_paragraph_is_shown_in_whole_sentences(client, f):
    """The context of a quote in the middle of a long PDF paragraph begins at a sentence
    start and ends at a sentence end: never "…ee we offer is…"."""
    source = import_pdf(f)
    text = source.current_revision.text
    quote = re.search(r"we\s+offer\s+is\s+that\s+the\s+target", text).group()
    assert text.index(quote) - text.rfind("\n\n", 0, text.index(quote)) > 2 * 420
    proposal = f.edge_proposal("Draft model", "Target model", doc=source, quote=quote)
    shown = " ".join(evidence_text(client, f, proposal).split())
    assert re.match(r"^Step \d+ checks", shown), shown[:60]
    assert shown.endswith("against the target.") and "…" not in shown
    assert " ".join(quote.split()) in shown


def test_the_context_is_whole_sentences_of_the_stored_text(f):
    """evidence_context's before and after are sentence-aligned pieces of the revision."""
    source = import_pdf(f)
    revision = source.current_revision
    text = revision.text
    start = text.index("guarantee we offer")
    context = evidence_context(revision, start, start + len("guarantee we offer"))
    begin, finish = start - len(context.before), start + len(context.quote) + len(context.after)
    assert text[begin:start] == context.before and text[start:finish].endswith(context.after)
    starts = {s for s, _, _ in sentences(text)}
    ends = {e for _, e, _ in sentences(text)}
    assert begin in starts and finish in ends
    assert len(context.before) <= 420 and len(context.after) <= 420


def test_a_markdown_quote_in_a_short_paragraph_shows_the_paragraph(f):
    """A paragraph shorter than the room is shown whole, as before."""
    doc = f.lesson(text="# Locks\n\nLocks serialise writers. Readers never block.\n\nMore.\n")
    revision = doc.current_revision
    start = revision.text.index("Readers")
    context = evidence_context(revision, start, start + len("Readers never block."))
    assert (context.before, context.after) == ("Locks serialise writers. ", "")
