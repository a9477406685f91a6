"""Playwright against Debian's Chromium, serving the app with pytest-django's live_server."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import require

# Playwright's sync API runs an event loop in this thread; Django must still allow the
# test's own ORM calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-results" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    path = shutil.which("chromium") or "/usr/bin/chromium"
    require(os.path.exists(path), "Chromium is not installed (apt-get install -y chromium)")
    return {**browser_type_launch_args, "executable_path": path, "args": CHROMIUM_ARGS}


@pytest.fixture
def dialogs(page):
    """Every alert/confirm/prompt the page opens; hostile content must open none."""
    seen: list[str] = []

    def on_dialog(dialog):
        seen.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    return seen


@pytest.fixture
def shot(page):
    """Save a full-page screenshot under test-results/screenshots/ for people to look at."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


@pytest.fixture
def login(page, live_server, f):
    """Log in through the real form as a user of the given role."""

    def do(role: str = "reviewer"):
        f.user(role, role=role, password="browser-pass-1")
        page.goto(f"{live_server.url}/login/")
        page.fill("#id_username", role)
        page.fill("#id_password", "browser-pass-1")
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")

    return do
