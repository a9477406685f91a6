"""Team review in a real browser: two reviewers at once never share a card, a doubled
proposal goes blind to both and lands in adjudication when they differ, and a curator
assigns work and adjudicates with the keyboard."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from kgreview.review.models import Decision, Proposal, Vote
from tests.browser.axe import axe_violations, report
from tests.browser.test_review import card, expect_card, sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1366, "height": 820}}


@pytest.fixture
def people(browser, browser_context_args, live_server, f):
    """A signed-in page for each of ann, ben (reviewers) and cat (curator)."""
    for name, role in (("ann", "reviewer"), ("ben", "reviewer"), ("cat", "curator")):
        f.user(name, role=role, password="browser-pass-1")
    contexts = []
    pages = {}
    for name in ("ann", "ben", "cat"):
        context = browser.new_context(**browser_context_args)
        contexts.append(context)
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m, e=errors: e.append(m.text) if m.type == "error" else None)
        page.kg_errors = errors  # type: ignore[attr-defined]
        sign_in(page, live_server, name)
        pages[name] = page
    yield pages
    for context in contexts:
        context.close()


def current(page) -> int | None:
    value = card(page).get_attribute("data-proposal")
    return int(value) if value else None


def test_two_reviewers_deciding_at_once_never_see_the_same_card(people, live_server, f):
    ps = [f.edge_proposal(f.concept(f"A{i}"), f.concept(f"B{i}")) for i in range(8)]
    ann, ben = people["ann"], people["ben"]
    seen: dict[str, list[int]] = {"ann": [], "ben": []}
    for page in (ann, ben):
        page.goto(f"{live_server.url}/review/focus/")
    for _ in range(4):
        for name, page in (("ann", ann), ("ben", ben)):
            pk = current(page)
            assert pk is not None
            seen[name].append(pk)
            page.keyboard.press("a")
            expect(card(page)).to_contain_text(f"Accepted #{pk}")
    assert not set(seen["ann"]) & set(seen["ben"]), seen
    assert Proposal.objects.filter(pk__in=[p.pk for p in ps], status="accepted").count() == 8
    assert Decision.objects.filter(action="accept").count() == 8
    expect(card(ann)).to_contain_text("Nothing left to review here")
    assert ann.kg_errors == [] and ben.kg_errors == []


def test_a_doubled_card_is_decided_blind_twice_then_adjudicated(people, live_server, f, settings):
    settings.KG_DOUBLE_REVIEW_SHARE = 1.0
    p = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))
    ann, ben, cat = people["ann"], people["ben"], people["cat"]
    ann.goto(f"{live_server.url}/review/focus/")
    expect_card(ann, p)
    ben.goto(f"{live_server.url}/review/focus/")
    expect(card(ben)).to_contain_text("Nothing left to review here")  # ann holds it
    ann.keyboard.press("a")
    expect(card(ann)).to_contain_text(f"Accepted #{p.pk}")
    assert Proposal.objects.get(pk=p.pk).status == "pending"

    ben.goto(f"{live_server.url}/review/focus/")
    expect_card(ben, p)
    expect(card(ben)).not_to_contain_text("ann")
    ben.keyboard.press("r")
    ben.keyboard.press("1")  # wrong direction
    expect(card(ben)).to_contain_text(f"Rejected #{p.pk}")
    assert Proposal.objects.get(pk=p.pk).stage == "adjudicate"
    assert Vote.objects.filter(proposal=p).count() == 2

    cat.goto(f"{live_server.url}/review/team/")
    cat.get_by_role("link", name="Adjudicate 1 proposal the reviewers differ on").click()
    expect_card(cat, p)
    ballots = cat.locator(".ballots")
    expect(ballots).to_contain_text("ann accepted")
    expect(ballots).to_contain_text("ben rejected, wrong direction")
    found = axe_violations(cat)
    assert not found, report(found)
    cat.keyboard.press("a")
    expect(card(cat)).to_contain_text(f"Accepted #{p.pk}")
    expect(card(cat)).to_contain_text("Nothing left to review here")
    p.refresh_from_db()
    assert p.status == "accepted"
    decision = Decision.objects.get(proposal=p, action="accept")
    assert decision.user.username == "cat" and decision.note.startswith("Adjudicated")
    assert all(e == [] for e in (ann.kg_errors, ben.kg_errors, cat.kg_errors))


def test_a_curator_assigns_a_relation_and_the_reviewer_gets_it_first(people, live_server, f):
    f.edge_proposal(f.concept("P1"), f.concept("P2"), confidence=0.95)
    mine = f.edge_proposal(f.concept("R1"), f.concept("R2"), rel="related", confidence=0.7)
    cat, ann = people["cat"], people["ann"]
    cat.goto(f"{live_server.url}/review/team/?q=relation%3Drelated")
    cat.get_by_label("Name").fill("Related ones")
    cat.get_by_label("Assign to").select_option(label="ann")
    cat.get_by_label("Target (optional)").fill("1")
    cat.get_by_role("button", name="Assign").click()
    expect(cat.locator("#assignments")).to_contain_text("Related ones")
    expect(cat.locator("#assignments")).to_contain_text("0 of 1 decided, 1 open")
    found = axe_violations(cat)
    assert not found, report(found)

    ann.goto(f"{live_server.url}/review/focus/")
    expect_card(ann, mine)
    expect(ann.locator("#assignment-line")).to_contain_text("Related ones")
    ann.keyboard.press("a")
    expect(card(ann)).to_contain_text(f"Accepted #{mine.pk}")
    cat.reload()
    expect(cat.locator("#assignments")).to_contain_text("1 of 1 decided")
    assert ann.kg_errors == [] and cat.kg_errors == []


def test_the_next_card_fetched_ahead_goes_up_with_the_decisions_words(people, live_server, f):
    """While a card is read, the page fetches the next one; on a, the decision comes back
    as its words only (X-KG-Decided) and the card held ahead goes up, with the words and
    the undo button, without a reload."""
    ps = [f.edge_proposal(f.concept(f"E{i}"), f.concept(f"F{i}")) for i in range(3)]
    ann = people["ann"]
    decided_fast: list[str] = []
    ann.on(
        "response",
        lambda r: decided_fast.append(r.url) if r.headers.get("x-kg-decided") else None,
    )
    with ann.expect_response(lambda r: "prefetch=1" in r.url):
        ann.goto(f"{live_server.url}/review/focus/")
    expect_card(ann, ps[2])
    count = ann.locator("#focus-count")
    expect(count).to_have_text("3")
    ann.evaluate("window.__kgNoReload = 'still here'")
    with ann.expect_response(lambda r: "prefetch=1" in r.url):
        ann.keyboard.press("a")
    expect_card(ann, ps[1])
    expect(card(ann)).to_contain_text(f"Accepted #{ps[2].pk}")
    expect(count).to_have_text("2")  # the count asks for itself when a card goes up
    expect(ann.locator("#undo-button")).to_contain_text(f"accept #{ps[2].pk}")
    assert decided_fast and f"/review/p/{ps[2].pk}/accept/" in decided_fast[0]
    ann.keyboard.press("r")
    ann.keyboard.press("5")
    expect_card(ann, ps[0])
    expect(card(ann)).to_contain_text(f"Rejected #{ps[1].pk}")
    expect(count).to_have_text("1")
    assert len(decided_fast) == 2
    assert ann.evaluate("window.__kgNoReload") == "still here"
    assert Proposal.objects.get(pk=ps[2].pk).status == "accepted"
    assert Proposal.objects.get(pk=ps[1].pk).status == "rejected"
    found = axe_violations(ann)
    assert not found, report(found)
    assert ann.kg_errors == []


def test_skip_puts_up_the_card_held_ahead_and_moves_the_leases_behind_it(people, live_server, f):
    """s with the next card held puts it up before any answer (the card is painted from
    what the page holds), and the skip's own request follows: the skipped card is let go,
    the shown one and the one after it are leased, and the next skip is served the same
    way."""
    from kgreview.review.team import leases

    ps = [f.edge_proposal(f.concept(f"S{i}"), f.concept(f"T{i}")) for i in range(3)]
    ann = people["ann"]
    with ann.expect_response(lambda r: "prefetch=1" in r.url):
        ann.goto(f"{live_server.url}/review/focus/")
    expect_card(ann, ps[2])
    ann.evaluate("window.__kgNoReload = 'still here'")
    skipped: list[str] = []
    ann.on(
        "request",
        lambda r: (
            skipped.append(r.headers.get("hx-target", "background"))
            if "after=" in r.url and "prefetch=1" not in r.url
            else None
        ),
    )
    with ann.expect_response(lambda r: "prefetch=1" in r.url):
        ann.keyboard.press("s")
        expect_card(ann, ps[1])
    held = set(leases.held(people_user("ann")))
    assert ps[2].pk not in held and {ps[1].pk, ps[0].pk} <= held
    # The skip's request was sent behind the card, not by htmx to fetch the card.
    assert skipped == ["background"]
    ann.keyboard.press("a")
    expect(card(ann)).to_contain_text(f"Accepted #{ps[1].pk}")
    expect_card(ann, ps[0])
    assert ann.evaluate("window.__kgNoReload") == "still here"
    assert Proposal.objects.get(pk=ps[2].pk).status == "pending"
    assert ann.kg_errors == []


def test_an_edit_accepted_puts_up_the_card_held_ahead_even_after_a_refused_try(
    people, live_server, f
):
    """The card fetched ahead stays held while the reviewer edits (e) and through an edit
    refused in words; the edit accepted then comes back as its words only and the held
    card goes up, as a and r do (the decision's statements: no next card found on the
    way)."""
    f.concept("Dense retrieval")
    ps = [f.edge_proposal(f.concept(f"G{i}"), f.concept(f"H{i}")) for i in range(2)]
    ann = people["ann"]
    decided_fast: list[str] = []
    ann.on(
        "response",
        lambda r: decided_fast.append(r.url) if r.headers.get("x-kg-decided") else None,
    )
    with ann.expect_response(lambda r: "prefetch=1" in r.url):
        ann.goto(f"{live_server.url}/review/focus/")
    expect_card(ann, ps[1])
    ann.keyboard.press("e")
    target = ann.locator("#edit-target")
    expect(ann.locator("#edit-source")).to_be_focused()
    target.fill("Dense retrieva")  # no concept has it: refused, the card stays
    ann.locator("#target-options").evaluate("el => el.innerHTML = ''")
    ann.keyboard.press("Control+Enter")
    expect(card(ann).locator(".flash.bad")).to_contain_text('No concept is called "Dense retrieva"')
    target.fill("Dense retrieval")
    ann.locator("#target-options").evaluate("el => el.innerHTML = ''")
    ann.keyboard.press("Control+Enter")
    expect_card(ann, ps[0])
    expect(card(ann)).to_contain_text(f"Edited and accepted #{ps[1].pk}")
    assert decided_fast and f"/review/p/{ps[1].pk}/edit/" in decided_fast[0]
    edited = Proposal.objects.get(pk=ps[1].pk)
    assert edited.status == "accepted"
    assert edited.payload["target"]["name"] == "Dense retrieval"
    assert ann.kg_errors == []


def test_the_count_beside_the_title_follows_a_question_and_its_resolution(people, live_server, f):
    """A question takes the card out of the focus queue (it stays pending, so counted);
    resolving it puts it back; each decision after either lowers the count, which asks for
    itself when a card goes up, with no out-of-band part (the team walk saw one resolve's
    answer carry a part that missed its target: htmx's console error)."""
    ps = [f.edge_proposal(f.concept(f"Q{i}"), f.concept(f"R{i}")) for i in range(2)]
    ann = people["ann"]
    ann.goto(f"{live_server.url}/review/focus/?id={ps[1].pk}")
    count = ann.locator("#focus-count")
    expect(count).to_have_text("2")
    ann.keyboard.press("d")
    expect(ann.locator("#question")).to_be_focused()
    ann.keyboard.type("Does the quote say this?")
    ann.keyboard.press("Control+Enter")
    expect_card(ann, ps[0])
    ann.keyboard.press("a")
    expect(card(ann)).to_contain_text(f"Accepted #{ps[0].pk}")
    expect(count).to_have_text("1")
    ann.goto(f"{live_server.url}/review/focus/?id={ps[1].pk}")
    ann.keyboard.press("c")
    note = ann.locator("#resolve-note")
    note.fill("Answered.")
    note.press("Control+Enter")
    expect(card(ann).locator(".card-messages")).to_contain_text("back in the queue")
    ann.keyboard.press("a")
    expect(card(ann)).to_contain_text(f"Accepted #{ps[1].pk}")
    expect(count).to_have_text("0")
    assert ann.kg_errors == []


def test_a_card_a_colleague_superseded_and_undid_goes_on_after_one_look_again(
    people, live_server, f
):
    """Seen in the team walk: ben reads an edge (the next card already fetched ahead);
    ann rejects the concept it needs (it is superseded) and undoes that (it is back).
    Ben's a says it changed; his second a decides it and the next card comes up."""
    from kgreview.review.decide import decisions, undo

    others = [f.edge_proposal(f.concept(f"G{i}"), f.concept(f"H{i}")) for i in range(2)]
    film, producer = f.concept_proposal("Film"), f.concept_proposal("Producer")
    p = f.edge_proposal(producer, film, confidence=0.99)
    ben = people["ben"]
    with ben.expect_response(lambda r: "prefetch=1" in r.url):
        ben.goto(f"{live_server.url}/review/focus/?id={p.pk}")
    expect_card(ben, p)
    out = decisions.proposal_reject(
        proposal_id=film.pk, acting_user=people_user("ann"), reason_code="too_vague"
    )
    undo.decisions_undo(acting_user=people_user("ann"), batch=out.batch)
    ben.keyboard.press("a")
    expect(card(ben)).to_contain_text("changed while you were looking")
    expect_card(ben, p)
    ben.keyboard.press("a")
    expect(card(ben)).not_to_have_attribute("data-proposal", str(p.pk))
    assert Proposal.objects.get(pk=p.pk).status == "accepted"
    assert current(ben) in {o.pk for o in others}
    assert ben.kg_errors == []


def people_user(name: str):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username=name)
