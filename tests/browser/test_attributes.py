"""Attributes in a real browser: a curator declares one from the Ontology page's form and
sees it listed; a concept's page shows its value with the quote; neither page has a
critical or serious axe violation."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from kgreview.graph import services
from kgreview.graph.models import Attribute
from tests.browser.axe import axe_violations, report

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

TEXT = "The default value of work_mem is 4MB.\n"


@pytest.fixture
def work_mem(f):
    services.concept_type_create(key="setting", label="Setting", acting_user=None)
    concept = f.concept("work_mem")
    services.concept_set_type(concept=concept, type_key="setting", acting_user=None)
    attribute = services.attribute_create(
        type_key="setting",
        key="default_value",
        label="Default value",
        datatype="string",
        acting_user=None,
    )
    doc = f.source(slug="runtime", text=TEXT)
    services.attribute_value_set(
        concept=concept,
        attribute=attribute,
        value="4MB",
        evidence=f.evidence(doc.current_revision, TEXT.strip()),
        acting_user=None,
    )
    return concept


def test_a_curator_declares_an_attribute_on_the_ontology_page(page, live_server, login, work_mem):
    login("curator")
    page.goto(f"{live_server.url}/ontology/")
    section = page.locator("#attributes")
    expect(section.locator("td.attribute-key")).to_have_text(["default_value"])
    found = axe_violations(page)
    assert not found, report(found, "the Ontology page")
    section.locator("#attribute-add summary").click()
    section.locator("input[name=key]").fill("unit")
    section.locator("input[name=label]").fill("Unit")
    section.locator("select[name=datatype]").select_option("string")
    section.locator("#attribute-add button[type=submit]").click()
    expect(page.locator("#attributes td.attribute-key")).to_have_text(["default_value", "unit"])
    assert Attribute.objects.filter(key="unit", concept_type__key="setting").exists()


def test_a_concepts_page_shows_its_value_with_the_quote(page, live_server, login, work_mem):
    login("viewer")
    page.goto(f"{live_server.url}/concepts/{work_mem.pk}/")
    section = page.locator("#concept-attributes")
    expect(section.locator(".attribute-value")).to_have_text("4MB")
    expect(section.locator("q")).to_have_text("The default value of work_mem is 4MB.")
    found = axe_violations(page)
    assert not found, report(found, "a concept's page")
