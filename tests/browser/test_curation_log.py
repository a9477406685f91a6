"""The curation log in a real browser: a curator reaches it from the nav, sees the row a
curator's change wrote (linked to its subject), filters it with the keyboard (htmx
swaps the results), and the page passes axe."""

from __future__ import annotations

import re

import pytest
from django.db import transaction
from playwright.sync_api import expect

from kgreview.core import audit
from kgreview.graph.models import RelationType
from tests.browser.axe import axe_violations, report

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]


LAPTOP = {"width": 1366, "height": 768}


def test_a_curator_reads_and_filters_the_curation_log(page, live_server, login, f, shot):
    page.set_viewport_size(LAPTOP)
    login("curator")
    relation = RelationType.objects.get(key="contrasts_with")
    with transaction.atomic():
        audit.record(
            acting_user=f.user("cora", role="curator"),
            action="relation_type.retire",
            subject=relation,
            summary="Retired the relation type “contrasts_with”.",
            before={"active": True},
            after={"active": False},
        )
        audit.record(
            acting_user=None,
            action="schedule.pause",
            subject=("schedule", 4),
            summary="Paused the nightly reader.",
        )

    page.goto(f"{live_server.url}/review/decisions/")
    expect(page.locator(".topbar")).not_to_have_class(
        re.compile(r"\bnav-folded\b")
    )  # the link fits the bar
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Curation log").click()
    page.wait_for_url(f"{live_server.url}/curation/")
    log = page.locator("#curation-log")
    retired = log.locator("tbody tr", has_text="Retired the relation type")
    expect(retired).to_contain_text("cora")
    expect(retired.locator("del")).to_have_text("true")
    expect(retired.locator("ins")).to_have_text("false")
    expect(retired.get_by_role("link")).to_have_attribute(
        "href", f"/ontology/#relation-{relation.pk}"
    )
    expect(log.locator("tbody tr", has_text="Paused the nightly reader.")).to_contain_text("system")

    found = axe_violations(page)
    assert not found, report(found, "the curation log")
    shot("curation-log")

    # Keyboard only: focus the "Who" filter and choose cora; htmx swaps the results.
    who = page.get_by_label("Who")
    who.focus()
    expect(who).to_be_focused()
    who.select_option("cora")
    expect(log.locator("tbody tr")).to_have_count(1)
    expect(log).to_contain_text("Retired the relation type")
    expect(page).to_have_url(f"{live_server.url}/curation/?action=&user=cora")
    found = axe_violations(page)
    assert not found, report(found, "the filtered curation log")

    retired.get_by_role("link").press("Enter")
    page.wait_for_url(f"{live_server.url}/ontology/#relation-{relation.pk}")
    expect(page.locator(f"#relation-{relation.pk}")).to_contain_text("contrasts_with")


def test_a_reviewer_has_no_curation_log_link_and_is_refused_in_words(page, live_server, login):
    login("reviewer")
    expect(page.get_by_role("link", name="Curation log")).to_have_count(0)
    response = page.goto(f"{live_server.url}/curation/")
    assert response.status == 403
    expect(page.locator("main")).to_contain_text("Only curators can read the curation log")
