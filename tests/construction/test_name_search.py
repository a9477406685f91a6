"""The search box's name index: exact, prefix and fuzzy matches, kept in step by owner."""

from __future__ import annotations

from construction.name_search import NameSearchIndex, search_key


def _index(*rows: tuple[int, str, int]) -> NameSearchIndex:
    index = NameSearchIndex()
    index.extend(rows)
    return index


def _owners(index: NameSearchIndex, ids) -> list[int]:
    return [index.name(i)[2] for i in ids]


def test_a_name_is_found_exactly_and_by_every_prefix_of_its_key():
    """ "Vector  Search" is found as "vector search" and as "vec", not as "search"."""
    index = _index((1, "Vector  Search", 10), (2, "Vector database", 11), (3, "Search", 12))
    assert _owners(index, index.exact("vector search")) == [10]
    assert sorted(_owners(index, index.prefixed("vec", cap=10))) == [10, 11]
    assert _owners(index, index.prefixed("search", cap=10)) == [12]
    assert index.prefixed("vec", cap=1) == [2]  # key order, capped


def test_a_misspelt_word_finds_the_name_fuzzily_with_a_score():
    """ "vectro serch" finds "Vector search" among unrelated names, scored as WRatio."""
    index = _index((1, "Vector search", 10), (2, "Gradient descent", 11), (3, "Beam search", 12))
    found = index.fuzzy("vectro serch", limit=5)
    assert found and _owners(index, [found[0][0]]) == [10]
    assert 60 <= found[0][1] < 100


def test_the_word_being_typed_matches_the_words_it_begins():
    """ "gradient desc" reaches "Gradient descent" through the prefix of its last word."""
    index = _index((1, "Gradient descent", 11), (2, "Gradient boosting", 12))
    assert _owners(index, [i for i, _ in index.fuzzy("gradient desc", limit=1)]) == [11]


def test_unknown_words_find_nothing():
    """Words no name shares leave nothing to score."""
    index = _index((1, "Vector search", 10))
    assert index.fuzzy("zqxv wobble", limit=5) == []


def test_discarding_an_owner_takes_every_name_of_it_out():
    """After ``discard`` neither exact, prefix nor fuzzy search finds the owner's names."""
    index = _index((1, "Vector search", 10), (2, "VS", 10), (3, "Vector database", 11))
    assert index.discard(10) == 2
    assert index.exact("vector search") == [] and index.exact("vs") == []
    assert _owners(index, index.prefixed("vector", cap=10)) == [11]
    assert all(index.name(i)[2] == 11 for i, _ in index.fuzzy("vector serch", limit=5))
    assert len(index) == 1


def test_adding_a_name_again_replaces_it_under_its_new_key():
    """A renamed row (same id, new name) answers only to the new name."""
    index = _index((1, "Vector search", 10))
    index.add(1, "Dense retrieval", 10)
    assert index.exact("vector search") == [] and index.exact("dense retrieval") == [1]
    assert index.fuzzy("vector search", limit=5) == []
    assert len(index) == 1


def test_the_search_key_is_lower_case_with_single_spaces():
    """Case and runs of white space do not matter."""
    assert search_key("  Vector\tSEARCH ") == "vector search"
