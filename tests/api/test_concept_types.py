"""A concept's type in the API's answers: its key, or null, now and as of an instant."""

from __future__ import annotations

import pytest
from django.utils import timezone

from kgreview.graph import services

pytestmark = pytest.mark.django_db


def test_an_untyped_concept_answers_type_null(f, agent):
    """The starting vocabulary is empty: every concept answers ``"type": null``."""
    c = f.concept("VACUUM")
    assert agent.get(f"/api/v1/concepts/{c.pk}").json()["type"] is None


def test_a_concept_answers_the_type_it_had_as_of_an_instant(f, agent):
    """Now: its type; before the change: the type it had then (none)."""
    c = f.concept("VACUUM")
    services.concept_type_create(key="command", label="Command", acting_user=None)
    before = timezone.now()
    services.concept_set_type(concept=c, type_key="command", acting_user=None)
    url = f"/api/v1/concepts/{c.pk}"
    assert agent.get(url).json()["type"] == "command"
    assert agent.get(url, {"as_of": before.isoformat()}).json()["type"] is None
    assert agent.get(url, {"as_of": timezone.now().isoformat()}).json()["type"] == "command"
