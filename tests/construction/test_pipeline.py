"""SEARCH, VERIFY and CONSTRUCT on fixed extractions, with in-memory graph and index."""

from __future__ import annotations

from construction.pipeline import process_source
from construction.types import (
    ActiveEvidence,
    Candidate,
    ConceptMention,
    Extraction,
    IndexEntry,
    Link,
    Rejected,
    SourceDoc,
)
from construction.verify import dedup_key_for, match_relation, vocabulary_lookup
from tests.construction.memory import VOCABULARY, MemoryGraph, index_of

TEXT = (
    "# Vector search\n\n"
    "Before learning vector search you should understand embeddings.\n"
    "Unlike keyword search, dense retrieval compares meanings.\n"
    "Change Data Capture (CDC) streams row changes.\n"
    "Vector search builds on embeddings.\n"
)
DOC = SourceDoc(slug="vs", revision_id=7, revision_number=2, title="Vector search", text=TEXT)
SPEC = {s.key: s for s in VOCABULARY}


def cand(source, target, relation="prerequisite", evidence=None, confidence=0.9):
    return Candidate(
        source=source,
        target=target,
        relation=relation,
        confidence=confidence,
        reason="The text says so.",
        evidence=evidence or "Before learning vector search you should understand embeddings.",
    )


def run(
    *candidates, graph=None, index=None, concepts=(), rejected=(), gate=0.6, doc=DOC, active=()
):
    return process_source(
        doc=doc,
        extraction=Extraction(
            concepts=tuple(concepts), candidates=candidates, rejected=tuple(rejected)
        ),
        vocabulary=VOCABULARY,
        index=index if index is not None else index_of(),
        graph=graph if graph is not None else MemoryGraph(),
        gate=gate,
        active_evidence=active,
    )


def test_a_good_candidate_becomes_an_edge_draft_and_new_concept_drafts():
    """New endpoints are proposed as concepts; the edge carries the verbatim span."""
    result = run(cand("embeddings", "vector search"))
    (edge,) = result.edges
    assert (edge.source.canonical, edge.relation, edge.target.canonical) == (
        "Embeddings",
        "prerequisite",
        "Vector search",
    )
    assert TEXT[edge.evidence.start : edge.evidence.end] == edge.evidence.quote
    assert edge.flags == ("new_concept",)
    assert {c.name for c in result.concepts} == {"Embeddings", "Vector search"}
    assert all(
        c.evidence and TEXT[c.evidence.start : c.evidence.end] == c.evidence.quote
        for c in result.concepts
    )
    assert result.dropped == ()


def test_known_concepts_resolve_by_name_alias_and_fuzzy_match_with_score():
    """Exact, alias and fuzzy matches are kept for the reviewer, with the score."""
    index = index_of((1, "Embeddings", ["Embedding vectors"]), (2, "Vector search", []))
    result = run(cand("embedding vectors", "vectr search"), index=index)
    (edge,) = result.edges
    assert edge.source.match == "alias" and edge.source.concept_id == 1
    assert edge.target.match == "fuzzy" and edge.target.concept_id == 2
    assert 90 <= edge.target.score < 100
    assert result.concepts == () and "new_concept" not in edge.flags
    assert result.grounded_concepts == (1, 2)


def test_names_differing_only_in_a_number_are_never_fuzzy_matched():
    """GPT-3 does not resolve to GPT-4, however similar the strings are."""
    index = index_of((1, "GPT-4 model family", []))
    result = run(cand("GPT-3 model family", "vector search"), index=index)
    assert result.edges[0].source.match == "new"


def test_unknown_relation_is_dropped_with_its_label():
    """A relation outside the vocabulary is dropped as unknown_relation, label kept."""
    result = run(cand("embeddings", "vector search", relation="Is an alternative to"))
    (dropped,) = result.dropped
    assert dropped.reason == "unknown_relation" and dropped.detail == "is_an_alternative_to"
    assert result.edges == ()


def test_relation_phrasings_map_to_vocabulary_keys():
    """Labels and verbs of the vocabulary are accepted as relation names."""
    table = vocabulary_lookup(VOCABULARY)
    for label, key in [
        ("is a prerequisite for", "prerequisite"),
        ("Part of", "part_of"),
        ("prerequisite_of", "prerequisite"),
        ("BUILDS ON", "builds_on"),
    ]:
        assert match_relation(label, table).key == key


