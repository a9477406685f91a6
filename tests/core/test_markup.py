"""Source Markdown rendering: safe HTML, highlights on exact raw offsets, selections mapped back."""

from __future__ import annotations

import html
import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgreview.core.markup import Span, locate_quote, render_markdown

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
LEAF = re.compile(r"<(mark|a)\b([^>]*)>([^<]*)</\1>")
MARK = re.compile(r"</?mark\b[^>]*>")
MARKUP_AND_SPACE = re.compile(r"[\s*_~`#>|\[\]\\!]+")


def highlights(rendered: str) -> list[tuple[str, str, str]]:
    """(tag, attributes, text) of every highlight element, in document order."""
    return [
        (tag, attrs, html.unescape(text))
        for tag, attrs, text in LEAF.findall(str(rendered))
        if "data-spans" in attrs
    ]


def pieces(rendered: str, key: str = "q") -> list[str]:
    """The text of each highlight element carrying span ``key``."""
    found = []
    for _, attrs, text in highlights(rendered):
        keys = re.search(r'data-spans="([^"]*)"', attrs).group(1).split()
        if key in keys:
            found.append(text)
    return found


def span_of(text: str, quote: str, key: str = "q", **kwargs) -> Span:
    start = text.index(quote)
    return Span(start, start + len(quote), key=key, **kwargs)


def squash(text: str) -> str:
    return MARKUP_AND_SPACE.sub("", text)


# --- rendering ----------------------------------------------------------------------------


def test_common_markdown_renders_as_html():
    """Headings, emphasis, lists, code, fences, tables, links and strikethrough render."""
    text = (
        "# The **ReAct** pattern\n\n"
        "Some *em*, **strong**, ~~gone~~ and `code`.\n\n"
        "- one\n- two\n\n"
        "1. first\n2. second\n\n"
        "> quoted\n\n"
        "```python\nx = 1 < 2\n```\n\n"
        "| a | b |\n|---|--:|\n| c | d |\n\n"
        'See [the paper](https://arxiv.org/abs/2210.03629 "ReAct") or <https://example.org>.\n\n'
        "---\n"
    )
    out = str(render_markdown(text))
    assert "<h1>The <strong>ReAct</strong> pattern</h1>" in out
    assert "<em>em</em>" in out and "<strong>strong</strong>" in out and "<s>gone</s>" in out
    assert "<code>code</code>" in out
    assert "<ul>\n<li>one</li>\n<li>two</li>\n</ul>" in out
    assert "<ol>\n<li>first</li>" in out
    assert "<blockquote>\n<p>quoted</p>\n</blockquote>" in out
    assert "<pre><code>x = 1 &lt; 2\n</code></pre>" in out
    assert '<th class="align-right">b</th>' in out and "<td>c</td>" in out
    assert "style=" not in out  # the Content-Security-Policy refuses inline styles
    assert (
        '<a href="https://arxiv.org/abs/2210.03629" title="ReAct" rel="nofollow noopener">'
        "the paper</a>"
    ) in out
    assert '<a href="https://example.org" rel="nofollow noopener">https://example.org</a>' in out
    assert "<hr>" in out
    assert "**" not in out and "# " not in out


def test_plain_text_is_paragraphs():
    """Text that is not Markdown is its paragraphs, escaped."""
    out = str(render_markdown("First line\nsecond line.\n\nA < B & C."))
    assert out == "<p>First line\nsecond line.</p>\n<p>A &lt; B &amp; C.</p>\n"
    assert render_markdown("") == ""


def test_raw_html_and_unsafe_links_are_inert():
    """Raw HTML shows as text; javascript:, data: and relative links lose their target."""
    text = (
        '<script>alert("x")</script> <img src=x onerror="alert(1)">\n\n'
        "[js](javascript:alert(1)) [data](data:text/html;base64,PHNjcmlwdD4=) "
        "[rel](/admin/) <javascript:alert(2)> ![img](https://tracker.example/p.png)\n"
    )
    out = str(render_markdown(text))
    assert "<script" not in out and "<img" not in out
    assert re.search(r"<[^>]*onerror", out) is None
    assert "&lt;script&gt;" in out and "&lt;img src=x" in out
    assert "href" not in out
    assert "javascript:alert(1)" in out  # shown as the text it is
    assert "img" in out and "tracker.example" not in out  # an image is its alt text


