"""The offline extractor's output contract, and how it reads fresh prose far from the
curriculum."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from construction.sentences import sentences
from construction.text import name_key
from tests.construction.offline_helpers import (
    DictLexicon,
    extract,
    has,
)

# --- Output contract --------------------------------------------------------------------

LESSON = """# Change Data Capture

**Change Data Capture (CDC)** streams every insert, update and delete from a database to
other systems. CDC relies on the write-ahead log, which records each change before it is
applied to the tables. Before learning CDC you should understand database transactions and
replication.

## How it fits together

A CDC pipeline is made up of three parts: a log reader, a message broker and a sink
connector. Debezium is a component of many CDC deployments. Unlike batch extraction, CDC
delivers changes within seconds. CDC is often used for cache invalidation and search
indexing. Event sourcing is closely related to CDC, but it stores events as the primary
record.
"""


def test_evidence_is_always_a_verbatim_sentence_of_the_text():
    """Every candidate quotes one whole sentence exactly as the text has it."""
    result = extract(LESSON)
    spans = {LESSON[start:end] for start, end, _ in sentences(LESSON)}
    assert result.candidates
    for candidate in result.candidates:
        assert candidate.evidence in spans
        assert candidate.evidence in LESSON


def test_reasons_name_the_cue():
    """The reason quotes the text and names the cue phrase that fired."""
    (candidate,) = extract("Machine learning requires linear algebra.\n").candidates
    assert (
        candidate.reason == 'The text says "Machine learning requires linear algebra" ("requires").'
    )


def test_max_edges_is_respected_best_first():
    """At most max_edges candidates, highest confidence first, ties in text order."""
    everything = extract(LESSON)
    assert len(everything.candidates) > 3
    top = extract(LESSON, max_edges=3)
    assert top.candidates == everything.candidates[:3]
    scores = [c.confidence for c in everything.candidates]
    assert scores == sorted(scores, reverse=True)
    assert extract(LESSON, max_edges=0).candidates == ()


def test_concepts_are_exactly_the_endpoints_used():
    """The concept list names every endpoint of the returned candidates and nothing else."""
    result = extract(LESSON, max_edges=3)
    endpoints = {n for c in result.candidates for n in (c.source, c.target)}
    assert {c.name for c in result.concepts} == endpoints


def test_duplicate_edges_are_reported_once():
    """The same edge stated twice, or a symmetric one stated both ways, appears once."""
    text = (
        "Kotlin builds on Java. Kotlin extends Java. "
        "Unlike Java, Kotlin is concise. Kotlin differs from Java.\n"
    )
    result = extract(text)
    assert sorted(c.relation for c in result.candidates) == ["builds_on", "contrasts_with"]


# Cue phrases, names, pronouns and Markdown debris, for generated hostile text.
FRAGMENTS = (
    "is a prerequisite for",
    "requires no",
    "depends on",
    "Unlike",
    "whereas",
    "versus",
    "consists of three parts:",
    "are both components of",
    "is used for",
    "see also",
    "one stage of",
    "Before learning",
    "you should understand",
    "make sure you are comfortable with",
    "first",
    "it",
    "this lesson",
    "they",
    "the idea of",
    "isn't",
    "may",
    "Change Data Capture (CDC)",
    "CDC",
    "Kotlin",
    "Java",
    "Dijkstra's algorithm",
    "and",
    ",",
    ".",
    ";",
    "**",
    "“quoted”",
    "é",
    "\n",
    "\n\n# Title\n\n",
    "\n- item ",
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(st.sampled_from(FRAGMENTS), max_size=60).map(" ".join) | st.text(max_size=300),
    st.integers(min_value=-1, max_value=10),
)
def test_any_text_yields_well_formed_candidates(text, max_edges):
    """Whatever the text, extraction never fails and every candidate is well formed."""
    lexicon = DictLexicon({"Kotlin": "Kotlin", "CDC": "Change Data Capture (CDC)"})
    result = extract(text, lexicon=lexicon, max_edges=max_edges)
    assert len(result.candidates) <= max(0, max_edges)
    names = {c.name for c in result.concepts}
    for c in result.candidates:
        assert c.evidence and c.evidence in text
        assert 0 <= c.confidence <= 1
        assert c.source and c.target and name_key(c.source) != name_key(c.target)
        assert {c.source, c.target} <= names


def test_the_same_input_gives_the_same_output():
    """Extraction is deterministic, down to the order and the confidences."""
    assert extract(LESSON).as_json() == extract(LESSON).as_json()


def test_markdown_and_unicode_do_not_break_extraction():
    """Typographic quotes, emphasis and non-ASCII names pass through to verbatim evidence."""
    text = (
        "The *Schrödinger equation* is a prerequisite for “quantum chemistry”. "
        "Ångström units are used in crystallography.\n"
    )
    result = extract(text)
    assert has(result, "schrödinger equation", "prerequisite", "quantum chemistry")
    assert has(result, "ångström units", "applies_to", "crystallography")
    assert all(c.evidence in text for c in result.candidates)


# --- Generalisation: fresh prose far from the AI curriculum -------------------------------

DATA_ENGINEERING = """# Change Data Capture

