"""The reviewer workspace in a real browser: keyboard-only review, edits, undo, races,
stale and contradicting proposals (the queue, hostile content, roles, the key help and the
read-only pages: test_review_pages.py)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from kgreview.graph.models import Edge
from kgreview.review.models import Decision, Proposal
from kgreview.review.services import flags_text as flags_as_text
from tests import factories

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

VIEWPORT = {"width": 1366, "height": 820}
MARKER = "window.__kgNoReload"


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    """A common laptop screen: what reviewers see must fit it."""
    return {**browser_context_args, "viewport": VIEWPORT}


# --- helpers ----------------------------------------------------------------------------


def status(proposal: Proposal) -> str:
    return Proposal.objects.get(pk=proposal.pk).status


def card(page):
    return page.locator("#card")


def expect_card(page, proposal: Proposal) -> None:
    expect(card(page)).to_have_attribute("data-proposal", str(proposal.pk))


def mark_page(page) -> None:
    """Put a marker on window; a full page load would wipe it."""
    page.evaluate(f"{MARKER} = 'still here'")


def assert_no_reload(page) -> None:
    assert page.evaluate(MARKER) == "still here", "the page was reloaded"


def sign_in(page, live_server, username: str) -> None:
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", "browser-pass-1")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def open_focus(page, live_server, proposal: Proposal | None = None) -> None:
    url = f"{live_server.url}/review/focus/"
    page.goto(url + (f"?id={proposal.pk}" if proposal else ""))
    if proposal is not None:
        expect_card(page, proposal)
    mark_page(page)


def assert_usable_without_scrolling(page, locator) -> None:
    """Inside the viewport as it is, and not hidden under a sticky bar or an overlay."""
    box = locator.bounding_box()
    assert box is not None, "not rendered"
    top, bottom = box["y"], box["y"] + box["height"]
    assert top >= 0 and bottom <= VIEWPORT["height"], f"outside the viewport: {box}"
    # The middle of its first line: a quote wrapped over lines has gaps between them.
    hit = locator.evaluate(
        """el => {
            const r = el.getClientRects()[0];
            const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            return el === at || el.contains(at);
        }"""
    )
    assert hit, "covered by another element"


def middle_y(locator) -> float:
    box = locator.bounding_box()
    return box["y"] + box["height"] / 2


def open_edit(page) -> None:
    """Press e and wait for the edit form, its first concept field focused."""
    page.keyboard.press("e")
    expect(page.locator("#card .edit-form")).to_be_visible()
    expect(page.locator("#edit-source")).to_be_focused()


def pairs(f, n: int, prefix: str) -> list[Proposal]:
    """``n`` edge proposals between fresh concepts, created oldest first."""
    return [
        f.edge_proposal(f.concept(f"{prefix} A{i}"), f.concept(f"{prefix} B{i}")) for i in range(n)
    ]


# --- 1. keyboard-only review ------------------------------------------------------------


def test_reviewing_a_run_by_keyboard_only_decides_and_moves_without_page_loads(
    page, live_server, login, f, shot
):
    """a accepts, r+digit rejects with that reason, s skips, k goes back; no full reload."""
    p1, p2, p3, p4 = pairs(f, 4, "Kb")  # the queue shows newest first: p4, p3, p2, p1
    login("reviewer")
    open_focus(page, live_server)
    expect_card(page, p4)
    expect(page.locator("#evidence-text mark")).to_be_visible()
    assert_usable_without_scrolling(page, page.locator("#evidence-text mark"))
    accept, reject = page.locator("#accept-button"), page.locator("#reject-button")
    assert_usable_without_scrolling(page, accept)
    assert abs(middle_y(accept) - middle_y(reject)) < 2, "the decision bar is not one line"
    shot("review-focus-card")

    page.keyboard.press("a")
    expect_card(page, p3)
    expect(card(page)).to_contain_text(f"Accepted #{p4.pk}")
    assert status(p4) == "accepted"
    (d4,) = Decision.objects.filter(proposal=p4)
    assert d4.action == "accept" and d4.user.username == "reviewer"
    assert Edge.objects.get(provenance__proposal=p4).status == "active"
    assert_no_reload(page)

    page.keyboard.press("r")
    expect(page.locator("#reject-reason")).to_be_focused()
    page.keyboard.press("2")  # 2 · Wrong relation
    expect_card(page, p2)
    expect(card(page)).to_contain_text(f"Rejected #{p3.pk}: wrong relation")
    assert status(p3) == "rejected"
    (d3,) = Decision.objects.filter(proposal=p3)
    assert (d3.action, d3.reason_code) == ("reject", "wrong_relation")
    assert not Edge.objects.filter(provenance__proposal=p3).exists()
    assert_no_reload(page)

    page.keyboard.press("s")
    expect_card(page, p1)
    assert status(p2) == "pending" and not Decision.objects.filter(proposal=p2).exists()
    assert_no_reload(page)

    page.keyboard.press("k")
    expect_card(page, p2)  # decided proposals left the pending view; p2 is the one before
    assert_no_reload(page)

    page.keyboard.press("r")
    page.keyboard.press("5")  # 5 · Too vague
    expect_card(page, p1)
    assert Decision.objects.get(proposal=p2).reason_code == "too_vague"
    page.keyboard.press("a")
    expect(card(page)).to_contain_text("Nothing left to review here")
    assert [status(p) for p in (p1, p2, p3, p4)] == ["accepted", "rejected", "rejected", "accepted"]
    assert Decision.objects.count() == 4
    assert_no_reload(page)


def test_keys_pressed_while_a_decision_is_in_flight_do_not_act_on_the_old_card(
    page, live_server, login, f
):
    """a then r 1 before the answer: the reject is not sent for the card being replaced."""
    older, p = pairs(f, 2, "Fly")
    login("reviewer")
    open_focus(page, live_server)
    held, sent = [], []
    page.route("**/accept/", lambda route: held.append(route))
    expect(page.locator("#accept-button")).to_be_visible()
    page.keyboard.press("a")
    for _ in range(500):  # wait (up to 10 s on a busy CI machine) until it is held there
        if held:
            break
        page.wait_for_timeout(20)
    assert held, "the accept was never sent"
    page.on("request", lambda r: sent.append(r.url) if "/review/" in r.url else None)
    for key in ("r", "1", "s", "k", "u"):
        page.keyboard.press(key)
    expect(card(page)).to_have_attribute("data-proposal", str(p.pk))
    assert sent == [] and not Decision.objects.exists()
    held[0].continue_()
    expect_card(page, older)
    expect(card(page)).to_contain_text(f"Accepted #{p.pk}")
    expect(page.locator("#reject-reason")).not_to_be_focused()
    page.wait_for_timeout(200)
    expect_card(page, older)
    assert [status(older), status(p)] == ["pending", "accepted"]
    assert Decision.objects.count() == 1
    assert_no_reload(page)


# --- 3. undo ----------------------------------------------------------------------------


def test_undo_after_accept_reopens_the_proposal_and_invalidates_its_edge(
    page, live_server, login, f
):
    """u brings the accepted proposal back as the card; its edge row stays, invalidated."""
    older, p = pairs(f, 2, "Undo")
    login("reviewer")
    open_focus(page, live_server)
    expect_card(page, p)
    page.keyboard.press("a")
    expect_card(page, older)
    edge = Edge.objects.get(provenance__proposal=p)
    assert edge.status == "active"

    page.keyboard.press("u")
    expect_card(page, p)
    expect(card(page)).to_contain_text(f"Undone: accept #{p.pk}; back in the queue")
    assert status(p) == "pending"
    edge.refresh_from_db()
    assert edge.status == "invalidated" and edge.invalid_at is not None
    assert Edge.objects.filter(provenance__proposal=p).count() == 1  # never deleted
    actions = Decision.objects.filter(proposal=p).order_by("created_at", "id")
    assert [d.action for d in actions] == ["accept", "undo"]
    assert_no_reload(page)


def test_undo_after_reject_reopens_the_proposal(page, live_server, login, f):
    """A rejection undone by u is pending again and shown."""
    older, p = pairs(f, 2, "Undo")
    login("reviewer")
    open_focus(page, live_server)
    page.keyboard.press("r")
    page.keyboard.press("4")  # Duplicate
    expect_card(page, older)
    assert status(p) == "rejected"
    page.keyboard.press("u")
    expect_card(page, p)
    assert status(p) == "pending"
    # Accept now works on the reopened card.
    page.keyboard.press("a")
    expect_card(page, older)
    assert status(p) == "accepted"


# --- 4. two reviewers -------------------------------------------------------------------


def test_second_reviewer_is_told_who_decided_first(browser, browser_context_args, live_server, f):
    """Two reviewers on one card: the first accepts; the second's reject is refused in words."""
    p = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))
    f.user("ann", role="reviewer", password="browser-pass-1")
    f.user("ben", role="reviewer", password="browser-pass-1")
    contexts = [browser.new_context(**browser_context_args) for _ in range(2)]
    try:
        ann, ben = (c.new_page() for c in contexts)
        sign_in(ann, live_server, "ann")
        sign_in(ben, live_server, "ben")
        for page in (ann, ben):
            open_focus(page, live_server, p)

        ann.keyboard.press("a")
        expect(card(ann)).to_contain_text(f"Accepted #{p.pk}")

        ben.keyboard.press("r")
        ben.keyboard.press("5")
        refusal = ben.locator("#card .flash.bad")
        expect(refusal).to_contain_text(re.compile(r"already accepted by ann at \d{4}-\d\d-\d\d"))
        assert_no_reload(ben)
        assert status(p) == "accepted"
        assert Decision.objects.filter(proposal=p).count() == 1
    finally:
        for c in contexts:
            c.close()


