"""GET /api/v1/ask: a question in words, answered from the graph with cited hops; bad
input is a 4xx in words, never a 500; walks spend the heavy rate."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from kgreview.api import throttle
from kgreview.graph import services
from tests import ask_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(db):
    return ask_world.build()


@pytest.fixture(autouse=True)
def fresh_counts():
    throttle.reset()
    yield
    throttle.reset()


def test_a_connection_is_answered_with_its_cited_path(world, agent):
    r = agent.get("/api/v1/ask", {"q": "How is RAG connected to embeddings?"})
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "answered" and body["yes"] is None and body["as_of"] is None
    hops = body["answer"]["paths"][0]
    assert [(h["from"], h["to"]) for h in hops] == [
        ("RAG", "Vector search"),
        ("Vector search", "Embeddings"),
    ]
    assert hops[0] == {
        "source": "RAG",
        "relation": "builds_on",
        "target": "Vector search",
        "edge": world.edge("RAG", "builds_on", "Vector search").pk,
        "quote": "RAG builds on vector search.",
        "source_slug": "transformers-and-friends",
        "revision": 1,
        "from": "RAG",
        "to": "Vector search",
    }
    assert body["plan"]["family"] == "connection" and body["plan"]["planner"] == "offline"
    assert isinstance(body["critique"], list) and body["iterations"] >= 0


def test_set_and_yes_no_questions_keep_the_stable_shape(world, agent):
    parts = agent.get("/api/v1/ask", {"q": "What is part of the transformer?"}).json()
    assert parts["answer"]["concepts"] == ["Attention", "Positional encoding"]
    assert parts["answer"]["concept_ids"] == [
        world.id("Attention"),
        world.id("Positional encoding"),
    ]
    no = agent.get("/api/v1/ask", {"q": "Is attention a prerequisite for positional encoding?"})
    assert no.json()["yes"] is False
    assert set(no.json()) == {
        "question",
        "status",
        "yes",
        "message",
        "as_of",
        "answer",
        "plan",
        "critique",
        "iterations",
    }


def test_unknown_concepts_are_answered_not_invented(world, agent):
    body = agent.get("/api/v1/ask", {"q": "What is quantum networking part of?"}).json()
    assert body["status"] == "not_understood"
    assert body["message"] == "I do not know the concept 'quantum networking'."


def test_as_of_answers_from_the_graph_before_an_edge_was_retired(world, agent):
    ask_world.backdate(hours=2)
    then = (timezone.now() - timedelta(hours=1)).isoformat()
    services.edge_invalidate(
        edge=world.edge("RAG", "builds_on", "Vector search"), reason="Wrong.", acting_user=None
    )
    q = "How is RAG connected to embeddings?"
    before = agent.get("/api/v1/ask", {"q": q, "as_of": then}).json()
    after = agent.get("/api/v1/ask", {"q": q}).json()
    assert before["status"] == "answered" and before["as_of"]
    assert after["status"] == "no_path"


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({}, "the question is empty"),
        ({"q": "   "}, "the question is empty"),
        ({"q": "Why? " * 150}, "at most 500 characters"),
        ({"q": "What is RLHF used for?", "provider": "oracle"}, "offline or openai"),
        (
            {"q": "What is RLHF used for?", "as_of": "0001-01-01T00:00:00+23:00"},
            "outside the range",
        ),
    ],
)
def test_bad_input_is_a_400_in_words(world, agent, params, words):
    r = agent.get("/api/v1/ask", params)
    assert r.status_code == 400
    assert words in r.json()["detail"]


def test_a_malformed_instant_is_refused_not_crashed(world, agent):
    r = agent.get("/api/v1/ask", {"q": "What is RLHF used for?", "as_of": "last tuesday"})
    assert r.status_code == 422 and r.json()["detail"]


def test_asking_spends_the_heavy_rate(world, agent, settings):
    settings.KG_API_RATE = "100/min"
    settings.KG_API_HEAVY_RATE = "2/min"
    q = {"q": "What is RLHF used for?"}
    assert [agent.get("/api/v1/ask", q).status_code for _ in range(2)] == [200, 200]
    assert agent.get("/api/v1/ask", q).status_code == 429
    assert agent.get("/api/v1/relations").status_code == 200


def test_asking_needs_credentials(world, client):
    assert client.get("/api/v1/ask", {"q": "What is RLHF used for?"}).status_code == 401


# --- Who chooses the provider, and the budget -------------------------------------------------


@pytest.fixture
def chosen(monkeypatch):
    """Which provider each ask was planned with; the offline pair answers either way, so
    no model is ever called."""
    from kgreview.graph import asking

    seen: list[str] = []
    offline = asking.planner_and_critic

    def record(provider):
        seen.append(provider)
        return offline("offline")

    monkeypatch.setattr(asking, "planner_and_critic", record)
    return seen


def test_a_viewer_choosing_the_model_provider_is_refused_in_words(world, agent, chosen):
    r = agent.get("/api/v1/ask", {"q": "How is RAG connected to embeddings?", "provider": "openai"})
    assert r.status_code == 403
    assert r.json()["detail"].startswith("Only curators may choose the provider per request")
    assert "nothing was asked" in r.json()["detail"]
    assert chosen == []


def test_a_viewer_may_name_the_server_s_own_provider(world, agent, chosen):
    question = {"q": "How is RAG connected to embeddings?", "provider": "offline"}
    r = agent.get("/api/v1/ask", question)
    assert r.status_code == 200 and chosen == ["offline"]


def test_a_curator_may_choose_the_model_provider(world, f, chosen):
    curator = Client()
    curator.force_login(f.user(role="curator"))
    r = curator.get(
        "/api/v1/ask", {"q": "How is RAG connected to embeddings?", "provider": "openai"}
    )
    assert r.status_code == 200 and chosen == ["openai"]


def test_an_ask_is_given_the_token_budget_of_the_setting(world, agent, settings, monkeypatch):
    from construction.ask import loop

    settings.KG_ASK_MAX_TOKENS = 1234
    budgets: list[int] = []
    real = loop.ask

    def spy(*args, **kwargs):
        budgets.append(kwargs["max_tokens"])
        return real(*args, **kwargs)

    monkeypatch.setattr(loop, "ask", spy)
    assert agent.get("/api/v1/ask", {"q": "How is RAG connected to embeddings?"}).status_code == 200
    assert budgets == [1234]
