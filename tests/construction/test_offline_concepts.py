"""The offline extractor's concepts (abbreviations, the lexicon, headings) and what it must
never draft."""

from __future__ import annotations

import pytest

from construction.text import name_key
from construction.types import RelationSpec
from tests.construction.offline_helpers import (
    DISCOVERY,
    VOCABULARY,
    DictLexicon,
    extract,
    has,
)

# --- Concepts: abbreviations, lexicon, headings -------------------------------------------


def test_an_abbreviation_becomes_an_alias_and_its_bare_use_resolves():
    """ "Change Data Capture (CDC)" defines CDC; later "CDC relies on ..." means that concept."""
    text = (
        "# Streaming\n\n**Change Data Capture (CDC)** streams row changes to other systems. "
        "CDC relies on the write-ahead log.\n"
    )
    result = extract(text)
    assert [c.source for c in result.candidates] == ["Write-ahead log"]
    assert result.candidates[0].target == "Change Data Capture (CDC)"
    (concept,) = [c for c in result.concepts if c.name.startswith("Change")]
    assert concept.aliases == ("CDC",)


def test_an_abbreviation_outside_bold_is_found_and_singularised():
    """ "Recurrent neural networks (RNNs)" defines one concept, RNN, in the singular."""
    text = (
        "Recurrent neural networks (RNNs) read one token at a time. "
        "Unlike RNNs, Transformers read in parallel.\n"
    )
    result = extract(text)
    assert has(result, "recurrent neural network", "contrasts_with", "transformers")
    names = {c.name for c in result.concepts}
    assert "Recurrent neural network (RNN)" in names


def test_known_names_from_the_lexicon_are_preferred_and_keep_their_spelling():
    """A name the lexicon knows is used verbatim, with its generic head ("pipelines") dropped."""
    lexicon = DictLexicon(
        {
            "Retrieval-augmented generation": "Retrieval-augmented generation",
            "RAG": "Retrieval-augmented generation",
            "Reranking": "Reranking",
        }
    )
    result = extract(
        "Reranking is often part of RAG pipelines that need precision.\n", lexicon=lexicon
    )
    (candidate,) = result.candidates
    assert (candidate.source, candidate.target) == ("Reranking", "Retrieval-augmented generation")


def test_known_names_beat_guessed_ones_in_confidence():
    """The same sentence scores higher when both sides are names the graph already knows."""
    text = "Linear algebra is a prerequisite for machine learning.\n"
    known = DictLexicon(
        {"Linear algebra": "Linear algebra", "Machine learning": "Machine learning"}
    )
    assert (
        extract(text, lexicon=known).candidates[0].confidence
        > extract(text).candidates[0].confidence
    )


def test_a_generic_head_stays_when_the_rest_is_not_a_concept():
    """ "reward model" is a name of its own; only "RLHF pipelines" would shrink to RLHF."""
    lexicon = DictLexicon({"RLHF": "RLHF"})
    result = extract(
        "The reward model is the central component of RLHF pipelines.\n", lexicon=lexicon
    )
    assert [(c.source, c.target) for c in result.candidates] == [("Reward model", "RLHF")]


def test_the_longest_known_name_wins():
    """ "vector database" is one concept even though "vector" alone is known too."""
    lexicon = DictLexicon(
        {"Vector": "Vector", "Vector database": "Vector database", "Vector search": "Vector search"}
    )
    result = extract("Vector search is a component of every vector database.\n", lexicon=lexicon)
    assert [(c.source, c.target) for c in result.candidates] == [
        ("Vector search", "Vector database")
    ]


def test_the_lexicon_is_looked_up_by_ngram_never_scanned():
    """Lookups grow with the text, not with the lexicon; a lexicon that cannot be iterated works."""
    names = {f"concept number {i}": f"Concept number {i}" for i in range(50_000)}
    lexicon = DictLexicon(names)
    text = "Before learning calculus, you should understand algebra. " * 20 + "\n"
    result = extract(text, lexicon=lexicon)
    assert has(result, "algebra", "prerequisite", "calculus")
    assert lexicon.lookups < 20 * len(text.split())


def test_compound_titles_are_split_into_concepts():
    """ "Proofing and Shaping" names two concepts; each can be an endpoint."""
    text = (
        "# Proofing and Shaping\n\nProofing is closely related to fermentation. "
        "Shaping relies on gluten strength.\n"
    )
    result = extract(text)
    names = {c.name for c in result.concepts}
    assert {"Proofing", "Shaping"} <= names


def test_generic_section_headings_are_not_concepts():
    """ "Overview", "The pipeline", "What you need first", "Summary" name no concept."""
    text = (
        "# Sourdough Bread\n\n## Overview\n\nIt is slow.\n\n## The pipeline\n\nIt rises.\n\n"
        "## What you need first\n\nMake sure you are comfortable with fermentation first.\n\n"
        "## Summary\n\nSee also rye bread.\n"
    )
    result = extract(text)
    names = {name_key(c.name) for c in result.concepts}
    assert not names & {"overview", "pipeline", "what you need first", "summary"}
    assert has(result, "fermentation", "prerequisite", "sourdough bread")
    assert has(result, "sourdough bread", "related", "rye bread")


def test_a_defining_sentence_becomes_the_description():
    """ "A contract is a legally binding agreement ..." describes the contract."""
    text = (
        "A **contract** is a legally binding agreement between parties. "
        "Consideration is required for a contract.\n"
    )
    (concept,) = [c for c in extract(text).concepts if c.name == "Contract"]
    assert concept.description.startswith("A contract is a legally binding agreement")


