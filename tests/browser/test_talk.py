"""Talk on a card in a real browser, by keyboard: a reviewer asks a question (d), a
curator answers and resolves it (c), the card comes back to the focus queue; the
guideline panel opens with i, shows accepted then rejected examples, and leaves the
evidence where it was on a 1366x768 screen."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from kgreview.graph import services as graph
from kgreview.graph.models import RelationType
from kgreview.review import talk
from kgreview.review.decide import decisions
from kgreview.review.models import Discussion
from tests.browser.axe import axe_violations, report

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

VIEWPORT = {"width": 1366, "height": 768}
PASSWORD = "browser-pass-1"


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": VIEWPORT}


def sign_in(page, live_server, f, username: str, role: str) -> None:
    f.user(username, role=role, password=PASSWORD)
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def test_a_question_by_keyboard_answered_and_resolved_brings_the_card_back(
    page, live_server, f, browser
):
    doc = f.lesson(slug="talk")
    older = f.edge_proposal(f.concept("Alpha"), f.concept("Beta"), doc=doc)
    newer = f.edge_proposal(f.concept("Gamma"), f.concept("Delta"), doc=doc)

    # A reviewer, on the first card, asks with d, types, and sends with Ctrl+Enter.
    sign_in(page, live_server, f, "rita", "reviewer")
    page.goto(f"{live_server.url}/review/focus/")
    expect(page.locator("#card")).to_have_attribute("data-proposal", str(newer.pk))
    page.keyboard.press("d")
    expect(page.locator("#question")).to_be_focused()
    page.keyboard.type("Is Gamma really needed before Delta?")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#card")).to_have_attribute("data-proposal", str(older.pk))
    expect(page.locator("#card .card-messages")).to_contain_text("out of the focus queue")
    assert Discussion.objects.get().proposal_id == newer.pk

    # A curator opens the card by its id, reads the thread (c), answers and resolves it.
    curator = browser.new_context(viewport=VIEWPORT).new_page()
    sign_in(curator, live_server, f, "cora", "curator")
    curator.goto(f"{live_server.url}/review/focus/?id={newer.pk}")
    expect(curator.locator("#in-discussion")).to_be_visible()
    curator.keyboard.press("c")
    expect(curator.locator("#thread-panel")).to_contain_text("Is Gamma really needed")
    curator.locator("#comment-body").focus()
    curator.keyboard.type("Yes: the lesson says so in its **second** paragraph.")
    curator.keyboard.press("Control+Enter")
    expect(curator.locator("#thread-panel strong", has_text="second")).to_be_visible()
    expect(curator.locator("#comment-count")).to_have_text("2")
    curator.locator("#resolve-note").focus()
    curator.keyboard.type("Answered.")
    curator.keyboard.press("Control+Enter")
    expect(curator.locator("#card .card-messages")).to_contain_text("back in the queue")
    expect(curator.locator("#in-discussion")).to_have_count(0)
    found = axe_violations(curator)
    assert not found, report(found, "a resolved card")

    # The reviewer sees the answer on their home page, and the card is served again.
    page.goto(f"{live_server.url}/")
    expect(page.locator("#nav-answers")).to_have_text("1 answer")
    expect(page.locator("#answers")).to_contain_text("Is Gamma really needed")
    page.goto(f"{live_server.url}/review/focus/")
    expect(page.locator("#card")).to_have_attribute("data-proposal", str(newer.pk))


def test_the_guideline_panel_opens_with_i_and_shows_examples_beside_the_evidence(
    page, live_server, f
):
    doc = f.lesson(slug="guide")
    cora = f.user("cora", role="curator")
    relation = RelationType.objects.get(key="prerequisite")
    graph.relation_type_guideline(
        relation=relation,
        text="Accept when the text says one must be **learned first**.",
        acting_user=cora,
    )
    bad = f.edge_proposal(f.concept("Z1"), f.concept("Z2"), doc=doc)
    good = f.edge_proposal(f.concept("Y1"), f.concept("Y2"), doc=doc)
    decisions.proposal_reject(
        proposal_id=bad.pk, reason_code="wrong_direction", note="Backwards.", acting_user=cora
    )
    decisions.proposal_accept(proposal_id=good.pk, acting_user=cora)
    talk.example_add(proposal_id=bad.pk, acting_user=cora)
    talk.example_add(proposal_id=good.pk, acting_user=cora)
    open_card = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"), doc=doc)

    sign_in(page, live_server, f, "rita", "reviewer")
    page.goto(f"{live_server.url}/review/focus/?id={open_card.pk}")
    evidence = page.locator("#evidence-text")
    before = evidence.bounding_box()
    page.keyboard.press("?")
    expect(page.locator("#help")).to_contain_text("The guideline of the card's relation")
    page.keyboard.press("Escape")
    page.keyboard.press("i")
    panel = page.locator("#guideline-panel")
    expect(panel).to_contain_text("learned first")
    examples = panel.locator(".example")
    expect(examples).to_have_count(2)
    expect(examples.nth(0)).to_have_class("example example-accepted")
    expect(examples.nth(1)).to_contain_text("Rejected because: Wrong direction — Backwards.")
    after = evidence.bounding_box()
    assert after is not None and before is not None
    assert after["y"] == before["y"] and after["y"] + 40 < VIEWPORT["height"]
    found = axe_violations(page)
    assert not found, report(found, "a card with its guideline open")


def test_the_thread_is_usable_on_a_narrow_screen(browser, live_server, f):
    doc = f.lesson(slug="narrow")
    p = f.edge_proposal(f.concept("Alpha"), f.concept("Beta"), doc=doc)
    rob = f.user("rob", role="reviewer")
    talk.comment_post(proposal_id=p.pk, body="A *first* thought.", acting_user=rob)
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    sign_in(page, live_server, f, "rita", "reviewer")
    page.goto(f"{live_server.url}/review/focus/?id={p.pk}")
    page.keyboard.press("c")
    expect(page.locator("#thread-panel em", has_text="first")).to_be_visible()
    wide = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
    assert not wide, "the page scrolls sideways at 390 px"
    page.locator("#comment-body").fill("Agreed.")
    page.locator("#comment-button").click()
    expect(page.locator("#comment-count")).to_have_text("2")
    found = axe_violations(page)
    assert not found, report(found, "a card with its thread open")
