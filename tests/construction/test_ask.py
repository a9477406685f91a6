"""The ask loop, offline: answers from a small curriculum graph held in memory."""

from __future__ import annotations

import json

from construction.ask.loop import ask
from tests.construction.ask_memory import curriculum, curriculum_index


def asked(question: str, **kwargs):
    reader = kwargs.pop("reader", None) or curriculum()
    answer, usage = ask(question, reader=reader, index=curriculum_index(), **kwargs)
    assert usage.calls == 0
    return answer


def test_prerequisites_are_listed_foundations_first_without_the_target():
    answer = asked("What should I learn before LoRA?")
    names = [c.name for c in answer.concepts]
    assert answer.status == "answered"
    assert "LoRA" not in names
    assert names.index("Tokenization") < names.index("Embeddings") < names.index("Fine-tuning")
    assert names.index("Fine-tuning") < names.index("Parameter-efficient fine-tuning")


def test_the_same_question_gives_the_same_json_twice():
    first = json.dumps(asked("How is RAG connected to embeddings?").as_json(), sort_keys=True)
    second = json.dumps(asked("How is RAG connected to embeddings?").as_json(), sort_keys=True)
    assert first == second
