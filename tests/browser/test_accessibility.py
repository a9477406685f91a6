"""Accessibility in a real browser: axe-core finds no critical or serious violation on the
main pages for a curator and for a reviewer, the pages fit a 390 px phone with the
navigation still in reach, a skip link leads to the content, and the review card keeps
its evidence and its decision bar in view on a phone and on a laptop."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from kgreview.agents.models import AgentRun
from kgreview.review.models import Decision, Proposal
from kgreview.review.services import flags_text
from tests.browser.axe import axe_violations, report
from tests.factories import LESSON_TEXT
from tests.insights.planting import plant, run

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

LAPTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
LINES = LESSON_TEXT.splitlines()

# Each page: its address from the planted data, and what to wait for before judging it.
PAGES = {
    "review-edge": lambda w: f"/review/focus/?id={w['proposal'].pk}",
    "review-contradiction": lambda w: f"/review/focus/?id={w['contradiction'].pk}",
    "queue": lambda w: "/review/",
    "explorer": lambda w: f"/explore/{w['vs'].pk}/",
    "concepts": lambda w: "/concepts/",
    "concept": lambda w: f"/concepts/{w['vs'].pk}/",
    "insights": lambda w: "/insights/",
    "agents": lambda w: "/agents/",
}


@pytest.fixture
def world(f, monkeypatch):
    """A lesson, a small graph around Vector search, an edge proposal with its evidence,
    a contradiction, a concept proposal, a month of decided proposals and agent runs."""
    doc = f.lesson("vectors")
    rev = doc.current_revision
    emb, vs, rag = f.concept("Embeddings"), f.concept("Vector search"), f.concept("RAG")
    kw, tok = f.concept("Keyword search"), f.concept("Tokenization")
    f.edge(rag, vs, "builds_on", evidence=f.evidence(rev, LINES[1]))
    f.edge(kw, vs, "contrasts_with", evidence=f.evidence(rev, LINES[2]))
    f.edge(tok, emb)
    proposal = f.edge_proposal(emb, vs, doc=doc)

    # A contradiction: an active edge Retrieval -> Chunking, and a proposal the other way.
    chunking, retrieval = f.concept("Chunking"), f.concept("Retrieval")
    old = f.edge(retrieval, chunking, evidence=f.evidence(rev, LINES[1]))
    p = f.edge_proposal(chunking, retrieval, doc=doc)
    conflicts = [
        {
            "kind": "edge",
            "id": old.pk,
            "rule": "cycle",
            "explanation": "Chunking before Retrieval, and Retrieval before Chunking.",
        }
    ]
    Proposal.objects.filter(pk=p.pk).update(
        payload={**p.payload, "conflicts": conflicts},
        flags=["contradiction"],
        flags_text=flags_text(["contradiction"]),
        priority=200,
    )
    f.concept_proposal("Dense retrieval", doc=doc)

    # Insights: decided proposals over a month, by two reviewers.
    rng = random.Random(3)
    now = timezone.now()
    runs = [run("construct", "openai", "gpt-4o-mini"), run("heal", "offline", "")]
    AgentRun.objects.filter(pk=runs[0].pk).update(
        status="succeeded", progress_done=4, progress_total=4, finished_at=now
    )
    AgentRun.objects.filter(pk=runs[1].pk).update(
        status="failed", progress_done=1, progress_total=3, finished_at=now, error="Boom."
    )
    reviewers = [f.user(name, role="reviewer") for name in ("rita", "ravi")]
    for i in range(40):
        rel = ("prerequisite", "part_of", "builds_on", "contrasts_with")[i % 4]
        confidence = round(rng.uniform(0.3, 1.0), 2)
        created = now - timedelta(days=rng.uniform(1, 28))
        decided = created + timedelta(hours=rng.uniform(1, 20))
        status = "accepted" if rng.random() < confidence else "rejected"
        planted = plant(
            confidence=confidence,
            rel=rel,
            status=status,
            run=runs[i % 2],
            created=created,
            decided=decided,
        )
        with monkeypatch.context() as m:
            m.setattr(timezone, "now", lambda when=decided: when)
            Decision.objects.create(
                proposal=planted,
                user=reviewers[i % 2],
                action="accept" if status == "accepted" else "reject",
                proposal_version=1,
            )
    return {"proposal": proposal, "contradiction": Proposal.objects.get(pk=p.pk), "vs": vs}


# --- helpers ----------------------------------------------------------------------------


def open_page(page, live_server, world, name: str) -> None:
    """Go to the page and wait until it is as a person would judge it: drawn, loaded."""
    page.goto(live_server.url + PAGES[name](world))
    if name.startswith("review-"):
        key = "proposal" if name == "review-edge" else "contradiction"
        expect(page.locator("#card")).to_have_attribute("data-proposal", str(world[key].pk))
    elif name == "explorer":
        page.wait_for_function(
            "id => { const r = document.getElementById('explorer');"
            " return r.dataset.centre === String(id) && r.dataset.state === 'ready'; }",
            arg=world["vs"].pk,
        )
    expect(page.locator("main h1").first).to_be_visible()
    # The worker badge swaps itself in after load; judge the page with it in place.
    expect(page.locator("#worker-status.ok, #worker-status.warn")).to_have_count(1)
    page.wait_for_load_state("networkidle")


def page_width(page) -> int:
    return page.evaluate("document.scrollingElement.scrollWidth")


def too_wide(page) -> list[str]:
    """The innermost elements that reach past the right edge and are not clipped by a
    scrolling container: what makes the page scroll sideways."""
    return page.evaluate(
        """() => {
          const w = document.documentElement.clientWidth + 1;
          const clipped = el => {
            for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
              const o = getComputedStyle(a).overflowX;
              if (o !== 'visible' && a.getBoundingClientRect().right <= w) return true;
            }
            return false;
          };
          const wide = [...document.body.querySelectorAll('*')].filter(el => {
            const r = el.getBoundingClientRect();
            return r.width > 0 && r.right > w && !clipped(el);
          });
          return wide.filter(el => !wide.some(o => o !== el && el.contains(o))).slice(0, 10)
            .map(el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
              + (typeof el.className === 'string' && el.className.trim()
                 ? '.' + el.className.trim().split(/\\s+/).join('.') : '')
              + ' right=' + Math.round(el.getBoundingClientRect().right));
        }"""
    )


def assert_in_view_and_uncovered(page, locator, what: str) -> None:
    """Inside the viewport as it is now, and the topmost element in the middle of its
    first line (a quote wrapped over lines has gaps between them)."""
    box = locator.bounding_box()
    assert box is not None, f"{what} is not rendered"
    view = page.viewport_size
    assert box["y"] >= 0 and box["y"] + box["height"] <= view["height"], f"{what}: {box}"
    assert box["x"] >= 0 and box["x"] + box["width"] <= view["width"], f"{what}: {box}"
    on_top = locator.evaluate(
        """el => {
            const r = el.getClientRects()[0];
            const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            return el === at || el.contains(at);
        }"""
    )
    assert on_top, f"{what} is covered by another element"


# --- axe --------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["reviewer", "curator"])
@pytest.mark.parametrize("name", list(PAGES))
def test_page_has_no_critical_or_serious_axe_violation_on_a_laptop(
    page, live_server, login, world, shot, name, role
):
    """axe-core (WCAG 2.1 A/AA and best practices) finds nothing critical or serious."""
    page.set_viewport_size(LAPTOP)
    login(role)
    open_page(page, live_server, world, name)
    found = axe_violations(page)
    shot(f"a11y-{name}-{role}-1366")
    assert not found, report(found, f"{name} as {role} at 1366x768")


def test_a_flash_message_is_a_status_inside_main(page, live_server, login, world):
    """The message after an action is a live region at the top of main, still a list."""
    page.set_viewport_size(LAPTOP)
    login("curator")
    page.goto(f"{live_server.url}/agents/")
    page.locator("#agent-heal").get_by_role("button", name="Pause schedule").click()
    message = page.locator("main#main > .messages[role=status] > ul > li")
    expect(message).to_contain_text("paused")
    found = axe_violations(page)
    assert not found, report(found, "agents with a message")


# --- small screens ----------------------------------------------------------------------


@pytest.mark.parametrize("name", list(PAGES))
def test_page_fits_a_phone_with_the_navigation_in_reach(
    page, live_server, login, world, shot, name
):
    """At 390 px nothing scrolls the page sideways, every navigation link can be reached
    (behind the Menu button), and axe still finds nothing critical or serious."""
    page.set_viewport_size(PHONE)
    login("curator")
    open_page(page, live_server, world, name)
    shot(f"a11y-{name}-390")
    assert page_width(page) <= PHONE["width"] + 1, f"the page is {page_width(page)} px wide: " + (
        ", ".join(too_wide(page))
    )
    found = axe_violations(page)
    assert not found, report(found, f"{name} at 390x844")

    toggle = page.locator("header .nav-toggle")
    links = page.locator("#site-nav a")
    expect(toggle).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(links.first).to_be_hidden()
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    assert links.count() >= 10
    for i in range(links.count()):
        link = links.nth(i)
        link.scroll_into_view_if_needed()
        expect(link).to_be_visible()
        box = link.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], link.inner_text()
    assert page_width(page) <= PHONE["width"] + 1, "the open menu widens the page"
    shot(f"a11y-{name}-390-menu")
    page.keyboard.press("Escape")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(toggle).to_be_focused()


def test_without_javascript_the_navigation_wraps_on_a_phone(
    browser, browser_context_args, live_server, f
):
    """No script, no menu button: the links wrap inside the phone's width."""
    f.user("curator", role="curator", password="browser-pass-1")
    context = browser.new_context(
        **{**browser_context_args, "viewport": PHONE, "java_script_enabled": False}
    )
    page = context.new_page()
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "curator")
    page.fill("#id_password", "browser-pass-1")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/concepts/")
    expect(page.locator("header .nav-toggle")).to_be_hidden()
    links = page.locator("#site-nav a")
    assert links.count() >= 10
    for i in range(links.count()):
        box = links.nth(i).bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    assert page_width(page) <= PHONE["width"] + 1
    context.close()


