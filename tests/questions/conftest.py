"""Fixtures for the competency questions' tests: the ask world's curriculum, clients by
role, and questions made through the services."""

from __future__ import annotations

import pytest
from django.test import Client

from kgreview.questions.services import QuestionSpec, question_create


@pytest.fixture
def curator_user(f):
    return f.user("cura", role="curator")


@pytest.fixture
def curator(curator_user) -> Client:
    client = Client()
    client.force_login(curator_user)
    return client


@pytest.fixture
def ask(f, curator_user):
    """Make a question through the service: ``ask("text", "concepts", ["A"])``."""

    def make(text, expect="concepts", names=(), yes=None, note=""):
        return question_create(
            spec=QuestionSpec(text=text, expect=expect, names=tuple(names), yes=yes, note=note),
            acting_user=curator_user,
        )

    return make
