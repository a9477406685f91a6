"""The offline bootstrap's readings that make patterns and attributes usable: a statement
form is a command (not the object it makes), generic heads are no type, near-twin types
fold, a bare noun and a listed term take their type, and the attribute cues read the
value and the label they mean."""

from __future__ import annotations

import json
from pathlib import Path

from construction.ontology import DocChunk, KnownOntology, bootstrap_offline, read_chunk
from construction.types import RelationSpec

VOCABULARY = Path(__file__).parents[2] / "kgreview/graph/vocabularies/documentation.json"
DOCUMENTATION = tuple(
    RelationSpec(
        **{k: r[k] for k in ("key", "label", "verb", "description", "symmetric", "acyclic")}
    )
    for r in json.loads(VOCABULARY.read_text())["relations"]
)


def read(text: str):
    return read_chunk(DocChunk("page", 1, "Page", text), vocabulary=DOCUMENTATION)


def draft(*texts: str):
    chunks = [DocChunk(f"page-{n}", n, f"Page {n}", t) for n, t in enumerate(texts, 1)]
    return bootstrap_offline(
        chunks, vocabulary=DOCUMENTATION, known=KnownOntology(relations=DOCUMENTATION)
    )


TRIGGERS = """# Triggers

`CREATE TRIGGER` creates a new trigger. `CREATE TABLE` creates a new table. \
The VACUUM command reclaims storage. The ANALYZE command collects statistics. \
A row-level trigger fires once per row. A statement-level trigger fires once per \
statement. A constraint trigger fires at the end of the transaction. A partitioned table \
holds partitions. A foreign table lives elsewhere.
"""
MORE_TRIGGERS = """# Event Triggers

`CREATE EVENT TRIGGER` creates a new trigger. The CLUSTER command reorders a table. \
An event trigger fires on commands. A deferred trigger waits. A shared table and a \
temporary table and an unlogged table hold rows.
"""


def test_a_statement_form_in_capitals_is_a_command_not_the_object_it_makes():
    terms = {t.name: t for t in read(TRIGGERS).terms}
    assert terms["CREATE TRIGGER"].head == "command"
    assert "CREATE" not in terms  # no "CREATE" classified by the capital TRIGGER after it
    ends = {t.name: t.head for t in read("The SQL command DROP ROLE removes a role.\n").terms}
    assert ends["SQL command DROP ROLE"] == "command"  # not a role
    drafted = draft(TRIGGERS, MORE_TRIGGERS)
    shapes = {(p.relation_key, p.domain_key, p.range_key) for p in drafted.patterns}
    assert ("produces", "command", "trigger") in shapes
    assert not any(domain == "trigger" for _, domain, _ in shapes)
    (produces,) = [p for p in drafted.patterns if p.domain_key == "command"]
    assert all("creates a new trigger" in q.quote for q in produces.quotes)


OBJECTS = """# Objects

The large object interface stores data. A database object belongs to a schema. Each \
catalog object has an owner. A prepared statement object holds a plan. The plan \
node computes rows. The document node holds text.
"""
MORE_OBJECTS = """# Nodes

A sequence object yields numbers. The custom-scan plan node scans. The scan node \
reads rows. A database object has privileges. The character node holds one letter.
"""


def test_a_generic_head_alone_is_no_type():
    types = {t.key for t in draft(OBJECTS, MORE_OBJECTS).types}
    assert not types & {"object", "node"}


SETTINGS = """# Parameters

The `work_mem` parameter sets memory. The `shared_buffers` parameter sets the cache. \
The `port` parameter sets the port. The `geqo_seed` parameter setting restarts the \
generator. The `work_mem` parameter setting is read at start. The `jit` parameter \
setting turns compilation on. The locale setting is taken from the environment.
"""
MORE_SETTINGS = """# Settings

Configuration parameters (also called settings) are read at start. The `listen_addresses` \
parameter sets the address. The encoding setting comes from the locale. The collation \
setting comes from the locale. The `timezone` parameter setting is read by the server.
"""


def test_near_twin_types_fold_into_one():
    types = {t.key: t for t in draft(SETTINGS, MORE_SETTINGS).types}
    assert "parameter_setting" not in types  # a setting of a parameter, not a kind
    # "parameters (also called settings)": one type, holding the members of both
    (kept,) = {"parameter", "setting"} & set(types)
    members = set(types[kept].members)
    assert {"work_mem", "Locale setting"} <= members


LISTED = """# Memory

The `work_mem` parameter sets memory. The `shared_buffers` parameter sets the cache. \
The `port` parameter sets the port. The `jit` parameter turns compilation on. The server \
reads `work_mem`, `shared_buffers`, and `temp_buffers` at start. `temp_buffers` configures \
the temporary table. A catalog table holds the schema. An unlogged table skips the log.
"""
MORE_LISTED = """# Tables

The `geqo` parameter turns the genetic optimizer on. The `fsync` parameter forces writes. \
Tables such as the foreign table, the partitioned table and the temporary table hold rows. \
`temp_buffers` configures the unlogged table.
"""


def test_a_listed_term_takes_the_type_its_typed_neighbours_share():
    assert ("work mem", "shared buffer", "temp buffer") in read(LISTED).lists
    drafted = draft(LISTED, MORE_LISTED)
    (configures,) = [p for p in drafted.patterns if p.relation_key == "configures"]
    assert (configures.domain_key, configures.range_key) == ("parameter", "table")
    assert {q.name for q in configures.quotes} == {"temp_buffers"}


def test_a_signature_is_no_typed_label_and_a_hedge_is_no_default():
    reading = read(
        "`quote_literal(string)`\n\nReturns the string quoted.\n\n"
        "`unix_socket_directories` (string)\n\n"
        "The default value is normally `/tmp`, but that can be changed at build time.\n"
    )
    seen = {(a.subject, a.key, a.value) for a in reading.attributes}
    assert ("quote_literal", "data_type", "string") not in seen
    assert not any(a.subject.startswith("quote_literal") for a in reading.attributes)
    assert ("unix_socket_directories", "default_value", "/tmp") in seen
    assert not any(a.value == "normally" for a in reading.attributes)


def test_a_number_spelled_out_as_a_default_gives_the_literal_in_brackets():
    reading = read("`work_mem` (integer)\n\nThe default value is four megabytes (`4MB`).\n")
    assert [a.value for a in reading.attributes if a.key == "default_value"] == ["4MB"]


def test_a_common_noun_is_not_the_identifier_spelled_alike():
    reading = read(
        "The `format` function formats a string. The `format` function returns text.\n\n"
        "All columns in a given `COPY` operation will use the same format.\n"
    )
    (uses,) = [r for r in reading.relations if r.relation == "uses"]
    assert uses.target == "format" and uses.target_key != "format"


def test_a_pattern_counts_the_sentences_that_state_it_not_the_ends_they_list():
    said = "configures the temporary table."
    listing = LISTED.replace(said, "configures the temporary table and the unlogged table.")
    without = MORE_LISTED.replace("`temp_buffers` configures the unlogged table.", "")
    assert listing != LISTED and without != MORE_LISTED
    (once,) = [p for p in draft(listing, without).patterns if p.relation_key == "configures"]
    assert once.support == 1 and "once in 1 source." in once.description  # one sentence, two ends
    (configures,) = [p for p in draft(listing, MORE_LISTED).patterns if p.domain_key == "parameter"]
    assert configures.support == 2  # two sentences, three ends
