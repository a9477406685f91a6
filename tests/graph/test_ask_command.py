"""manage.py ask: the answer in text (message, concepts, hops with quote and source, the
plan and the critique) or the stable JSON; bad input is a CommandError in words."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from kgreview.graph import services
from tests import ask_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return ask_world.build()


def run(*args) -> str:
    out = StringIO()
    call_command("ask", *args, stdout=out)
    return out.getvalue()


def test_text_shows_the_message_each_hop_with_its_evidence_the_plan_and_the_critique(world):
    text = run("How is RAG connected to embeddings?")
    assert text.startswith("RAG is connected to Embeddings")
    assert "RAG —builds_on→ Vector search" in text
    assert (
        "“Embeddings are a prerequisite for vector search.” — transformers-and-friends r1" in text
    )
    assert "Plan (offline): family connection; concepts RAG → RAG (exact)" in text
    assert "Critique (" in text


def test_text_lists_a_set_answer_in_order(world):
    text = run("What should I learn before LoRA?")
    assert "Concepts:\n  1. Tokenization\n  2. Embeddings" in text


def test_json_is_the_answers_stable_shape(world):
    body = json.loads(run("What is RLHF used for?", "--json"))
    assert body["answer"]["concepts"] == ["Alignment"]
    assert body["status"] == "answered" and body["plan"]["family"] == "uses"


def test_as_of_answers_from_the_past(world):
    ask_world.backdate(hours=2)
    then = (timezone.now() - timedelta(hours=1)).isoformat()
    services.edge_invalidate(
        edge=world.edge("RLHF", "applies_to", "Alignment"), reason="Wrong.", acting_user=None
    )
    assert json.loads(run("What is RLHF used for?", "--json", "--as-of", then))["answer"][
        "concepts"
    ] == ["Alignment"]
    assert json.loads(run("What is RLHF used for?", "--json"))["status"] == "no_path"


@pytest.mark.parametrize(
    ("args", "words"),
    [(("",), "empty"), (("What is RLHF used for?", "--as-of", "soon"), "not a date")],
)
def test_bad_input_is_refused_in_words(world, args, words):
    with pytest.raises(CommandError, match=words):
        run(*args)
