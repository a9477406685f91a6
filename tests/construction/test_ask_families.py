"""Every question family, each in several phrasings, read by the offline planner and
answered from the in-memory curriculum (tests/construction/ask_memory.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from construction.ask.answer import negated
from construction.ask.loop import ask
from construction.ask.phrases import by_cues, read
from tests.construction.ask_memory import VOCABULARY, curriculum, curriculum_index

LORA_NEEDS = {
    "Linear algebra",
    "Tokenization",
    "Embeddings",
    "Attention",
    "Transformer",
    "Large language model",
    "Pretraining",
    "Fine-tuning",
    "Parameter-efficient fine-tuning",
}
TOKENIZATION_FEEDS = {
    "Embeddings",
    "Vector search",
    "Vector databases",
    "Attention",
    "Positional encoding",
    "Transformer",
    "Pretraining",
    "Large language model",
    "Retrieval-augmented generation",
    "Fine-tuning",
    "Parameter-efficient fine-tuning",
    "LoRA",
    "RLHF",
}
TRANSFORMER_PARTS = {
    "Multi-head attention",
    "Self-attention",
    "Positional encoding",
    "Feed-forward network",
}

SETS = [
    # prerequisites
    ("What should I learn before LoRA?", "prerequisites", LORA_NEEDS),
    ("What do I need to know before studying LoRA?", "prerequisites", LORA_NEEDS),
    ("Prerequisites for LoRA", "prerequisites", LORA_NEEDS),
    ("What comes before LoRA?", "prerequisites", LORA_NEEDS),
    ("Give me a learning path to LoRA", "prerequisites", LORA_NEEDS),
    ("What must I understand first to learn LoRA?", "prerequisites", LORA_NEEDS),
    ("What are LoRA's prerequisites?", "prerequisites", LORA_NEEDS),
    ("What does low-rank adaptation require?", "prerequisites", LORA_NEEDS),
    # dependents
    (
        "Which topics are affected if my understanding of tokenization is wrong?",
        "dependents",
        TOKENIZATION_FEEDS,
    ),
    ("What depends on tokenization?", "dependents", TOKENIZATION_FEEDS),
    ("What builds on tokenization?", "dependents", TOKENIZATION_FEEDS),
    ("What can I learn after tokenization?", "dependents", TOKENIZATION_FEEDS),
    ("If I skip tokenization, what will I struggle with?", "dependents", TOKENIZATION_FEEDS),
    ("What is tokenisation a prerequisite for?", "dependents", TOKENIZATION_FEEDS),
    # parts
    ("What is part of the transformer?", "parts", TRANSFORMER_PARTS),
    ("What are the components of the transformer?", "parts", TRANSFORMER_PARTS),
    ("What does the transformer consist of?", "parts", TRANSFORMER_PARTS),
    ("What makes up a transformer?", "parts", TRANSFORMER_PARTS),
    ("Parts of the transformer", "parts", TRANSFORMER_PARTS),
    ("Please tell me: what is part of the transformer architecture?", "parts", TRANSFORMER_PARTS),
    # wholes
    ("What is self-attention part of?", "wholes", {"Multi-head attention", "Transformer"}),
    ("Where does self-attention belong?", "wholes", {"Multi-head attention", "Transformer"}),
    ("Self-attention is a component of what?", "wholes", {"Multi-head attention", "Transformer"}),
    ("What does self-attention belong to?", "wholes", {"Multi-head attention", "Transformer"}),
    ("Which models contain self-attention?", "wholes", {"Multi-head attention", "Transformer"}),
    ("Where does FFN fit in?", "wholes", {"Transformer"}),
    # contrasts
    (
        "What does fine-tuning contrast with?",
        "contrasts",
        {"Retrieval-augmented generation", "Prompt engineering"},
    ),
    (
        "What is fine-tuning an alternative to?",
        "contrasts",
        {"Retrieval-augmented generation", "Prompt engineering"},
    ),
    (
        "How does fine-tuning differ?",
        "contrasts",
        {"Retrieval-augmented generation", "Prompt engineering"},
    ),
    (
        "Alternatives to fine-tuning",
        "contrasts",
        {"Retrieval-augmented generation", "Prompt engineering"},
    ),
    (
        "Compare fine-tuning with what?",
        "contrasts",
        {"Retrieval-augmented generation", "Prompt engineering"},
    ),
    (
        "What can I use instead of finetuning?",
        "contrasts",
        {"Retrieval-augmented generation", "Prompt engineering"},
    ),
    # uses
    ("What is RLHF used for?", "uses", {"Alignment", "Large language model"}),
    ("What does RLHF apply to?", "uses", {"Alignment", "Large language model"}),
    ("Applications of RLHF", "uses", {"Alignment", "Large language model"}),
    ("Where is RLHF applied?", "uses", {"Alignment", "Large language model"}),
    ("What can RLHF be used for?", "uses", {"Alignment", "Large language model"}),
    (
        "What is reinforcement learning from human feedback good for?",
        "uses",
        {"Alignment", "Large language model"},
    ),
]

PAIRS = [
    # connection: (question, start, goal)
    ("How is RAG connected to embeddings?", "Retrieval-augmented generation", "Embeddings"),
    ("What links RAG and embeddings?", "Retrieval-augmented generation", "Embeddings"),
    ("How does RAG relate to embeddings?", "Retrieval-augmented generation", "Embeddings"),
    ("Path from RAG to embeddings", "Retrieval-augmented generation", "Embeddings"),
    (
        "What is the connection between RAG and embeddings?",
        "Retrieval-augmented generation",
        "Embeddings",
    ),
    ("How does fine-tuning differ from RAG?", "Fine-tuning", "Retrieval-augmented generation"),
    (
        "What's the relationship between the LLM and RAG?",
        "Large language model",
        "Retrieval-augmented generation",
    ),
]

YES_NO = [
    # (question, relation, start, goal, yes)
    (
        "Is attention a prerequisite for positional encoding?",
        "prerequisite",
        "Attention",
        "Positional encoding",
        True,
    ),
    (
        "Does positional encoding build on attention?",
        "builds_on",
        "Positional encoding",
        "Attention",
        True,
    ),
    ("Is LoRA part of fine-tuning?", "part_of", "LoRA", "Fine-tuning", True),
    ("Does RLHF apply to alignment?", "applies_to", "RLHF", "Alignment", True),
    ("Is DPO an alternative to RLHF?", "contrasts_with", "DPO", "RLHF", True),
    ("Does the transformer require attention?", "prerequisite", "Attention", "Transformer", True),
    (
        "Do I need to learn attention before transformers?",
        "prerequisite",
        "Attention",
        "Transformer",
        True,
    ),
    (
        "Does the transformer contain self-attention?",
        "part_of",
        "Self-attention",
        "Transformer",
        True,
    ),
    ("Is RLHF used for alignment?", "applies_to", "RLHF", "Alignment", True),
    ("Is RLHF a prerequisite for embeddings?", "prerequisite", "RLHF", "Embeddings", False),
    ("Is fine-tuning part of LoRA?", "part_of", "Fine-tuning", "LoRA", False),
    ("Does DPO apply to the LLM?", "applies_to", "DPO", "Large language model", False),
    (
        "Is RAG an alternative to DPO?",
        "contrasts_with",
        "Retrieval-augmented generation",
        "DPO",
        False,
    ),
    (
        "Does attention build on positional encoding?",
        "builds_on",
        "Attention",
        "Positional encoding",
        False,
    ),
]


def ask_curriculum(question: str):
    answer, _ = ask(question, reader=curriculum(), index=curriculum_index())
    return answer


@pytest.mark.parametrize(("question", "family", "expected"), SETS)
def test_set_questions_are_read_into_their_family_and_answered_with_the_set(
    question, family, expected
):
    answer = ask_curriculum(question)
    assert answer.plan.family == family
    assert answer.status == "answered"
    assert {c.name for c in answer.concepts} == expected
    assert len(answer.paths) == len(answer.concepts)
    for concept, path in zip(answer.concepts, answer.paths, strict=True):
        assert path[0].frm == answer.plan.concepts[0].concept_id
        assert path[-1].to == concept.concept_id


@pytest.mark.parametrize(("question", "start", "goal"), PAIRS)
def test_connection_questions_give_a_cited_path_between_the_two_concepts(question, start, goal):
    answer = ask_curriculum(question)
    assert answer.plan.family == "connection"
    assert [c.name for c in answer.plan.concepts] == [start, goal]
    assert answer.status == "answered"
    assert answer.yes is None
    (path,) = answer.paths
    assert answer.concepts[0].name == start and answer.concepts[-1].name == goal
    assert len(answer.concepts) == len(path) + 1
    assert all(step.edge.quote and step.edge.source_slug for step in path)


@pytest.mark.parametrize(("question", "relation", "start", "goal", "yes"), YES_NO)
def test_yes_no_questions_read_the_relation_and_answer_both_ways(
    question, relation, start, goal, yes
):
    answer = ask_curriculum(question)
    assert answer.plan.family == "yes_no"
    assert answer.plan.relation == relation
    assert [c.name for c in answer.plan.concepts] == [start, goal]
    assert answer.status == "answered"
    assert answer.yes is yes
    assert answer.message.startswith("Yes: " if yes else "No: ")
    assert bool(answer.paths) is yes


@pytest.mark.parametrize(
    "question",
    [
        "Tell me a joke",
        "What is the weather like?",
        "Transformer",
        "How many edges are there?",
        "Why?",
    ],
)
def test_a_question_of_no_family_is_not_understood_in_words(question):
    assert read(question) is None
    answer = ask_curriculum(question)
    assert answer.status == "not_understood"
    assert answer.plan.family is None
    assert "could not tell what the question asks" in answer.message
    assert answer.concepts == () and answer.paths == ()


@pytest.mark.parametrize(
    ("question", "family"),
    [
        ("Which topics come before LoRA?", "prerequisites"),
        ("Before learning about LoRA, what should I know?", "prerequisites"),
        ("Tokenization: what is downstream, what follows?", "dependents"),
        ("Transformer — which pieces, please", "parts"),
        ("Self-attention belongs where?", "wholes"),
        ("Fine-tuning: any alternatives around?", "contrasts"),
        ("RLHF, what purpose?", "uses"),
        ("RAG and embeddings: any link?", "connection"),
    ],
)
def test_wordings_no_rule_reads_are_read_by_their_cue_words(question, family):
    assert read(question) is None
    answer = ask_curriculum(question)
    assert answer.plan.family == family
    assert answer.plan.note.startswith(f"Read as a {family} question by its cue words.")
    assert answer.status in ("answered", "no_path")


def test_cue_words_inside_a_concept_name_do_not_choose_the_family():
    # "next" is a cue for dependents, but here it is a word of the name: once the name is
    # taken out nothing is left to read, while the same cue outside a name still counts.
    assert by_cues("What about Next-token prediction?", ["Next-token prediction"]) is None
    cued = by_cues("What comes next after Next-token prediction?", ["Next-token prediction"])
    assert cued is not None and cued.family == "dependents"


@pytest.mark.parametrize(
    ("verb", "said"),
    [
        ("is a prerequisite for", "is not a prerequisite for"),
        ("builds on", "does not build on"),
        ("applies to", "does not apply to"),
        ("contrasts with", "does not contrast with"),
        ("causes", "does not cause"),
        ("reaches", "does not reach"),
        ("can replace", "can not replace"),
    ],
)
def test_a_relation_verb_is_negated_in_words(verb, said):
    assert negated(verb) == said


def test_yes_no_answers_say_the_relation_with_the_vocabulary_verb():
    """A curator who renames a relation's verb sees the new words in the answers."""
    renamed = tuple(
        replace(spec, verb="is a component of") if spec.key == "part_of" else spec
        for spec in VOCABULARY
    )
    reader = curriculum(relations=renamed)
    yes, _ = ask(
        "Is self-attention part of the transformer?", reader=reader, index=curriculum_index()
    )
    no, _ = ask(
        "Is the transformer part of self-attention?", reader=reader, index=curriculum_index()
    )
    assert yes.yes is True and " is a component of " in yes.message
    assert no.yes is False and " is not a component of " in no.message
