"""Property tests: resolve and verify never crash on arbitrary Unicode, and spans never lie."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from construction.pipeline import process_source
from construction.quotes import _normalised_with_map, find_quote
from construction.resolve import resolve_name
from construction.text import TYPOGRAPHIC, acronym_words, name_key, singular
from construction.types import DROP_REASONS, Candidate, Extraction, SourceDoc
from tests.construction.memory import VOCABULARY, MemoryGraph, index_of

TEXTS = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=400)
NAMES = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)
FAST = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FAST
@given(text=TEXTS, data=st.data())
def test_a_slice_of_the_text_is_found_and_the_span_holds_it(text, data):
    """A slice is found (in comparison form) and the span is the original text there."""
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    quote = text[start:end]
    span = find_quote(text, quote)
    probe, _ = _normalised_with_map(
        quote.translate(TYPOGRAPHIC).strip().strip("\"'").strip(), drop_emphasis=True
    )
    if not probe.strip():
        assert span is None
        return
    assert span is not None
    assert text[span.start : span.end] == span.quote
    found, _ = _normalised_with_map(span.quote, drop_emphasis=True)
    assert probe in found


@FAST
@given(text=TEXTS, quote=TEXTS)
def test_find_quote_never_returns_a_span_that_is_not_the_text(text, quote):
    """Whatever the inputs, a returned span is exactly the text at its offsets."""
    span = find_quote(text, quote)
    if span is not None:
        assert 0 <= span.start < span.end <= len(text)
        assert text[span.start : span.end] == span.quote


@FAST
@given(name=NAMES)
@example(name="AAaS")  # an acronym with a small letter inside keeps its S too
@example(name="HTTPS")
@example(name="APIs")
def test_name_keys_are_stable_under_renormalisation(name):
    """Normalising a key again changes nothing, so keys compare reliably; except that a
    last word written as an acronym keeps its capital S ("HTTPS"), which the key, in
    lower case, no longer shows: that key ends in the acronym's own letters."""
    key = name_key(name)
    again = name_key(key)
    last = key.split()[-1] if key else ""
    if again != key and last in acronym_words(name):
        # the acronym, read again in lower case, is taken for an English plural
        assert again.split() == key.split()[:-1] + [singular(last)]
        return
    assert again == key


@FAST
@given(name=NAMES)
def test_resolve_never_crashes_and_keys_are_well_formed(name):
    """Any name resolves to a known concept, a new concept with a key, or nothing."""
    index = index_of((1, "Embeddings", ["Embedding vectors"]), (2, "Vector search", []))
    resolution = resolve_name(name, index)
    if resolution is not None:
        assert resolution.key.startswith(("c", "n:"))
        assert resolution.key != "n:"
        assert resolution.canonical.strip()


@FAST
@given(
    text=TEXTS,
    candidates=st.lists(
        st.builds(
            Candidate,
            source=NAMES,
            target=NAMES,
            relation=st.sampled_from(
                ["prerequisite", "related", "contrasts_with", "part_of", "causes", "", "x y"]
            ),
            confidence=st.floats(allow_nan=True, allow_infinity=True),
            reason=NAMES,
            evidence=TEXTS,
        ),
        max_size=6,
    ),
)
def test_verify_never_crashes_and_every_draft_quotes_the_revision(text, candidates):
    """Arbitrary candidates are either proposed with a true span or dropped with one reason."""
    doc = SourceDoc(slug="s", revision_id=1, revision_number=1, title="T", text=text)
    result = process_source(
        doc=doc,
        extraction=Extraction(concepts=(), candidates=tuple(candidates)),
        vocabulary=VOCABULARY,
        index=index_of((1, "Embeddings", [])),
        graph=MemoryGraph(),
        gate=0.6,
    )
    assert len(result.edges) + len(result.dropped) == len(candidates)
    for draft in result.edges:
        assert text[draft.evidence.start : draft.evidence.end] == draft.evidence.quote
        assert 0.0 <= draft.confidence <= 1.0
        assert draft.source.key != draft.target.key
    for concept in result.concepts:
        if concept.evidence is not None:
            assert text[concept.evidence.start : concept.evidence.end] == concept.evidence.quote
    assert {d.reason for d in result.dropped} <= set(DROP_REASONS)