**Change Data Capture (CDC)** is a technique for streaming every insert, update and delete
from a database to downstream systems. CDC relies on the write-ahead log, which records each
change before it reaches the tables. Before learning CDC you should understand database
transactions and replication.

A CDC pipeline is made up of three parts: a log reader, a message broker and a sink
connector. Debezium is a component of many CDC deployments. Unlike batch extraction, CDC
delivers changes within seconds. CDC is often used for cache invalidation and search
indexing. Event sourcing is closely related to CDC, but it stores events as the primary record.
"""

COOKING = """# Bread Baking

Kneading develops gluten, and **gluten** is a network of proteins that traps gas. A sourdough
starter is a prerequisite for sourdough bread. Sourdough bread depends on wild yeast rather
than commercial yeast. Proofing is a stage of bread baking, and shaping and scoring are both
steps of bread baking too. In contrast to quick breads, yeast breads need time to rise.
Baking soda is used in quick breads. Brioche is based on an enriched dough.
"""

BIOLOGY = """# Cellular Respiration

**Cellular respiration** converts glucose into usable energy. Glycolysis is the first stage of
cellular respiration, and the Krebs cycle builds on its products. Oxidative phosphorylation
requires the electron transport chain. Whereas aerobic respiration uses oxygen, fermentation
works without it. Mitochondria are closely linked to cellular respiration.
"""

LAW = """# Contract Law

A **contract** is a legally binding agreement between two or more parties. Offer and
acceptance are both components of contract formation. Consideration is required for a valid
contract in common law systems. Promissory estoppel is an alternative to consideration in some
cases. The parol evidence rule applies to written agreements. Compared with civil law, common
law relies on judicial precedent.
"""


def test_data_engineering_prose():
    """A CDC lesson: abbreviation, reliance, a counted list, contrast, uses, relatedness."""
    result = extract(DATA_ENGINEERING)
    cdc = "Change Data Capture (CDC)"
    expected = [
        ("Write-ahead log", "prerequisite", cdc),
        ("Database transactions", "prerequisite", cdc),
        ("Replication", "prerequisite", cdc),
        ("Log reader", "part_of", cdc),
        ("Message broker", "part_of", cdc),
        ("Sink connector", "part_of", cdc),
        ("Debezium", "part_of", cdc),
        ("Batch extraction", "contrasts_with", cdc),
        (cdc, "applies_to", "Cache invalidation"),
        (cdc, "applies_to", "Search indexing"),
        ("Event sourcing", "related", cdc),
    ]
    for edge in expected:
        assert has(result, *edge), edge
    assert len(result.candidates) == len(expected)


def test_cooking_prose():
    """A baking lesson: prerequisites, stages, coordinated steps, contrast, uses, basis."""
    result = extract(COOKING)
    expected = [
        ("Sourdough starter", "prerequisite", "Sourdough bread"),
        ("Wild yeast", "prerequisite", "Sourdough bread"),
        ("Proofing", "part_of", "Bread baking"),
        ("Shaping", "part_of", "Bread baking"),
        ("Scoring", "part_of", "Bread baking"),
        ("Quick breads", "contrasts_with", "Yeast breads"),
        ("Baking soda", "applies_to", "Quick breads"),
        ("Brioche", "builds_on", "Enriched dough"),
    ]
    for edge in expected:
        assert has(result, *edge), edge
    assert not has(result, "commercial yeast", "prerequisite", "sourdough bread")


def test_biology_prose():
    """A biology lesson: a stage, a requirement, a whereas-contrast, a link; no pronoun edge."""
    result = extract(BIOLOGY)
    expected = [
        ("Glycolysis", "part_of", "Cellular respiration"),
        ("Electron transport chain", "prerequisite", "Oxidative phosphorylation"),
        ("Aerobic respiration", "contrasts_with", "Fermentation"),
        ("Mitochondria", "related", "Cellular respiration"),
    ]
    for edge in expected:
        assert has(result, *edge), edge
    assert len(result.candidates) == len(expected)  # "builds on its products" names nothing


def test_law_prose():
    """A law lesson: coordinated components, a requirement, an alternative, a comparison."""
    result = extract(LAW)
    expected = [
        ("Offer", "part_of", "Contract formation"),
        ("Acceptance", "part_of", "Contract formation"),
        ("Consideration", "prerequisite", "Contract"),
        ("Promissory estoppel", "alternative_to", "Consideration"),
        ("Parol evidence rule", "applies_to", "Written agreements"),
        ("Civil law", "contrasts_with", "Common law"),
        ("Judicial precedent", "prerequisite", "Common law"),
    ]
    for edge in expected:
        assert has(result, *edge), edge


def test_the_sample_curriculum_stays_above_the_precision_target():
    """On the hand-labelled corpus, precision stays at or above 0.8 (see gold_eval)."""
    gold = Path(__file__).resolve().parents[2] / "corpus" / "gold.jsonl"
    if not gold.exists():
        pytest.skip("no corpus/gold.jsonl in this checkout")
    from tests.construction.gold_eval import evaluate

    scores = evaluate(verbose=False)
    assert scores["precision"] >= 0.8
    assert scores["recall"] >= 0.7
