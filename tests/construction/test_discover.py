"""Ontology discovery's pure logic: dropped relation labels drafted as relation types."""

from __future__ import annotations

import random
import re

from construction.discover import (
    DroppedExample,
    RelationDraft,
    discover_relations,
    normalise_label,
)
from construction.types import RelationSpec

VOCABULARY = [
    RelationSpec("prerequisite", "Prerequisite", "is a prerequisite for", "", False, True),
    RelationSpec("builds_on", "Builds on", "builds on", "", False, True),
    RelationSpec("part_of", "Part of", "is part of", "", False, True),
    RelationSpec("contrasts_with", "Contrasts with", "contrasts with", "", True, False),
    RelationSpec("applies_to", "Applies to", "applies to", "", False, False),
    RelationSpec("related", "Related", "is related to", "", True, False),
]

_ids = iter(range(1, 1_000_000))


def dropped(label, source="lesson-a", a="Keyword search", b="Vector search", quote=None):
    return DroppedExample(
        id=next(_ids),
        label=label,
        source_slug=source,
        revision_id=1,
        quote=quote if quote is not None else f"{a} {label.replace('_', ' ')} {b}.",
        start=None,
        end=None,
        source_name=a,
        target_name=b,
    )


def chain(label, sources, pairs):
    """One dropped example per (source, (a, b)), in order."""
    return [dropped(label, source=s, a=a, b=b) for s, (a, b) in zip(sources, pairs, strict=True)]


def by_key(drafts):
    return {d.key: d for d in drafts}


# --- Normalising and merging labels -----------------------------------------------------


def test_phrasings_of_one_meaning_end_as_one_draft():
    """ "is an alternative to", "an alternative to", "alternative to", "Alternatives" merge."""
    examples = [
        dropped("is an alternative to", "l1", "BM25", "Dense retrieval"),
        dropped("an alternative to", "l2", "LoRA", "Full fine-tuning"),
        dropped("alternative to", "l3", "Faiss", "Annoy"),
        dropped("Alternatives", "l3", "Chroma", "Qdrant"),
        dropped("is_an_alternative_to", "l4", "Beam search", "Sampling"),
    ]
    [draft] = discover_relations(examples, vocabulary=VOCABULARY)
    assert draft.key == "alternative_to"
    assert draft.label == "Alternative to"
    assert draft.verb == "is an alternative to"
    assert draft.support == 5 and draft.sources == 4
    assert set(draft.labels) == {
        "is an alternative to",
        "an alternative to",
        "alternative to",
        "Alternatives",
        "is_an_alternative_to",
    }


def test_verb_inflections_fold_into_one_form():
    """replace/replaced/can replace fold into replaces; the passive keeps its own key."""
    assert {normalise_label(x) for x in ("replaces", "replace", "replaced", "can replace")} == {
        "replaces"
    }
    assert normalise_label("is replaced by") == "replaced_by"
    assert normalise_label("depending on") == normalise_label("depends_on") == "depends_on"


def test_distinct_meanings_stay_apart():
    """replaces is not alternative_to, and mitigates is not reduces."""
    sources = ["l1", "l2", "l3"]
    pairs = [("A", "B"), ("C", "D"), ("E", "F")]
    examples = (
        chain("replaces", sources, pairs)
        + chain("is an alternative to", sources, pairs)
        + chain("mitigates", sources, pairs)
        + chain("reduces", sources, pairs)
    )
    drafts = by_key(discover_relations(examples, vocabulary=VOCABULARY))
    assert set(drafts) == {"replaces", "alternative_to", "mitigates", "reduces"}


def test_synonyms_merge_keeping_direction():
    """ "requires" and "relies on" read as depends_on; "supersedes" as replaces."""
    assert normalise_label("requires") == "depends_on"
    assert normalise_label("relies on") == "depends_on"
    assert normalise_label("supersedes") == "replaces"
    assert normalise_label("is similar to") == normalise_label("resembles") == "similar_to"


