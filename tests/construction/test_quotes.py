"""The one rule for "is this evidence still in the current revision?"."""

from __future__ import annotations

from construction.quotes import QuoteFinder, evidence_present

TEXT = "Intro.\n\n**RAG** retrieves   passages \u201cfirst\u201d, then\ngenerates an answer.\n"


def test_a_quote_reflowed_or_reformatted_is_still_present():
    """Whitespace, Markdown emphasis and typographic quotes are not part of the words."""
    assert evidence_present('RAG retrieves passages "first", then generates an answer.', TEXT)
    assert evidence_present("**RAG** retrieves passages", TEXT)


def test_a_reworded_or_empty_quote_is_not_present():
    assert not evidence_present("RAG retrieves documents first", TEXT)
    assert not evidence_present("", TEXT)
    assert not evidence_present("   ", TEXT)


def test_a_finder_answers_as_the_text_does():
    """Many quotes against one revision: its finder normalises the text once."""
    finder = QuoteFinder(TEXT)
    for quote in ("generates an answer", "RAG retrieves documents", ""):
        assert evidence_present(quote, finder) == evidence_present(quote, TEXT)
