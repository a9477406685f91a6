"""``plain_text``: a Markdown snippet's words without its syntax (the queue's quotes)."""

from __future__ import annotations

import pytest

from kgreview.core.markup import plain_text


@pytest.mark.parametrize(
    ("markdown", "words"),
    [
        ("**bold** and _em_", "bold and em"),
        ("# A heading", "A heading"),
        ("[a link](https://example.org) here", "a link here"),
        ("`code` and ![an image](x.png)", "code and an image"),
        ("- one\n- two\n\n> quoted", "one two quoted"),
        ("line one\nline two", "line one line two"),
        ("```\nfenced\n```", "fenced"),
        ("| a | b |\n|---|---|\n| 1 | 2 |", "a b 1 2"),
        ("<script>alert(1)</script> &amp; more", "<script>alert(1)</script> & more"),
        ("", ""),
    ],
)
def test_plain_text_keeps_the_words_and_drops_the_syntax(markdown, words):
    assert plain_text(markdown) == words


def test_plain_text_reads_only_the_start_of_a_long_text():
    assert plain_text("word " * 1000, read_at_most=20) == "word word word word"


def test_the_markdown_plain_filter_is_escaped_like_any_text():
    from django.template import Context, Template

    out = Template("{% load markup_tags %}{{ q|markdown_plain }}").render(
        Context({"q": "**<b>x</b>**"})
    )
    assert out == "&lt;b&gt;x&lt;/b&gt;"
