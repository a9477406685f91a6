"""The resolver's fuzzy path: which near names are one concept, which are two."""

from __future__ import annotations

from benchmarks.synthetic import concept_names
from construction.resolve import InMemoryConceptIndex, OverlayIndex, resolve_name
from construction.text import spelling
from construction.types import IndexEntry


def _index(*names: str) -> InMemoryConceptIndex:
    index = InMemoryConceptIndex()
    for cid, name in enumerate(names, start=1):
        index.add_name(
            IndexEntry(name=name, canonical=name, key=f"c{cid}", concept_id=cid, is_canonical=True)
        )
    return index


def _resolved(name: str, index: InMemoryConceptIndex) -> int | None:
    resolution = resolve_name(name, index)
    assert resolution is not None
    return resolution.concept_id


def test_a_misspelt_word_resolves_to_the_name_it_misspells():
    index = _index("Vector search", "Gradient descent", "Sparse token search")
    assert _resolved("vectr search", index) == 1
    assert _resolved("gradient descnet", index) == 2  # two letters swapped is one edit
    assert _resolved("sparse tokken search", index) == 3
    found = index.fuzzy("vectr search")
    assert found is not None and 90 <= found[1] < 100


def test_a_plural_or_other_spelling_inside_a_name_resolves_to_it():
    index = _index("Normalized token search", "Color space", "Catalog service")
    assert _resolved("normalised tokens search", index) == 1
    assert _resolved("colour space", index) == 2
    assert _resolved("catalogue service", index) == 3


def test_a_compound_written_in_one_word_or_two_resolves_to_the_other():
    index = _index("Multi-head attention", "Finetuning recipe")
    assert _resolved("multihead attention", index) == 1
    assert _resolved("fine tuning recipe", index) == 2


def test_a_known_word_exchanged_for_another_known_word_makes_a_new_concept():
    index = _index("Sparse token search", "Dense token ranking", "Heap sort", "Port scanning")
    assert _resolved("dense token search", index) is None
    assert _resolved("heap port", index) is None


def test_a_short_word_is_never_taken_for_a_misspelling():
    index = _index("Heap sort")
    assert _resolved("heap sorx", index) is None


def test_a_name_with_a_word_more_or_less_is_another_concept():
    index = _index("Causal sampler", "Vector search engine")
    assert _resolved("dense causal sampler", index) is None
    assert _resolved("vector search", index) is None


def test_same_words_in_another_order_resolve_to_the_name_in_the_querys_order():
    index = _index("Sparse dense token search", "Dense sparse token search")
    assert _resolved("dense sparse tokenn search", index) == 2
    assert _resolved("sparse dense tokenn search", index) == 1
    assert _resolved("token search sparse dense", index) in {1, 2}


def test_a_new_word_the_graph_has_nothing_like_is_not_a_misspelling():
    index = _index("Sparse token search")
    assert _resolved("sparse token hashing", index) is None


def test_discarding_the_last_name_with_a_word_forgets_the_word():
    index = _index("Vector search", "Keyword search")
    assert index.knows("vectors")
    index.discard(concept_id=1)
    assert not index.knows("vector") and index.knows("search")
    assert _resolved("vectr search", index) is None
    index.discard(concept_id=2)
    assert not index._forms and not index._words and not index._blocks


def test_spelling_gives_plurals_and_british_forms_the_form_of_their_word():
    pairs = [
        ("tokens", "token"),
        ("caches", "cache"),
        ("matches", "match"),
        ("normalisation", "normalization"),
        ("optimisers", "optimizer"),
        ("colouring", "coloring"),
        ("centre", "center"),
        ("modelling", "modeling"),
    ]
    for word, other in pairs:
        assert spelling(word) == spelling(other), word
    assert spelling("gpt4") == "gpt4" and spelling("analysis") == "analysis"


def test_a_lookup_reads_only_the_words_filed_under_its_misspelt_words_letter_and_length():
    """However many names the index holds, a misspelt word is compared only with the
    known words of its first letter and of a length within the edits it may have."""
    index = _index(*concept_names(3_000), "Sparse token search")
    read: list[str] = []

    class Recording(dict):
        def get(self, key, default=None):
            read.append(key)
            return super().get(key, default)

    index._blocks = Recording(index._blocks)
    found = index.fuzzy("sparse tokenn search")
    assert found is not None and found[0].name == "Sparse token search"
    assert set(read) == {"t5", "t6", "t7"}


def test_a_word_the_shared_index_knows_is_not_a_misspelling_of_a_name_proposed_in_this_source():
    base = _index("Ranked retrieval")
    overlay = OverlayIndex(base)
    overlay.add(
        IndexEntry(name="Ranker search", canonical="Ranker search", key="n:ranker search"),
        keys=["ranker search"],
    )
    assert overlay.fuzzy("rankker search") is not None
    assert overlay.fuzzy("ranked search") is None


def test_a_word_one_ending_from_a_known_word_is_another_word_not_a_misspelling():
    index = _index("Ranker retrieval", "Sampler tuning", "Planning search")
    assert _resolved("ranked retrieval", index) is None
    assert _resolved("sampled tuning", index) is None
    assert _resolved("planing search", index) == 3
