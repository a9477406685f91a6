"""``ask_graph`` with the openai planner and critic, against the scripted local
chat-completions server: the settings reach the client, a bad plan is retried, a critic
asks for the refinement that finds the missing hop, and a model that cannot be used is
answered in words."""

from __future__ import annotations

import pytest

from kgreview.graph.asking import ask_graph
from tests import ask_world
from tests.construction.fake_llm import fake_llm, reply, status

__all__ = ["fake_llm"]

pytestmark = pytest.mark.django_db


@pytest.fixture
def model(settings, fake_llm):
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = fake_llm.base_url
    settings.KG_LLM_MODEL = "fake-model"
    settings.KG_LLM_MAX_RETRIES = 0
    settings.KG_LLM_BACKOFF_BASE = 0.0
    settings.KG_LLM_BACKOFF_MAX = 0.0
    return fake_llm


@pytest.fixture
def world():
    return ask_world.build()


def plan(family, *concepts, relation=None, hops=None) -> dict:
    return {"family": family, "concepts": list(concepts), "relation": relation, "hops": hops}


def verdict(complete: bool, refine: bool, *reasons: str) -> dict:
    return {"complete": complete, "refine": refine, "reasons": list(reasons)}


def test_a_bad_plan_is_retried_and_the_answer_is_the_graphs(model, world):
    model.push(
        reply({"family": "recipes", "concepts": ["LoRA"]}),
        reply(plan("prerequisites", "LoRA")),
        reply(verdict(True, False, "The study order is complete.")),
    )
    answer = ask_graph("What do I need before LoRA?", provider="openai").as_json()
    assert answer["plan"]["planner"] == "openai"
    assert answer["answer"]["concepts"] == [
        "Tokenization",
        "Embeddings",
        "Attention",
        "Transformer",
        "Fine-tuning",
    ]
    assert len(model.requests) == 3
    assert model.requests[0]["model"] == "fake-model"
    assert "recipes" in model.requests[1]["messages"][-1]["content"]


def test_a_critic_asking_for_a_refinement_finds_the_missing_hop(model, world):
    """One hop is the model's bound; the critic asks to look further, and the second
    round joins RAG to Embeddings through vector search."""
    model.push(
        reply(plan("connection", "RAG", "Embeddings", hops=1)),
        reply(verdict(False, True, "Vector search sits between them; look one hop further.")),
        reply(verdict(True, False, "The chain is complete.")),
    )
    answer = ask_graph("How is RAG connected to embeddings?", provider="openai").as_json()
    assert answer["status"] == "answered"
    assert answer["iterations"] == 1
    assert [h["to"] for h in answer["answer"]["paths"][0]] == ["Vector search", "Embeddings"]
    assert any("look one hop further" in c for c in answer["critique"])


def test_a_model_that_cannot_be_used_is_answered_in_words(model, world):
    """A refused key ends the question as not understood, the plan saying why; nothing
    is walked and nothing is invented."""
    model.push(status(401, "bad key"))
    answer = ask_graph("What is RLHF used for?", provider="openai").as_json()
    assert answer["status"] == "not_understood"
    assert "the model could not be asked" in answer["plan"]["note"]
    assert answer["answer"]["concepts"] == []
