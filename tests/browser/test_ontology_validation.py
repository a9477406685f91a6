"""The Ontology page's validation in a real browser: "Validate now" swaps the section for
the report (htmx), its concept link opens the concept, and the page passes axe."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.utils import timezone
from playwright.sync_api import expect

from kgreview.graph import services
from kgreview.graph.models import ConceptType, Edge, RelationPattern, RelationType
from tests.browser.axe import axe_violations, report

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]


def test_validate_now_lists_the_breaker_and_links_its_concept(page, live_server, login, f):
    login("reviewer")
    with transaction.atomic():
        for key in ("command", "setting"):
            services.concept_type_create(key=key, label=key.title(), acting_user=None)
        applies = RelationType.objects.get(key="applies_to")
        RelationPattern.objects.create(
            relation=applies,
            domain=ConceptType.objects.get(key="command"),
            range=ConceptType.objects.get(key="setting"),
        )
        src = services.concept_set_type(
            concept=f.concept("work_mem"), type_key="setting", acting_user=None
        )
        dst = services.concept_set_type(
            concept=f.concept("VACUUM"), type_key="command", acting_user=None
        )
        now = timezone.now()
        Edge.objects.create(  # past the services, as a bad import would write it
            source=src,
            target=dst,
            relation=applies,
            confidence=0.5,
            reason="Planted.",
            valid_at=now,
            recorded_at=now,
        )

    page.goto(f"{live_server.url}/ontology/")
    section = page.locator("#ontology-validation")
    expect(section.locator("#validation-report")).to_have_count(0)
    section.get_by_role("button", name="Validate now").click()
    report_ = page.locator("#validation-report")
    expect(report_).to_contain_text("1 violation")
    expect(report_).to_contain_text("“work_mem” applies to “VACUUM” breaks the relation's patterns")
    expect(page).to_have_url(f"{live_server.url}/ontology/")  # swapped in place
    found = axe_violations(page)
    assert not found, report(found, "the ontology's validation report")

    report_.get_by_role("link", name=f"#{src.pk}").click()
    page.wait_for_url(f"{live_server.url}/concepts/{src.pk}/")
    expect(page.locator("h1")).to_contain_text("work_mem")
