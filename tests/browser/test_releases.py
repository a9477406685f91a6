"""Releases in a real browser: a curator cuts one from the Exports page and downloads a
file whose hash is the one the release page shows."""

from __future__ import annotations

import hashlib

import pytest
from playwright.sync_api import expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]


def test_a_curator_cuts_a_release_from_the_exports_page(
    page, live_server, login, f, shot, settings, tmp_path
):
    """The form (htmx) asks for it, the worker cuts it, its page lists the notes and the
    files, and a download's SHA-256 is the one shown; a taken name is refused in words on
    the card; no console error."""
    settings.KG_RELEASE_DIR = tmp_path / "releases"
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    a, b = f.concept("Embeddings"), f.concept("Vector search")
    f.edge(a, b)
    login("curator")
    page.goto(f"{live_server.url}/exports/")
    page.fill("#release-cut input[name=name]", "2026-12")
    page.fill("#release-cut textarea[name=notes]", "Our first release.")
    page.click("#release-submit")
    expect(page.locator("#release-asked")).to_contain_text("2026-12")
    expect(page.locator("#release-ready")).to_be_visible()
    shot("release-asked")

    page.fill("#release-cut input[name=name]", "2026-12")
    page.click("#release-submit")
    expect(page.locator("#release-error")).to_contain_text('already a release named "2026-12"')
    # The refusal is a 409 the card shows; the browser logs the status, nothing else.
    errors[:] = [e for e in errors if "status of 409" not in e]

    page.goto(f"{live_server.url}/releases/")
    expect(page.locator("#release-2026-12")).to_be_visible()
    expect(page.locator("#release-builds .build-status")).to_contain_text("Done")
    page.click("#release-2026-12 a:has-text('2026-12')")
    expect(page.locator("h1")).to_have_text("Release 2026-12")
    expect(page.locator("#concepts-added")).to_contain_text("Vector search")
    expect(page.locator("#release-notes-own")).to_have_text("Our first release.")
    shot("release-page")
    shown = page.locator("#file-jsonld code.sha").inner_text()
    with page.expect_download() as info:
        page.click("#file-jsonld a")
    data = open(info.value.path(), "rb").read()  # noqa: PTH123, SIM115
    assert hashlib.sha256(data).hexdigest() == shown
    assert info.value.suggested_filename == "kgreview-2026-12-graph.jsonld"
    assert errors == []


@pytest.mark.parametrize("width", [1366, 390])
def test_the_release_pages_pass_axe_and_fit_a_phone(
    page, live_server, login, f, settings, tmp_path, width
):
    """The list and a release's page: axe finds nothing critical or serious, and at 390 px
    nothing scrolls the page sideways (the hashes' table scrolls in its own region)."""
    from kgreview.exports.releases.services import release_create
    from tests.browser.axe import axe_violations, report

    settings.KG_RELEASE_DIR = tmp_path / "releases"
    a, b = f.concept("Embeddings"), f.concept("Vector search")
    f.edge(a, b)
    release_create(name="2026-12", acting_user=None, notes="<script>alert(1)</script>")
    page.set_viewport_size({"width": width, "height": 844})
    login("curator")
    for path in ("/releases/", "/releases/2026-12/"):
        page.goto(live_server.url + path)
        expect(page.locator("main h1").first).to_be_visible()
        page.wait_for_load_state("networkidle")
        found = axe_violations(page)
        assert not found, report(found, f"{path} at {width}")
        wide = page.evaluate("document.scrollingElement.scrollWidth")
        assert wide <= width + 1, f"{path} is {wide} px wide at {width}"
    expect(page.locator("#release-notes-own")).to_have_text("<script>alert(1)</script>")


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (390, 844)])
def test_a_curator_watches_a_release_go_from_queued_to_building_to_built(
    page, live_server, login, f, shot, settings, tmp_path, monkeypatch, width, height
):
    """From the Releases page: the form asks for it, the builds region shows it queued at
    once, then building when a worker takes it, then done with a link (the region polls
    on the page's own clock, never the wall's), and stops asking. The notes open, a file
    downloads with the hash the page shows; axe finds nothing serious; nothing scrolls
    sideways."""
    from kgreview.exports import tasks
    from kgreview.exports.models import ReleaseBuild
    from kgreview.exports.releases.services import release_build_carry_out, release_build_claim
    from tests.browser.axe import axe_violations, report

    settings.KG_RELEASE_DIR = tmp_path / "releases"
    held: list[int] = []  # the task's message, held until the test plays the worker
    monkeypatch.setattr(tasks.release_build, "delay", lambda build_id: held.append(build_id))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    a, b = f.concept("Embeddings"), f.concept("Vector search")
    f.edge(a, b)
    page.set_viewport_size({"width": width, "height": height})
    login("curator")
    page.clock.install()
    page.goto(f"{live_server.url}/releases/")
    expect(page.locator("#release-builds")).to_contain_text("No release has been asked")
    page.fill("#release-cut input[name=name]", "2026-12")
    page.fill("#release-cut textarea[name=notes]", "Spring term, reviewed twice.")
    page.click("#release-submit")
    expect(page.locator("#release-asked")).to_contain_text("the worker is building it")
    state = page.locator("#release-builds .build-status .build-state")
    expect(state).to_have_text("Queued")
    (build_id,) = held
    page.evaluate("window.scrollTo(0, 0)")  # the sticky bar at the top of the shot
    shot(f"release-queued-{width}")

    release_build_claim(build_id=build_id, claim="task:browser")
    page.clock.run_for(2100)
    expect(state).to_have_text("Building")
    page.evaluate("window.scrollTo(0, 0)")  # the sticky bar at the top of the shot
    shot(f"release-building-{width}")

    release_build_carry_out(build=ReleaseBuild.objects.get(pk=build_id))
    page.clock.run_for(2100)
    expect(state).to_have_text("Done")
    expect(page.locator("#release-list #release-2026-12")).to_be_visible()  # out of band
    expect(page.locator("#release-builds")).not_to_have_attribute(
        "hx-trigger", "releaseAsked from:body, every 2s"
    )
    found = axe_violations(page)
    assert not found, report(found, f"/releases/ at {width}")
    wide = page.evaluate("document.scrollingElement.scrollWidth")
    assert wide <= width + 1, f"/releases/ is {wide} px wide at {width}"
    page.evaluate("window.scrollTo(0, 0)")  # the sticky bar at the top of the shot
    shot(f"release-built-{width}")

    page.click("#release-builds a:has-text('2026-12')")
    expect(page.locator("h1")).to_have_text("Release 2026-12")
    expect(page.locator("#release-notes-own")).to_have_text("Spring term, reviewed twice.")
    expect(page.locator("#concepts-added")).to_contain_text("Vector search")
    found = axe_violations(page)
    assert not found, report(found, f"/releases/2026-12/ at {width}")
    wide = page.evaluate("document.scrollingElement.scrollWidth")
    assert wide <= width + 1, f"/releases/2026-12/ is {wide} px wide at {width}"
    page.evaluate("window.scrollTo(0, 0)")  # the sticky bar at the top of the shot
    shot(f"release-notes-{width}")
    shown = page.locator("#file-turtle code.sha").inner_text()
    with page.expect_download() as info:
        page.click("#file-turtle a")
    data = open(info.value.path(), "rb").read()  # noqa: PTH123, SIM115
    assert hashlib.sha256(data).hexdigest() == shown
    assert info.value.suggested_filename == "kgreview-2026-12-graph.ttl"
    assert errors == []