# --- keyboard ---------------------------------------------------------------------------


def test_a_skip_link_is_the_first_tab_stop_and_leads_to_the_content(
    page, live_server, login, world
):
    """On every page the first Tab shows "Skip to content"; Enter puts focus on main and
    the next Tab stays inside it."""
    page.set_viewport_size(LAPTOP)
    login("reviewer")
    for name in PAGES:
        open_page(page, live_server, world, name)
        page.keyboard.press("Tab")
        skip = page.locator("a.skip-link")
        expect(skip, f"on {name}").to_be_focused()
        expect(skip).to_have_text("Skip to content")
        assert_in_view_and_uncovered(page, skip, f"the skip link on {name}")
        page.keyboard.press("Enter")
        expect(page.locator("main#main"), f"on {name}").to_be_focused()
        page.keyboard.press("Tab")
        assert page.evaluate("document.querySelector('main').contains(document.activeElement)"), (
            f"on {name}, Tab after the skip link left main"
        )


# --- the review card ---------------------------------------------------------------------


def test_review_card_on_a_phone_is_one_column_with_the_decision_bar_in_reach(
    page, live_server, login, world, shot
):
    """At 390 px the card is one column and Accept and Reject are on screen at once."""
    page.set_viewport_size(PHONE)
    login("reviewer")
    open_page(page, live_server, world, "review-edge")
    grid = page.locator("#card .card-grid")
    columns = grid.evaluate("el => getComputedStyle(el).gridTemplateColumns.split(' ').length")
    assert columns == 1
    assert_in_view_and_uncovered(page, page.locator("#accept-button"), "Accept")
    assert_in_view_and_uncovered(page, page.locator("#reject-button"), "Reject")
    page.locator("#evidence-text mark").scroll_into_view_if_needed()
    assert_in_view_and_uncovered(page, page.locator("#evidence-text mark"), "the quote")
    shot("a11y-review-card-390")


