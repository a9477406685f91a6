"""Concept types where people look, in a real browser: the review card names both ends'
types beside the claim and still shows the quote without scrolling at 1366x768, fits a
390 px phone; the concept list filters by a type and its subtypes. No serious or
critical axe violation on either page. Screenshots under test-results/screenshots/."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from kgreview.graph import services as graph
from tests.browser.axe import axe_violations, report
from tests.browser.test_accessibility import assert_in_view_and_uncovered

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

LAPTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
QUOTE = "Before learning vector search you should understand embeddings."


@pytest.fixture
def typed(f):
    """technique > retrieval technique; representation. Embeddings is a representation,
    Vector search a retrieval technique, Keyword search a technique, RAG untyped; an edge
    proposal between Embeddings and Vector search with its quote."""
    graph.concept_type_create(key="technique", label="Technique", acting_user=None)
    graph.concept_type_create(
        key="retrieval_technique",
        label="Retrieval technique",
        parent_key="technique",
        acting_user=None,
    )
    graph.concept_type_create(key="representation", label="Representation", acting_user=None)
    doc = f.lesson("vectors")
    made = {}
    for name, key in (
        ("Embeddings", "representation"),
        ("Vector search", "retrieval_technique"),
        ("Keyword search", "technique"),
        ("RAG", ""),
    ):
        made[name] = f.concept(name)
        if key:
            graph.concept_set_type(concept=made[name], type_key=key, acting_user=None)
    made["proposal"] = f.edge_proposal(
        made["Embeddings"], made["Vector search"], doc=doc, quote=QUOTE
    )
    return made


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1366x768", "390x844"])
def test_the_card_shows_both_ends_types_and_the_evidence_stays_in_view(
    page, live_server, login, typed, shot, viewport
):
    page.set_viewport_size(viewport)
    login("reviewer")
    page.goto(f"{live_server.url}/review/focus/?id={typed['proposal'].pk}")
    ends = page.locator("#end-types .end-type")
    expect(ends).to_have_count(2)
    expect(ends.nth(0)).to_contain_text("Embeddings")
    expect(ends.nth(0).locator(".type-tag")).to_have_text("Representation")
    expect(ends.nth(1)).to_contain_text("Vector search")
    expect(ends.nth(1).locator(".type-tag")).to_have_text("Retrieval technique")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    if viewport is LAPTOP:
        assert_in_view_and_uncovered(page, page.locator("#evidence-text mark"), "the quote")
    else:
        assert_in_view_and_uncovered(page, page.locator("#end-types"), "the types")
        assert_in_view_and_uncovered(page, page.locator("#accept-button"), "Accept")
    assert_in_view_and_uncovered(page, page.locator("#end-types"), "the end types")
    shot(f"types-card-{viewport['width']}")
    found = axe_violations(page)
    assert not found, report(found, f"the typed card at {viewport['width']} px")


def test_the_concept_list_filters_by_a_type_and_its_subtypes(page, live_server, login, typed, shot):
    page.set_viewport_size(LAPTOP)
    login("viewer")
    page.goto(f"{live_server.url}/concepts/")
    rows = page.locator("#concept-list tbody tr")
    expect(rows).to_have_count(4)
    page.select_option("#concept-type-filter", "technique")
    page.click("form.inline-filters button[type=submit]")
    expect(page).to_have_url(f"{live_server.url}/concepts/?q=&show=active&type=technique")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("Keyword search")
    expect(rows.nth(1)).to_contain_text("Vector search")
    expect(rows.nth(1).locator(".type-tag")).to_have_text("Retrieval technique")
    expect(page.locator("#concept-type-filter")).to_have_value("technique")
    shot("types-concepts-1366")
    found = axe_violations(page)
    assert not found, report(found, "the concept list filtered by type")
    rows.nth(0).locator(".type-tag").click()
    expect(page).to_have_url(f"{live_server.url}/concepts/?type=technique")


def test_a_reviewer_renames_and_types_a_new_concept_by_keyboard_before_accepting(
    page, live_server, login, typed, f, shot
):
    """e opens the concept's edit form with its name focused; Tab reaches the type; Ctrl
    Enter accepts the corrected concept without a page load; Esc leaves a form unsent."""
    p = f.concept_proposal("the Reranking")
    p.payload = {**p.payload, "type_key": "representation"}
    p.save(update_fields=["payload"])
    login("reviewer")
    page.goto(f"{live_server.url}/review/focus/?id={p.pk}")
    page.evaluate("window.__kgNoReload = true")
    page.keyboard.press("e")
    name = page.locator("#edit-name")
    expect(name).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator("#card .edit-form")).to_have_count(0)
    page.keyboard.press("e")
    expect(name).to_be_focused()
    name.fill("Reranking")
    page.keyboard.press("Tab")
    expect(page.locator("#edit-type")).to_be_focused()
    page.locator("#edit-type").select_option("retrieval_technique")
    assert_in_view_and_uncovered(page, page.locator("#card .edit-form button.primary"), "Accept")
    shot("concept-edit-form")
    found = axe_violations(page)
    assert not found, report(found, "the concept edit form")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#card")).to_contain_text(f"Edited and accepted #{p.pk}")
    assert page.evaluate("window.__kgNoReload") is True
    from kgreview.graph.models import Concept

    concept = Concept.objects.select_related("type").get(name="Reranking")
    assert concept.type.key == "retrieval_technique"


def test_e_on_a_card_that_cannot_be_edited_says_so_in_the_servers_words(
    page, live_server, login, f
):
    from kgreview.review.kinds.base import NOT_EDITABLE
    from kgreview.review.services import proposal_create

    reranker = f.concept("Reranker")
    p = proposal_create(
        kind="add_alias",
        payload={"concept_id": reranker.pk, "alias": "Re-ranker"},
        confidence=0.9,
        reason="Written so in the lesson.",
    )
    login("reviewer")
    page.goto(f"{live_server.url}/review/focus/?id={p.pk}")
    page.keyboard.press("e")
    expect(page.locator("#toast")).to_have_text(NOT_EDITABLE)
    expect(page.locator("#card .edit-form")).to_have_count(0)
