"""Names that lie, in a real browser (issue 13): a concept name holding U+202E (a right-to-
left override, as rows stored before names were cleaned may) cannot reverse the rest of
the claim on the card; and a request refused at the edge is said in the toast."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from kgreview.graph.models import Concept, ConceptAlias

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

EVIL = "Evil\u202egnp.exe"


def _box(locator) -> dict:
    box = locator.bounding_box()
    assert box is not None
    return box


def test_a_name_with_a_right_to_left_override_leaves_the_claim_in_order(
    page, live_server, f, login
):
    evil, vectors = f.concept("Evil"), f.concept("Vectors")
    proposal = f.edge_proposal(evil, vectors, "contrasts_with")
    # A row written before names were cleaned (the services no longer let one in).
    Concept.objects.filter(pk=evil.pk).update(name=EVIL)
    ConceptAlias.objects.filter(concept=evil).update(name=EVIL)
    login("reviewer")
    page.goto(f"{live_server.url}/review/focus/?id={proposal.pk}")
    claim = page.locator("h2.claim")
    name = claim.locator(".concept bdi").first
    expect(name).to_have_text(EVIL)
    verb, target = claim.locator(".verb"), claim.locator(".concept").nth(1)
    expect(verb).to_have_text("contrasts with")
    expect(target).to_have_text("Vectors")
    # Laid out left to right as written: the override stays inside the name's <bdi>.
    name_box, verb_box, target_box = _box(name), _box(verb), _box(target)
    assert name_box["x"] + name_box["width"] <= verb_box["x"] + 1
    assert verb_box["x"] + verb_box["width"] <= target_box["x"] + 1
    assert " ".join(claim.inner_text().split()).endswith("contrasts with Vectors")


def test_an_htmx_request_refused_at_the_edge_is_said_in_the_toast(page, live_server, f, login):
    f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))
    login("reviewer")
    page.goto(f"{live_server.url}/review/")
    # The queue's counts arrive after the page; compare the rows once they have.
    page.wait_for_load_state("networkidle")
    rows = page.locator("#queue-results tbody")
    before = rows.inner_html()
    page.evaluate(
        "htmx.ajax('GET', '/review/?relation=%00', {target: '#queue-results', swap: 'outerHTML'})"
    )
    toast = page.locator("#toast")
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("The query parameter “relation” holds a NUL byte")
    assert rows.inner_html() == before


def test_a_refusal_htmx_does_not_swap_keeps_its_words_in_the_toast(page, live_server, f, login):
    """``core.refusals`` answers htmx with the refusal's words (``kgRefused``) whatever its
    status. A 403 or a 404 is not swapped, so htmx also reports it as an error; the toast
    keeps the refusal's own words rather than the generic ones for that status."""
    from kgreview.review.decide import decisions
    from kgreview.review.models import Decision

    proposal = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))
    out = decisions.proposal_accept(
        proposal_id=proposal.pk, acting_user=f.user("cura", role="curator")
    )
    batch = Decision.objects.get(pk=out.decision.pk).batch
    login("reviewer")
    page.goto(f"{live_server.url}/review/focus/")
    page.wait_for_load_state("networkidle")
    # Undoing another person's decision is refused with a 403, in words.
    page.evaluate(
        "batch => htmx.ajax('POST', '/review/undo/', {target: '#card', swap: 'outerHTML', "
        "values: {batch: batch}})",
        batch.hex,
    )
    toast = page.locator("#toast")
    expect(toast).to_be_visible()
    expect(toast).to_have_text("You can only undo your own decisions.")
    assert Decision.objects.filter(batch=batch).count() == 1  # nothing was undone


def test_a_decision_when_the_database_stops_answering_says_so_in_the_toast(
    page, live_server, f, login, monkeypatch
):
    """The 503's own words reach the reviewer ("The database is not answering…"), not a
    bare status; the card stays, and the same key decides it once the database is back."""
    from kgreview.review.decide import decisions
    from tests.core.test_database_down import pg_cut

    proposal = f.edge_proposal(f.concept("Outage A"), f.concept("Outage B"))
    login("reviewer")
    page.goto(f"{live_server.url}/review/focus/?id={proposal.pk}")
    real = decisions.accept_one

    def cut(*args, **kwargs):
        raise pg_cut()

    monkeypatch.setattr(decisions, "accept_one", cut)
    page.keyboard.press("a")
    expect(page.locator("#toast")).to_have_text(
        "The database is not answering: nothing was saved. Try again in a minute; "
        "if it lasts, tell an admin."
    )
    expect(page.locator("#card")).to_have_attribute("data-proposal", str(proposal.pk))
    monkeypatch.setattr(decisions, "accept_one", real)
    page.keyboard.press("a")
    expect(page.locator("#card")).not_to_have_attribute("data-proposal", str(proposal.pk))
    proposal.refresh_from_db()
    assert proposal.status == "accepted"
