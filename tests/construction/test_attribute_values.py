"""STATE: the attribute values a document states, read off real sentences of the
PostgreSQL manual (evaluation/manuals/postgresql) and a few written for the rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from construction.attribute_values import Target, role_of, stated_values, value_of
from construction.doc_html import read_html

MANUAL = Path(__file__).resolve().parents[2] / "evaluation" / "manuals" / "postgresql" / "pages"
SETTING = (("setting", "default_value", "Default value"), ("setting", "value_type", "Value type"))


def target(concept_id: int, name: str, attributes=SETTING, names=()) -> Target:
    return Target(concept_id=concept_id, name=name, names=tuple(names), attributes=attributes)


def manual(page: str) -> str:
    return read_html((MANUAL / page).read_bytes(), filename=page).text


def found(text: str, *targets: Target) -> dict[tuple[str, str], tuple[str, str]]:
    """(concept, attribute) -> (value, how); each span is checked to quote the text."""
    out = {}
    for s in stated_values(text, targets):
        assert text[s.start : s.end] == s.quote
        out[(s.name, s.attribute_key)] = (s.value, s.how)
    return out


def test_the_resource_chapter_states_work_mems_type_and_default():
    """'`work_mem` (`integer`)' names the entry; 'The default value is four megabytes
    (`4MB`).' under it states its default, the literal in backticks."""
    values = found(
        manual("runtime-config-resource.html"),
        target(1, "work_mem"),
        target(2, "maintenance_work_mem"),
        target(3, "vacuum_cost_limit"),
    )
    assert values[("work_mem", "value_type")] == ("integer", "reference entry")
    assert values[("work_mem", "default_value")] == ("4MB", "entry's default")
    assert values[("maintenance_work_mem", "default_value")] == ("64MB", "entry's default")
    assert values[("vacuum_cost_limit", "default_value")] == ("200", "entry's default")


def test_the_connection_chapter_states_ports_default_after_a_semicolon():
    """'The TCP port the server listens on; 5432 by default.' and 'The default is
    typically 100 connections, but ...' (the hedge left out)."""
    values = found(
        manual("runtime-config-connection.html"),
        target(1, "port"),
        target(2, "max_connections"),
    )
    assert values[("port", "default_value")] == ("5432", "entry's default")
    assert values[("max_connections", "default_value")] == ("100 connections", "entry's default")


def test_a_sentence_naming_the_concept_states_its_default_anywhere():
    text = (
        "# Memory\n\nThe default value of work_mem is 4MB. "
        "Also, shared_buffers defaults to `128MB` on most systems.\n"
    )
    values = found(text, target(1, "work_mem"), target(2, "shared_buffers"))
    assert values == {
        ("work_mem", "default_value"): ("4MB", "named default"),
        ("shared_buffers", "default_value"): ("128MB", "named default"),
    }


def test_a_concept_is_found_by_its_alias():
    text = "The default value of the WAL buffer size is 16MB.\n"
    values = found(text, target(1, "wal_buffers", names=["WAL buffer size"]))
    assert values == {("wal_buffers", "default_value"): ("16MB", "named default")}


def test_an_entry_carries_its_subject_only_until_the_next_entry_or_heading():
    """'The default is 8.' under an unknown entry, or after a heading, states nothing."""
    text = (
        "`work_mem` (`integer`)\n\nSets memory. The default is `4MB`.\n\n"
        "`unknown_thing` (`integer`)\n\nThe default is 8.\n\n"
        "`work_mem` (`integer`)\n\n## Another section\n\nThe default is 9.\n"
    )
    values = found(text, target(1, "work_mem"))
    assert values == {
        ("work_mem", "value_type"): ("integer", "reference entry"),
        ("work_mem", "default_value"): ("4MB", "entry's default"),
    }


def test_only_attributes_the_type_declares_are_read():
    """A type that declares no value type gets no value type; one that declares neither
    role gets nothing."""
    only_default = (("setting", "default_value", "Default value"),)
    text = "`work_mem` (`integer`)\n\nThe default value is 4MB.\n"
    assert found(text, target(1, "work_mem", attributes=only_default)) == {
        ("work_mem", "default_value"): ("4MB", "entry's default")
    }
    assert found(text, target(1, "work_mem", attributes=(("setting", "unit", "Unit"),))) == {}
    assert stated_values(text, []) == []


def test_a_long_clause_without_a_literal_states_nothing():
    text = "`work_mem` (`integer`)\n\nThe default is chosen by initdb from the machine's memory.\n"
    assert ("work_mem", "default_value") not in found(text, target(1, "work_mem"))


@pytest.mark.parametrize(
    ("rest", "value"),
    [
        ("four megabytes (`4MB`). Note that", "4MB"),
        ("-1, indicating that the value of maintenance_work_mem is used.", "-1"),
        ("zero, which disables the feature.", "zero"),
        ("typically 128 megabytes (`128MB`), but might be less", "128MB"),
        ("10 seconds.", "10 seconds"),
        ("whatever the operating system chooses for this machine.", None),
    ],
)
def test_a_clauses_value(rest, value):
    assert value_of(rest) == value


@pytest.mark.parametrize(
    ("key", "label", "role"),
    [
        ("default_value", "Default value", "default"),
        ("default", "Default", "default"),
        ("value_type", "Value type", "value_type"),
        ("datatype", "Data type", "value_type"),
        ("unit", "Unit", ""),
    ],
)
def test_the_role_of_an_attribute_comes_from_its_key_and_label(key, label, role):
    assert role_of(key, label) == role
