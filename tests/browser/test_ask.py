"""The Ask page in headless Chromium: a question answered by keyboard alone with htmx
(only the results region swapped, the address kept), each hop a link to its edge with
the quote, source and revision; the plan and critique opened from the keyboard; the
same page without JavaScript; refusals in words; axe-clean; no console errors."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests import ask_world
from tests.browser.axe import axe_violations, report

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]


@pytest.fixture
def world(reference_data):
    return ask_world.build()


@pytest.fixture(autouse=True)
def console_errors(page):
    seen: list[str] = []
    page.on("console", lambda m: seen.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen.append(str(e)))
    yield seen


def test_a_question_is_answered_by_keyboard_with_cited_hops(
    page, live_server, login, world, console_errors, shot
):
    login("viewer")
    page.goto(f"{live_server.url}/explore/ask/")
    found = axe_violations(page)
    assert not found, report(found, "the Ask page before a question")
    page.evaluate("document.getElementById('ask-form').dataset.marker = 'kept'")
    page.locator("#ask-q").focus()
    page.keyboard.type("How is RAG connected to embeddings?")
    with page.expect_response(re.compile(r"/explore/ask/\?q=")):
        page.keyboard.press("Enter")
    expect(page.locator("#ask-message")).to_contain_text("RAG is connected to Embeddings")
    hops = page.locator(".ask-hop")
    expect(hops).to_have_count(2)
    edge = world.edge("Embeddings", "prerequisite", "Vector search")
    link = hops.nth(1).locator("a").first
    expect(link).to_have_attribute("href", f"/review/edges/{edge.pk}/")
    expect(hops.nth(1)).to_contain_text("“Embeddings are a prerequisite for vector search.”")
    expect(hops.nth(1)).to_contain_text("transformers-and-friends, revision 1")
    expect(page).to_have_url(re.compile(r"/explore/ask/\?q=How(%20|\+)is(%20|\+)RAG"))
    # Only the results were swapped: the form kept its marker.
    assert page.evaluate("document.getElementById('ask-form').dataset.marker") == "kept"

    how = page.locator("#ask-how")
    expect(how).not_to_have_attribute("open", "")
    how.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(how).to_have_attribute("open", "")
    expect(how).to_contain_text("connection")
    expect(how).to_contain_text("Critique")
    shot("ask-connection")
    found = axe_violations(page)
    assert not found, report(found, "the Ask page with an answer")
    assert console_errors == []


def test_a_bad_question_is_said_in_words_and_the_page_works_without_javascript(
    browser, browser_context_args, page, live_server, login, world, console_errors, f
):
    login("viewer")
    page.goto(f"{live_server.url}/explore/ask/")
    page.locator("#ask-q").fill("What is quantum networking part of?")
    with page.expect_response(re.compile(r"/explore/ask/")):
        page.get_by_role("button", name="Ask").click()
    expect(page.locator("#ask-message")).to_have_text(
        "I do not know the concept 'quantum networking'."
    )
    page.locator("#ask-q").fill("   ")
    with page.expect_response(re.compile(r"/explore/ask/")):
        page.get_by_role("button", name="Ask").click()
    expect(page.locator("#ask-error")).to_contain_text("Write a question first")
    console_errors[:] = [e for e in console_errors if "status of 400" not in e]
    assert console_errors == []

    f.user("plain", role="viewer", password="browser-pass-1")
    context = browser.new_context(**{**browser_context_args, "java_script_enabled": False})
    plain = context.new_page()
    plain.goto(f"{live_server.url}/login/")
    plain.fill("#id_username", "plain")
    plain.fill("#id_password", "browser-pass-1")
    plain.click("button[type=submit]")
    plain.wait_for_url(f"{live_server.url}/")
    plain.goto(f"{live_server.url}/explore/ask/")
    plain.fill("#ask-q", "What should I learn before LoRA?")
    plain.get_by_role("button", name="Ask").click()
    expect(plain.locator("#ask-concepts li")).to_have_count(5)
    expect(plain.locator("#ask-concepts li").first).to_have_text("Tokenization")
    expect(plain.locator("#ask-q")).to_have_value("What should I learn before LoRA?")
    context.close()