def test_review_card_on_a_laptop_shows_the_evidence_and_both_sides_of_a_contradiction(
    page, live_server, login, world, shot
):
    """At 1366x768 the quote and both sides of the contradiction fit together between the
    top bar and the sticky decision bar: one scroll shows all three, nothing under a bar."""
    page.set_viewport_size(LAPTOP)
    login("reviewer")
    open_page(page, live_server, world, "review-contradiction")
    mark = page.locator("#evidence-text mark")
    assert_in_view_and_uncovered(page, mark, "the quote")
    assert_in_view_and_uncovered(page, page.locator("#accept-button"), "Accept")
    sides = page.locator("#card .conflicts .side-by-side")
    expect(sides.locator("> *")).to_have_count(2)
    # Scroll the comparison up until it ends just above the decision bar.
    page.evaluate(
        """() => {
            const sides = document.querySelector('#card .conflicts .side-by-side');
            const bar = document.querySelector('#card .actions');
            window.scrollBy(0, sides.getBoundingClientRect().bottom
                               - bar.getBoundingClientRect().top + 8);
        }"""
    )
    top = page.locator("header.topbar").bounding_box()
    band = (top["y"] + top["height"], page.locator("#card .actions").bounding_box()["y"])
    for what, locator in (
        ("the quote", mark),
        ("this proposal's side", sides.locator("> *").nth(0)),
        ("the contradicted edge's side", sides.locator("> *").nth(1)),
    ):
        box = locator.bounding_box()
        assert band[0] <= box["y"] and box["y"] + box["height"] <= band[1], (
            f"{what} is not between the bars: {box}, visible band {band}"
        )
    shot("a11y-review-contradiction-1366")