def test_negated_labels_are_not_relations():
    """ "is not an alternative to" states no relation and is ignored."""
    examples = chain(
        "is not an alternative to", ["l1", "l2", "l3"], [("A", "B"), ("C", "D"), ("E", "F")]
    )
    assert normalise_label("is not an alternative to") == ""
    assert discover_relations(examples, vocabulary=VOCABULARY) == []


# --- Thresholds and the vocabulary --------------------------------------------------------


def test_min_support_and_min_sources_are_both_required():
    """Three uses in one source, or two in two sources, are not enough by default."""
    one_source = chain("mitigates", ["l1"] * 3, [("A", "B"), ("C", "D"), ("E", "F")])
    assert discover_relations(one_source, vocabulary=VOCABULARY) == []
    two_uses = chain("mitigates", ["l1", "l2"], [("A", "B"), ("C", "D")])
    assert discover_relations(two_uses, vocabulary=VOCABULARY) == []
    enough = chain("mitigates", ["l1", "l1", "l2"], [("A", "B"), ("C", "D"), ("E", "F")])
    [draft] = discover_relations(enough, vocabulary=VOCABULARY)
    assert (draft.support, draft.sources) == (3, 2)
    assert discover_relations(enough, vocabulary=VOCABULARY, min_sources=3) == []
    assert len(discover_relations(two_uses, vocabulary=VOCABULARY, min_support=2)) == 1


def test_vocabulary_terms_are_skipped_by_key_label_or_verb():
    """Labels naming an existing term (key, label, verb or a phrasing) are not drafted."""
    sources = ["l1", "l2", "l3"]
    pairs = [("A", "B"), ("C", "D"), ("E", "F")]
    examples = []
    for label in (
        "prerequisite",
        "is a prerequisite for",
        "Builds on",
        "builds upon",
        "is part of",
        "is related to",
        "relates to",
        "contrasts_with",
    ):
        examples += chain(label, sources, pairs)
    examples += chain("mitigates", sources, pairs)
    drafts = discover_relations(examples, vocabulary=VOCABULARY)
    assert [d.key for d in drafts] == ["mitigates"]


def test_vocabulary_is_matched_by_its_own_labels_too():
    """A curator's "Mitigates" term (any key) makes "mitigates" known."""
    examples = chain("mitigates", ["l1", "l2", "l3"], [("A", "B"), ("C", "D"), ("E", "F")])
    spec = RelationSpec("lessens_risk", "Mitigates", "mitigates", "", False, False)
    assert discover_relations(examples, vocabulary=[*VOCABULARY, spec]) == []


# --- Shape guesses ------------------------------------------------------------------------


def test_symmetric_when_the_meaning_is_symmetric():
    """alternative_to is symmetric by meaning, and the description says how it reads."""
    examples = chain(
        "is an alternative to", ["l1", "l2", "l3"], [("A", "B"), ("C", "D"), ("E", "F")]
    )
    [draft] = discover_relations(examples, vocabulary=VOCABULARY)
    assert draft.symmetric and not draft.directed and not draft.acyclic
    assert draft.description == (
        "Sources say one concept is an alternative to another (3 statements in 3 sources). "
        'Symmetric: "A is an alternative to B" also reads as "B is an alternative to A".'
    )


def test_symmetric_guess_from_examples_in_both_directions():
    """An unknown meaning stated both ways round (A-B and B-A) is guessed symmetric."""
    examples = chain(
        "interoperates with",
        ["l1", "l2", "l3"],
        [("Faiss", "NumPy"), ("NumPy", "Faiss"), ("Torch", "NumPy")],
    )
    [draft] = discover_relations(examples, vocabulary=VOCABULARY)
    assert draft.key == "interoperates_with"
    assert draft.symmetric and not draft.directed
    assert "both ways round" in draft.description