def test_signed_out_in_another_tab_a_goes_to_the_sign_in_page_and_decides_nothing(
    page, live_server, login, f
):
    """The sign-in form is never swapped into the card: the whole page goes to it, and
    signing in comes back to the card (found walking the review in Chromium)."""
    p = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))
    login("reviewer")
    open_focus(page, live_server, p)
    other = page.context.new_page()
    other.goto(f"{live_server.url}/")
    other.get_by_role("button", name="Log out").click()
    other.wait_for_url(re.compile(r"/login/"))
    other.close()

    page.keyboard.press("a")
    page.wait_for_url(re.compile(r"/login/\?next=%2Freview%2Ffocus%2F"))
    expect(page.locator("#card")).to_have_count(0)
    assert status(p) == "pending"
    page.fill("#id_username", "reviewer")
    page.fill("#id_password", "browser-pass-1")
    page.click("button[type=submit]")
    expect_card(page, p)


# --- 5. stale ---------------------------------------------------------------------------


def test_accepting_a_proposal_that_now_closes_a_cycle_is_refused_in_the_card(
    page, live_server, login, f
):
    """The opposite edge appears after the card was loaded: a says why and writes nothing."""
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    p = f.edge_proposal(emb, vs)
    login("reviewer")
    open_focus(page, live_server, p)
    f.edge(vs, emb)  # someone else's accepted edge, after the page loaded

    page.keyboard.press("a")
    error = page.locator("#card .flash.bad")
    expect(error).to_contain_text("cycle")
    expect_card(page, p)  # the same card stays, to be rejected or edited
    expect(page.locator("#accept-button")).to_be_visible()
    assert_no_reload(page)
    assert status(p) == "pending"
    assert not Decision.objects.exists()
    assert not Edge.objects.filter(provenance__proposal=p).exists()
    assert Edge.objects.count() == 1


