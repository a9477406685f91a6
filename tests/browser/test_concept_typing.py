"""Typing an existing concept through the queue, in a real browser: a reviewer accepts a
set_concept_type card with the keyboard, and the concept's page then shows its type."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from kgreview.graph import services
from kgreview.review.models import Proposal
from kgreview.review.services import proposal_create
from tests.browser.axe import axe_violations, report

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

QUOTE = "Only an ACCESS EXCLUSIVE lock blocks a plain SELECT."


@pytest.fixture
def typing(f):
    services.concept_type_create(key="lock", label="Lock", acting_user=None)
    concept = f.concept("ACCESS EXCLUSIVE lock")
    doc = f.source(slug="locks", text=QUOTE + "\n")
    proposal = proposal_create(
        kind="set_concept_type",
        payload={"concept_id": concept.pk, "concept_name": concept.name, "type_key": "lock"},
        confidence=0.7,
        reason='A quote stored about it names it, and its name ends in "lock".',
        evidence=f.evidence(doc.current_revision, QUOTE),
        document=doc,
    )
    return concept, proposal


def test_a_reviewer_accepts_a_type_by_keyboard_and_the_concept_page_shows_it(
    page, live_server, login, typing, shot
):
    concept, proposal = typing
    login("reviewer")
    page.goto(f"{live_server.url}/review/focus/?id={proposal.pk}")
    card = page.locator("#card")
    expect(card).to_have_attribute("data-proposal", str(proposal.pk))
    expect(card.locator(".concept-type")).to_have_text("Lock")
    expect(card.locator("#evidence-text mark")).to_have_text(QUOTE)
    expect(card.locator(".type-now")).to_contain_text("It has no type now")
    found = axe_violations(page)
    assert not found, report(found, "a set_concept_type card")
    shot("set-concept-type-card")
    page.keyboard.press("a")
    expect(card).to_contain_text(f"Accepted #{proposal.pk}")
    assert Proposal.objects.get(pk=proposal.pk).status == "accepted"
    page.goto(f"{live_server.url}/concepts/{concept.pk}/")
    expect(page.locator("#concept-type a.concept-type")).to_have_text("Lock")
