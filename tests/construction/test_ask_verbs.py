"""Asking a graph in the words of its own relations: a team's documentation graph (no
prerequisite, no builds_on) answers "What does X use?", "What is a kind of X?", "Does X
require Y?"; what it cannot answer is said in words; the curriculum's phrasebook keeps
its readings where its relations exist."""

from __future__ import annotations

import pytest

from construction.ask.loop import ask
from construction.ask.planner_offline import NO_FAMILY, no_family_words, plan_question
from construction.ask.types import ConceptFact, EdgeFact, Walk
from construction.ask.verbs import base_form, phrasing_for, read_by_verbs
from construction.types import RelationSpec
from tests.construction.ask_memory import VOCABULARY as CURRICULUM
from tests.construction.ask_memory import MemoryReader, curriculum, curriculum_index, index_of


def _spec(key, verb, *, symmetric=False, acyclic=False) -> RelationSpec:
    return RelationSpec(key, key.replace("_", " "), verb, "", symmetric, acyclic)


DOCUMENTATION = (
    _spec("is_a", "is a kind of", acyclic=True),
    _spec("part_of", "is part of", acyclic=True),
    _spec("requires", "requires"),
    _spec("uses", "uses"),
    _spec("produces", "produces"),
    _spec("configures", "configures"),
    _spec("alternative_to", "is an alternative to", symmetric=True),
    _spec("contrasts_with", "contrasts with", symmetric=True),
    _spec("related", "is related to", symmetric=True),
)
SYMMETRIC = {s.key for s in DOCUMENTATION if s.symmetric}
CONCEPTS = (
    (1, "Autovacuum", ("autovacuum daemon",)),
    (2, "Statistics collector", ()),
    (3, "VACUUM", ()),
    (4, "B-tree index", ("B-tree",)),
    (5, "Index", ()),
    (6, "Hash index", ()),
    (7, "Database object", ()),
    (8, "CREATE SUBSCRIPTION", ()),
    (9, "REPLICATION privilege", ()),
    (10, "wal_level", ()),
    (11, "WAL", ("write-ahead log",)),
    (12, "pg_dump", ()),
    (13, "pg_basebackup", ()),
    (14, "Archive file", ()),
    (15, "WAL writer", ()),
    (16, "Server", ()),
)
EDGES = (
    (1, 1, "uses", 2),
    (2, 3, "uses", 2),
    (3, 4, "is_a", 5),
    (4, 6, "is_a", 5),
    (5, 5, "is_a", 7),
    (6, 8, "requires", 9),
    (7, 10, "configures", 11),
    (8, 12, "produces", 14),
    (9, 12, "alternative_to", 13),
    (10, 15, "part_of", 16),
    (11, 15, "uses", 11),
)


def manual() -> MemoryReader:
    concepts = [ConceptFact(i, name, True) for i, name, _ in CONCEPTS]
    edges = [
        EdgeFact(e, s, t, r, r in SYMMETRIC, f"quote {e}", "manual", 1) for e, s, r, t in EDGES
    ]
    return MemoryReader(concepts, edges, DOCUMENTATION)


def _ask(question: str):
    answer, _ = ask(question, reader=manual(), index=index_of(CONCEPTS))
    return answer


READINGS = [
    ("What does autovacuum use?", "outgoing", "uses", {"x": "autovacuum"}),
    ("What uses the statistics collector?", "incoming", "uses", {"x": "the statistics collector"}),
    ("Which settings configure WAL?", "incoming", "configures", {"x": "WAL"}),
    ("What is B-tree index a kind of?", "outgoing", "is_a", {"x": "B-tree index"}),
    ("What is a kind of index?", "incoming", "is_a", {"x": "index"}),
    ("Is a B-tree a kind of index?", "yes_no", "is_a", {"a": "a B-tree", "b": "index"}),
    ("Is pg_dump an alternative to pg_basebackup?", "yes_no", "alternative_to",
     {"a": "pg_dump", "b": "pg_basebackup"}),
    ("Does CREATE SUBSCRIPTION require the REPLICATION privilege?", "yes_no", "requires",
     {"a": "CREATE SUBSCRIPTION", "b": "the REPLICATION privilege"}),
    ("what does pg_dump produce", "outgoing", "produces", {"x": "pg_dump"}),
    ("What contrasts with VACUUM?", "incoming", "contrasts_with", {"x": "VACUUM"}),
]  # fmt: skip


@pytest.mark.parametrize(("question", "family", "relation", "slots"), READINGS)
def test_each_relation_is_read_in_the_words_of_its_verb(question, family, relation, slots):
    """Copular verbs ask with is, others with does and the base form; longer verbs first."""
    reading = read_by_verbs(question, DOCUMENTATION)
    assert reading is not None
    assert (reading.family, reading.relation, reading.slots) == (family, relation, slots)


def test_the_questions_a_phrasing_writes_are_the_ones_it_reads():
    """Every relation's three questions read back as their family and relation."""
    for spec in DOCUMENTATION:
        p = phrasing_for(spec)
        assert p is not None
        for family, question in (
            ("outgoing", p.outgoing("Alpha")),
            ("incoming", p.incoming("Alpha")),
            ("yes_no", p.yes_no("Alpha", "Beta")),
        ):
            reading = read_by_verbs(question, DOCUMENTATION)
            assert reading is not None and (reading.family, reading.relation) == (family, spec.key)


