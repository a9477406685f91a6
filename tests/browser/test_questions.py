"""Competency questions in a real browser: a curator adds a question with the keyboard,
runs it, sees it fail, follows its gap proposal to the review card, accepts it, and
the next run passes. Every page is axe-clean and runs under the CSP without a refusal."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests import ask_world
from tests.browser.axe import axe_violations, report

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

QUESTION = "What should I learn before quantization?"
MISSING_LINK = (
    "# Compressing models\n\nQuantization stores weights in fewer bits. "
    "Embeddings are a prerequisite for quantization.\n"
)


@pytest.fixture
def world(f):
    built = ask_world.build()
    f.source(slug="compressing-models", text=MISSING_LINK)
    return built


def csp_watch(page) -> list[str]:
    seen: list[str] = []
    page.on(
        "console", lambda m: seen.append(m.text) if "Content Security Policy" in m.text else None
    )
    return seen


def clean(page, where: str) -> None:
    found = axe_violations(page)
    assert not found, report(found, where)


def test_a_failing_question_is_fixed_through_its_gap_proposal(page, live_server, login, world):
    """Add (keyboard), run, fail, follow the gap proposal, accept, run again, pass."""
    refused = csp_watch(page)
    login("curator")
    page.goto(f"{live_server.url}/questions/")
    expect(page.get_by_role("heading", name="Competency questions")).to_be_visible()
    clean(page, "the empty questions page")

    page.get_by_role("textbox", name="Question").fill(QUESTION)
    page.get_by_role("textbox", name="Expected concepts").fill("Embeddings")
    page.get_by_role("textbox", name="Note").focus()
    page.keyboard.press("Tab")  # to "Add question"
    page.keyboard.press("Enter")
    expect(page.locator("#questions-table")).to_contain_text(QUESTION)
    expect(page.locator("#questions-table")).to_contain_text("not asked yet")

    page.get_by_role("button", name="Run now").click()
    expect(page.locator(".flash, .messages").first).to_contain_text("queued")
    expect(page.locator("#questions-table")).to_contain_text("Missing 1 of 1: Embeddings.")
    clean(page, "the questions page after a failing run")

    page.get_by_role("link", name=QUESTION).click()
    expect(page.locator("#gap-proposals")).to_contain_text(
        "Embeddings are a prerequisite for quantization."
    )
    clean(page, "the question's page")
    page.locator("#gap-proposals a").first.click()
    expect(page.locator(".asked-by")).to_contain_text(f"competency question: {QUESTION}")
    page.locator("#accept-button").click()
    expect(page.locator("#card")).not_to_contain_text("Pending", timeout=5000)

    page.goto(f"{live_server.url}/questions/")
    page.get_by_role("button", name="Run now").click()
    row = page.locator("#questions-table tbody tr").first
    expect(row).to_contain_text("pass")
    expect(row).to_contain_text("All 1 expected concept found")
    page.get_by_role("link", name=QUESTION).click()
    expect(page.locator("#history")).to_contain_text("fixed since the run before")
    assert not refused, refused


def test_an_unknown_concept_is_refused_in_words_in_place(page, live_server, login, world):
    """htmx swaps the form with the refusal; what was typed stays; nothing is added."""
    login("curator")
    page.goto(f"{live_server.url}/questions/")
    page.get_by_role("textbox", name="Question").fill("What is quantum networking part of?")
    page.get_by_role("textbox", name="Expected concepts").fill("Quantum networking")
    page.get_by_role("button", name="Add question").click()
    alert = page.locator("#question-refusal")
    expect(alert).to_contain_text("does not know the concept “Quantum networking”")
    expect(page.get_by_role("textbox", name="Question")).to_have_value(
        "What is quantum networking part of?"
    )
    expect(page.locator("#questions-table")).to_have_count(0)
    clean(page, "the form with a refusal")


def test_a_reviewer_reads_the_results_without_the_curator_controls(page, live_server, login, world):
    """No Run now, no form; the nav does not offer the page, the page still opens."""
    login("reviewer")
    expect(page.locator("#site-nav")).not_to_contain_text(re.compile("^Questions$"))
    page.goto(f"{live_server.url}/questions/")
    expect(page.get_by_role("heading", name="Competency questions")).to_be_visible()
    expect(page.get_by_role("button", name="Run now")).to_have_count(0)
    expect(page.locator("#question-form")).to_have_count(0)
    clean(page, "the questions page for a reviewer")
