"""The reviewer workspace in a real browser, beyond the card: the queue with bulk
decisions, hostile content in every view, the viewer's read-only card, the key help, and
the read-only pages (the decision log and an edge's life). Keyboard review, undo, races,
stale and contradicting proposals: test_review.py, whose helpers these use."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from kgreview.graph import services as graph
from kgreview.graph.models import Edge
from kgreview.review.models import Decision
from kgreview.review.services import proposal_create
from tests import factories
from tests.browser.test_review import (
    VIEWPORT,
    assert_no_reload,
    card,
    expect_card,
    mark_page,
    open_focus,
    pairs,
    status,
)

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    """A common laptop screen: what reviewers see must fit it."""
    return {**browser_context_args, "viewport": VIEWPORT}


# --- 7. queue ---------------------------------------------------------------------------


def test_queue_filter_keyboard_selection_and_bulk_reject_with_preview(
    page, live_server, login, f, shot
):
    """A kind checkbox filters in place; j/x select rows; bulk reject previews, then applies."""
    e1, e2, e3 = pairs(f, 3, "Q")
    c1 = f.concept_proposal("Reranking")
    c2 = f.concept_proposal("Chunking")
    login("reviewer")
    page.goto(f"{live_server.url}/review/")
    mark_page(page)
    expect(page.locator("#result-count")).to_have_text("5")
    new_concepts = page.locator("label.facet", has=page.locator("input[value=new_concept]"))
    expect(new_concepts.locator(".count")).to_have_text("2")

    page.locator("label.facet", has_text="Add edge").locator("input").check()
    expect(page).to_have_url(re.compile(r"/review/\?.*kind=add_edge"))
    expect(page.locator("#result-count")).to_have_text("3")
    expect(page.locator(".queue-row")).to_have_count(3)
    expect(new_concepts.locator(".count")).to_have_text("0")
    expect(page.locator("label.facet", has_text="Add edge").locator("input")).to_be_checked()
    assert_no_reload(page)

    rows = page.locator(".queue-row")
    page.keyboard.press("j")
    expect(rows.nth(0)).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("x")
    page.keyboard.press("j")
    expect(rows.nth(1)).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("x")
    expect(rows.nth(0).locator("input[type=checkbox]")).to_be_checked()
    expect(rows.nth(1).locator("input[type=checkbox]")).to_be_checked()
    expect(rows.nth(2).locator("input[type=checkbox]")).not_to_be_checked()

    page.select_option("select[name=action]", "reject")
    page.select_option("#bulk-form select[name=reason_code]", "duplicate")
    page.get_by_role("button", name="…the selected").click()
    panel = page.locator("#bulk-panel")
    expect(panel).to_contain_text("Preview: reject 2 proposals as “Duplicate”")
    expect(panel).to_contain_text("2 would go through")
    shot("review-queue-bulk-preview")
    assert [status(p) for p in (e1, e2, e3)] == ["pending"] * 3

    page.locator("#bulk-confirm").click()
    expect(panel).to_contain_text("Rejected 2 proposals")
    assert_no_reload(page)
    assert [status(p) for p in (e1, e2, e3)] == ["pending", "rejected", "rejected"]
    assert [status(p) for p in (c1, c2)] == ["pending", "pending"]
    reasons = set(Decision.objects.values_list("reason_code", flat=True))
    assert reasons == {"duplicate"} and Decision.objects.count() == 2


def test_queue_keys_still_work_after_ticking_a_row_with_the_mouse(page, live_server, login, f):
    """A focused checkbox is not a text field: j and x keep working."""
    oldest, middle, newest = pairs(f, 3, "Mouse")
    login("reviewer")
    page.goto(f"{live_server.url}/review/")
    rows = page.locator(".queue-row")
    rows.nth(0).locator("input[type=checkbox]").click()
    expect(rows.nth(0).locator("input[type=checkbox]")).to_be_focused()
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(rows.nth(1)).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("x")
    expect(rows.nth(1).locator("input[type=checkbox]")).to_be_checked()
    expect(rows.nth(0).locator("input[type=checkbox]")).to_be_checked()
    assert [status(p) for p in (oldest, middle, newest)] == ["pending"] * 3


def test_queue_enter_opens_the_selected_row_in_the_focus_view(page, live_server, login, f):
    """j then Enter opens that proposal's card."""
    older, newer = pairs(f, 2, "Open")
    login("reviewer")
    page.goto(f"{live_server.url}/review/")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/review/focus/\?id={older.pk}$"))
    expect_card(page, older)


