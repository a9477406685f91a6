"""The database reader answers as the in-memory reader of the loop's own tests does:
core's sample curriculum (``tests/construction/ask_memory.py``) is written to the
database, and the same questions must give the same answers (names, paths, plan,
critique, rounds) through ``ask_graph`` as through ``MemoryReader``."""

from __future__ import annotations

import pytest
from django.utils import timezone

from construction.ask.loop import ask
from kgreview.graph.asking import ask_graph
from kgreview.graph.models import Concept
from tests.construction import ask_memory

pytestmark = pytest.mark.django_db

QUESTIONS = [
    "What should I learn before LoRA?",
    "What do I need to know before RLHF?",
    "Which topics are affected if my understanding of tokenization is wrong?",
    "What depends on embeddings?",
    "What is part of the transformer?",
    "What is multi-head attention part of?",
    "What does fine-tuning contrast with?",
    "What is RLHF used for?",
    "What is DPO used for?",
    "How is RAG connected to embeddings?",
    "How is LoRA connected to linear algebra?",
    "How is chunking related to the transformer?",
    "How is knowledge graph connected to agents?",
    "Is attention a prerequisite for positional encoding?",
    "Is embeddings a prerequisite for the transformer?",
    "Is self-attention part of the transformer?",
    "Does RLHF apply to alignment?",
    "What is quantum networking part of?",
]


@pytest.fixture
def curriculum(f):
    ids = {}
    for cid, name, aliases in ask_memory.CONCEPTS:
        ids[cid] = f.concept(name, aliases=aliases)
    for _eid, src, rel, dst in ask_memory.EDGES:
        f.edge(ids[src], ids[dst], rel)
    now = timezone.now()
    Concept.objects.filter(pk=ids[25].pk).update(status="retired", retired_at=now)
    return ids


def shape(answer: dict) -> dict:
    """An answer without what differs by construction: ids and the evidence's words."""
    plan = dict(answer["plan"])
    plan["concepts"] = [{k: v for k, v in c.items() if k != "concept"} for c in plan["concepts"]]
    return {
        "status": answer["status"],
        "yes": answer["yes"],
        "message": answer["message"],
        "concepts": answer["answer"]["concepts"],
        "paths": [
            [(h["source"], h["relation"], h["target"], h["from"], h["to"]) for h in path]
            for path in answer["answer"]["paths"]
        ],
        "plan": plan,
        "critique": answer["critique"],
        "iterations": answer["iterations"],
    }


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_database_answers_as_the_memory_reader_does(curriculum, question):
    memory, _ = ask(question, reader=ask_memory.curriculum(), index=ask_memory.curriculum_index())
    assert shape(ask_graph(question).as_json()) == shape(memory.as_json())


def test_a_retired_concept_is_not_a_name_questions_can_use(curriculum):
    """The one difference by design: the question index holds active concepts only (the
    memory index of core's tests knows every name), so a retired concept is unknown."""
    answer = ask_graph("What should I learn before word2vec?").as_json()
    assert answer["status"] == "not_understood"
    assert answer["message"] == "I do not know the concept 'word2vec'."