def test_self_loop_through_an_abbreviation_is_dropped():
    """CDC and Change Data Capture are one concept: an edge between them is a self-loop."""
    mention = ConceptMention(name="Change Data Capture", aliases=("CDC",))
    result = run(
        cand("CDC", "Change Data Capture", evidence="Change Data Capture (CDC) streams row"),
        concepts=[mention],
    )
    assert [d.reason for d in result.dropped] == ["self_loop"]


def test_hallucinated_evidence_is_dropped():
    """A quote that is not in the revision is evidence_not_found."""
    result = run(cand("embeddings", "vector search", evidence="Embeddings are essential."))
    assert [d.reason for d in result.dropped] == ["evidence_not_found"]


def test_evidence_matches_despite_whitespace_and_typographic_quotes():
    """Whitespace runs, curly quotes and dashes compare equal; offsets are original."""
    quote = "“Before  learning vector\nsearch you should understand embeddings.”"
    (edge,) = run(cand("embeddings", "vector search", evidence=quote)).edges
    assert edge.evidence.quote == (
        "Before learning vector search you should understand embeddings."
    )


def test_below_gate_candidate_is_flagged_for_holding():
    """Confidence under the gate is flagged below_gate (the queue holds it)."""
    (edge,) = run(cand("embeddings", "vector search", confidence=0.4)).edges
    assert "below_gate" in edge.flags


def test_duplicate_in_one_answer_is_proposed_once():
    """The same edge twice in one extraction: the second is a duplicate."""
    result = run(cand("embeddings", "vector search"), cand("Embeddings", "Vector Search"))
    assert len(result.edges) == 1
    assert [d.reason for d in result.dropped] == ["duplicate"]


def test_symmetric_duplicate_in_reverse_order_is_proposed_once():
    """B contrasts with A repeats A contrasts with B."""
    ev = "Unlike keyword search, dense retrieval compares meanings."
    result = run(
        cand("keyword search", "dense retrieval", "contrasts_with", ev),
        cand("dense retrieval", "keyword search", "contrasts_with", ev),
    )
    assert len(result.edges) == 1 and result.dropped[0].reason == "duplicate"


def test_existing_edge_and_open_proposal_are_skipped():
    """An active edge is existing_edge; the same change already queued is a duplicate."""
    index = index_of((1, "Embeddings", []), (2, "Vector search", []))
    graph = MemoryGraph(links=[Link("edge", 11, "c1", "prerequisite", "c2")])
    result = run(cand("embeddings", "vector search"), graph=graph, index=index)
    assert [(d.reason, d.detail) for d in result.dropped] == [("existing_edge", "edge #11")]
    key = dedup_key_for(SPEC["prerequisite"], "c1", "c2")
    result = run(cand("embeddings", "vector search"), graph=MemoryGraph(open={key: 5}), index=index)
    assert [(d.reason, d.detail) for d in result.dropped] == [("duplicate", "proposal #5")]


def test_rejected_before_with_the_same_evidence_is_not_proposed_again():
    """Same quote as a rejected proposal: dropped; new evidence: proposed and flagged."""
    index = index_of((1, "Embeddings", []), (2, "Vector search", []))
    key = dedup_key_for(SPEC["prerequisite"], "c1", "c2")
    same = MemoryGraph(
        rejected={key: {"before learning vector search you should understand embeddings"}}
    )
    result = run(cand("embeddings", "vector search"), graph=same, index=index)
    assert [d.reason for d in result.dropped] == ["previously_rejected"]
    other = MemoryGraph(rejected={key: {"some older sentence"}})
    (edge,) = run(cand("embeddings", "vector search"), graph=other, index=index).edges
    assert "previously_rejected" in edge.flags


def test_cycle_with_an_active_edge_is_flagged_with_the_chain():
    """Vector search → Embeddings in the graph; the reverse candidate is a contradiction."""
    index = index_of((1, "Embeddings", []), (2, "Vector search", []))
    graph = MemoryGraph(links=[Link("edge", 3, "c2", "prerequisite", "c1")])
    (edge,) = run(cand("embeddings", "vector search"), graph=graph, index=index).edges
    assert "contradiction" in edge.flags
    (conflict,) = edge.conflicts
    assert conflict.rule == "cycle" and conflict.links[0].id == 3
    assert "Vector search → Embeddings" in conflict.explanation


def test_cycle_with_an_open_proposal_flags_both_sides():
    """A cycle closed through a queued proposal marks that proposal too."""
    graph = MemoryGraph(
        links=[Link("proposal", 42, "n:vector search", "prerequisite", "n:embedding")]
    )
    result = run(cand("embeddings", "vector search"), graph=graph)
    (edge,) = result.edges
    assert "contradiction" in edge.flags
    assert result.flag_existing == ((42, edge.dedup_key, edge.conflicts[0].explanation),)


