"""DEFINE in the loop: whatever read a document, the names it defines reach the concept
drafts with their sentences, become alias drafts for concepts already known, and let
later mentions resolve by either name."""

from __future__ import annotations

from construction.pipeline import process_source
from construction.quotes import quote_key
from construction.reading import plan_chunks, read_in_order
from construction.resolve import OverlayIndex
from construction.text import name_key
from construction.types import Candidate, ConceptMention, Extraction, IndexEntry, SourceDoc
from tests.construction.memory import VOCABULARY, MemoryGraph, index_of

TEXT = (
    "# Transport\n\n"
    "The Transmission Control Protocol (TCP) gives a reliable stream on top of IP. "
    "TCP opens every connection with a three-way handshake. "
    "The Domain Name System, also called DNS, finds addresses. "
    "DNS builds on TCP for large answers.\n"
)
DOC = SourceDoc(slug="net", revision_id=3, revision_number=1, title="Transport", text=TEXT)
TCP_SENTENCE = "The Transmission Control Protocol (TCP) gives a reliable stream on top of IP."


def cand(source, target, relation, evidence):
    return Candidate(source, target, relation, 0.9, "The text says so.", evidence)


HANDSHAKE = cand(
    "Three-way handshake",
    "Transmission Control Protocol",
    "part_of",
    "TCP opens every connection with a three-way handshake.",
)
DNS = cand("Domain Name System", "TCP", "builds_on", "DNS builds on TCP for large answers.")


def run(*candidates, index=None, graph=None, concepts=()):
    return process_source(
        doc=DOC,
        extraction=Extraction(concepts=tuple(concepts), candidates=candidates),
        vocabulary=VOCABULARY,
        index=index if index is not None else index_of(),
        graph=graph if graph is not None else MemoryGraph(),
        gate=0.6,
    )


def test_a_new_concept_carries_the_names_its_document_defines_with_the_sentence():
    """No extractor alias, yet the draft has "TCP", quoted from the defining sentence."""
    result = run(HANDSHAKE)
    tcp = next(c for c in result.concepts if c.name == "Transmission Control Protocol")
    assert tcp.aliases == ("TCP",)
    (defined,) = tcp.defined
    assert defined.alias == "TCP"
    assert defined.span.quote == TCP_SENTENCE
    assert TEXT[defined.span.start : defined.span.end] == TCP_SENTENCE
    assert tcp.evidence == defined.span


def test_an_end_named_by_the_abbreviation_resolves_to_the_long_forms_concept():
    """ "TCP" in one edge and "Transmission Control Protocol" in another are one concept."""
    result = run(HANDSHAKE, DNS)
    keys = {e.target.key for e in result.edges if e.target.canonical != "Domain Name System"}
    assert len(keys) == 1
    names = {c.name for c in result.concepts}
    assert "TCP" not in names and "Transmission Control Protocol" in names
    dns = next(c for c in result.concepts if c.name == "Domain Name System")
    assert dns.aliases == ("DNS",)


def test_a_concept_in_the_graph_is_found_by_a_defined_name_and_gets_an_alias_draft():
    """The graph knows "Transmission Control Protocol" only; the edge's "TCP" resolves to
    it, and the missing name is drafted with its sentence."""
    index = index_of((5, "Transmission Control Protocol", []))
    result = run(DNS, index=index)
    (edge,) = result.edges
    assert edge.target.concept_id == 5
    (alias,) = [a for a in result.aliases if a.alias == "TCP"]
    assert (alias.concept_id, alias.proposal_id, alias.name) == (
        5,
        None,
        "Transmission Control Protocol",
    )
    assert alias.evidence.quote == TCP_SENTENCE
    assert alias.dedup_key == "add_alias:5|tcp"
    assert alias.confidence == 0.9


def test_no_alias_draft_for_a_name_the_concept_or_another_concept_already_has():
    """A concept that answers to "TCP" needs nothing; a name another concept holds is
    never drafted for this one."""
    index = index_of((5, "Transmission Control Protocol", ["TCP"]), (6, "Domain Name System", []))
    index.add_name(IndexEntry(name="DNS", canonical="Dynamic naming", key="c7", concept_id=7))
    result = run(DNS, index=index)
    assert [a.alias for a in result.aliases] == []


def test_a_name_rejected_before_with_the_same_sentence_is_not_drafted_again():
    """A reviewer's no to this sentence stands."""
    graph = MemoryGraph()
    index = index_of((5, "Transmission Control Protocol", []))
    graph.rejected["add_alias:5|tcp"] = {quote_key(TCP_SENTENCE)}
    assert run(DNS, index=index, graph=graph).aliases == ()


def test_a_defined_name_for_an_open_concept_proposal_is_drafted_for_that_proposal():
    """The queue proposes "Domain Name System" (proposal 9) without "DNS": the draft names
    the proposal, to be given the name."""
    index = index_of()
    index.add(
        IndexEntry(
            name="Domain Name System",
            canonical="Domain Name System",
            key="n:domain name system",
            proposal_id=9,
            is_canonical=False,
        ),
        keys=[name_key("Domain Name System")],
    )
    result = run(DNS, index=index)
    (alias,) = [a for a in result.aliases if a.alias == "DNS"]
    assert (alias.concept_id, alias.proposal_id) == (None, 9)


def test_the_extractors_own_aliases_and_the_documents_join_in_one_mention():
    """An extractor that calls it "TCP" with no long form still gets the long form."""
    result = run(DNS, concepts=[ConceptMention(name="TCP")])
    tcp = next(c for c in result.concepts if name_key(c.name) == "tcp")
    assert "Transmission Control Protocol" in tcp.aliases


def test_chunks_read_in_order_know_the_names_earlier_chunks_defined():
    """A local extractor reading chunk two finds "TCP" as the concept chunk one defined,
    though chunk one's reading named no concept."""
    text = (
        "The Transmission Control Protocol (TCP) is reliable.\n\n"
        + "Words. " * 120
        + ("\n\nTCP is everywhere.\n")
    )
    doc = SourceDoc(slug="t", revision_id=1, revision_number=1, title="T", text=text)
    plans = plan_chunks(doc, sections=(), max_tokens=120, overlap_tokens=0, extractor_key="x")
    assert len(plans) >= 2
    seen: list[str | None] = []

    def extract(part: SourceDoc, known: OverlayIndex) -> Extraction:
        entry = known.exact(name_key("TCP"))
        seen.append(entry.canonical if entry else None)
        return Extraction(concepts=(), candidates=())

    read_in_order(plans, extract, index_of())
    assert seen[0] is None
    assert seen[-1] == "Transmission Control Protocol"