# --- 8. hostile content -----------------------------------------------------------------

HOSTILE_LESSON = (
    "# Evil lesson\n\n"
    "<script>alert(1)</script> Embeddings come first.\n"
    "<img src=x onerror=alert(2)> Vector search comes next.\n"
    '<a href="javascript:alert(3)">click me</a> for more.\n'
)
INERT = "main script, main img, main svg, main iframe, main a[href^='javascript:' i]"


def hostile_world(f):
    doc = graph.source_import(
        slug="evil",
        title="<img src=x onerror=alert('title')>",
        text=HOSTILE_LESSON,
        acting_user=None,
    ).source
    rev = doc.current_revision
    existing = f.concept("<script>alert('concept')</script>", aliases=["<b>bold</b>"])
    p_edge = proposal_create(
        kind="add_edge",
        payload={
            "source": {"name": "<img src=x onerror=alert(4)>", "match": "new"},
            "target": factories._endpoint(existing),
            "relation": "prerequisite",
        },
        confidence=0.9,
        reason='<a href="javascript:alert(5)">trust me</a><script>alert(6)</script>',
        evidence=factories.evidence(rev, "<img src=x onerror=alert(2)> Vector search comes next."),
        document=doc,
    )
    p_concept = proposal_create(
        kind="add_concept",
        payload={"name": "<svg onload=alert(7)>", "aliases": ["<i>x</i>"], "description": ""},
        confidence=0.9,
        reason="<script>alert(8)</script>",
        evidence=factories.evidence(rev, "<script>alert(1)</script> Embeddings come first."),
        flags=["new_concept"],
        document=doc,
    )
    return doc, p_edge, p_concept


def assert_inert(page, dialogs, shown: str) -> None:
    expect(page.locator("main")).to_contain_text(shown)
    page.wait_for_timeout(200)  # give any injected handler the chance to fire
    assert page.locator(INERT).count() == 0, page.locator(INERT).first.evaluate("e => e.outerHTML")
    assert dialogs == []


def test_hostile_names_reasons_and_evidence_stay_inert_in_every_view(
    page, live_server, login, f, dialogs, shot
):
    """Script, event handlers and javascript: links in content never run, in any view."""
    doc, p_edge, p_concept = hostile_world(f)
    login("reviewer")
    base = live_server.url

    page.goto(f"{base}/")
    assert_inert(page, dialogs, "<img src=x onerror=alert('title')>")
    page.goto(f"{base}/sources/evil/")
    assert_inert(page, dialogs, "<script>alert(1)</script>")
    assert_inert(page, dialogs, '<a href="javascript:alert(3)">click me</a>')
    page.goto(f"{base}/review/")
    assert_inert(page, dialogs, "<img src=x onerror=alert(4)>")
    assert_inert(page, dialogs, "<svg onload=alert(7)>")

    open_focus(page, live_server, p_concept)
    assert_inert(page, dialogs, "<svg onload=alert(7)>")
    assert page.locator("#card script, #card img, #card svg").count() == 0
    open_focus(page, live_server, p_edge)
    assert_inert(page, dialogs, '<a href="javascript:alert(5)">trust me</a>')
    expect(page.locator("#evidence-text mark")).to_have_text(
        "<img src=x onerror=alert(2)> Vector search comes next."
    )

    page.keyboard.press("e")
    expect(page.locator("#edit-source")).to_have_value("<img src=x onerror=alert(4)>")
    page.locator("#edit-target").fill("script")
    option = page.locator("#target-options .option").first
    expect(option).to_contain_text("<script>alert('concept')</script>")
    assert_inert(page, dialogs, "<script>alert('concept')</script>")
    option.click()
    page.keyboard.press("Control+Enter")
    expect(card(page)).to_contain_text(f"Edited and accepted #{p_edge.pk}")
    assert_inert(page, dialogs, "Nothing left to review here")

    page.goto(f"{base}/review/decisions/")
    assert_inert(page, dialogs, "<img src=x onerror=alert(4)>")
    edge = Edge.objects.get(provenance__proposal=p_edge)
    page.goto(f"{base}/review/edges/{edge.pk}/")
    assert_inert(page, dialogs, "<img src=x onerror=alert(4)>")
    assert_inert(page, dialogs, "<img src=x onerror=alert(2)> Vector search comes next.")
    assert Decision.objects.count() == 1


