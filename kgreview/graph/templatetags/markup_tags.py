"""Source Markdown in templates: a whole revision with highlights, or an evidence excerpt.

Each returns block HTML (``<p>``, ``<ul>``, ...) without a wrapper; put it in an element
with the ``md`` class for its styles.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from construction.excerpt import head_of, tail_of
from kgreview.core.markup import Span, plain_text, render_markdown

register = template.Library()

#: Evidence paragraphs up to this many characters are rendered once per process.
EVIDENCE_CACHED_UP_TO = 8_000


@register.filter(name="markdown")
def markdown(text) -> SafeString:
    """``{{ text|markdown }}``: Markdown as sanitised HTML, nothing highlighted."""
    return render_markdown(str(text or ""))


@register.filter(name="markdown_plain")
def markdown_plain(text) -> str:
    """``{{ quote|markdown_plain|truncatechars:140 }}``: a Markdown snippet's words on one
    line, its syntax left out (``core.markup.plain_text``); escaped like any text."""
    return plain_text(str(text or ""))


@register.simple_tag
def markdown_html(text, spans: Sequence[Span] = (), heading_offset: int = 0) -> SafeString:
    """``{% markdown_html revision.text spans heading_offset=1 %}``: Markdown with each
    ``Span`` highlighted, its headings demoted by ``heading_offset`` levels."""
    return render_markdown(str(text or ""), spans or (), heading_offset=int(heading_offset))


@register.simple_tag
def evidence_html(context, clip: int = 0, heading_offset: int = 4) -> SafeString:
    """``{% evidence_html card.context %}``: the paragraph around a quote, as Markdown, the
    quote in a ``<mark>``. ``clip=80`` keeps only about 80 characters either side, whole
    sentences where they fit (``construction.excerpt``); a
    heading in the excerpt becomes an ``<h5>`` (``heading_offset``) inside the card.

    ``context`` is a ``kgreview.review.workspace.card.Context`` (``before``, ``quote``,
    ``after``); None renders nothing.
    """
    if context is None:
        return render_markdown("")
    offset = int(heading_offset)
    before, quote, after = context.before or "", context.quote or "", context.after or ""
    if clip:
        before, after = tail_of(before, int(clip)), head_of(after, int(clip))
    if getattr(context, "plain", False):
        # Text from a PDF or a .txt file is not Markdown: "*" and "#" are just characters.
        return format_html('<p class="plain">{}<mark>{}</mark>{}</p>', before, quote, after)
    text, start = before + quote + after, len(before)
    if len(text) > EVIDENCE_CACHED_UP_TO:
        return render_markdown(text, [Span(start, start + len(quote))], heading_offset=offset)
    return _evidence(text, start, start + len(quote), offset)


@lru_cache(maxsize=512)
def _evidence(text: str, start: int, end: int, heading_offset: int) -> SafeString:
    """A quote's paragraph rendered, kept by its words: a revision never changes, so the
    card of the same quote (the next card fetched ahead, then shown; a card opened again)
    is rendered once per process; 512 paragraphs of at most 8,000 characters."""
    return render_markdown(text, [Span(start, end)], heading_offset=heading_offset)
