"""The in-memory name index is kept in step by adding and discarding, never rebuilt."""

from __future__ import annotations

from construction.resolve import InMemoryConceptIndex, resolve_name
from construction.text import name_keys
from construction.types import IndexEntry


def _concept(cid: int, name: str, canonical: str | None = None) -> IndexEntry:
    return IndexEntry(
        name=name,
        canonical=canonical or name,
        key=f"c{cid}",
        concept_id=cid,
        is_canonical=canonical is None,
    )


def _index(*entries: IndexEntry) -> InMemoryConceptIndex:
    index = InMemoryConceptIndex()
    for entry in entries:
        index.add_name(entry)
    return index


def test_discarded_concept_no_longer_resolves_exactly_or_fuzzily():
    index = _index(_concept(1, "Gradient Descent"), _concept(2, "Backpropagation"))
    assert resolve_name("gradient descent", index).concept_id == 1
    assert index.discard(concept_id=1) == len(name_keys("Gradient Descent"))
    assert resolve_name("gradient descent", index).match == "new"
    assert resolve_name("gradient descnet", index).match == "new"
    assert resolve_name("backpropagation", index).concept_id == 2


def test_discarding_the_winner_hands_a_shared_key_to_the_other_concept():
    index = _index(_concept(1, "Loss Function"), _concept(2, "Loss Function", "Cost Function"))
    assert index.exact("loss function").concept_id == 1
    index.discard(concept_id=1)
    assert index.exact("loss function").concept_id == 2
    assert resolve_name("loss functoin", index).concept_id == 2


def test_canonical_name_wins_over_an_alias_whatever_the_order():
    index = _index(_concept(2, "Loss Function", "Cost Function"), _concept(1, "Loss Function"))
    assert index.exact("loss function").concept_id == 1
    index.discard(concept_id=1)
    assert index.exact("loss function").concept_id == 2


def test_a_concept_readded_after_discard_resolves_again_without_duplicate_blocks():
    index = _index(_concept(1, "Gradient Descent"))
    for _ in range(3):
        index.discard(concept_id=1)
        index.add_name(_concept(1, "Gradient Descent"))
    assert resolve_name("gradient descnet", index).concept_id == 1
    assert all(len(members) == len(set(members)) for members in index._blocks.values())


def test_discard_empties_the_index_and_its_blocks():
    index = _index(_concept(1, "Gradient Descent"), _concept(1, "GD", "Gradient Descent"))
    index.discard(concept_id=1)
    assert len(index) == 0
    assert not index._blocks


def test_word_order_twin_keeps_fuzzy_reach_when_the_first_is_discarded():
    index = _index(_concept(1, "descent gradient method"), _concept(2, "gradient descent method"))
    index.discard(concept_id=1)
    found = index.fuzzy("gradient descent methdo")
    assert found is not None and found[0].concept_id == 2


def test_discarding_an_unknown_endpoint_changes_nothing():
    index = _index(_concept(1, "Gradient Descent"))
    assert index.discard(concept_id=99) == 0
    assert index.discard(proposal_id=1) == 0
    assert index.exact("gradient descent").concept_id == 1


def test_a_key_claimed_twice_by_one_concept_and_once_by_another_survives_the_first_discard():
    index = InMemoryConceptIndex()
    index.add(_concept(1, "Loss Function"), keys=["loss function"])
    index.add(_concept(1, "loss function", "Loss Function"), keys=["loss function"])
    index.add(_concept(2, "Loss Function", "Cost Function"), keys=["loss function"])
    assert index.discard(concept_id=1) == 1
    assert index.exact("loss function").concept_id == 2


def _proposed(pid: int, name: str) -> IndexEntry:
    return IndexEntry(name=name, canonical=name, key=f"p{pid}", proposal_id=pid)


def test_a_shared_key_goes_to_the_concept_after_it_is_applied_again_as_a_rebuild_would_give():
    index = _index(_concept(1, "Loss Function"), _proposed(7, "Loss Function"))
    assert index.exact("loss function").concept_id == 1
    index.discard(concept_id=1)
    index.add_name(_concept(1, "Loss Function"))
    assert index.exact("loss function").concept_id == 1


def test_the_older_of_two_concepts_keeps_a_shared_key_whatever_order_they_came_in():
    forwards = _index(_concept(1, "Loss Function"), _concept(2, "Loss Function"))
    backwards = _index(_concept(2, "Loss Function"), _concept(1, "Loss Function"))
    assert forwards.exact("loss function").concept_id == 1
    assert backwards.exact("loss function").concept_id == 1
