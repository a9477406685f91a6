"""Questions that name a concept type: the type is read off the question by its label,
key or plural; the question without it is planned as usual and its answers are kept to
that type and the types below it; a question that only names the type lists its
concepts. The answer says the type. A small typed graph in memory."""

from __future__ import annotations

import pytest

from construction.ask.loop import ask
from construction.ask.typed import TypeSpec, family, forms, plural, read_type
from construction.ask.types import ConceptFact, EdgeFact
from construction.types import RelationSpec
from tests.construction.ask_memory import MemoryReader, index_of

RELATIONS = (
    RelationSpec("affects", "Affects", "affects", "", False, False),
    RelationSpec("part_of", "Part of", "is part of", "", False, True),
    RelationSpec("related", "Related", "is related to", "", True, False),
)
TYPES = (
    TypeSpec("setting", "Setting"),
    TypeSpec("memory_setting", "Memory setting", "setting"),
    TypeSpec("process", "Process"),
    TypeSpec("command", "Command"),
    TypeSpec("lock_mode", "Lock mode"),
    TypeSpec("policy", "Policy"),
)
CONCEPTS = (
    (1, "Checkpoints", ("checkpoint",)),
    (2, "checkpoint_timeout", ()),
    (3, "max_wal_size", ()),
    (4, "Checkpointer", ()),
    (5, "VACUUM", ()),
    (6, "VACUUM FULL", ()),
    (7, "Visibility map", ()),
    (8, "ACCESS SHARE", ()),
    (9, "ROW EXCLUSIVE", ()),
    (10, "SHARE UPDATE", ()),
)
TYPED = {
    2: "setting",
    3: "memory_setting",
    4: "process",
    5: "command",
    6: "command",
    8: "lock_mode",
    9: "lock_mode",
    10: "lock_mode",
}
EDGES = ((101, 2, "affects", 1), (102, 3, "affects", 1), (103, 4, "affects", 1))
EDGES += ((104, 6, "part_of", 5), (105, 7, "part_of", 5))


def reader(*, types=TYPED, retired=(10,)) -> MemoryReader:
    concepts = [ConceptFact(i, name, i not in retired) for i, name, _ in CONCEPTS]
    edges = [
        EdgeFact(e, s, t, r, quote=f"quote {e}", source_slug="manual", revision=1)
        for e, s, r, t in EDGES
    ]
    return MemoryReader(concepts, edges, RELATIONS, types=types)


def asked(question: str, **kwargs):
    found, _ = ask(question, reader=reader(**kwargs), index=index_of(CONCEPTS), types=TYPES)
    return found


# --- reading the type ---------------------------------------------------------------


def test_a_type_is_named_by_its_label_key_or_plural():
    assert plural("setting") == "settings" and plural("process") == "processes"
    assert plural("policy") == "policies" and plural("series") == "series"
    assert forms(TypeSpec("lock_mode", "Lock mode")) == {"lock mode", "lock modes"}
    assert family("setting", TYPES) == ("memory_setting", "setting")
    reading = read_type("Which memory settings affect checkpoints?", TYPES)
    assert reading is not None and reading.spec.key == "memory_setting"  # the longest form
    assert read_type("What lock_mode is part of VACUUM?", TYPES) is None  # not a word form
    assert read_type("What affects checkpoints?", TYPES) is None
    assert read_type("Which settings affect checkpoints?", ()) is None


@pytest.mark.parametrize(
    ("question", "rewrite"),
    [
        ("Which settings affect checkpoints?", "What affects checkpoints?"),
        ("What commands are part of VACUUM?", "What is part of VACUUM?"),
        ("What are the settings that affect checkpoints?", "What affects checkpoints?"),
        ("Which of the processes affect checkpoints?", "What affects checkpoints?"),
    ],
)
def test_the_question_without_its_type_goes_to_the_planner(question, rewrite):
    reading = read_type(question, TYPES)
    assert reading is not None and rewrite in reading.rewrites


# --- answers kept to the type ---------------------------------------------------------


def test_which_settings_affect_checkpoints_keeps_settings_and_their_subtypes():
    found = asked("Which settings affect checkpoints?")
    assert found.status == "answered"
    assert [c.name for c in found.concepts] == ["checkpoint_timeout", "max_wal_size"]
    assert len(found.paths) == 2 and all(p[0].edge.relation == "affects" for p in found.paths)
    assert "settings" in found.message and "'setting'" in found.message
    assert "Checkpointer" not in found.message
    assert found.plan.type_key == "setting"
    assert found.plan.as_json()["types"] == ["memory_setting", "setting"]


def test_what_commands_are_part_of_vacuum_leaves_the_untyped_part_out():
    found = asked("What commands are part of VACUUM?")
    assert [c.name for c in found.concepts] == ["VACUUM FULL"]
    assert "commands" in found.message and "Visibility map" not in found.message


def test_a_type_nothing_answers_says_what_the_answer_held_instead():
    found = asked("Which policies affect checkpoints?")
    assert found.status == "no_path" and found.concepts == ()
    assert found.message.startswith("No policy answers this in the graph now")
    assert "Checkpointer" in found.message


def test_the_type_a_concept_had_at_the_instant_counts():
    """As of an instant when max_wal_size was still untyped, it is no setting."""
    then = {**TYPED, 3: None}
    found = asked("Which settings affect checkpoints?", types=then)
    assert [c.name for c in found.concepts] == ["checkpoint_timeout"]


# --- listing a type -------------------------------------------------------------------


@pytest.mark.parametrize(
    "question", ["List the lock modes", "What are the lock modes?", "Show me all lock modes."]
)
def test_listing_a_type_names_its_active_concepts(question):
    found = asked(question)
    assert found.status == "answered" and found.plan.family == "members"
    assert [c.name for c in found.concepts] == ["ACCESS SHARE", "ROW EXCLUSIVE"]
    assert found.message.startswith("The lock modes in the graph now")


def test_listing_a_type_with_no_concepts_says_so():
    found = asked("List the policies")
    assert found.status == "no_path"
    assert found.message == (
        "There are no policies in the graph now: no concept has the type 'policy'."
    )


def test_listing_a_parent_type_includes_its_subtypes():
    found = asked("List the settings")
    assert [c.name for c in found.concepts] == ["checkpoint_timeout", "max_wal_size"]


def test_a_question_without_a_type_reads_no_types():
    r = reader()
    found, _ = ask("What affects checkpoints?", reader=r, index=index_of(CONCEPTS), types=TYPES)
    assert [c.name for c in found.concepts] == [
        "Checkpointer",
        "checkpoint_timeout",
        "max_wal_size",
    ]
    assert "concept_types" not in r.calls