def test_long_cycles_are_found_through_several_links():
    """A → B → C in the graph; C → A is a three-link cycle."""
    index = index_of((1, "Embeddings", []), (2, "Vector search", []), (3, "Tokenization", []))
    graph = MemoryGraph(
        links=[
            Link("edge", 1, "c2", "prerequisite", "c3"),
            Link("proposal", 2, "c3", "prerequisite", "c1"),
        ]
    )
    (edge,) = run(cand("embeddings", "vector search"), graph=graph, index=index).edges
    assert [link.id for link in edge.conflicts[0].links] == [1, 2]


def test_opposed_relations_on_one_pair_are_a_contradiction():
    """The same pair both builds_on and contrasts_with is flagged."""
    index = index_of((1, "Embeddings", []), (2, "Vector search", []))
    graph = MemoryGraph(links=[Link("edge", 9, "c1", "contrasts_with", "c2")])
    ev = "Vector search builds on embeddings."
    (edge,) = run(
        cand("vector search", "embeddings", "builds_on", ev), graph=graph, index=index
    ).edges
    assert edge.conflicts[0].rule == "opposed_relation" and "contradiction" in edge.flags


def test_a_cycle_inside_one_source_flags_both_drafts():
    """Two candidates of one source that contradict each other are both flagged."""
    ev1 = "Before learning vector search you should understand embeddings."
    ev2 = "Vector search builds on embeddings."
    result = run(
        cand("embeddings", "vector search", "prerequisite", ev1),
        cand("vector search", "embeddings", "prerequisite", ev2),
    )
    assert [("contradiction" in e.flags) for e in result.edges] == [True, True]


def test_concept_proposed_by_an_earlier_source_counts_as_known():
    """ "CDC" in a later source resolves to the Change Data Capture proposal."""
    index = index_of()
    index.add(
        IndexEntry(
            name="Change Data Capture",
            canonical="Change Data Capture",
            key="n:change data capture",
            proposal_id=77,
            is_canonical=False,
        ),
        keys=["change data capture", "cdc"],
    )
    ev = "Change Data Capture (CDC) streams row changes."
    (edge,) = run(cand("CDC", "embeddings", "related", ev), index=index).edges
    cdc = edge.source if edge.source.proposal_id else edge.target
    assert cdc.proposal_id == 77 and cdc.canonical == "Change Data Capture"
    assert {
        c.name for c in run(cand("CDC", "embeddings", "related", ev), index=index).concepts
    } == {"Embeddings"}


def test_the_same_new_concept_named_twice_in_one_source_is_one_draft():
    """An abbreviation and its long form in one source end as one new concept."""
    mention = ConceptMention(name="Change Data Capture (CDC)")
    ev = "Change Data Capture (CDC) streams row changes."
    result = run(
        cand("CDC", "embeddings", "related", ev),
        cand("Change Data Capture", "vector search", "applies_to", ev),
        concepts=[mention],
    )
    names = sorted(c.name for c in result.concepts)
    assert names == ["Change Data Capture", "Embeddings", "Vector search"]
    cdc = next(c for c in result.concepts if c.name == "Change Data Capture")
    assert "CDC" in cdc.aliases


def test_a_new_concept_proposed_as_long_form_and_abbreviation_is_found_by_the_abbreviation():
    """ "Retrieval-augmented generation (RAG)" proposed earlier in a source answers to "RAG"."""
    text = (
        "# RAG\n\n"
        "Retrieval-augmented generation (RAG) builds on embeddings.\n"
        "RAG applies to vector search.\n"
    )
    doc = SourceDoc(slug="rag", revision_id=8, revision_number=1, title="RAG", text=text)
    mention = ConceptMention(
        name="Retrieval-augmented generation",
        aliases=("Retrieval-augmented generation (RAG)",),
    )
    result = run(
        cand(
            "Retrieval-augmented generation",
            "embeddings",
            "builds_on",
            "Retrieval-augmented generation (RAG) builds on embeddings.",
        ),
        cand("RAG", "vector search", "applies_to", "RAG applies to vector search."),
        concepts=[mention],
        doc=doc,
    )
    assert result.dropped == ()
    assert sorted(c.name for c in result.concepts) == [
        "Embeddings",
        "Retrieval-augmented generation",
        "Vector search",
    ]
    assert {e.source.key for e in result.edges} == {"n:retrieval augmented generation"}


