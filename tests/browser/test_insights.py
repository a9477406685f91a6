"""The insights dashboard in a real browser: charts drawn from planted decisions, the
filters redrawing them over htmx without a reload, no console errors, a screenshot."""

from __future__ import annotations

import random
import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from kgreview.review.models import Decision, Proposal
from tests.insights.planting import plant, run

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

VIEWPORT = {"width": 1366, "height": 820}
CHARTS = (
    "#chart-queue",
    "#chart-reviewers",
    "#chart-accept-relation",
    "#chart-accept-agent",
    "#chart-accept-model",
    "#chart-calibration",
    "#chart-ece",
    "#chart-gate",
)
# How far each relation type's confidence can be trusted: the chance a proposal is
# accepted is its confidence times this.
HONESTY = {"prerequisite": 0.95, "part_of": 1.0, "builds_on": 0.75, "contrasts_with": 0.45}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    """A common laptop screen."""
    return {**browser_context_args, "viewport": VIEWPORT}


@pytest.fixture
def console_errors(page):
    """Console errors and uncaught page errors; every test ends with none."""
    seen: list[str] = []

    def on_console(message):
        # The app has no favicon; the browser asking for one is not the dashboard's error.
        if message.type == "error" and not message.location.get("url", "").endswith("/favicon.ico"):
            seen.append(f"console: {message.text} at {message.location.get('url')}")

    page.on("console", on_console)
    page.on("pageerror", lambda error: seen.append(f"pageerror: {error}"))
    yield seen
    assert seen == [], "\n".join(seen)


@pytest.fixture
def history(f, monkeypatch):
    """A month of agent proposals and three reviewers' decisions on most of them."""
    rng = random.Random(7)
    now = timezone.now()
    runs = [run("construct", "openai", "gpt-4o-mini"), run("heal", "offline", ""), None]
    reviewers = [f.user(name, role="reviewer") for name in ("rita", "ravi", "rosa")]
    for i in range(140):
        rel = list(HONESTY)[i % len(HONESTY)]
        confidence = round(rng.uniform(0.25, 1.0), 2)
        created = now - timedelta(days=rng.uniform(0, 29.5))
        decided = None
        status = None
        if rng.random() < 0.75:
            decided = min(now - timedelta(minutes=1), created + timedelta(days=rng.uniform(0, 3)))
            accepted = rng.random() < confidence * HONESTY[rel]
            status = "accepted" if accepted else "rejected"
        p = plant(
            confidence=confidence,
            rel=rel,
            status=status,
            run=runs[i % 3],
            created=created,
            decided=decided,
        )
        if decided is None:
            continue
        with monkeypatch.context() as m:
            m.setattr(timezone, "now", lambda when=decided: when)
            Decision.objects.create(
                proposal=p,
                user=reviewers[rng.randrange(3) if i % 5 else 0],
                action="accept" if status == "accepted" else "reject",
                proposal_version=1,
            )
    assert Proposal.objects.filter(status__in=("accepted", "rejected")).count() > 80


def marks(page, chart: str):
    return page.locator(f"{chart} .mark")


def test_dashboard_draws_every_chart_and_redraws_them_from_the_filters_without_a_reload(
    page, live_server, login, history, console_errors, shot
):
    """Eight charts with marks; window, relation and target each swap the charts region
    over htmx while the page itself stays loaded."""
    login("viewer")
    page.goto(f"{live_server.url}/insights/")
    expect(page.locator("h1")).to_have_text("Insights")
    for chart in CHARTS:
        expect(page.locator(chart)).to_be_visible()
        assert marks(page, chart).count() > 0, f"{chart} has nothing drawn"
    expect(marks(page, "#chart-queue")).to_have_count(3 * 30)
    expect(page.locator("#chart-calibration")).to_have_attribute(
        "aria-label", "Calibration: All proposals"
    )
    expect(page.locator("#gate-table tbody tr")).to_have_count(1 + len(HONESTY))
    box = page.locator("#chart-calibration").bounding_box()
    assert box["width"] > 300 and box["height"] > 250, box
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"
    shot("insights-dashboard")

    page.evaluate("window.__stillHere = true")
    with page.expect_response(re.compile(r"/insights/\?window=7")) as answer:
        page.select_option("#id_window", "7")
    assert answer.value.request.headers.get("hx-request") == "true"
    expect(marks(page, "#chart-queue")).to_have_count(3 * 7)
    expect(page).to_have_url(re.compile(r"/insights/\?window=7&relation=&target=0.8$"))

    with page.expect_response(re.compile(r"relation=contrasts_with")):
        page.select_option("#id_relation", "contrasts_with")
    expect(page.locator("#chart-calibration")).to_have_attribute(
        "aria-label", "Calibration: contrasts_with"
    )
    expect(page.locator("#calibration-h")).to_have_text("Calibration: contrasts_with")

    with page.expect_response(re.compile(r"target=0.6")):
        page.fill("#id_target", "0.6")
        page.press("#id_target", "Enter")
    expect(page.locator("#gate-h")).to_have_text("Gate needed for 60% accepted")
    assert page.evaluate("window.__stillHere") is True, "the page reloaded"
    expect(marks(page, "#chart-queue")).to_have_count(3 * 7)

    numbers = page.locator("#queue-section details.numbers")
    expect(numbers.locator("table")).to_be_hidden()
    numbers.locator("summary").click()
    expect(numbers.locator("tbody tr")).to_have_count(7)
    shot("insights-dashboard-filtered")


def test_a_bad_target_is_answered_in_words_where_the_charts_were(
    page, live_server, login, history, console_errors
):
    """An out-of-range target typed past the browser's own check comes back as a
    message over htmx, with the default gate drawn."""
    login("reviewer")
    page.goto(f"{live_server.url}/insights/?target=3")
    expect(page.locator("#insights-charts [role=alert]")).to_contain_text("at most 1")
    expect(page.locator("#gate-h")).to_have_text("Gate needed for 80% accepted")
    for chart in CHARTS:
        expect(page.locator(chart)).to_be_visible()
    # The 400 itself is the page's answer, not an error of the page.
    console_errors[:] = [e for e in console_errors if "status of 400" not in e]


def test_an_empty_dashboard_says_what_is_missing(page, live_server, login, console_errors):
    """No proposals: sentences and a link to the review queue, no empty axes."""
    login("viewer")
    page.goto(f"{live_server.url}/insights/")
    expect(page.locator("#outcomes-empty")).to_contain_text("No decisions yet")
    expect(page.locator("#queue-section")).to_contain_text("No proposals were waiting")
    expect(page.locator("svg.chart-svg")).to_have_count(0)
    # The link is checked, not followed: the queue page's own console is not this test's.
    expect(
        page.locator("#outcomes-empty").get_by_role("link", name="review queue")
    ).to_have_attribute("href", "/review/")