def test_only_highlight_links_may_be_relative():
    """A highlight link to this site keeps its relative href; the source's own do not."""
    text = "See [this](/admin/) here."
    out = str(render_markdown(text, [Span(0, 3, tag="a", attrs={"href": "/review/p/1/"})]))
    assert 'href="/review/p/1/"' in out and "/admin/" not in out


def test_span_attributes_are_checked():
    """Only mark/a highlights with class, id, title, href (links) and data-* are accepted."""
    with pytest.raises(ValueError):
        Span(0, 1, tag="script")
    with pytest.raises(ValueError):
        Span(0, 1, attrs={"onclick": "x"})
    with pytest.raises(ValueError):
        Span(0, 1, tag="mark", attrs={"href": "/x/"})
    assert Span(0, 1, attrs={"data-proposal": "3", "class": "hl", "id": "q3"}).tag == "mark"


# --- highlights ---------------------------------------------------------------------------


def test_highlight_across_emphasis_covers_the_words_only():
    """A quote over bold text is split around <strong> and covers no asterisks."""
    text = "It uses **ReAct** loops, then stops."
    out = str(render_markdown(text, [span_of(text, "uses **ReAct** loops")]))
    assert pieces(out) == ["uses ", "ReAct", " loops"]
    assert "<strong><mark" in out and "**" not in out


def test_highlight_across_list_items_is_one_element_per_item():
    """A quote spanning two list items becomes two highlights, each inside its <li>."""
    text = "Steps:\n\n- embed the query\n- search the index\n"
    out = str(render_markdown(text, [span_of(text, "the query\n- search")]))
    assert pieces(out) == ["the query", "search"]
    assert "<li>embed <mark" in out and "</mark> the index</li>" in out


@pytest.mark.parametrize(
    "text,quote,element,shown",
    [
        ("# Vector search\n\nText.", "# Vector", "<h1>", "Vector"),
        ("Intro.\n\n- first item\n- second", "- first", "<ul>", "first"),
        ("Intro.\n\n1. first item\n2. second", "1. first item\n2. sec", "<ol>", "first item"),
        ("Intro.\n\n> a quote\n", "> a quote", "<blockquote>", "a quote"),
        ("Intro.\n\n## Two\n", "Intro.\n\n## Two", "<h2>", "Intro."),
    ],
)
def test_a_highlight_starting_before_block_syntax_keeps_the_block(text, quote, element, shown):
    """A boundary before "# ", "- ", "1. " or "> " moves past it; the block still parses."""
    out = str(render_markdown(text, [span_of(text, quote)]))
    assert element in out
    assert pieces(out)[0] == shown
    assert "# " not in out and "- " not in out and "&gt; " not in out


def test_highlight_inside_code_span_and_fence():
    """Highlights inside inline code and fenced code cover exactly the quoted characters."""
    text = "Call `client.embed(texts)` first.\n\n```python\nvectors = client.embed(texts)\n```\n"
    spans = [
        span_of(text, "embed(texts)` first", key="a"),
        Span(text.index("= client"), text.index("(texts)\n```"), key="b"),
    ]
    out = str(render_markdown(text, spans))
    assert pieces(out, "a") == ["embed(texts)", " first"]
    assert '<code>client.<mark data-spans="a">embed(texts)</mark></code>' in out
    assert pieces(out, "b") == ["= client.embed"]
    assert out.count("<pre><code>") == 1