@pytest.mark.parametrize(
    ("third", "base"),
    [("requires", "require"), ("applies", "apply"), ("uses", "use"), ("reaches", "reach"),
     ("has", "have"), ("contrasts", "contrast"), ("passes", "pass"), ("led", None),
     ("access", None), ("is", None)],
)  # fmt: skip
def test_a_verbs_base_form(third, base):
    """Third-person forms lose their s the English way; other words have none."""
    assert base_form(third) == base


def test_a_verb_of_another_shape_gets_no_phrasing():
    """A modal, a past tense or a bare copula is not read; its relation still walks
    connection questions."""
    for verb in ("can be used with", "led to", "is", "is 3rd in", "must precede"):
        assert phrasing_for(_spec("x", verb)) is None


def test_what_a_concept_uses_and_what_uses_it():
    """One hop along a relation that is not acyclic, each member cited."""
    out = _ask("What does autovacuum use?")
    assert (out.status, out.message) == ("answered", "Autovacuum uses: Statistics collector.")
    assert [c.name for c in out.concepts] == ["Statistics collector"]
    assert out.plan.walks == (Walk("uses", "out"),) and out.plan.hops == 1
    back = _ask("What uses the statistics collector?")
    assert back.message == "Each of these uses Statistics collector: Autovacuum, VACUUM."
    assert [len(p) for p in back.paths] == [1, 1]


def test_an_acyclic_relation_is_walked_to_the_end():
    """is_a is acyclic, so its closure is the answer: every kind above, every kind below."""
    up = _ask("What is B-tree index a kind of?")
    assert up.message == "B-tree index is a kind of: Index, Database object."
    assert up.plan.transitive is True
    down = _ask("What is a kind of database object?")
    assert [c.name for c in down.concepts] == ["Index", "B-tree index", "Hash index"]


def test_yes_no_in_the_graphs_own_words():
    """Yes with the edge cited; no in the verb's negative; a symmetric relation either way."""
    yes = _ask("Does CREATE SUBSCRIPTION require the REPLICATION privilege?")
    assert yes.yes is True
    assert yes.message.startswith(
        "Yes: CREATE SUBSCRIPTION requires REPLICATION privilege: CREATE SUBSCRIPTION"
    )
    no = _ask("Does wal_level require WAL?")
    assert no.yes is False
    assert no.message.startswith("No: wal_level does not require WAL in the graph now;")
    assert _ask("Is pg_basebackup an alternative to pg_dump?").yes is True
    kind = _ask("Is a B-tree a kind of database object?")
    assert kind.yes is True and len(kind.paths[0]) == 2


def test_nothing_found_is_said_in_the_verbs_words():
    """An empty answer says what was asked, in the graph now."""
    none_out = _ask("What does VACUUM produce?")
    assert (none_out.status, none_out.message) == (
        "no_path",
        "VACUUM does not produce anything in the graph now.",
    )
    assert _ask("What requires WAL?").message == "Nothing requires WAL in the graph now."
    assert _ask("What is Server a kind of?").message == (
        "Server is not a kind of anything in the graph now."
    )


def test_curriculum_questions_on_a_documentation_graph_are_refused_in_words():
    """No prerequisite relation: the answer says so and walks nothing."""
    before = _ask("What should I learn before autovacuum?")
    assert before.status == "no_path"
    assert "The graph holds no relation 'prerequisite', 'builds_on'" in before.message
    yes_no = _ask("Is autovacuum a prerequisite for VACUUM?")
    assert yes_no.status == "no_path"
    assert "The graph holds no relation 'prerequisite'." in yes_no.message
    used = _ask("What is autovacuum used for?")
    assert "The graph holds no relation 'applies_to'" in used.message


def test_an_unread_question_suggests_what_this_graph_can_answer():
    """The examples follow the vocabulary: the documentation graph's own verbs, never
    'What should I learn before X?'; the curriculum keeps its words."""
    words = _ask("Tell me a story about autovacuum").message
    assert "What should I learn before X?" not in words
    assert "'What does X require?'" in words and "'What is X a kind of?'" in words
    assert words.endswith("or 'How is X connected to Y?'.")
    assert no_family_words(CURRICULUM) == NO_FAMILY
    assert no_family_words(()) == (
        "I could not tell what the question asks. Ask, for example, 'How is X connected to Y?'."
    )


def test_the_graphs_own_verb_wins_over_the_phrasebooks_other_relation():
    """With both relations, "an alternative to" is alternative_to, not contrasts_with;
    where the phrasebook's reading walks the verb's relation, the phrasebook keeps it."""
    plan = plan_question(
        "Is pg_dump an alternative to pg_basebackup?",
        index=index_of(CONCEPTS),
        vocabulary=DOCUMENTATION,
    )
    assert (plan.family, plan.relation) == ("yes_no", "alternative_to")
    plan = plan_question(
        "What is WAL writer part of?", index=index_of(CONCEPTS), vocabulary=DOCUMENTATION
    )
    assert plan.family == "wholes"


@pytest.mark.parametrize(
    ("question", "family"),
    [
        ("What is tokenisation a prerequisite for?", "dependents"),
        ("What builds on tokenization?", "dependents"),
        ("What does low-rank adaptation require?", "prerequisites"),
        ("What is part of the transformer?", "parts"),
        ("What does fine-tuning contrast with?", "contrasts"),
        ("Does LoRA build on fine-tuning?", "yes_no"),
    ],
)
def test_the_curriculum_keeps_its_phrasebook_readings(question, family):
    """The curriculum's vocabulary holds the phrasebook's relations: its richer readings
    (dependents walk prerequisite out and builds_on in) stay."""
    answer, _ = ask(question, reader=curriculum(), index=curriculum_index())
    assert answer.plan.family == family
