"""Edit, then accept, in a real browser: the concept picker (an ARIA 1.2 combobox) driven
by keys only, explicit creation of a new concept, pending concept proposals offered, the
open listbox checked with axe-core, and Esc backing out without writing anything."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from kgreview.graph.models import Edge
from kgreview.review.models import Decision, Proposal
from tests.browser.test_review import (
    VIEWPORT,
    assert_no_reload,
    assert_usable_without_scrolling,
    card,
    expect_card,
    open_edit,
    open_focus,
    status,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": VIEWPORT}


def test_edit_then_accept_by_keyboard_changes_relation_direction_and_target(
    page, live_server, login, f, shot
):
    """e opens the form with the first name selected; the concept picker is a combobox
    driven by ArrowDown and Enter; relation, swap and the picked target are accepted."""
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    dense = f.concept("Dense retrieval", aliases=["Semantic search"])
    p = f.edge_proposal(emb, vs)
    login("reviewer")
    open_focus(page, live_server, p)

    page.keyboard.press("e")
    expect(page.locator("#card .edit-form")).to_be_visible()
    source = page.locator("#edit-source")
    expect(source).to_be_focused()
    # The name is selected on open: typing replaces it instead of prepending.
    assert page.evaluate("document.activeElement.selectionStart") == 0
    assert page.evaluate("document.activeElement.selectionEnd") == len("Embeddings")
    page.keyboard.press("Tab")
    target = page.locator("#edit-target")
    expect(target).to_be_focused()
    page.keyboard.type("dense")
    listbox = page.locator("#target-listbox[role=listbox]")
    option = listbox.locator("[role=option]", has_text="Dense retrieval")
    expect(option).to_be_visible()
    expect(target).to_have_attribute("aria-expanded", "true")
    assert_usable_without_scrolling(page, option)
    page.keyboard.press("ArrowDown")
    expect(option).to_have_attribute("aria-selected", "true")
    expect(target).to_have_attribute("aria-activedescendant", option.get_attribute("id"))
    shot("review-edit-form")
    page.keyboard.press("Enter")
    expect(target).to_have_value("Dense retrieval")
    expect(page.locator("#edit-target-id")).to_have_value(str(dense.pk))
    expect(listbox).to_have_count(0)
    expect(target).to_have_attribute("aria-expanded", "false")
    expect(target).to_be_focused()
    # Typing again forgets the pick and searches again.
    page.keyboard.press("Backspace")
    expect(page.locator("#edit-target-id")).to_have_value("")
    expect(listbox.locator("[role=option]").first).to_be_visible()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    expect(page.locator("#edit-target-id")).to_have_value(str(dense.pk))
    page.keyboard.press("Tab")
    expect(page.locator("#edit-relation")).to_be_focused()
    page.keyboard.press("b")  # a closed select jumps to the first option starting with b
    expect(page.locator("#edit-relation")).to_have_value("builds_on")
    page.keyboard.press("Tab")
    expect(page.locator("#edit-swap")).to_be_focused()
    page.keyboard.press("Space")
    expect(page.locator("#edit-swap")).to_be_checked()
    page.keyboard.press("Control+Enter")

    expect(card(page)).to_contain_text(f"Edited and accepted #{p.pk}")
    assert_no_reload(page)
    edge = Edge.objects.get(provenance__proposal=p)
    # Swapped: the picked target is now the source, the old source the target.
    assert (edge.source, edge.relation.key, edge.target) == (dense, "builds_on", emb)
    assert edge.status == "active"
    decision = Decision.objects.get(proposal=p)
    assert decision.action == "edit_accept"
    assert decision.before["payload"]["target"]["name"] == "Vector search"


def test_a_typed_name_nobody_picked_is_refused_and_creating_is_an_explicit_choice(
    page, live_server, login, f
):
    """A partial name plus Ctrl+Enter creates nothing: the card says which names are close;
    choosing "Create … as a new concept" from the list is what creates it."""
    f.concept("Embeddings")
    p = f.edge_proposal(f.concept("Vector search"), f.concept("ANN"))
    login("reviewer")
    open_focus(page, live_server, p)
    open_edit(page)
    page.keyboard.type("Embed")
    listbox = page.locator("#source-listbox")
    expect(listbox.locator("[role=option]").first).to_contain_text("Embeddings")
    create = listbox.locator("[role=option][data-kind=create]")
    expect(create).to_have_text(re.compile("Create “Embed” as a new concept"))
    page.keyboard.press("Control+Enter")
    expect(card(page).locator(".flash.bad")).to_contain_text('No concept is called "Embed"')
    expect(card(page).locator(".flash.bad")).to_contain_text('"Embeddings"')
    expect(page.locator("#edit-source")).to_have_value("Embed")  # the edit is kept
    assert status(p) == "pending" and not Edge.objects.exists()
    # Now create it on purpose: the last choice, picked by keys.
    page.locator("#edit-source").focus()
    page.keyboard.press("End")
    page.keyboard.type("ding model")
    expect(create).to_have_text(re.compile("Create “Embedding model”"))
    for _ in range(listbox.locator("[role=option]").count()):
        page.keyboard.press("ArrowDown")
    expect(create).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Enter")
    expect(page.locator("#edit-source-create")).to_have_value("1")
    page.keyboard.press("Control+Enter")
    expect(card(page)).to_contain_text(f"Edited and accepted #{p.pk}")
    assert Edge.objects.get(provenance__proposal=p).source.name == "Embedding model"


def test_pending_concept_proposals_are_offered_and_picking_one_accepts_it_too(
    page, live_server, login, f
):
    """The picker offers a concept that is only proposed; picking it accepts that proposal
    with the edge instead of creating a twin beside it."""
    doc = f.lesson()
    ce = f.concept_proposal("Cross-encoder", doc=doc)
    p = f.edge_proposal(f.concept("Rerankers"), f.concept("BM25"), doc=doc)
    login("reviewer")
    open_focus(page, live_server, p)
    open_edit(page)
    page.keyboard.press("Tab")
    page.keyboard.type("cross")
    option = page.locator("#target-listbox [role=option][data-kind=proposal]")
    expect(option).to_contain_text("pending concept proposal")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    expect(page.locator("#edit-target-proposal")).to_have_value(str(ce.pk))
    page.keyboard.press("Control+Enter")
    expect(card(page)).to_contain_text("with the concept “Cross-encoder”")
    assert status(ce) == "accepted"
    assert Edge.objects.get(provenance__proposal=p).target == Proposal.objects.get(pk=ce.pk).concept


def test_the_concept_picker_has_no_serious_accessibility_violation(page, live_server, login, f):
    """axe-core on the open combobox and its listbox."""
    from tests.browser.axe import axe_violations, report

    f.concept("Embeddings")
    f.concept_proposal("Embedding model")
    p = f.edge_proposal(f.concept("Vector search"), f.concept("ANN"))
    login("reviewer")
    open_focus(page, live_server, p)
    open_edit(page)
    page.keyboard.type("Embed")
    expect(page.locator("#source-listbox [role=option]").first).to_be_visible()
    page.keyboard.press("ArrowDown")
    found = axe_violations(page)
    assert not found, report(found)


def test_escape_closes_suggestions_then_cancels_the_edit_and_writes_nothing(
    page, live_server, login, f
):
    """Esc first closes open suggestions; the next Esc brings the card back unchanged."""
    p = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))
    login("reviewer")
    open_focus(page, live_server, p)
    open_edit(page)
    page.keyboard.type("Vector")
    expect(page.locator("#source-listbox [role=option]").first).to_contain_text("Vector search")
    page.keyboard.press("Escape")  # the first Esc closes the suggestions, keeping the edit
    expect(page.locator("#source-listbox [role=option]")).to_have_count(0)
    expect(page.locator("#card .edit-form")).to_be_visible()
    expect(page.locator("#edit-source")).to_have_value("Vector")
    page.keyboard.press("Escape")
    expect(page.locator("#card .edit-form")).to_have_count(0)
    expect_card(page, p)
    expect(page.locator("#accept-button")).to_be_visible()
    assert status(p) == "pending" and not Decision.objects.exists()
    assert_no_reload(page)
