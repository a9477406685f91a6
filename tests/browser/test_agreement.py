"""The Insights page's Agreement section in a real browser: its tables render, the
relation people cannot agree on is said in words, axe finds nothing critical or serious,
and at 390 px the tables scroll inside their own box instead of the page."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from tests.browser.axe import axe_violations, report
from tests.review.agreement_world import session

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

LAPTOP = {"width": 1366, "height": 820}
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def voted(f, monkeypatch):
    cache.clear()
    ana, ben = f.user("ana", role="reviewer"), f.user("ben", role="reviewer")
    session(monkeypatch, ana, ben, f.user("cora", role="curator"), rel="part_of")
    yield
    cache.clear()


def test_the_agreement_tables_render_and_are_axe_clean(page, live_server, login, voted, shot):
    page.set_viewport_size(LAPTOP)
    login("curator")
    page.goto(f"{live_server.url}/insights/")
    section = page.locator("#agreement-section")
    expect(section.get_by_role("heading", name="Agreement between reviewers")).to_be_visible()
    low = page.locator("#agreement-relations tbody tr.agree-low")
    expect(low).to_have_count(1)
    expect(low.locator("th")).to_have_text("part_of")
    expect(low).to_contain_text("people cannot agree on these")
    expect(
        page.get_by_role("table", name="Each reviewer's agreement, speed and reversals")
    ).to_be_visible()
    expect(page.locator("#agreement-reviewers tbody tr")).to_have_count(3)
    expect(page.locator("#agreement-pairs tbody tr")).to_have_count(1)
    section.scroll_into_view_if_needed()
    shot("insights-agreement")
    found = axe_violations(page)
    assert not found, report(found, "insights with agreement")


def test_at_390_px_the_tables_scroll_in_their_own_region(page, live_server, login, voted, shot):
    page.set_viewport_size(PHONE)
    login("curator")
    page.goto(f"{live_server.url}/insights/")
    region = page.get_by_role("region", name="Each reviewer's agreement, speed and reversals")
    expect(region).to_be_visible()
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= PHONE["width"] + 1, f"the page is {width} px wide"
    assert region.evaluate("el => el.scrollWidth > el.clientWidth"), "the table fits: no test"
    region.focus()  # a keyboard user reaches the scrolling box
    expect(region).to_be_focused()
    page.keyboard.press("ArrowRight")
    page.locator("#agreement-section").scroll_into_view_if_needed()
    shot("insights-agreement-390")
    found = axe_violations(page)
    assert not found, report(found, "insights with agreement at 390 px")
