"""Ontology bootstrap, offline and with a model: real sentences of a database manual in,
types (with a subtype), a new relation type, a pattern and attributes out, each with
its own verbatim quotes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from construction.ontology import (
    DocChunk,
    KnownOntology,
    KnownType,
    TypeDraft,
    additions,
    bootstrap_offline,
    type_for_term,
)
from construction.ontology.draft import fold_types
from construction.ontology.model import ModelBootstrap
from construction.types import RelationSpec
from tests.construction.fake_llm import reply

VOCABULARY = Path(__file__).parents[2] / "kgreview/graph/vocabularies/curriculum.json"
CURRICULUM = tuple(
    RelationSpec(
        **{k: r[k] for k in ("key", "label", "verb", "description", "symmetric", "acyclic")}
    )
    for r in json.loads(VOCABULARY.read_text())["relations"]
)

LOCKS = """# Lock Modes

PostgreSQL provides various lock modes to control concurrent access to data in tables.

The ACCESS EXCLUSIVE lock conflicts with locks of all modes. The ROW EXCLUSIVE lock is \
acquired by commands that modify data in a table. The SHARE lock protects a table against \
concurrent data changes.

The VACUUM command requires the SHARE UPDATE EXCLUSIVE lock. The CLUSTER command requires \
the ACCESS EXCLUSIVE lock. The REINDEX command requires the SHARE lock.
"""
SETTINGS = """# Configuration Settings

`work_mem` (integer)

The `work_mem` setting sets the base maximum amount of memory to be used by a query \
operation. The default is 4096.

`maintenance_work_mem` (integer)

The `maintenance_work_mem` setting specifies the maximum amount of memory to be used by \
maintenance operations. It defaults to 65536.

`autovacuum` (boolean)

The `autovacuum` setting controls whether the server should run the autovacuum launcher \
daemon. The default is on.

The `maintenance_work_mem` setting applies to the VACUUM command. The `vacuum_cost_delay` \
setting applies to the VACUUM command. The `work_mem` setting applies to the CLUSTER command.
"""
COMMANDS = """# SQL Commands

The VACUUM command reclaims storage occupied by dead tuples. The ANALYZE command collects \
statistics about the contents of tables. The CLUSTER command reorders a table based on an \
index.

Maintenance commands such as VACUUM, ANALYZE and REINDEX can be run by the autovacuum daemon.

The TRUNCATE command requires the ACCESS EXCLUSIVE lock. The LOCK command requires the ROW \
SHARE lock. The ALTER TABLE command requires the ACCESS EXCLUSIVE lock.

