"""The ask loop, offline: names, absences, refinement, retired concepts, instants,
determinism and the JSON shape, on the in-memory curriculum (ask_memory.py)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from construction.ask.critic import OfflineCritic
from construction.ask.loop import ask
from construction.ask.names import find_concepts
from construction.ask.paths import problems
from construction.ask.planner_offline import OfflinePlanner
from construction.ask.stages import refine, retrieve
from construction.ask.types import ConceptFact, Step, Verdict
from construction.types import LLMUsage
from tests.construction.ask_memory import (
    CONCEPTS,
    EDGES,
    VOCABULARY,
    MemoryReader,
    curriculum,
    curriculum_index,
    edge,
)

AT = "2026-01-01T00:00:00+00:00"


def asked(question: str, reader=None, **kwargs):
    answer, usage = ask(question, reader=reader or curriculum(), index=curriculum_index(), **kwargs)
    assert usage.calls == 0
    return answer


def plan_of(question: str, vocabulary=VOCABULARY):
    plan, _ = OfflinePlanner().plan(question, index=curriculum_index(), vocabulary=vocabulary)
    return plan


# --- Names ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "name", "match"),
    [
        ("What should I learn before PEFT?", "Parameter-efficient fine-tuning", "alias"),
        ("What is an LLM used for?", "Large language model", "alias"),
        ("What should I learn before the LLMs?", "Large language model", "alias"),
        ("What is part of the transformer architecture?", "Transformer", "alias"),
        ("What does FFN belong to?", "Feed-forward network", "alias"),
        ("What should I learn before Positional Encodings?", "Positional encoding", "exact"),
        ("What should I learn before positonal encoding?", "Positional encoding", "fuzzy"),
    ],
)
def test_concepts_are_found_by_name_alias_abbreviation_or_a_close_spelling(question, name, match):
    (found,) = plan_of(question).concepts
    assert (found.name, found.match) == (name, match)


def test_the_longest_name_wins_and_names_do_not_overlap():
    found, unknown = find_concepts("multi-head attention and attention", curriculum_index())
    assert [f.name for _, f in found] == ["Multi-head attention", "Attention"]
    assert unknown == []


def test_an_unknown_concept_is_said_in_words_and_nothing_is_walked():
    reader = curriculum()
    answer = asked("What should I learn before quantum networking?", reader=reader)
    assert answer.status == "not_understood"
    assert answer.message == "I do not know the concept 'quantum networking'."
    assert answer.plan.unknown == ("quantum networking",)
    assert answer.concepts == () and "expand" not in reader.calls


def test_a_known_and_an_unknown_name_in_one_question_name_the_unknown_one():
    answer = asked("How is RAG connected to quantum networking?")
    assert answer.status == "not_understood"
    assert [c.name for c in answer.plan.concepts] == ["Retrieval-augmented generation"]
    assert "'quantum networking'" in answer.message


def test_a_pair_question_naming_one_concept_says_it_needs_two():
    answer = asked("What links RAG?")
    assert answer.status == "not_understood"
    assert "needs two concepts" in answer.message


# --- Absences: exhausted versus the hop bound -------------------------------------------------


def test_concepts_in_separate_parts_of_the_graph_are_not_connected_as_a_checked_answer():
    answer = asked("How is RAG connected to knowledge graph?", at=AT)
    assert answer.status == "no_path"
    assert answer.message == (
        "Retrieval-augmented generation and Knowledge graph are not connected "
        f"in the graph as of {AT}."
    )
    assert answer.paths == () and answer.iterations == 0
    assert "the search is over" in answer.critique[-1]


def test_a_chain_longer_than_the_budget_is_no_path_within_the_hops_searched():
    answer = asked("How is tokenization connected to RLHF?", max_iterations=0)
    assert answer.status == "no_path"
    assert answer.message == "No path between Tokenization and RLHF within 3 hops in the graph now."
    assert "refine one hop" in answer.critique[-1]


def test_refinement_finds_a_chain_beyond_the_first_hop_bound_one_hop_per_round():
    answer = asked("How is tokenization connected to RLHF?")
    (path,) = answer.paths
    assert answer.status == "answered"
    assert len(path) == 5 > answer.plan.hops
    assert answer.iterations == 2
    assert len(answer.critique) == 3 and answer.critique[-1].startswith("Round 2: complete")


def test_a_yes_no_question_out_of_budget_says_no_within_the_hops_and_yes_with_more_rounds():
    question = "Is tokenization a prerequisite for LoRA?"
    short = asked(question)
    assert (short.status, short.yes, short.iterations) == ("answered", False, 3)
    assert short.message.startswith("No: no chain shows Tokenization is a prerequisite for LoRA")
    assert "within 6 hops" in short.message
    longer = asked(question, max_iterations=4)
    assert longer.yes is True and longer.iterations == 4
    assert [s.edge.relation for s in longer.paths[0]][-2:] == ["builds_on", "builds_on"]


def test_a_set_question_with_no_member_is_no_path_as_of_the_instant():
    answer = asked("What is attention part of?", at=AT)
    assert answer.status == "no_path"
    assert answer.message == f"Attention is part of nothing in the graph as of {AT}."


def test_a_walk_cut_at_the_concept_limit_says_there_may_be_more():
    answer = asked("What depends on tokenization?", limit=4)
    assert answer.status == "answered"
    assert "cut at the concept limit" in answer.message
    assert 0 < len(answer.concepts) < 13


def test_a_set_answer_is_cut_at_the_set_limit_while_a_connection_walks_further():
    """A set answer stops at ``set_limit`` concepts and says so; a connection between
    the same two ends still walks up to ``limit``."""
    cut = asked("What depends on tokenization?", set_limit=4)
    assert "cut at the concept limit" in cut.message
    assert 0 < len(cut.concepts) < 13
    assert len(asked("What depends on tokenization?").concepts) == 13
    joined = asked("How is tokenization connected to RLHF?", set_limit=4)
    assert joined.status == "answered" and joined.paths


# --- Retired concepts, retired edges and retired relations --------------------------------


def test_a_chain_through_a_retired_concept_is_rejected_and_routed_around():
    extra = [(701, 23, "related", 25), (702, 23, "related", 24)]
    question = "How is knowledge graph connected to embeddings?"
    if_active = asked(question, reader=curriculum(retired=(), extra=extra))
    assert [c.name for c in if_active.concepts] == ["Knowledge graph", "Word2vec", "Embeddings"]
    answer = asked(question, reader=curriculum(extra=extra))
    assert answer.status == "answered"
    names = [c.name for c in answer.concepts]
    assert names[0] == "Knowledge graph" and names[-1] == "Embeddings"
    assert "Word2vec" not in names and len(answer.paths[0]) == 4
    assert any("rejected a chain through 'Word2vec'" in r for r in answer.critique)
    assert answer.iterations == 1


def test_a_retired_concept_is_left_out_of_a_set_answer_and_said_so():
    answer = asked("What comes before embeddings?")
    assert {c.name for c in answer.concepts} == {"Linear algebra", "Tokenization"}
    assert any("left out 'Word2vec'" in r for r in answer.critique)


def test_the_critic_rejects_a_cited_step_through_a_retired_concept_or_against_the_plan():
    plan = plan_of("How is Word2vec connected to vector search?")
    w2v, emb, vs = 25, 2, 3
    path = (
        Step(edge(601, w2v, "prerequisite", emb), w2v, emb),
        Step(edge(103, emb, "prerequisite", vs), emb, vs),
    )
    facts = {
        emb: ConceptFact(emb, "Embeddings", active=False),
        vs: ConceptFact(vs, "Vector search"),
    }
    assert problems(plan, path, facts, start=w2v, goal=vs) == [
        "the chain passes through 'Embeddings', which is retired"
    ]
    yes_no = plan_of("Is Word2vec a prerequisite for vector search?")
    backwards = (Step(edge(103, emb, "prerequisite", vs), vs, emb),)
    assert (
        "not along the planned relations" in problems(yes_no, backwards, {}, start=vs, goal=emb)[0]
    )


def test_as_of_an_instant_before_and_after_an_edge_was_retired():
    question = "Is attention a prerequisite for positional encoding?"
    before = asked(question, reader=curriculum(), at="2025-06-01T00:00:00+00:00")
    after = asked(question, reader=curriculum(without_edges=(107,)), at=AT)
    assert before.yes is True and before.paths[0][0].edge.edge_id == 107
    assert after.yes is False and after.status == "answered"
    assert after.message == (
        f"No: Attention is not a prerequisite for Positional encoding in the graph as of {AT}; "
        "every chain was searched."
    )
    assert after.as_json()["as_of"] == AT


def test_a_relation_the_vocabulary_no_longer_holds_is_said_in_words_not_walked():
    vocabulary = tuple(spec for spec in VOCABULARY if spec.key != "part_of")
    reader = curriculum(relations=vocabulary)
    parts = asked("What is part of the transformer?", reader=reader)
    assert parts.status == "no_path"
    assert "'part_of'" in parts.message and "expand" not in reader.calls
    yes_no = asked("Is LoRA part of fine-tuning?", reader=reader)
    assert yes_no.status == "no_path" and yes_no.yes is None
    assert "no relation 'part_of'" in yes_no.message
    needs = plan_of(
        "What should I learn before LoRA?", tuple(s for s in VOCABULARY if s.key != "builds_on")
    )
    assert [w.relation for w in needs.walks] == ["prerequisite"] and "builds_on" in needs.note


# --- Symmetric relations, study order ---------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "expected"),
    [("What does RLHF contrast with?", ["DPO"]), ("What does DPO contrast with?", ["RLHF"])],
)
def test_symmetric_relations_are_walked_both_ways(question, expected):
    answer = asked(question)
    assert [c.name for c in answer.concepts] == expected
    assert answer.paths[0][0].edge.edge_id == 303


def test_prerequisites_come_in_a_study_order_and_other_sets_by_distance_then_name():
    needs = [c.name for c in asked("What should I learn before LoRA?").concepts]
    assert needs.index("Tokenization") < needs.index("Embeddings") < needs.index("Attention")
    assert needs.index("Fine-tuning") < needs.index("Parameter-efficient fine-tuning")
    parts = [c.name for c in asked("What is part of the transformer?").concepts]
    assert parts == [
        "Feed-forward network",
        "Multi-head attention",
        "Positional encoding",
        "Self-attention",
    ]


# --- Stages, determinism and the JSON shape -------------------------------------------------------


def test_refine_takes_one_hop_from_the_smaller_side_and_leaves_its_input_alone():
    reader = curriculum()
    plan = plan_of("How is tokenization connected to RLHF?")
    first = retrieve(plan, reader, 2000)
    verdict, _ = OfflineCritic().critique(plan, first, names={}, round=0)
    assert not verdict.complete and verdict.refine_from
    second = refine(plan, first, verdict, reader, 2000)
    assert (first.depth, second.depth) == (3, 4)
    assert len(second.from_start) + len(second.from_goal) > len(first.from_start) + len(
        first.from_goal
    )
    over = refine(plan, first, Verdict(False), reader, 2000)
    assert over.depth == 4  # a critic naming nothing still widens the smaller side


def test_the_same_question_on_the_same_graph_gives_the_same_json_whatever_the_storage_order():
    concepts = [ConceptFact(i, name, i != 25) for i, name, _ in reversed(CONCEPTS)]
    shuffled = MemoryReader(concepts, [edge(*e) for e in reversed(EDGES)])
    for question in (
        "How is RAG connected to embeddings?",
        "What should I learn before LoRA?",
        "What depends on tokenization?",
        "Is LoRA part of fine-tuning?",
    ):
        first = json.dumps(asked(question, at=AT).as_json())
        assert first == json.dumps(asked(question, at=AT).as_json())
        assert first == json.dumps(asked(question, reader=shuffled, at=AT).as_json())


def test_the_json_shape_holds_the_issue_s_keys():
    data = asked("How is RAG connected to embeddings?").as_json()
    assert set(data) == {
        "question", "status", "yes", "message", "as_of", "answer", "plan", "critique", "iterations",
    }  # fmt: skip
    assert set(data["answer"]) == {"concepts", "concept_ids", "paths"}
    assert data["answer"]["concepts"] == [
        "Retrieval-augmented generation",
        "Vector search",
        "Embeddings",
    ]
    step = data["answer"]["paths"][0][0]
    assert {"source", "relation", "target", "edge", "quote", "source_slug"} <= set(step)
    assert (step["source"], step["relation"], step["target"]) == (
        "Vector search", "prerequisite", "Retrieval-augmented generation",
    )  # fmt: skip
    assert (step["from"], step["to"]) == ("Retrieval-augmented generation", "Vector search")
    assert data["plan"]["family"] == "connection" and data["plan"]["hops"] == 3
    assert isinstance(data["critique"], list) and data["iterations"] == 0
    json.dumps(data)


def test_a_pair_plan_with_one_concept_from_any_planner_is_not_walked():
    plan = plan_of("Is LoRA part of fine-tuning?")
    one = replace(plan, concepts=plan.concepts[:1])

    class Planner:
        name = "scripted"

        def plan(self, question, *, index, vocabulary):
            return one, LLMUsage()

    reader = curriculum()
    answer, _ = ask("x", reader=reader, index=curriculum_index(), planner=Planner())
    assert answer.status == "not_understood" and "expand" not in reader.calls
    assert answer.message == "This question needs two concepts; I found only 'LoRA'."


@pytest.mark.parametrize(
    "question",
    [
        "What should I learn before LoRA?",
        "What depends on tokenization?",
        "What is part of the transformer?",
        "How is tokenization connected to RLHF?",
        "Is LoRA part of fine-tuning?",
        "Does the transformer contain self-attention?",
    ],
)
def test_every_cited_hop_is_an_edge_of_the_graph_along_the_plan(question):
    held = {e[0]: e for e in EDGES}
    facts = curriculum().concepts(i for i, _, _ in CONCEPTS)
    answer = asked(question)
    assert answer.paths
    for concept, path in zip(answer.concepts[-len(answer.paths) :], answer.paths, strict=True):
        start = answer.plan.concepts[0].concept_id
        assert problems(answer.plan, path, facts, start=start, goal=concept.concept_id) == []
        for step in path:
            _, source, relation, target = held[step.edge.edge_id]
            assert (step.edge.source_id, step.edge.relation, step.edge.target_id) == (
                source, relation, target,
            )  # fmt: skip
