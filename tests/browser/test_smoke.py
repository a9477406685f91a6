"""A reviewer logs in, sees the curriculum and reads a lesson; hostile HTML stays inert."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from kgreview.graph import services
from tests.graph.test_import_sources import CORPUS

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

HOSTILE = (
    "# Evil lesson\n\n"
    "<script>alert('script ran')</script>\n"
    '<img src="x" onerror="alert(\'img ran\')">\n'
    "<a href=\"javascript:alert('link ran')\">click</a>\n"
    '"><svg onload=alert("svg ran")>\n'
)


def test_login_then_curriculum_lists_every_imported_lesson(page, live_server, login, shot):
    """After logging in, the home page lists the sample curriculum."""
    call_command("import_sources", str(CORPUS), verbosity=0)
    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(f"{live_server.url}/login/?next=/")
    shot("login")
    login("reviewer")
    rows = page.locator("#source-list tbody tr")
    expect(rows).to_have_count(len(list(CORPUS.glob("*.md"))))
    expect(page.get_by_role("link", name="Retrieval-Augmented Generation")).to_be_visible()
    expect(page.locator("#worker-status")).to_contain_text("worker")
    shot("curriculum")
    page.get_by_role("link", name="Retrieval-Augmented Generation").click()
    expect(page.locator("h1")).to_have_text("Retrieval-Augmented Generation")
    expect(page.locator("#source-text")).to_contain_text("Before learning RAG")
    shot("source-detail")


def test_wrong_password_is_explained(page, live_server, f):
    """A failed login says so in words."""
    f.user("ada", password="right-password-1")
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "nope")
    page.click("button[type=submit]")
    expect(page.get_by_role("alert")).to_contain_text("do not match")


def test_hostile_lesson_renders_inert_in_every_view(page, live_server, login, dialogs, shot):
    """Script, event handlers and javascript: links in a lesson never run."""
    services.source_import(
        slug="evil", title="<img src=x onerror=alert('title ran')>", text=HOSTILE, acting_user=None
    )
    login("viewer")
    page.goto(f"{live_server.url}/")
    page.goto(f"{live_server.url}/sources/evil/")
    expect(page.locator("#source-text")).to_contain_text("<script>alert('script ran')</script>")
    page.wait_for_timeout(300)
    assert page.locator("#source-text script, #source-text img, #source-text svg").count() == 0
    shot("hostile-source")
    assert dialogs == []


def test_logout_returns_to_the_login_page(page, live_server, login):
    """The log-out button ends the session."""
    login("viewer")
    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(f"{live_server.url}/login/")
    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(f"{live_server.url}/login/?next=/")