The `vacuum_cost_delay` setting applies to the ANALYZE command.
"""
TEXTS = {"commands": COMMANDS, "locks": LOCKS, "settings": SETTINGS}


def corpus() -> list[DocChunk]:
    return [
        DocChunk(slug, n, slug.title(), text) for n, (slug, text) in enumerate(TEXTS.items(), 1)
    ]


@pytest.fixture(scope="module")
def drafted():
    return bootstrap_offline(
        corpus(), vocabulary=CURRICULUM, known=KnownOntology(relations=CURRICULUM)
    )


def verbatim(quotes) -> bool:
    texts = {n: text for n, text in enumerate(TEXTS.values(), 1)}
    return all(texts[q.revision_id][q.start : q.end] == q.quote for q in quotes)


def test_types_come_from_clusters_by_head_noun_and_lists_with_a_subtype(drafted):
    types = {t.key: t for t in drafted.types}
    assert {"command", "setting", "lock", "maintenance_command"} <= set(types)
    assert types["maintenance_command"].parent_key == "command"
    assert {"VACUUM", "ANALYZE", "REINDEX"} <= set(types["maintenance_command"].members)
    assert "work_mem" in types["setting"].members
    assert types["command"].sources == 3 and types["command"].support >= 5
    for t in types.values():
        assert t.quotes and verbatim(t.quotes)
        assert "sources" in t.description


def test_a_cue_verb_the_vocabulary_lacks_becomes_a_relation_type_with_its_pattern(drafted):
    (requires,) = [r for r in drafted.relation_types if r.key == "requires"]
    assert requires.patterns == (("command", "lock"),)
    assert requires.support >= 3 and requires.sources == 2
    assert verbatim(requires.quotes)
    assert all(" requires " in q.quote and q.name and q.other for q in requires.quotes)


def test_a_vocabulary_relation_between_typed_terms_becomes_a_pattern(drafted):
    (applies,) = [p for p in drafted.patterns if p.relation_key == "applies_to"]
    assert (applies.domain_key, applies.range_key) == ("setting", "command")
    assert applies.support >= 3 and verbatim(applies.quotes)


def test_attributes_come_from_typed_labels_and_defaults(drafted):
    attributes = {(a.type_key, a.key): a for a in drafted.attributes}
    default = attributes[("setting", "default_value")]
    assert {q.value for q in default.quotes} == {"4096", "65536", "on"}
    assert default.datatype == "string"  # "on" is no integer
    data_type = attributes[("setting", "data_type")]
    assert {q.value for q in data_type.quotes} == {"integer", "boolean"}
    assert verbatim(default.quotes) and verbatim(data_type.quotes)


def test_what_the_ontology_has_is_never_proposed_again(drafted):
    known = KnownOntology(
        types=(KnownType("sql_command", "Command"), KnownType("lock", "Lock", active=False)),
        relations=CURRICULUM,
        patterns=frozenset({("applies_to", "setting", "sql_command")}),
        attributes=frozenset({("setting", "default_value")}),
    )
    left = additions(drafted, known)
    keys = {t.key for t in left.types}
    assert "command" not in keys and "lock" not in keys and "setting" in keys
    # the drafted "command" is the graph's "sql_command": the subtype hangs under it
    (sub,) = [t for t in left.types if t.key == "maintenance_command"]
    assert sub.parent_key == "sql_command"
    assert not [p for p in left.patterns if p.relation_key == "applies_to"]
    assert [a.key for a in left.attributes] == ["data_type"]
    (requires,) = left.relation_types
    assert requires.patterns == (("sql_command", "lock"),)


def test_similar_labels_fold_into_one_type_with_summed_support():
    folded = fold_types(
        [
            TypeDraft("setting", "Setting", support=5, labels=("setting",)),
            TypeDraft("settings", "Settings", support=2, labels=("settings",)),
            TypeDraft("configuration_setting", "Configuration settting", support=1),
            TypeDraft("configuration_settings", "Configuration settings", support=1),
        ]
    )
    assert [(t.key, t.support) for t in folded] == [
        ("setting", 7),
        ("configuration_setting", 2),
    ]


def test_a_term_takes_the_type_its_definition_classifier_head_or_heading_names():
    types = [KnownType("command", "Command"), KnownType("lock_mode", "Lock mode")]
    assert type_for_term("VACUUM", types, defined_as="maintenance command") == "command"
    assert type_for_term("work_mem", types, classifier="setting") == ""
    assert type_for_term("ACCESS SHARE lock mode", types) == "lock_mode"
    assert type_for_term("ANALYZE", types, section=("Reference", "SQL Commands")) == "command"
    assert type_for_term("Table", types, section=("Tables",)) == ""
    assert type_for_term("VACUUM", [], defined_as="command") == ""


# --- With a model (the fake chat-completions server) ---------------------------------------


def good_answer(chunk_text: str) -> dict:
    return {
        "types": [
            {
                "label": "Command",
                "parent": "",
                "description": "An SQL command.",
                "examples": [
                    {"concept": "VACUUM", "quote": "The VACUUM command requires the SHARE"}
                ],
            },
            {
                "label": "Lock",
                "parent": "",
                "description": "A table lock.",
                "examples": [{"concept": "SHARE lock", "quote": "The SHARE lock protects a table"}],
            },
        ],
        "relations": [
            {
                "label": "requires",
                "verb": "requires",
                "domain": "Command",
                "range": "Lock",
                "source": "VACUUM",
                "target": "SHARE UPDATE EXCLUSIVE lock",
                "quote": "The VACUUM command requires the SHARE UPDATE EXCLUSIVE lock.",
            }
        ],
        "attributes": [],
    }


def test_the_model_path_anchors_retries_with_the_errors_skips_a_failed_chunk_and_normalises(
    fake_llm,
):
    chunks = [
        DocChunk("locks", 2, "Locks", LOCKS, offset=0, index=0),
        DocChunk("locks", 2, "Locks", SETTINGS, offset=len(LOCKS), index=1),
    ]
    bad = good_answer(LOCKS)
    bad["relations"][0]["range"] = "Table lock"  # not a type it listed
    bad["relations"][0]["quote"] = "VACUUM needs a lock."  # not in the text
    fake_llm.push(
        reply({"about": "PostgreSQL's lock modes.", "central": ["lock mode", "VACUUM"]}),
        reply(bad),
        reply(good_answer(LOCKS)),
        reply("not json"),
        reply("still not json"),
        reply("never json"),
        reply({"merges": [{"from": "Lock", "into": "Lock"}], "reversed": []}),
    )
    model = ModelBootstrap(api_key="k", base_url=fake_llm.base_url, model="m", max_retries=0)
    draft = model.bootstrap(chunks, known=KnownOntology(relations=CURRICULUM))
    sent = fake_llm.requests
    assert "PostgreSQL's lock modes." in sent[1]["messages"][1]["content"]  # the anchor
    assert (
        "prerequisite (is a prerequisite for)" in sent[1]["messages"][0]["content"]
    )  # the ontology, preferred
    retry = sent[2]["messages"][-1]["content"]
    assert '"Table lock" is not a type' in retry and "not in the text verbatim" in retry
    assert [c for c, _ in draft.skipped] == ["locks#1"]
    assert draft.chunks_read == 1 and draft.usage.validation_retries == 3
    assert {t.key for t in draft.types} == {"command", "lock"}
    (requires,) = draft.relation_types
    assert requires.patterns == (("command", "lock"),)
    (q,) = requires.quotes
    assert LOCKS[q.start : q.end] == q.quote and q.revision_id == 2
    assert sent[-1]["response_format"]["json_schema"]["name"] == "ontology_normalise"


def test_the_normalisation_pass_merges_synonyms_and_turns_reversed_relations_round(fake_llm):
    chunk = DocChunk("locks", 2, "Locks", LOCKS)
    answer = good_answer(LOCKS)
    answer["types"].append(
        {
            "label": "SQL statement",
            "parent": "",
            "description": "",
            "examples": [
                {"concept": "CLUSTER", "quote": "The CLUSTER command requires the ACCESS"}
            ],
        }
    )
    answer["relations"][0].update(domain="Lock", range="SQL statement")
    fake_llm.push(
        reply({"about": "Locks.", "central": []}),
        reply(answer),
        reply(
            {
                "merges": [{"from": "SQL statement", "into": "Command"}],
                "reversed": [{"relation": "requires", "domain": "lock", "range": "command"}],
            }
        ),
    )
    model = ModelBootstrap(api_key="k", base_url=fake_llm.base_url, model="m", max_retries=0)
    draft = model.bootstrap([chunk], known=KnownOntology(relations=CURRICULUM))
    assert sorted(t.key for t in draft.types) == ["command", "lock"]
    (command,) = [t for t in draft.types if t.key == "command"]
    assert command.support == 2 and "SQL statement" in command.labels
    assert draft.relation_types[0].patterns == (("command", "lock"),)