def test_a_highlight_starting_on_the_fence_line_covers_the_code():
    """A quote that starts on the ``` line starts at the code; the fence still parses."""
    text = "Example:\n\n```\nprint(1)\n```\n"
    out = str(render_markdown(text, [span_of(text, "```\nprint")]))
    assert "<pre><code>" in out and pieces(out) == ["print"]


def test_overlapping_spans_are_cut_at_every_boundary():
    """Each piece lists every span covering it and takes the top-ranked span's attributes."""
    text = "one two three four"
    spans = [
        Span(0, 13, key="a", attrs={"class": "low"}, rank=1, label="A"),
        Span(4, 18, key="b", attrs={"class": "high"}, rank=0, label="B"),
    ]
    found = highlights(render_markdown(text, spans))
    assert [(t, a) for _, a, t in found] == [
        ("one ", ' class="low" title="A" data-spans="a"'),
        ("two three", ' class="high" title="A, B" data-spans="a b"'),
        (" four", ' class="high" title="B" data-spans="b"'),
    ]


def test_nested_and_identical_spans():
    """A span inside another and two equal spans both show on the same characters."""
    text = "alpha beta gamma"
    spans = [Span(0, 16, key="outer"), Span(6, 10, key="inner"), Span(6, 10, key="twin")]
    out = render_markdown(text, spans)
    assert pieces(out, "outer") == ["alpha ", "beta", " gamma"]
    assert pieces(out, "inner") == pieces(out, "twin") == ["beta"]


def test_spans_after_a_link_reference_definition_are_not_shifted():
    """A definition is never shown; quotes after it, and over its use, stay exact."""
    text = "[paper]: https://arxiv.org/abs/2210.03629\n\nRead [paper] now, then quote this part.\n"
    spans = [span_of(text, "quote this", key="a"), span_of(text, "ad [paper] no", key="b")]
    out = str(render_markdown(text, spans))
    assert pieces(out, "a") == ["quote this"]
    assert pieces(out, "b") == ["ad ", "paper", " no"]
    assert '<a href="https://arxiv.org/abs/2210.03629" rel="nofollow noopener"><mark' in out


def test_a_link_highlight_inside_a_source_link_becomes_a_mark():
    """Links do not nest: inside the source's link the highlight is a <mark>, no href."""
    text = "See [the docs](https://docs.example) today."
    span = span_of(text, "the docs](https://docs.example) to", tag="a", attrs={"href": "/p/1/"})
    out = str(render_markdown(text, [span]))
    assert '<a href="https://docs.example" rel="nofollow noopener"><mark data-spans="q">' in out
    assert out.count('href="/p/1/"') == 1 and pieces(out) == ["the docs", " to"]


def test_an_id_is_written_once():
    """A span split into pieces carries its id on the first piece only."""
    text = "a **b** c"
    out = str(render_markdown(text, [Span(0, 9, key="q", attrs={"id": "quote-1"})]))
    assert out.count('id="quote-1"') == 1 and len(pieces(out)) == 3


def test_spans_outside_the_text_or_empty_are_ignored():
    """Empty, reversed, out-of-range and syntax-only spans highlight nothing."""
    text = "# Title\n\nBody."
    spans = [Span(3, 3), Span(5, 2), Span(50, 60), Span(0, 2), Span(7, 9)]
    assert "<mark" not in str(render_markdown(text, spans))
    assert pieces(render_markdown(text, [Span(-5, 4, key="q")])) == ["Ti"]


def test_windows_line_endings_keep_offsets():
    """Offsets count \\r\\n as two characters, as the stored text does."""
    text = "# Title\r\n\r\nFirst **bold** line.\r\n"
    out = render_markdown(text, [span_of(text, "bold** line")])
    assert pieces(out) == ["bold", " line"]


def test_private_use_characters_in_the_text_stay_text():
    """A private-use character already in the source is not taken for a boundary."""
    text = "Icon \ue000 here and \ue001 there."
    out = str(render_markdown(text, [span_of(text, "here and")]))
    assert "\ue000" in out and "\ue001" in out and pieces(out) == ["here and"]