def test_new_names_are_capitalised_unless_case_carries_meaning():
    """Guessed names start with a capital; acronyms and "k-means" keep their case."""
    result = extract("Clustering relies on k-means. TCP is used for file transfer.\n")
    names = {c.name for c in result.concepts}
    assert {"Clustering", "k-means", "TCP", "File transfer"} <= names


# --- What must not happen ---------------------------------------------------------------

NEGATED = [
    "Calculus is not a prerequisite for discrete mathematics.",
    "Sorting does not require recursion.",
    "Python 2 is no longer part of the build.",
    "Recursion isn't required for tree traversal.",
    "A cache is not a replacement for a database.",
    "Kotlin never depends on Java.",
    "Quicksort requires no extra memory.",
]


@pytest.mark.parametrize("text", NEGATED)
def test_negated_cues_produce_nothing(text):
    """ "is not", "does not", "is no longer", "isn't", "not a replacement": no edge."""
    assert extract(text + "\n").candidates == ()


def test_hedging_lowers_confidence_a_little():
    """ "may require" is weaker evidence than "requires", but only a little."""
    sure = extract("Quicksort requires extra memory.\n").candidates[0].confidence
    hedged = extract("Quicksort may require extra memory.\n").candidates[0].confidence
    assert 0 < sure - hedged <= 0.1


def test_stronger_cues_score_higher():
    """An explicit "is a prerequisite for" outranks "requires", which outranks "related to"."""
    lexicon = DictLexicon({"Algebra": "Algebra", "Calculus": "Calculus"})
    explicit = extract("Algebra is a prerequisite for calculus.\n", lexicon=lexicon)
    requires = extract("Calculus requires algebra.\n", lexicon=lexicon)
    related = extract("Algebra is related to calculus.\n", lexicon=lexicon)
    scores = [r.candidates[0].confidence for r in (explicit, requires, related)]
    assert scores == sorted(scores, reverse=True) and scores[0] >= 0.85
    assert all(0 <= s <= 1 for s in scores)


@pytest.mark.parametrize(
    "text",
    [
        "It is used for routing.",
        "This is part of the kernel.",
        "They depend on the scheduler.",
        "These metrics are applied to ranking.",
    ],
)
def test_pronouns_are_never_arguments(text):
    """An unresolvable "it", "this", "they" or "these X" yields no edge at all."""
    assert extract(f"# Networks\n\n{text}\n").candidates == ()


def test_it_resolves_to_the_previous_subject():
    """ "Vector clocks ... . It is used for ..." speaks of vector clocks."""
    text = "A vector clock tracks causality between events. It is used for conflict detection.\n"
    assert has(extract(text), "vector clock", "applies_to", "conflict detection")


def test_only_vocabulary_and_discovery_relations_are_emitted():
    """Without applies_to in the vocabulary, "used for" yields nothing rather than a stray key."""
    vocabulary = tuple(s for s in VOCABULARY if s.key != "applies_to")
    result = extract(
        "Hash tables are used for caching. Kotlin builds on Java.\n", vocabulary=vocabulary
    )
    assert {c.relation for c in result.candidates} == {"builds_on"}


DISCOVERED = [
    ("Git has replaced Subversion in most teams.", "replaces", "git", "subversion"),
    (
        "Connection pooling mitigates connection overhead.",
        "mitigates",
        "connection pooling",
        "connection overhead",
    ),
    ("Deadlocks cause system hangs.", "causes", "deadlocks", "system hangs"),
    ("Ranking quality is evaluated with NDCG.", "evaluated_with", "ranking quality", "ndcg"),
    (
        "Promissory estoppel is an alternative to consideration.",
        "alternative_to",
        "promissory estoppel",
        "consideration",
    ),
]


@pytest.mark.parametrize(("text", "relation", "source", "target"), DISCOVERED)
def test_cues_outside_the_vocabulary_get_discovery_labels(text, relation, source, target):
    """Out-of-vocabulary cues yield short snake_case labels for ontology discovery."""
    result = extract(text + "\n")
    assert has(result, source, relation, target)
    assert {c.relation for c in result.candidates} <= DISCOVERY


def test_discovery_candidates_rank_below_vocabulary_ones():
    """With one slot left, the vocabulary edge wins over the discovery one."""
    result = extract("Git has replaced Subversion. Kotlin builds on Java.\n", max_edges=1)
    assert [c.relation for c in result.candidates] == ["builds_on"]


def test_a_passive_replaced_by_is_not_read_backwards():
    """ "older turns are replaced with a summary" does not say turns replace summaries."""
    result = extract("Older turns are replaced with a summary.\n")
    assert result.candidates == ()


def test_a_relation_added_to_the_vocabulary_is_found_by_its_verb():
    """A curator's new type ("enables", "is a variant of") is found without code changes."""
    vocabulary = VOCABULARY + (
        RelationSpec("enables", "Enables", "enables", "", False, False),
        RelationSpec("variant_of", "Variant of", "is a variant of", "", False, False),
        RelationSpec("alternative_to", "Alternative to", "is an alternative to", "", True, False),
    )
    text = (
        "Ownership enables memory safety. Merge sort is a variant of divide-and-conquer sorting. "
        "Promissory estoppel is an alternative to consideration.\n"
    )
    result = extract(text, vocabulary=vocabulary)
    assert has(result, "ownership", "enables", "memory safety")
    assert has(result, "merge sort", "variant_of", "divide-and-conquer sorting")
    assert has(result, "promissory estoppel", "alternative_to", "consideration")
