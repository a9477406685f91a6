"""The construction loop drops an edge whose inverse twin is in the graph or queued
(``keys.fact_forms`` through ``verify``), and counts a twin in the same source as
another place stating the first draft; without a declared pair, both are drafted."""

from __future__ import annotations

import dataclasses

from construction.pipeline import process_source
from construction.types import Candidate, Extraction, Link, SourceDoc
from construction.verify import dedup_key_for, dedup_keys_for
from tests.construction.memory import VOCABULARY, MemoryGraph, index_of

TEXT = (
    "# Vector search\n\n"
    "Before learning vector search you should understand embeddings.\n"
    "Vector search builds on embeddings.\n"
)
DOC = SourceDoc(slug="vs", revision_id=7, revision_number=2, title="Vector search", text=TEXT)
PAIRED = [
    dataclasses.replace(
        s, inverse={"prerequisite": "builds_on", "builds_on": "prerequisite"}.get(s.key, "")
    )
    for s in VOCABULARY
]
SPEC = {s.key: s for s in PAIRED}
PRE = "Before learning vector search you should understand embeddings."
BUILDS = "Vector search builds on embeddings."


def cand(source, target, relation, evidence):
    return Candidate(
        source=source,
        target=target,
        relation=relation,
        confidence=0.9,
        reason="The text says so.",
        evidence=evidence,
    )


def run(*candidates, graph=None, vocabulary=PAIRED):
    return process_source(
        doc=DOC,
        extraction=Extraction(concepts=(), candidates=candidates, rejected=()),
        vocabulary=vocabulary,
        index=index_of((1, "Embeddings", []), (2, "Vector search", [])),
        graph=graph if graph is not None else MemoryGraph(),
        gate=0.6,
        active_evidence=(),
    )


def test_the_twin_of_an_edge_in_the_graph_is_an_existing_edge():
    graph = MemoryGraph(links=[Link("edge", 11, "c2", "builds_on", "c1")])
    result = run(cand("embeddings", "vector search", "prerequisite", PRE), graph=graph)
    assert result.edges == ()
    assert [(d.reason, d.detail) for d in result.dropped] == [("existing_edge", "edge #11")]


def test_the_twin_of_an_open_proposal_is_a_duplicate():
    twin = dedup_key_for(SPEC["builds_on"], "c2", "c1")
    assert dedup_keys_for(SPEC["prerequisite"], "c1", "c2")[1] == twin
    graph = MemoryGraph(open={twin: 5})
    result = run(cand("embeddings", "vector search", "prerequisite", PRE), graph=graph)
    assert [(d.reason, d.detail) for d in result.dropped] == [("duplicate", "proposal #5")]
    assert twin in graph.prepared[1]  # asked in the batched read, not one by one


def test_a_twin_rejected_with_the_same_quote_is_not_proposed_again():
    twin = dedup_key_for(SPEC["builds_on"], "c2", "c1")
    graph = MemoryGraph(rejected={twin: {"vector search builds on embeddings"}})
    result = run(cand("embeddings", "vector search", "prerequisite", BUILDS), graph=graph)
    assert result.edges == ()
    assert [d.reason for d in result.dropped] == ["previously_rejected"]


def test_a_twin_in_the_same_source_is_more_support_for_the_first_draft():
    result = run(
        cand("embeddings", "vector search", "prerequisite", PRE),
        cand("vector search", "embeddings", "builds_on", BUILDS),
    )
    (edge,) = result.edges
    assert edge.relation == "prerequisite"
    assert [TEXT[s.start : s.end] for s in edge.support] == [BUILDS]


def test_without_a_declared_pair_both_statements_are_drafted():
    result = run(
        cand("embeddings", "vector search", "prerequisite", PRE),
        cand("vector search", "embeddings", "builds_on", BUILDS),
        graph=MemoryGraph(links=[]),
        vocabulary=VOCABULARY,
    )
    assert sorted(e.relation for e in result.edges) == ["builds_on", "prerequisite"]
    graph = MemoryGraph(links=[Link("edge", 11, "c2", "builds_on", "c1")])
    result = run(
        cand("embeddings", "vector search", "prerequisite", PRE), graph=graph, vocabulary=VOCABULARY
    )
    assert len(result.edges) == 1
