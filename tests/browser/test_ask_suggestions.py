"""The Ask page's suggestions in headless Chromium: a team's documentation graph offers
questions in its own words, each one followed is answered; an empty graph says there is
nothing to ask yet; axe-clean; no console errors."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests import doc_world
from tests.browser.axe import axe_violations, report

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]


@pytest.fixture(autouse=True)
def console_errors(page):
    seen: list[str] = []
    page.on("console", lambda m: seen.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen.append(str(e)))
    yield seen


def test_an_empty_graph_says_there_is_nothing_to_ask_yet(page, live_server, login, console_errors):
    """No suggestion link, the reason in words."""
    login("viewer")
    page.goto(f"{live_server.url}/explore/ask/")
    section = page.locator("#ask-examples")
    expect(section.locator("h2")).to_have_text("Nothing to ask yet")
    expect(page.locator("#ask-nothing")).to_contain_text("this graph holds no concepts")
    expect(section.locator("a")).to_have_count(0)
    assert console_errors == []


def test_a_documentation_graph_suggests_its_own_questions_and_each_is_answered(
    page, live_server, login, console_errors, shot
):
    """Links in the graph's own words; following each one answers it, with cited hops."""
    doc_world.build()
    login("viewer")
    page.goto(f"{live_server.url}/explore/ask/")
    links = page.locator("#ask-examples a")
    expect(links.first).to_be_visible()
    questions = links.all_inner_texts()
    assert 4 <= len(questions) <= 8
    assert "What is a kind of Index?" in questions
    assert not any("learn before" in q or "prerequisite" in q for q in questions)
    placeholder = page.locator("#ask-q").get_attribute("placeholder")
    assert placeholder == questions[0]
    found = axe_violations(page)
    assert not found, report(found, "the Ask page's suggestions")
    shot("ask-suggestions-documentation")
    for question in questions:
        page.goto(f"{live_server.url}/explore/ask/")
        page.get_by_role("link", name=question, exact=True).click()
        expect(page.locator("#ask-answer")).to_have_attribute("data-status", "answered")
        expect(page.locator("#ask-q")).to_have_value(question)
        assert page.locator(".ask-hop").count() >= 1, question
    assert console_errors == []