def test_a_two_hundred_page_document_marks_every_span_in_bounded_markup():
    """The whole curriculum repeated to ~600k characters, 500 overlapping spans: every span
    is marked, in pieces split only at their boundaries and the blocks', so the markup grows
    with the spans, not with their overlaps. (Its speed is ``manage.py bench render``.)"""
    lessons = "\n\n".join(p.read_text() for p in sorted(CORPUS.glob("*.md")))
    text = (lessons * (600_000 // len(lessons) + 1))[:600_000]
    rnd = random.Random(7)
    spans = []
    for i in range(500):
        start = rnd.randrange(len(text) - 2_000)
        spans.append(Span(start, start + rnd.randrange(10, 1_500), key=str(i), rank=i % 3))
    out = str(render_markdown(text, spans))
    plain = str(render_markdown(text, []))
    assert out.count("<mark") > 500
    marked = {key for keys in re.findall(r'data-spans="([^"]*)"', out) for key in keys.split()}
    assert marked == {str(i) for i in range(500)}
    assert out.count("<mark") < 10 * len(spans)
    assert len(out) - len(plain) < 400 * len(spans)


# --- properties ---------------------------------------------------------------------------

ATOMS = [
    "a", "word", "Vector", " ", " ", "\n", "\n\n", "*", "**", "***", "_", "__", "~~", "`",
    "``", "```", "# ", "## ", "- ", "+ ", "1. ", "2) ", "> ", "[", "]", "(", ")",
    "](https://x.org/a_b)", "[r]", "[r][]", "[t][r]", "\n[r]: https://r.example 't'\n",
    "\\", "\\*", "&", "<", ">", "|", "| a | b |\n|---|---|\n| c | d |\n", "> a | b\n--|--\n",
    "    ", "\t", "!", "![", "  \n", "\\\n", "---\n", "===\n", "é", "\r\n",
]  # fmt: skip
MARKDOWNISH = st.lists(st.sampled_from(ATOMS), max_size=40).map("".join)
PROPERTIES = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))


@PROPERTIES
@given(text=MARKDOWNISH, data=st.data())
def test_highlights_never_change_the_rendering(text, data):
    """With the highlight elements removed, the HTML is exactly the unhighlighted HTML."""
    bounds = st.integers(0, len(text))
    spans = [
        Span(data.draw(bounds), data.draw(bounds), key=str(i))
        for i in range(data.draw(st.integers(0, 5)))
    ]
    assert MARK.sub("", str(render_markdown(text, spans))) == str(render_markdown(text))


@PROPERTIES
@given(text=MARKDOWNISH, data=st.data())
def test_every_highlight_shows_only_text_of_its_span(text, data):
    """Each highlight element's text is part of its span's text, markup and spaces aside."""
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    out = render_markdown(text, [Span(start, end, key="q")])
    quoted = squash(text[start:end])
    for piece in pieces(out):
        assert squash(piece) in quoted


@PROPERTIES
@given(text=MARKDOWNISH, data=st.data())
def test_a_rendered_highlight_is_located_again(text, data):
    """What a span highlights, selected on the page, maps back into that span."""
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    shown = "".join(pieces(render_markdown(text, [Span(start, end, key="q")])))
    found = locate_quote(text, shown)
    if not squash(shown):
        assert found is None
        return
    assert found is not None
    assert squash(text[found[0] : found[1]]).endswith(squash(shown)[-1:])


# --- locating a selection -----------------------------------------------------------------

LESSON = """# The **ReAct** pattern

ReAct interleaves *reasoning* and `acting`: see [the paper](https://arxiv.org/abs/2210.03629).

- First, the model **thinks**.
- Then it acts; then it thinks again.

It thinks again. And again it thinks again.
"""