# --- 9. viewer --------------------------------------------------------------------------


def test_viewer_sees_the_card_but_cannot_decide_even_by_keyboard(page, live_server, login, f):
    """No decision buttons for a viewer, and a, r, e, u send nothing."""
    p = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))
    login("viewer")
    open_focus(page, live_server)
    expect_card(page, p)
    expect(page.locator("#evidence-text")).to_be_visible()
    assert page.locator("#card button, #card form, #card [data-key=e]").count() == 0
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method != "GET" else None)
    for key in ("a", "r", "1", "e", "u", "K"):
        page.keyboard.press(key)
    page.wait_for_timeout(250)
    assert posts == []
    expect_card(page, p)
    assert_no_reload(page)
    assert status(p) == "pending" and not Decision.objects.exists()


# --- 10. help ---------------------------------------------------------------------------


def test_question_mark_opens_the_key_help_and_escape_closes_it(page, live_server, login, f):
    """? shows the keys; Esc hides them again, without deciding anything."""
    f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))
    login("reviewer")
    open_focus(page, live_server)
    help_overlay = page.locator("#help")
    expect(help_overlay).to_be_hidden()
    page.keyboard.press("?")
    expect(help_overlay).to_be_visible()
    expect(help_overlay.get_by_role("heading", name="Keyboard")).to_be_visible()
    page.keyboard.press("Escape")
    expect(help_overlay).to_be_hidden()
    page.keyboard.press("?")
    expect(help_overlay).to_be_visible()
    page.keyboard.press("Escape")
    expect(help_overlay).to_be_hidden()
    assert not Decision.objects.exists()


# --- screenshots of the read-only pages -------------------------------------------------


def test_decision_log_and_edge_page_show_what_was_decided(page, live_server, login, f, shot):
    """After a few decisions, the log lists them and the edge page tells the edge's life."""
    older, p = pairs(f, 2, "Log")
    login("reviewer")
    open_focus(page, live_server)
    page.keyboard.press("a")
    expect_card(page, older)
    page.keyboard.press("r")
    page.keyboard.press("1")
    expect(card(page)).to_contain_text(f"Rejected #{older.pk}")
    page.get_by_role("link", name="Decisions").click()
    log = page.locator("#decision-log tbody tr")
    expect(log).to_have_count(2)
    expect(log.first).to_contain_text("Wrong direction")
    expect(log.first.locator(".badge")).to_have_text("Rejected")
    shot("review-decision-log")
    edge = Edge.objects.get(provenance__proposal=p)
    page.goto(f"{live_server.url}/review/edges/{edge.pk}/")
    expect(page.locator("#edge-life li")).to_have_count(1)
    expect(page.locator("#edge-life")).to_contain_text(f"proposal #{p.pk}")
    shot("review-edge-page")