def test_unknown_meaning_in_one_direction_is_directed_not_acyclic():
    """Without symmetry or an ordering meaning: directed, and not acyclic."""
    examples = chain("feeds into", ["l1", "l2", "l3"], [("A", "B"), ("B", "C"), ("C", "D")])
    [draft] = discover_relations(examples, vocabulary=VOCABULARY)
    assert draft.directed and not draft.symmetric and not draft.acyclic
    assert draft.verb == "feeds into"


def test_acyclic_only_for_an_ordering_whose_examples_do_not_loop():
    """replaces without a cycle is acyclic; with a cycle in its examples it is not."""
    sources = ["l1", "l2", "l3"]
    clean = chain("replaces", sources, [("GPT-4", "GPT-3"), ("GPT-3", "GPT-2"), ("X", "Y")])
    [draft] = discover_relations(clean, vocabulary=VOCABULARY)
    assert draft.directed and draft.acyclic and not draft.symmetric
    assert "acyclic" in draft.description
    looped = chain("replaces", sources, [("A", "B"), ("B", "C"), ("C", "A")])
    [draft] = discover_relations(looped, vocabulary=VOCABULARY)
    assert draft.directed and not draft.acyclic
    assert "form a cycle" in draft.description


def test_ordering_stated_both_ways_stays_directed():
    """ "A replaces B" and "B replaces A" are a contradiction, not symmetry."""
    examples = chain("replaces", ["l1", "l2", "l3"], [("A", "B"), ("B", "A"), ("C", "D")])
    [draft] = discover_relations(examples, vocabulary=VOCABULARY)
    assert draft.directed and not draft.symmetric and not draft.acyclic


# --- Examples, fields, order ----------------------------------------------------------------


def test_examples_are_spread_across_sources():
    """Up to max_examples, one source after another before a second from any source."""
    examples = [dropped("mitigates", "l1", f"A{i}", f"B{i}") for i in range(6)]
    examples += [dropped("mitigates", "l2", "C", "D"), dropped("mitigates", "l3", "E", "F")]
    [draft] = discover_relations(examples, vocabulary=VOCABULARY, max_examples=4)
    assert len(draft.examples) == 4
    assert [e.source_slug for e in draft.examples[:3]] == ["l1", "l2", "l3"]
    assert draft.support == 8 and draft.sources == 3


def test_draft_fields_are_well_formed():
    """Keys match [a-z][a-z0-9_]{0,63}; odd labels become valid keys or are dropped."""
    examples = []
    for label in ("mitigates", "3D renders", "x" * 100, "!!!"):
        examples += chain(label, ["l1", "l2", "l3"], [("A", "B"), ("C", "D"), ("E", "F")])
    drafts = discover_relations(examples, vocabulary=VOCABULARY)
    assert {d.key for d in drafts} == {"mitigates", "r_3d_renders", "x" * 64}
    for draft in drafts:
        assert re.fullmatch(r"[a-z][a-z0-9_]{0,63}", draft.key)
        assert isinstance(draft, RelationDraft)
        assert draft.label and draft.verb and draft.description


def test_output_is_deterministic_and_ordered_by_support_then_key():
    """Same drafts for any input order: support descending, then key."""
    sources = ["l1", "l2", "l3", "l4"]
    pairs = [("A", "B"), ("C", "D"), ("E", "F"), ("G", "H")]
    examples = (
        chain("reduces", sources[:3], pairs[:3])
        + chain("mitigates", sources[:3], pairs[:3])
        + chain("replaces", sources, pairs)
    )
    expected = discover_relations(examples, vocabulary=VOCABULARY)
    assert [(d.key, d.support) for d in expected] == [
        ("replaces", 4),
        ("mitigates", 3),
        ("reduces", 3),
    ]
    for seed in range(3):
        shuffled = examples[:]
        random.Random(seed).shuffle(shuffled)
        assert discover_relations(shuffled, vocabulary=VOCABULARY) == expected
