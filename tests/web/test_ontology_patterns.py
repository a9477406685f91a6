"""The Ontology page's relation patterns: each relation's patterns ("open" where it has
none), a curator allows one, retires it and brings it back (each a curation log row);
refusals in words with nothing written; viewers see the section without the forms and
cannot post to it."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from kgreview.core.models import AuditEntry
from kgreview.graph import services
from kgreview.graph.models import RelationPattern
from tests.pages import client_for, flashes, page

pytestmark = pytest.mark.django_db


@pytest.fixture
def types():
    for key in ("setting", "process"):
        services.concept_type_create(key=key, label=key, acting_user=None)


def _section(response) -> str:
    return re.search(
        r'<section class="card" id="relation-patterns">(.*?)</section>', page(response), re.S
    ).group(1)


def _row(section: str, key: str) -> str:
    return re.search(rf'<tr id="patterns-{key}">(.*?)</tr>', section, re.S).group(1)


def test_each_relation_shows_its_patterns_or_open(f, types):
    services.pattern_create(
        relation_key="prerequisite",
        domain_key="setting",
        range_key="process",
        description="Settings shape processes.",
        acting_user=None,
    )
    section = _section(client_for(f, "viewer").get(reverse("ontology")))
    prerequisite = _row(section, "prerequisite")
    assert "<code>setting</code> → <code>process</code>" in prerequisite
    assert "Settings shape processes." in prerequisite
    assert "open: any types" not in prerequisite
    assert "open: any types" in _row(section, "related")
    assert "pattern-add-form" not in section and 'name="action"' not in section


def test_a_curator_allows_retires_and_brings_back_a_pattern_each_logged(f, types):
    curator = client_for(f, "curator")
    response = curator.post(
        reverse("pattern-add"),
        {"relation_key": "prerequisite", "domain_key": "setting", "range_key": "process"},
        follow=True,
    )
    assert ("success", '"prerequisite" now joins setting to process.') in flashes(response)
    pattern = RelationPattern.objects.get(relation__key="prerequisite")
    curator.post(reverse("pattern-action", args=[pattern.pk]), {"action": "retire"})
    pattern.refresh_from_db()
    assert not pattern.active
    section = _section(curator.get(reverse("ontology")))
    assert "open: any types" in _row(section, "prerequisite")
    curator.post(reverse("pattern-action", args=[pattern.pk]), {"action": "reactivate"})
    pattern.refresh_from_db()
    assert pattern.active
    assert list(
        AuditEntry.objects.filter(subject_type="relationpattern")
        .order_by("pk")
        .values_list("action", flat=True)
    ) == ["relation_pattern.create", "relation_pattern.retire", "relation_pattern.reactivate"]


def test_a_pattern_refused_is_said_in_words_and_nothing_is_written(f, types):
    curator = client_for(f, "curator")
    response = curator.post(
        reverse("pattern-add"),
        {"relation_key": "prerequisite", "domain_key": "gadget", "range_key": "process"},
        follow=True,
    )
    assert response.status_code == 200
    assert any('There is no concept type "gadget".' in text for _, text in flashes(response))
    assert not RelationPattern.objects.exists()


def test_a_viewer_cannot_allow_a_pattern(f, types):
    response = client_for(f, "viewer").post(
        reverse("pattern-add"),
        {"relation_key": "prerequisite", "domain_key": "setting", "range_key": "process"},
    )
    assert response.status_code == 403
    assert not RelationPattern.objects.exists()
