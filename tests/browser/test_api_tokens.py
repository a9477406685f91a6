"""API tokens in a real browser: made on the page, used by an agent, revoked."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]


def test_a_token_made_on_the_page_reads_the_api_until_it_is_revoked(
    page, live_server, login, f, shot, playwright
):
    """The token is shown once, works as a bearer for an agent with no session, and is
    refused the moment it is revoked; the page logs no console error."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    f.concept("Vector search")
    login("viewer")
    page.click("a:has-text('API')")
    page.fill("#token-name", "tutor-bot")
    page.click("button:has-text('Make a token')")
    token = page.input_value("#new-token")
    assert token.startswith("kgr_")
    expect(page.locator("#token-name")).to_have_value("")
    shot("api-tokens")

    # The agent: its own HTTP client, no cookies, only the bearer token.
    agent = playwright.request.new_context(
        base_url=live_server.url, extra_http_headers={"Authorization": f"Bearer {token}"}
    )
    try:
        ok = agent.get("/api/v1/concepts?q=vector")
        assert ok.status == 200
        assert ok.json()["results"][0]["concept"]["name"] == "Vector search"

        page.goto(f"{live_server.url}/api/tokens/")
        expect(page.locator("#new-token")).to_have_count(0)
        expect(page.locator("table.table")).to_contain_text("tutor-bot")
        page.click("button:has-text('Revoke')")
        expect(page.locator(".messages")).to_contain_text("Revoked tutor-bot")
        expect(page.locator("table.table")).to_contain_text("revoked")
        refused = agent.get("/api/v1/concepts?q=vector")
        assert refused.status == 401
        assert "Bearer" in refused.json()["detail"]
    finally:
        agent.dispose()
    assert errors == []
