"""Attributes on the pages: the Ontology page lists what each type declares, with a
curator's controls to declare, retire and reactivate (with and without htmx, refusals
in words, nothing written); a concept's page shows its values with quote and source,
now and as of an instant."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from kgreview.core.models import AuditEntry
from kgreview.graph import services
from kgreview.graph.models import Attribute
from tests.pages import client_for, flashes, page, reload

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}
TEXT = "The default value of work_mem is 4MB.\n"


@pytest.fixture
def curator(f) -> Client:
    return client_for(f, "curator")


@pytest.fixture
def viewer(f) -> Client:
    return client_for(f, "viewer")


@pytest.fixture
def setting():
    services.concept_type_create(key="object", label="Object", acting_user=None)
    services.concept_type_create(
        key="setting", label="Setting", parent_key="object", acting_user=None
    )
    return services.attribute_create(
        type_key="setting",
        key="default_value",
        label="Default value",
        datatype="string",
        description="What it is unless set.",
        acting_user=None,
    )


def section(response, element_id: str) -> str:
    return re.search(
        rf'<section class="card" id="{element_id}">(.*?)</section>', page(response), re.S
    ).group(1)


# --- the Ontology page ----------------------------------------------------------------


def test_the_ontology_lists_each_types_attributes(viewer, setting):
    text = section(viewer.get(reverse("ontology")), "attributes")
    assert "<code>default_value</code>" in text and "What it is unless set." in text
    assert "Text" in text and "active" in text
    assert reverse("attribute-add") not in text  # no controls for a viewer


def test_a_graph_without_attributes_says_so(viewer):
    assert "No type declares an attribute yet." in page(viewer.get(reverse("ontology")))


@pytest.mark.parametrize("headers", [{}, HX])
def test_a_curator_declares_an_attribute(curator, setting, headers):
    assert reverse("attribute-add") in page(curator.get(reverse("ontology")))
    response = curator.post(
        reverse("attribute-add"),
        {"type_key": "object", "key": "documented_at", "label": "Documented at", "datatype": "uri"},
        headers=headers,
        follow=True,
    )
    assert ("success", '"documented_at" declared on "object".') in flashes(response)
    made = Attribute.objects.get(key="documented_at")
    assert (made.concept_type.key, made.datatype) == ("object", "uri")
    assert AuditEntry.objects.filter(action="attribute.create", user__isnull=False).count() == 1


@pytest.mark.parametrize("headers", [{}, HX])
def test_a_refused_declaration_is_said_in_words_and_writes_nothing(curator, setting, headers):
    response = curator.post(
        reverse("attribute-add"),
        {"type_key": "setting", "key": "size", "label": "Size", "datatype": "colour"},
        headers=headers,
        follow=True,
    )
    assert flashes(response) == [
        (
            "error",
            '"colour" is not an attribute datatype: use one of string, integer, decimal, '
            "boolean, date, uri.",
        )
    ]
    response = curator.post(
        reverse("attribute-add"),
        {"type_key": "setting", "key": "default_value", "label": "Again", "datatype": "string"},
        headers=headers,
        follow=True,
    )
    assert flashes(response) == [
        ("error", 'The concept type "setting" already declares the attribute "default_value".')
    ]
    assert Attribute.objects.count() == 1


@pytest.mark.parametrize("headers", [{}, HX])
def test_a_curator_retires_and_reactivates_an_attribute(curator, setting, headers):
    url = reverse("attribute-action", args=[setting.pk])
    response = curator.post(url, {"action": "retire"}, headers=headers, follow=True)
    assert (
        "success",
        '"default_value" of "setting" retired; the values held keep their history.',
    ) in flashes(response)
    assert not reload(setting).active
    assert "retired" in section(response, "attributes")
    response = curator.post(url, {"action": "retire"}, headers=headers, follow=True)
    assert flashes(response) == [
        ("error", 'The attribute "default_value" of "setting" is already retired.')
    ]
    response = curator.post(url, {"action": "reactivate"}, headers=headers, follow=True)
    assert ("success", '"default_value" of "setting" is active again.') in flashes(response)
    assert reload(setting).active


def test_a_viewer_cannot_change_attributes_and_a_bad_action_is_said(curator, viewer, setting):
    url = reverse("attribute-action", args=[setting.pk])
    assert viewer.post(url, {"action": "retire"}).status_code == 403
    assert viewer.post(reverse("attribute-add"), {"key": "x"}).status_code == 403
    response = curator.post(url, {"action": "burn"}, follow=True)
    assert flashes(response) == [("error", "Choose retire or reactivate.")]
    assert reload(setting).active
    assert (
        curator.post(reverse("attribute-action", args=[10**6]), {"action": "retire"}).status_code
        == 404
    )


# --- a concept's page -------------------------------------------------------------------


@pytest.fixture
def work_mem(f, setting):
    concept = f.concept("work_mem")
    services.concept_set_type(concept=concept, type_key="setting", acting_user=None)
    return concept


def test_a_concepts_page_shows_its_value_quote_and_source(viewer, work_mem, setting, f):
    doc = f.source(slug="runtime", text=TEXT)
    services.attribute_value_set(
        concept=work_mem,
        attribute=setting,
        value="4MB",
        evidence=f.evidence(doc.current_revision, TEXT.strip()),
        acting_user=None,
    )
    text = section(viewer.get(reverse("concept-detail", args=[work_mem.pk])), "concept-attributes")
    assert '<code class="attribute-value">4MB</code>' in text
    assert "<q>The default value of work_mem is 4MB.</q>" in text
    assert f"{reverse('source-detail', args=['runtime'])}?rev=1&amp;at=0" in text


def test_a_declared_attribute_without_a_value_says_so(viewer, work_mem):
    text = section(viewer.get(reverse("concept-detail", args=[work_mem.pk])), "concept-attributes")
    assert "Default value" in text and "no value" in text


def test_an_untyped_concept_has_no_attributes(viewer, f):
    concept = f.concept("VACUUM")
    text = section(viewer.get(reverse("concept-detail", args=[concept.pk])), "concept-attributes")
    assert "Untyped: a type declares attributes." in text


def test_as_of_shows_the_value_held_then(viewer, work_mem, setting):
    services.attribute_value_set(concept=work_mem, attribute=setting, value="4MB", acting_user=None)
    middle = timezone.now()
    services.attribute_value_set(concept=work_mem, attribute=setting, value="8MB", acting_user=None)
    url = reverse("concept-detail", args=[work_mem.pk])
    assert '<code class="attribute-value">8MB</code>' in section(
        viewer.get(url), "concept-attributes"
    )
    then = section(viewer.get(url, {"as_of": middle.isoformat()}), "concept-attributes")
    assert '<code class="attribute-value">4MB</code>' in then and "8MB" not in then
    assert "Values held on" in then


def test_an_as_of_that_is_no_instant_is_refused_in_words(viewer, work_mem):
    response = viewer.get(reverse("concept-detail", args=[work_mem.pk]), {"as_of": "yesterday"})
    assert response.status_code == 400
    assert "&quot;yesterday&quot; is not a date or time" in page(response)


def test_a_decided_value_links_to_its_decision(viewer, work_mem, setting, f):
    from kgreview.review.decide import decisions
    from kgreview.review.services import proposal_create

    doc = f.source(slug="runtime", text=TEXT)
    p = proposal_create(
        kind="set_attribute",
        payload={
            "concept": {"name": "work_mem", "concept_id": work_mem.pk, "match": "exact"},
            "type_key": "setting",
            "attribute_key": "default_value",
            "value": "4MB",
        },
        confidence=0.8,
        evidence=f.evidence(doc.current_revision, TEXT.strip()),
        document=doc,
    )
    decisions.proposal_accept(proposal_id=p.pk, acting_user=f.user("rita", role="reviewer"))
    text = section(viewer.get(reverse("concept-detail", args=[work_mem.pk])), "concept-attributes")
    assert f'<a href="{reverse("review:proposal", args=[p.pk])}">decided by rita</a>' in text