def test_a_highlight_never_starts_before_its_span_in_a_table_header():
    """A header cell that starts with block syntax ("- > a") takes no sentinel there: a
    span starting inside that syntax is marked from the first place after it, never from
    before the span (Hypothesis found the "-" outside the span marked)."""
    text = "word](https://x.org/a_b)\r\n- > a | b\n--|--\n"
    for start, end in ((27, 30), (27, 31), (26, 31)):
        quoted = squash(text[start:end])
        for piece in pieces(render_markdown(text, [Span(start, end, key="q")])):
            assert squash(piece) in quoted


def test_a_collapsed_reference_leaves_the_shortcut_after_it_shown():
    """ "[r][]" is a collapsed reference, so the "[r]" after it is a shortcut of its own
    whose "r" is shown: a selection across all three links is found (Hypothesis found
    the "]" of "[]" being read as the start of a full reference "][r]")."""
    text = "[r][][r]\n[r]: https://r.example 't'\n\n[r]: https://r.example 't'\n"
    shown = "".join(pieces(render_markdown(text, [Span(0, 11, key="q")])))
    assert squash(shown) == "rrr"
    assert locate_quote(text, shown) == (1, 11)


def test_a_full_reference_leaves_the_shortcut_after_it_shown():
    text = "[a][b][c]\n\n[a]: https://a.x\n[b]: https://b.x\n[c]: https://c.x\n"
    html = render_markdown(text, [])
    assert '"https://b.x" rel="nofollow noopener">a</a>' in html and ">c</a>" in html
    assert locate_quote(text, "ac") == (1, 8)


def test_locate_a_bold_phrase():
    """A selection of rendered bold text maps to the raw text, starting on a real letter."""
    start, end = locate_quote(LESSON, "The ReAct pattern")
    assert LESSON[start:end] == "The **ReAct** pattern"


def test_locate_across_code_and_a_link():
    """Backticks and the link target are skipped; the quote ends on the shown full stop."""
    start, end = locate_quote(LESSON, "reasoning and acting: see the paper.")
    assert LESSON[start:end] == (
        "reasoning* and `acting`: see [the paper](https://arxiv.org/abs/2210.03629)."
    )


def test_locate_across_list_items():
    """A selection over two list items ignores the bullet and the line break."""
    start, end = locate_quote(LESSON, "thinks.\n\nThen it acts")
    assert LESSON[start:end] == "thinks**.\n- Then it acts"


def test_locate_picks_the_occurrence_the_context_points_to():
    """A repeated phrase is found where the text before the selection matches."""
    first = locate_quote(LESSON, "thinks again")
    third = locate_quote(LESSON, "thinks again", before="It thinks again. And again it ")
    assert LESSON[first[0] : first[1]] == LESSON[third[0] : third[1]] == "thinks again"
    assert first[0] == LESSON.index("thinks again")
    assert third[0] == LESSON.rindex("thinks again")


def test_locate_returns_none_when_absent():
    """A selection that is not in the text, or is only markup and spaces, is not found."""
    assert locate_quote(LESSON, "not in the lesson") is None
    assert locate_quote(LESSON, " ** ") is None
    assert locate_quote("", "x") is None


def test_locate_with_windows_line_endings_and_entities():
    """Offsets are into the stored text; an entity matches the character it shows."""
    text = "Intro\r\n\r\nTom &amp; Jerry **run**.\r\n"
    start, end = locate_quote(text, "Tom & Jerry run")
    assert text[start:end] == "Tom &amp; Jerry **run"


def test_a_selection_on_plain_text_keeps_characters_markdown_would_drop():
    """Text from a PDF is shown as it is: "#", "-" and "*" at line starts are what the
    reader selected, and the offsets cover them."""
    from kgreview.core.markup import locate_quote

    text = "Intro line.\n# not a heading\n- 5 * 3 is *not* emphasis here.\n"
    start, end = locate_quote(text, "# not a heading - 5 * 3 is", plain=True)
    assert text[start:end] == "# not a heading\n- 5 * 3 is"
    start, end = locate_quote(text, "*not* emphasis", plain=True)
    assert text[start:end] == "*not* emphasis"
    assert locate_quote(text, "not there", plain=True) is None
