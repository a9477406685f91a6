"""The missing-link search's sentences: both ends named, by name or alias, by key."""

from __future__ import annotations

from construction.gaps import mentions_both, name_patterns, sentences_mentioning_both

TEXT = (
    "# LoRA\n\n"
    "Low-rank adaptation builds on fine-tuning. It freezes the weights.\n"
    "Embeddings are vectors. Tokenization comes first.\n"
    "Before embeddings, learn tokenization; LoRA needs neither.\n"
)


def test_sentences_naming_both_ends_are_found_by_alias_plural_and_case():
    """ "Low-rank adaptation" (an alias) and "fine-tuning" find the first sentence."""
    lora = name_patterns(["LoRA", "Low-rank adaptation"])
    tuning = name_patterns(["Fine-tuning"])
    found = sentences_mentioning_both(TEXT, lora, tuning)
    assert [m.text for m in found] == ["Low-rank adaptation builds on fine-tuning."]
    assert TEXT[found[0].start : found[0].end] == found[0].text


def test_a_sentence_naming_one_end_only_is_not_found():
    """Each end must be named in the same sentence."""
    found = sentences_mentioning_both(
        TEXT, name_patterns(["Embedding"]), name_patterns(["Tokenization"])
    )
    assert [m.text for m in found] == ["Before embeddings, learn tokenization; LoRA needs neither."]


def test_headings_and_partial_words_do_not_count():
    """A heading is not a sentence; "Lo" is not "LoRA"."""
    assert not sentences_mentioning_both(TEXT, name_patterns(["Lo"]), name_patterns(["RA"]))
    assert not sentences_mentioning_both(
        "# LoRA and fine-tuning\n", name_patterns(["LoRA"]), name_patterns(["fine-tuning"])
    )


def test_a_quote_names_both_ends_or_not():
    """The check a gap proposal's evidence must pass."""
    rag = name_patterns(["Retrieval-augmented generation (RAG)"])
    vs = name_patterns(["Vector search"])
    assert mentions_both("RAG builds on vector searches.", rag, vs)
    assert mentions_both("Retrieval-augmented generation builds on vector search.", rag, vs)
    assert not mentions_both("RAG builds on search.", rag, vs)


def test_the_limit_bounds_the_sentences_returned():
    """At most ``limit`` sentences, in the text's order."""
    text = " ".join(f"A{i} uses B. " for i in range(5)).replace("A0", "A").replace("A1", "A")
    found = sentences_mentioning_both(text, name_patterns(["A"]), name_patterns(["B"]), limit=1)
    assert len(found) == 1 and found[0].start == 0
