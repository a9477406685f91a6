"""The Ontology page's validation section: a "Validate now" button (htmx, or a page of its
own without it) that lists what breaks the ontology's shapes, each linked to its concept."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from kgreview.graph import services
from kgreview.graph.models import ConceptType, Edge, RelationPattern, RelationType
from tests.pages import HOSTILE, client_for, page

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


@pytest.fixture
def viewer(f) -> Client:
    return client_for(f, "viewer")


@pytest.fixture
def breaker(f):
    """A command applies to settings only; a setting applies to a command, written past
    the services as a bad import would."""
    for key in ("command", "setting"):
        services.concept_type_create(key=key, label=key.title(), acting_user=None)
    RelationPattern.objects.create(
        relation=RelationType.objects.get(key="applies_to"),
        domain=ConceptType.objects.get(key="command"),
        range=ConceptType.objects.get(key="setting"),
    )
    src = services.concept_set_type(
        concept=f.concept(HOSTILE), type_key="setting", acting_user=None
    )
    dst = services.concept_set_type(
        concept=f.concept("VACUUM"), type_key="command", acting_user=None
    )
    now = timezone.now()
    Edge.objects.create(
        source=src,
        target=dst,
        relation=RelationType.objects.get(key="applies_to"),
        confidence=0.5,
        reason="Planted.",
        valid_at=now,
        recorded_at=now,
    )
    return src


def test_the_ontology_page_has_the_section_with_its_button_and_no_report_yet(viewer, breaker):
    """The report costs seconds at scale: the page shows the button, not the report."""
    body = page(viewer.get(reverse("ontology")))
    assert 'id="ontology-validation"' in body and "Validate now" in body
    assert f'hx-get="{reverse("ontology-validation")}"' in body
    assert 'id="validation-report"' not in body


def test_validate_now_with_htmx_answers_the_section_listing_the_breaker(viewer, breaker):
    """The fragment names the concepts (escaped) and links the focus concept's page."""
    response = viewer.get(reverse("ontology-validation"), headers=HX)
    body = page(response)
    assert response.status_code == 200
    assert body.lstrip().startswith('<section class="card" id="ontology-validation">')
    assert "1 violation" in body and "violation-pattern" in body
    assert "<script>" not in body and "&lt;script&gt;" in body
    assert "“VACUUM”" in body
    assert f'href="{reverse("concept-detail", args=[breaker.pk])}"' in body


def test_validate_now_without_htmx_is_a_page_of_its_own(viewer, breaker):
    body = page(viewer.get(reverse("ontology-validation")))
    assert "<h1>Ontology validation</h1>" in body and "1 violation" in body


def test_a_clean_graph_is_said_to_conform(viewer, f):
    body = page(viewer.get(reverse("ontology-validation"), headers=HX))
    assert 'id="validation-conforms"' in body


def test_a_bad_instant_is_refused_in_words_above_the_button(viewer):
    response = viewer.get(reverse("ontology-validation"), {"as_of": "soon"}, headers=HX)
    assert response.status_code == 400
    assert "is not a date or time" in page(response)


def test_as_of_before_the_breaker_conforms(viewer, breaker):
    body = page(viewer.get(reverse("ontology-validation"), {"as_of": "2001-01-01"}, headers=HX))
    assert 'id="validation-conforms"' in body


def test_signed_out_visitors_are_sent_to_sign_in(client):
    response = client.get(reverse("ontology-validation"))
    assert response.status_code == 302 and "login" in response["Location"]


def test_a_long_report_lists_the_first_two_hundred_and_says_how_many(viewer, f):
    """Types exist and 203 concepts have none: the page lists 200 and points to the rest."""
    services.concept_type_create(key="command", label="Command", acting_user=None)
    for i in range(203):
        f.concept(f"Stray {i}")
    body = page(viewer.get(reverse("ontology-validation"), headers=HX))
    assert "203 violations" in body
    assert body.count('class="violation violation-typed"') == 200
    assert "gives all 203" in body
