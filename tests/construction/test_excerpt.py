"""The context shown around a quote starts and ends at sentence or paragraph boundaries,
never mid-word ("…ee we offer is…")."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from construction.excerpt import excerpt_bounds, head_of, tail_of
from construction.sentences import sentences

SENTENCE = "Sentence {n} says that the guarantee we offer is kept for table {n}."
PARAGRAPH = " ".join(SENTENCE.format(n=n) for n in range(40))  # one long paragraph


def starts_of(text: str) -> set[int]:
    return {start for start, _, _ in sentences(text)}


def ends_of(text: str) -> set[int]:
    return {end for _, end, _ in sentences(text)}


def test_short_paragraph_is_shown_whole():
    """A quote in a paragraph that fits is shown with the whole paragraph."""
    text = "Intro.\n\nLocks serialise writers. Readers never block.\n\nNext part.\n"
    start = text.index("Readers")
    begin, finish, cut_before, cut_after = excerpt_bounds(
        text, start, start + len("Readers never block."), limit=200
    )
    assert text[begin:finish] == "Locks serialise writers. Readers never block."
    assert not cut_before and not cut_after


def test_long_paragraph_is_cut_at_sentence_starts_and_ends_within_the_limit():
    """In a long paragraph (a PDF page without paragraph marks) the context begins where a
    sentence begins and ends where one ends, as many whole sentences as fit."""
    start = PARAGRAPH.index("guarantee we offer is kept for table 20")
    end = start + len("guarantee we offer")
    begin, finish, cut_before, cut_after = excerpt_bounds(PARAGRAPH, start, end, limit=300)
    assert begin in starts_of(PARAGRAPH) and finish in ends_of(PARAGRAPH)
    assert PARAGRAPH[begin:].startswith("Sentence ") and PARAGRAPH[finish - 1] == "."
    assert 300 - len(SENTENCE) - 4 < start - begin <= 300
    assert 300 - len(SENTENCE) - 4 < finish - end <= 300
    assert not cut_before and not cut_after


def test_the_sentence_a_quote_starts_in_is_shown_from_its_start_past_the_limit():
    """A quote deep in a long sentence gets that sentence's start even beyond the limit;
    only a sentence longer than twice the limit is cut, at a word, with an ellipsis."""
    long = "First part. Word " + "word " * 120 + "quoted words here " + "more " * 10 + "end."
    start = long.index("quoted")
    begin, _, cut_before, _ = excerpt_bounds(long, start, start + 6, limit=400)
    assert long[begin:].startswith("Word word") and begin == len("First part. ")
    assert not cut_before
    begin, _, cut_before, _ = excerpt_bounds(long, start, start + 6, limit=100)
    assert cut_before and long[begin - 1] == " " and long[begin:].startswith("word")


def test_tail_and_head_keep_whole_sentences_when_clipping():
    """Clipping the before and after parts of a context keeps whole sentences."""
    before = "One sentence here. Two sentences here. Three sentences here. "
    assert tail_of(before, 45) == "Two sentences here. Three sentences here. "
    after = " and more. Then a second. Then a third one."
    assert head_of(after, 25) == " and more. Then a second."
    assert tail_of("short", 45) == "short" and head_of("short", 45) == "short"


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(
        st.sampled_from(["the", "Lock", "waits.", "WAL", "flush", "is", "done!", "\n\n", "x"]),
        min_size=1,
        max_size=300,
    ),
    data=st.data(),
)
def test_any_excerpt_begins_and_ends_at_a_boundary_or_says_it_was_cut(words, data):
    """For any text and quote, the context begins at a paragraph or sentence start (or,
    cut, right after a space) and ends at one's end (or, cut, at a space)."""
    text = " ".join(words)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    limit = data.draw(st.integers(20, 200))
    begin, finish, cut_before, cut_after = excerpt_bounds(text, start, end, limit=limit)
    assert 0 <= begin <= start <= end <= finish <= len(text)
    if cut_before:
        assert begin == 0 or text[begin - 1] == " " or start - begin == limit
    else:
        paragraph = begin == 0 or text[begin - 2 : begin] == "\n\n"
        assert paragraph or begin == start or begin in starts_of(text)
    if cut_after:
        assert finish == len(text) or text[finish] == " " or finish - end == limit
    else:
        paragraph = finish == len(text) or text[finish : finish + 2] == "\n\n"
        assert paragraph or finish == end or finish in ends_of(text)
