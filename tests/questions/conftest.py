"""Fixtures for the competency questions' tests: the ask world's curriculum, clients by
role, and questions made through the services."""

from __future__ import annotations

import pytest

from kgreview.questions.services import QuestionSpec, question_create


@pytest.fixture
def ask(f, curator_user):
    """Make a question through the service: ``ask("text", "concepts", ["A"])``."""

    def make(text, expect="concepts", names=(), yes=None, note=""):
        return question_create(
            spec=QuestionSpec(text=text, expect=expect, names=tuple(names), yes=yes, note=note),
            acting_user=curator_user,
        )

    return make


@pytest.fixture
def world(db):
    """The ask tests' curriculum (tests/ask_world.py): one lesson, every edge quoted."""
    from tests import ask_world

    return ask_world.build()


MISSING_LINK = (
    "# Compressing models\n\n"
    "Quantization stores weights in fewer bits. "
    "Embeddings are a prerequisite for quantization.\n"
)


@pytest.fixture
def gap_lesson(f, world):
    """A lesson stating a link the graph lacks (Embeddings before Quantization), imported
    but never constructed: only a gap search can find it."""
    return f.source(slug="compressing-models", text=MISSING_LINK)
