"""Clipping text for display: at a word boundary near the limit, with an ellipsis."""

from __future__ import annotations

from kgreview.core.clip import clip_end, clip_start


def test_short_text_is_left_alone():
    assert clip_start("a few words", 20) == "a few words"
    assert clip_end("a few words", 20) == "a few words"
    assert clip_end(None, 5) == ""


def test_the_end_is_cut_at_the_last_space_before_the_limit():
    assert clip_end("one two three four", 12) == "one two…"


def test_the_start_is_cut_after_the_first_space_inside_the_tail():
    assert clip_start("one two three four", 12) == "…three four"


def test_a_word_longer_than_the_slack_is_cut_mid_word():
    text = "x" * 100
    assert clip_end(text, 50) == "x" * 50 + "…"
    assert clip_start(text, 50) == "…" + "x" * 50
