"""Prerequisites through wholes (a whole's needs come before any part of it) and the
critic's words for every verdict, on the in-memory reader (ask_memory.py)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from construction.ask.loop import ask
from construction.ask.planner_offline import OfflinePlanner
from construction.ask.types import ConceptFact
from construction.types import LLMUsage
from tests.construction.ask_memory import (
    VOCABULARY,
    MemoryReader,
    curriculum,
    curriculum_index,
    edge,
    index_of,
)

AT = "2026-01-01T00:00:00+00:00"
LORA = "What should I learn before LoRA?"
# The sample curriculum's shape: LoRA has no needs of its own, it is only part of
# Parameter-efficient fine-tuning, which needs the Transformer and builds on Fine-tuning.
LORA_ALONE = {"without_edges": (112, 114), "extra": [(701, 6, "prerequisite", 10)]}


def asked(question: str, reader, index=None, **kwargs):
    answer, usage = ask(question, reader=reader, index=index or curriculum_index(), **kwargs)
    assert usage.calls == 0
    return answer


# A small part_of chain: Part is part of Middle, Middle of Top. Basics is a prerequisite
# for Middle; Math for Theory, Theory for Top.
SMALL = ((1, "Part"), (2, "Middle"), (3, "Top"), (4, "Basics"), (5, "Theory"), (6, "Math"))
SMALL_EDGES = (
    (11, 1, "part_of", 2),
    (12, 2, "part_of", 3),
    (13, 4, "prerequisite", 2),
    (14, 5, "prerequisite", 3),
    (15, 6, "prerequisite", 5),
)


def small(*, edges=SMALL_EDGES, retired=(), relations=VOCABULARY, reverse=False) -> MemoryReader:
    concepts = [ConceptFact(i, name, i not in retired) for i, name in SMALL]
    facts = [edge(*e) for e in edges]
    if reverse:
        concepts, facts = concepts[::-1], facts[::-1]
    return MemoryReader(concepts, facts, relations)


SMALL_INDEX = index_of([(i, name, ()) for i, name in SMALL])


def ask_small(reader: MemoryReader, **kwargs):
    return asked("What should I learn before Part?", reader, SMALL_INDEX, **kwargs)


def hops(path) -> list[tuple[str, int, int]]:
    return [(s.edge.relation, s.frm, s.to) for s in path]


# --- Prerequisites through wholes -------------------------------------------------------------


def test_a_part_with_no_needs_of_its_own_is_answered_with_what_its_whole_needs():
    answer = asked(LORA, curriculum(**LORA_ALONE))
    assert answer.status == "answered"
    assert answer.message == (
        "LoRA is part of Parameter-efficient fine-tuning; before it, learn (foundations "
        "first): Linear algebra, Tokenization, Embeddings, Attention, Transformer, Large "
        "language model, Pretraining, Fine-tuning."
    )
    names = [c.name for c in answer.concepts]
    assert "Parameter-efficient fine-tuning" not in names and "LoRA" not in names
    assert answer.iterations == 1
    assert "whose needs were not considered; refining." in answer.critique[0]
    assert answer.critique[-1].endswith("nothing further to find.")


def test_each_need_of_a_whole_cites_the_part_of_hop_then_the_chain_to_it():
    reader = curriculum(**LORA_ALONE)
    answer = asked(LORA, reader)
    held = {e.edge_id: e for e in reader._edges}
    for concept, path in zip(answer.concepts, answer.paths, strict=True):
        assert path[0].edge.edge_id == 207  # LoRA -[part_of]-> PEFT
        assert (path[0].frm, path[0].to) == (11, 10)
        assert path[-1].to == concept.concept_id
        for before, after in zip(path, path[1:], strict=False):
            assert before.to == after.frm
        assert all(held[s.edge.edge_id] == s.edge for s in path)
        assert all(s.edge.relation in ("prerequisite", "builds_on") for s in path[1:])
    transformer = dict(zip([c.name for c in answer.concepts], answer.paths, strict=True))
    assert hops(transformer["Transformer"]) == [("part_of", 11, 10), ("prerequisite", 10, 6)]


def test_the_merged_order_puts_foundations_first():
    answer = asked(LORA, curriculum(**LORA_ALONE))
    place = {c.concept_id: i for i, c in enumerate(answer.concepts)}
    for path in answer.paths:
        for step in path[1:]:  # step.frm needs step.to
            if step.frm in place:
                assert place[step.to] < place[step.frm]


def test_the_concept_s_own_needs_come_first_and_keep_their_own_chain():
    reader = curriculum(without_edges=(112,), extra=[(701, 6, "prerequisite", 10)])
    answer = asked(LORA, reader)
    assert answer.concepts[0].name == "Linear algebra"
    assert hops(answer.paths[0]) == [("prerequisite", 11, 20)]  # its own edge 114
    assert [c.name for c in answer.concepts].count("Linear algebra") == 1


def test_a_part_whose_whole_needs_nothing_says_so_honestly():
    answer = ask_small(small(edges=SMALL_EDGES[:1]))
    assert answer.status == "no_path" and answer.concepts == ()
    assert answer.message == (
        "Nothing needs to be learned before Part in the graph now; it is part of Middle, "
        "which needs nothing either."
    )
    assert answer.iterations == 1


def test_the_part_of_chain_is_climbed_one_hop_per_round_within_max_iterations():
    none = ask_small(small(), max_iterations=0)
    assert none.status == "no_path" and none.iterations == 0
    assert none.message == (
        "Nothing needs to be learned before Part in the graph now (Part is part of Middle, "
        "whose needs were not considered within the rounds allowed)."
    )
    one = ask_small(small(), max_iterations=1)
    assert one.iterations == 1 and [c.name for c in one.concepts] == ["Basics"]
    assert one.message == (
        "Part is part of Middle; before it, learn (foundations first): Basics (Part is also "
        "part of Top, whose needs were not considered within the rounds allowed)."
    )
    both = ask_small(small(), max_iterations=3)
    assert both.iterations == 2 and [c.name for c in both.concepts] == ["Basics", "Math", "Theory"]
    assert both.message.startswith("Part is part of Middle and Top; before it, learn")
    theory = both.paths[2]
    assert hops(theory) == [("part_of", 1, 2), ("part_of", 2, 3), ("prerequisite", 3, 5)]
    assert len(both.critique) == 3 and both.critique[-1].startswith("Round 2:")


def test_a_retired_whole_or_a_missing_part_of_relation_is_not_climbed():
    retired = ask_small(small(retired=(2,)))
    assert retired.message == "Nothing needs to be learned before Part in the graph now."
    assert retired.iterations == 0
    vocabulary = tuple(spec for spec in VOCABULARY if spec.key != "part_of")
    reader = small(relations=vocabulary)
    gone = ask_small(reader)
    assert gone.status == "no_path" and gone.iterations == 0
    assert gone.message == "Nothing needs to be learned before Part in the graph now."
    assert reader.calls.count("expand") == 2  # the own walk and the study order only


def test_a_whole_the_concept_already_needs_is_not_climbed_again():
    reader = curriculum()  # LoRA builds on PEFT and is part of it
    answer = asked(LORA, reader)
    assert answer.iterations == 0 and answer.message.startswith("Before LoRA, learn")


def test_only_prerequisites_climb_to_wholes():
    answer = ask_small(small(edges=SMALL_EDGES[:3]))
    assert [c.name for c in answer.concepts] == ["Basics"]
    dependents = asked("What depends on Basics?", small(), SMALL_INDEX)
    assert [c.name for c in dependents.concepts] == ["Middle"]


def test_answers_through_wholes_are_deterministic_whatever_the_storage_order():
    first = json.dumps(ask_small(small(), at=AT).as_json())
    assert first == json.dumps(ask_small(small(), at=AT).as_json())
    assert first == json.dumps(ask_small(small(reverse=True), at=AT).as_json())
    lora = json.dumps(asked(LORA, curriculum(**LORA_ALONE), at=AT).as_json())
    assert lora == json.dumps(asked(LORA, curriculum(**LORA_ALONE), at=AT).as_json())


def test_the_json_shape_is_unchanged_through_wholes():
    data = asked(LORA, curriculum(**LORA_ALONE)).as_json()
    assert set(data) == {
        "question", "status", "yes", "message", "as_of", "answer", "plan", "critique", "iterations",
    }  # fmt: skip
    assert set(data["answer"]) == {"concepts", "concept_ids", "paths"}
    step = data["answer"]["paths"][0][0]
    assert set(step) == {
        "source", "relation", "target", "edge", "quote", "source_slug", "revision", "from", "to",
    }  # fmt: skip
    assert (step["source"], step["relation"], step["target"]) == (
        "LoRA", "part_of", "Parameter-efficient fine-tuning",
    )  # fmt: skip
    assert data["plan"]["walks"] == [
        {"relation": "prerequisite", "direction": "in"},
        {"relation": "builds_on", "direction": "out"},
    ]


# --- The critic's words -----------------------------------------------------------------------


def test_a_complete_chain_is_said_in_words():
    answer = asked("How is RAG connected to embeddings?", curriculum())
    assert answer.critique == (
        "Round 0: complete: both ends reached in 2 hop(s): Retrieval-augmented generation "
        "<-[prerequisite]- Vector search <-[prerequisite]- Embeddings; every hop along the "
        "plan's relations, no retired concept on it.",
    )


def test_a_finished_set_walk_is_said_in_words():
    answer = asked("What is part of the transformer?", curriculum())
    assert answer.critique == (
        "Round 0: walked part_of (in) from Transformer: 4 concept(s) within 3 hop(s); "
        "nothing further to find.",
    )


@pytest.mark.parametrize(
    ("question", "why"),
    [
        ("What should I learn before quantum networking?", "the graph does not know"),
        ("Tell me a joke about LoRA.", "not read as one the graph can answer"),
    ],
)
def test_a_question_not_walked_says_why_in_the_critique(question, why):
    answer = asked(question, curriculum())
    assert answer.status == "not_understood"
    (said,) = answer.critique
    assert said.startswith("Round 0: nothing walked: ") and why in said


def test_a_pair_plan_with_one_concept_says_why_it_is_not_walked():
    plan, _ = OfflinePlanner().plan(
        "Is LoRA part of fine-tuning?", index=curriculum_index(), vocabulary=VOCABULARY
    )

    class Planner:
        name = "scripted"

        def plan(self, question, *, index, vocabulary):
            return replace(plan, concepts=plan.concepts[:1]), LLMUsage()

    answer = asked("x", curriculum(), planner=Planner())
    assert answer.critique == (
        "Round 0: nothing walked: a chain needs two concepts to join and the question names one.",
    )


@pytest.mark.parametrize(
    "question",
    [
        LORA,
        "What depends on tokenization?",
        "What does fine-tuning contrast with?",
        "What is RLHF used for?",
        "How is tokenization connected to RLHF?",
        "Is attention a prerequisite for positional encoding?",
        "Is LoRA a prerequisite for tokenization?",
        "What is attention part of?",
    ],
)
def test_every_verdict_says_something_in_words(question):
    answer = asked(question, curriculum(**LORA_ALONE))
    assert answer.critique
    assert all(r.startswith("Round ") and len(r) > 20 for r in answer.critique)
    rounds = {int(r.split()[1].rstrip(":")) for r in answer.critique}
    assert rounds == set(range(answer.iterations + 1))
