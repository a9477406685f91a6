"""VERIFY holds a candidate whose ends' types break its relation's patterns: flagged
``pattern_violation``, never dropped; a subtype satisfies its parent, a symmetric
relation's pattern holds both ways round, an untyped end breaks a patterned relation,
and a relation with no pattern is open. Pure: no Django."""

from __future__ import annotations

from construction.pipeline import process_source
from construction.types import Candidate, Extraction, IndexEntry, Ontology
from construction.verify import PATTERN_FLAG, pattern_break
from tests.construction.memory import VOCABULARY, MemoryGraph, index_of
from tests.construction.test_pipeline import DOC, SPEC

ONTOLOGY = Ontology(
    parents={"setting": None, "process": None, "background": "process", "file": None},
    patterns={"prerequisite": (("setting", "process"),), "related": (("setting", "file"),)},
    concept_types={1: "setting", 2: "process", 3: "file", 4: "background"},
)


def _run(source: str, target: str, *, ontology=ONTOLOGY, relation="prerequisite"):
    index = index_of(
        (1, "Embeddings", []),
        (2, "Vector search", []),
        (3, "Keyword search", []),
        (4, "Dense retrieval", []),
        (5, "CDC", []),
    )
    return process_source(
        doc=DOC,
        extraction=Extraction(
            concepts=(),
            candidates=(
                Candidate(
                    source=source,
                    target=target,
                    relation=relation,
                    confidence=0.9,
                    reason="The text says so.",
                    evidence="Before learning vector search you should understand embeddings.",
                ),
            ),
        ),
        vocabulary=VOCABULARY,
        index=index,
        graph=MemoryGraph(),
        gate=0.6,
        ontology=ontology,
    )


def test_a_candidate_whose_ends_break_the_pattern_is_held_with_the_flag_never_dropped():
    result = _run("Keyword search", "Vector search")  # a file before a process
    (edge,) = result.edges
    assert PATTERN_FLAG in edge.flags
    assert result.dropped == ()


def test_a_fitting_candidate_and_a_subtype_pass_unflagged():
    (fits,) = _run("Embeddings", "Vector search").edges
    (subtype,) = _run("Embeddings", "Dense retrieval").edges
    assert PATTERN_FLAG not in fits.flags and PATTERN_FLAG not in subtype.flags


def test_an_untyped_end_breaks_a_patterned_relation_and_an_open_relation_takes_it():
    (untyped,) = _run("CDC", "Vector search").edges
    assert PATTERN_FLAG in untyped.flags
    (opened,) = _run("CDC", "Vector search", relation="builds_on").edges
    assert PATTERN_FLAG not in opened.flags


def test_without_an_ontology_nothing_is_held():
    (edge,) = _run("Keyword search", "Vector search", ontology=None).edges
    assert PATTERN_FLAG not in edge.flags


def test_the_check_says_what_the_relation_allows_and_holds_both_ways_in_a_symmetric_one():
    spec = SPEC["prerequisite"]
    assert pattern_break(ONTOLOGY, spec, "file", "process") == (
        '"prerequisite" allows setting → process, not file → process'
    )
    assert pattern_break(ONTOLOGY, spec, "setting", "background") is None
    assert pattern_break(ONTOLOGY, spec, "", "process") == (
        '"prerequisite" allows setting → process, not untyped → process'
    )
    related = SPEC["related"]
    assert pattern_break(ONTOLOGY, related, "file", "setting") is None
    assert pattern_break(ONTOLOGY, related, "setting", "file") is None
    assert pattern_break(ONTOLOGY, related, "file", "process") is not None


def test_a_proposed_concepts_type_counts_as_its_type():
    ontology = Ontology(
        parents={"setting": None, "process": None},
        patterns={"prerequisite": (("setting", "process"),)},
        concept_types={2: "process"},
        proposal_types={9: "setting"},
    )
    graph = MemoryGraph()
    index = index_of((2, "Vector search", []))
    # "Embeddings" is an open concept proposal (#9) proposing the type setting
    index.add_name(
        IndexEntry(name="Embeddings", canonical="Embeddings", key="n:embeddings", proposal_id=9)
    )
    result = process_source(
        doc=DOC,
        extraction=Extraction(
            concepts=(),
            candidates=(
                Candidate(
                    source="Embeddings",
                    target="Vector search",
                    relation="prerequisite",
                    confidence=0.9,
                    reason="The text says so.",
                    evidence="Before learning vector search you should understand embeddings.",
                ),
            ),
        ),
        vocabulary=VOCABULARY,
        index=index,
        graph=graph,
        gate=0.6,
        ontology=ontology,
    )
    (edge,) = result.edges
    assert edge.source.proposal_id == 9
    assert PATTERN_FLAG not in edge.flags
