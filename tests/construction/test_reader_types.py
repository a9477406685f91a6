"""The readers type the concepts they propose with the graph's concept types: the offline
reader from a definition, the noun after an identifier, the head noun and the heading;
the model from the types and patterns its prompt lists."""

from __future__ import annotations

from construction.linguistic import LinguisticExtractor
from construction.llm import OpenAIExtractor
from construction.ontology import KnownType
from construction.types import SourceDoc
from tests.construction.fake_llm import reply
from tests.construction.linguistic_helpers import DOCUMENTATION, Known

TYPES = (
    KnownType("command", "Command"),
    KnownType("lock_mode", "Lock mode"),
    KnownType("setting", "Setting"),
    KnownType("utility", "Utility", active=False),
)
TEXT = """# SQL Commands

The `VACUUM` command requires the SHARE UPDATE EXCLUSIVE lock mode. Autovacuum uses \
`VACUUM` to reclaim storage.

# Resource Usage

The `maintenance_work_mem` setting controls the `ANALYZE` command.
"""


def read(types=TYPES):
    doc = SourceDoc(slug="manual", revision_id=1, revision_number=1, title="Manual", text=TEXT)
    return LinguisticExtractor(concept_types=types).extract(
        doc, vocabulary=DOCUMENTATION, lexicon=Known(), max_edges=20
    )


def test_the_offline_reader_types_terms_from_classifier_head_noun_and_heading():
    typed = {c.name: c.type_key for c in read().concepts}
    assert typed["VACUUM"] == "command"  # "the `VACUUM` command", under "SQL Commands"
    assert typed["SHARE UPDATE EXCLUSIVE lock mode"] == "lock_mode"  # its head noun
    assert typed["Autovacuum"] == "command"  # only the heading speaks for it (weakest)
    assert typed["maintenance_work_mem setting"] == "setting"  # its head noun
    assert typed["ANALYZE"] == "command"  # the noun after the identifier, not the heading


def test_without_concept_types_the_offline_reader_types_nothing():
    assert {c.type_key for c in read(types=()).concepts} == {""}


def test_the_model_is_told_the_types_and_patterns_and_its_types_are_kept(fake_llm):
    llm = OpenAIExtractor(api_key="k", base_url=fake_llm.base_url, model="m")
    llm.concept_types = TYPES
    llm.relation_patterns = (("requires", "command", "lock_mode"),)
    fake_llm.push(
        reply(
            {
                "concepts": [
                    {"name": "VACUUM", "aliases": None, "description": None, "type": "command"},
                    {
                        "name": "SHARE UPDATE EXCLUSIVE",
                        "aliases": None,
                        "description": None,
                        "type": "Lock mode",
                    },
                    {"name": "pg_dump", "aliases": None, "description": None, "type": "utility"},
                    {"name": "Autovacuum", "aliases": None, "description": None, "type": None},
                ],
                "edges": [],
            }
        )
    )
    doc = SourceDoc(slug="manual", revision_id=1, revision_number=1, title="Manual", text=TEXT)
    found = llm.extract(doc, vocabulary=DOCUMENTATION, lexicon=Known(), max_edges=5)
    typed = {c.name: c.type_key for c in found.concepts}
    assert typed == {
        "VACUUM": "command",
        "SHARE UPDATE EXCLUSIVE": "lock_mode",  # named by its label
        "pg_dump": "",  # a retired type is no type to give
        "Autovacuum": "",
    }
    request = fake_llm.requests[0]
    system = request["messages"][0]["content"]
    assert "- lock_mode: Lock mode" in system and "- requires: command -> lock_mode" in system
    assert "utility" not in system
    concept = request["response_format"]["json_schema"]["schema"]["properties"]["concepts"]
    assert "type" in concept["items"]["required"]
