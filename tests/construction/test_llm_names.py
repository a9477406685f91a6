"""The model path learns the names a document defines: each chunk's prompt lists them
with its section path, the answer's aliases are validated, and the prompt asks for
nothing rather than a guess."""

from __future__ import annotations

from dataclasses import replace

from construction.reading import cache_key, plan_chunks
from construction.types import Section, SourceDoc
from tests.construction.fake_llm import reply
from tests.construction.test_llm import DOC, GOOD, extract, extractor, messages

TEXT = (
    "# Transport\n\nThe Transmission Control Protocol (TCP) is reliable. "
    + "Filler words. " * 60
    + "\n\n# Naming\n\nThe Domain Name System, also called DNS, maps names. "
    + "More words. " * 60
)


def test_each_chunk_knows_the_names_defined_up_to_its_end():
    """A later chunk carries the earlier chunk's definitions and its own."""
    doc = SourceDoc(slug="net", revision_id=1, revision_number=1, title="Net", text=TEXT)
    naming = TEXT.index("# Naming")
    sections = [
        Section(path=("Transport",), start=0, end=naming, level=1),
        Section(path=("Naming",), start=naming, end=len(TEXT), level=1),
    ]
    plans = plan_chunks(doc, sections=sections, max_tokens=200, overlap_tokens=0, extractor_key="x")
    assert len(plans) >= 2
    assert plans[0].doc.defined == (("Transmission Control Protocol", "TCP"),)
    assert plans[-1].doc.defined == (
        ("Transmission Control Protocol", "TCP"),
        ("Domain Name System", "DNS"),
    )
    assert plans[-1].doc.section == ("Naming",)


def test_a_chunks_cache_key_changes_with_the_names_defined_before_it():
    """A reading made without the earlier definitions is not reused with them."""
    plain = replace(DOC, section=("Basics",))
    defined = replace(plain, defined=(("Retrieval-augmented generation", "RAG"),))
    assert cache_key(plain, "openai:m:p3") != cache_key(defined, "openai:m:p3")


def test_the_prompt_lists_the_defined_names_and_the_section_path(fake_llm):
    """The user message names each defined pair and where the chunk sits."""
    fake_llm.push(reply(GOOD))
    doc = replace(
        DOC,
        section=("Retrieval", "Basics"),
        defined=(("Retrieval-augmented generation", "RAG"),),
    )
    extract(extractor(fake_llm), doc=doc)
    user = messages(fake_llm.requests[0])[1]["content"]
    assert "Names this document defines up to here" in user
    assert "- Retrieval-augmented generation (RAG)" in user
    assert "Section: Retrieval > Basics" in user


def test_the_instructions_ask_for_defined_aliases_and_nothing_rather_than_a_guess(fake_llm):
    """The system message asks for the document's aliases and to leave doubt out."""
    fake_llm.push(reply(GOOD))
    extract(extractor(fake_llm))
    system = messages(fake_llm.requests[0])[0]["content"]
    assert "return nothing rather than guess" in system
    assert "Never invent an alias" in system
    user = messages(fake_llm.requests[0])[1]["content"]
    assert "Names this document defines" not in user  # none defined: nothing listed


def test_aliases_reach_the_concept_mentions_and_too_many_are_refused_in_words(fake_llm):
    """Valid aliases are kept; a list past the limit is sent back with the reason."""
    many = {"name": "RAG", "aliases": [f"name {i}" for i in range(21)], "description": None}
    fake_llm.push(reply({"concepts": [many], "edges": GOOD["edges"]}), reply(GOOD))
    result = extract(extractor(fake_llm))
    fed_back = messages(fake_llm.requests[1])[-1]["content"]
    assert "concepts.0.aliases" in fed_back and "at most 20" in fed_back
    rag = next(c for c in result.concepts if c.name == "RAG")
    assert rag.aliases == ("Retrieval-augmented generation",)