# --- 6. contradictions ------------------------------------------------------------------


def contradiction(f, first="Embeddings", then="Vector search") -> tuple[Edge, Proposal]:
    """An active edge then -> first, and a proposal first -> then flagged as contradicting it."""
    a, b = f.concept(first), f.concept(then)
    doc = f.lesson()
    quote = factories.LESSON_TEXT.splitlines()[1]
    old = f.edge(b, a, evidence=factories.evidence(doc.current_revision, quote))
    p = f.edge_proposal(a, b, doc=doc)
    conflicts = [
        {
            "kind": "edge",
            "id": old.pk,
            "rule": "cycle",
            "explanation": f"{first} before {then}, and {then} before {first}.",
        }
    ]
    flags = ["contradiction"]
    Proposal.objects.filter(pk=p.pk).update(
        payload={**p.payload, "conflicts": conflicts},
        flags=flags,
        flags_text=flags_as_text(flags),
        priority=200,
    )
    return old, Proposal.objects.get(pk=p.pk)


def test_keeping_a_contradicting_proposal_with_shift_k_retires_the_old_edge(
    page, live_server, login, f, shot
):
    """K keeps the new proposal: the contradicted edge is invalidated, the new one accepted."""
    old2, p2 = contradiction(f, "Tokenization", "Subwords")
    old, p = contradiction(f)  # newer: shown first
    login("reviewer")
    open_focus(page, live_server)
    expect_card(page, p)
    conflicts = page.locator("#card .conflicts")
    expect(conflicts).to_contain_text(f"Edge #{old.pk}")
    expect(conflicts).to_contain_text("Vector search before Embeddings")
    keep = page.locator("#card [data-key=K]")
    # The way out of a contradiction is in reach at once, not under the decision bar.
    assert_usable_without_scrolling(page, keep)
    assert_usable_without_scrolling(page, page.locator("#card [data-key=R]"))
    assert_usable_without_scrolling(page, page.locator("#evidence-text mark"))
    shot("review-contradiction-card")

    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.keyboard.press("K")
    expect_card(page, p2)
    expect(card(page)).to_contain_text(f"Accepted #{p.pk}")
    assert_no_reload(page)
    # The next card is scrolled to, clear of the sticky top bar.
    topbar = page.locator("header.topbar").bounding_box()
    assert card(page).bounding_box()["y"] >= topbar["y"] + topbar["height"]
    old.refresh_from_db()
    assert old.status == "invalidated" and "kept" in old.invalidation_reason
    new = Edge.objects.get(provenance__proposal=p)
    assert new.status == "active" and (new.source.name, new.target.name) == (
        "Embeddings",
        "Vector search",
    )
    assert Edge.objects.get(pk=old2.pk).status == "active"


def test_rejecting_a_contradicting_proposal_with_shift_r_keeps_the_old_edge(
    page, live_server, login, f
):
    """R rejects the new proposal with its note; the old edge stays active."""
    old, p = contradiction(f)
    login("reviewer")
    open_focus(page, live_server, p)
    page.keyboard.press("R")
    expect(card(page)).to_contain_text(f"Rejected #{p.pk}")
    assert status(p) == "rejected"
    assert Decision.objects.get(proposal=p).reason_code == "other"
    old.refresh_from_db()
    assert old.status == "active"
