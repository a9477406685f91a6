"""The read API on a team's graph (the documentation vocabulary, no prerequisite): its own
relations listed, questions in its own words answered, and what needs the curriculum's
relations refused or answered in words, never an empty answer that reads as a fact."""

from __future__ import annotations

import pytest

from tests import doc_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def concepts(db):
    return doc_world.build()


def test_the_relations_are_the_graphs_own(concepts, agent):
    """Active: the nine of the documentation vocabulary; the seeded six's retired ones say so."""
    body = agent.get("/api/v1/relations").json()
    active = {r["key"] for r in body if r["active"]}
    assert {"is_a", "requires", "configures"} <= active
    assert "prerequisite" not in active


def test_a_question_in_the_graphs_words_is_answered(concepts, agent):
    """GET /api/v1/ask with "What is a kind of index?": the kinds, each hop cited."""
    body = agent.get("/api/v1/ask", {"q": "What is a kind of index?"}).json()
    assert body["status"] == "answered"
    assert body["plan"]["family"] == "incoming" and body["plan"]["relation"] == "is_a"
    assert set(body["answer"]["concepts"]) == {"B-tree index", "Hash index"}


def test_a_curriculum_question_is_answered_in_words(concepts, agent):
    """No prerequisite relation: no_path, and the message says why."""
    body = agent.get("/api/v1/ask", {"q": "What should I learn before autovacuum?"}).json()
    assert body["status"] == "no_path"
    assert "The graph holds no relation 'prerequisite', 'builds_on'" in body["message"]


def test_a_learning_path_without_an_ordering_relation_is_refused_in_words(concepts, agent):
    """prerequisite is retired here: a 400 that says so, not an empty path."""
    r = agent.get(f"/api/v1/concepts/{concepts['Autovacuum'].pk}/learning-path")
    assert r.status_code == 400
    assert r.json()["detail"].startswith("prerequisite is retired in this graph")