def test_unusable_names_are_unresolvable():
    """Pronouns, empty names and punctuation cannot be resolved."""
    for bad in ["it", "", "  ", "!!!", "x" * 300]:
        result = run(cand(bad, "vector search"))
        assert [d.reason for d in result.dropped] == ["unresolvable"], bad


def test_items_the_extractor_could_not_read_are_dropped_as_invalid():
    """Rejected extractor items become invalid drops; bad confidences too."""
    result = run(
        cand("embeddings", "vector search", confidence=1.7),
        rejected=[Rejected(raw={"source": 1}, error="missing target")],
    )
    assert sorted(d.reason for d in result.dropped) == ["invalid", "invalid"]


def test_vanished_quote_of_an_active_edge_proposes_its_invalidation():
    """An edge quoting a sentence that revision 2 dropped is proposed for invalidation."""
    active = [
        ActiveEvidence(
            edge_id=5,
            quote="Vector search requires GPUs.",
            revision_number=1,
            description='"Vector search" requires "GPU"',
        ),
        ActiveEvidence(
            edge_id=6,
            quote="Vector search builds on embeddings.",
            revision_number=1,
            description="kept",
        ),
    ]
    result = run(active=active)
    (inv,) = result.invalidations
    assert inv.edge_id == 5 and "no longer appears in revision 2" in inv.reason
    assert inv.dedup_key == "invalidate_edge:5"
    queued = run(active=active, graph=MemoryGraph(open={"invalidate_edge:5": 1}))
    assert queued.invalidations == ()


def test_invalidation_keys_are_prepared_with_the_others():
    """The graph view is told the vanished edges' dedup keys up front, not asked one by one."""
    active = [
        ActiveEvidence(
            edge_id=5,
            quote="Vector search requires GPUs.",
            revision_number=1,
            description='"Vector search" requires "GPU"',
        )
    ]
    graph = MemoryGraph()
    run(cand("embeddings", "vector search"), active=active, graph=graph)
    _, dedup_keys = graph.prepared
    assert "invalidate_edge:5" in dedup_keys
    assert dedup_key_for(SPEC["prerequisite"], "n:embedding", "n:vector search") in dedup_keys


def test_a_new_name_whose_case_carries_meaning_keeps_it():
    """ "k-means" and "pgVector" stay as written; plain names get a capital."""
    from construction.resolve import resolve_name

    for name, canonical in [
        ("k-means", "k-means"),
        ("pgVector", "pgVector"),
        ("vector search", "Vector search"),
    ]:
        resolution = resolve_name(name, index_of())
        assert resolution.is_new and resolution.canonical == canonical, name


def test_wordings_discovery_counts_as_known_are_matched_not_dropped():
    """ "based on", "used for": discovery will never propose them, so VERIFY must map them."""
    from construction.discover import DroppedExample, discover_relations

    table = vocabulary_lookup(VOCABULARY)
    for label, key in [
        ("based on", "builds_on"),
        ("used for", "applies_to"),
        ("required for", "prerequisite"),
        ("component of", "part_of"),
    ]:
        assert match_relation(label, table).key == key, label
        examples = [
            DroppedExample(
                id=i,
                label=label,
                source_slug=f"s{i}",
                revision_id=i,
                quote="",
                start=None,
                end=None,
                source_name=f"a{i}",
                target_name=f"b{i}",
            )
            for i in range(3)
        ]
        assert discover_relations(examples, vocabulary=VOCABULARY, min_support=1) == []
    assert match_relation("not based on", table) is None


def _unquoted(source, target, relation="prerequisite"):
    return Candidate(
        source=source,
        target=target,
        relation=relation,
        confidence=0.9,
        reason="A submitter says so.",
        evidence="",
    )


def test_an_unquoted_candidate_is_dropped_unless_evidence_is_optional():
    """The agents' reading always quotes; a submission may not, and is then flagged."""
    assert [d.reason for d in run(_unquoted("embeddings", "vector search")).dropped] == [
        "evidence_not_found"
    ]
    result = process_source(
        doc=SourceDoc(slug="", revision_id=0, revision_number=0, title="", text=""),
        extraction=Extraction(
            concepts=(),
            candidates=(
                _unquoted("embeddings", "vector search"),
                _unquoted("embeddings", "vector search"),
            ),
        ),
        vocabulary=VOCABULARY,
        index=index_of(),
        graph=MemoryGraph(),
        gate=0.6,
        evidence_optional=True,
    )
    (edge,) = result.edges
    assert edge.evidence is None and "no_evidence" in edge.flags
    assert edge.support == ()
    assert [(d.reason, d.detail) for d in result.dropped] == [
        ("duplicate", "repeated in this source")
    ]
