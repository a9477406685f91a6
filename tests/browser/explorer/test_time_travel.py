"""The explorer's time slider and the changes page: an edge drawn only from when it was
recorded, and what happened since an instant."""

from __future__ import annotations

import re
from datetime import timedelta

from django.utils import timezone
from playwright.sync_api import expect

from kgreview.graph import services as graph
from tests.browser.explorer.support import (
    MARKS,
    click_edge,
    drawing,
    drawn,
)

pytestmark = MARKS


# --- time travel -------------------------------------------------------------------------


def test_moving_the_time_slider_before_an_edge_removes_it_from_the_drawing(
    page, live_server, login, curriculum, shot
):
    """Half way back (five days ago) the two-day-old edge is gone, the instant is said in
    words and kept in the address; the right end is the live graph again."""
    c = curriculum
    login("viewer")
    page.goto(f"{live_server.url}/explore/{c['vs'].pk}/")
    drawn(page, c["vs"].pk)
    assert c["recent"].pk in drawing(page)["edges"]
    expect(page.locator("#ex-time-words")).to_have_text("Now: the live graph.")
    click_edge(page, c["recent"].pk)
    expect(page.locator("#ex-edge-state")).to_have_text("In the graph")

    with page.expect_response(re.compile(r"/neighbours\?.*as_of=")):
        page.locator("#ex-time").fill("500")
    drawn(page, c["vs"].pk)
    d = drawing(page)
    assert c["recent"].pk not in d["edges"]
    assert "Agents" not in d["nodes"]
    assert c["reviewed"].pk in d["edges"]
    expect(page.locator("#ex-time-words")).to_contain_text(re.compile(r"^As of .+\(5 days ago\)$"))
    expect(page).to_have_url(re.compile(r"\?as_of=\d{4}-\d\d-\d\dT"))
    expect(page.locator("#ex-changes")).to_have_text("What changed since then")
    expect(page.locator("#ex-changes")).to_have_attribute(
        "href", re.compile(r"^/explore/changes/\?since=")
    )
    expect(page.locator("#ex-status")).to_contain_text("as of")
    # The open panel follows the slider: the edge is not part of that past.
    expect(page.locator("#ex-edge-state")).to_have_text("Not yet recorded at this instant")
    expect(page).to_have_url(re.compile(rf"&edge={c['recent'].pk}$"))
    shot("explorer-time-travel")

    page.locator("#ex-time").focus()
    with page.expect_response(re.compile(r"/neighbours\?")):
        page.keyboard.press("End")
    drawn(page, c["vs"].pk)
    assert c["recent"].pk in drawing(page)["edges"]
    expect(page).to_have_url(f"{live_server.url}/explore/{c['vs'].pk}/?edge={c['recent'].pk}")
    expect(page.locator("#ex-time-words")).to_have_text("Now: the live graph.")
    expect(page.locator("#ex-edge-state")).to_have_text("In the graph")


def test_the_changes_link_on_the_slider_lists_what_happened_since_that_instant(
    page, live_server, login, curriculum, shot
):
    """From five days ago, the changes page shows the two-day-old edge as added; its link
    opens it in the explorer with the panel."""
    c = curriculum
    login("viewer")
    page.goto(f"{live_server.url}/explore/{c['vs'].pk}/")
    drawn(page, c["vs"].pk)
    page.locator("#ex-time").fill("500")
    expect(page.locator("#ex-changes")).to_have_text("What changed since then")
    page.locator("#ex-changes").click()
    expect(page.locator("h1")).to_have_text("What changed in the graph")
    added = page.locator("#changes-added li")
    expect(added).to_have_count(1)
    expect(added).to_contain_text("RAG is related to Agents")
    expect(page.locator("#changes-invalidated")).to_contain_text("No edge was invalidated.")
    shot("explorer-changes")
    added.get_by_role("link").first.click()
    drawn(page, c["rag"].pk)
    expect(page.locator("#ex-claim")).to_have_text("RAG is related to Agents")
    expect(page.locator("#ex-reason")).to_have_text("Agents often retrieve.")


def test_the_changes_form_swaps_only_the_results_and_keeps_the_address(
    page, live_server, login, curriculum, console_errors, f, shot
):
    """The last seven days show an invalidation and a supersession with who and why; new
    dates replace only the results region through htmx and push the URL; a bad date is
    said in words."""
    c = curriculum
    carla = f.user("carla", role="curator")
    graph.edge_invalidate(
        edge=c["contrast"], reason="Not what the lesson contrasts.", acting_user=carla
    )
    newer = graph.edge_supersede(
        edge=c["tokens"], acting_user=carla, confidence=0.6, reason="Only sometimes.", why="Hedged."
    )
    login("viewer")
    page.goto(f"{live_server.url}/explore/changes/")
    gone = page.locator("#changes-invalidated li")
    expect(gone).to_have_count(1)
    expect(gone).to_contain_text("Keyword search contrasts with Vector search")
    expect(gone).to_contain_text("by carla: Not what the lesson contrasts.")
    replaced = page.locator("#changes-superseded li[data-edge]")
    expect(replaced).to_have_count(1)
    expect(replaced).to_contain_text("by carla: Hedged.")
    expect(replaced.locator(".changes")).to_contain_text("confidence 0.90 → 0.60")
    expect(replaced.locator(".changes")).to_contain_text(
        "reason “Stated in the lesson.” → “Only sometimes.”"
    )
    # The superseding row is new, as is the two-day-old edge.
    expect(page.locator("#changes-added li")).to_have_count(2)
    expect(page.locator(f"#changes-added li[data-edge='{newer.pk}']")).to_have_count(1)
    shot("explorer-changes-week")
    page.evaluate("document.getElementById('changes-form').dataset.marker = 'kept'")
    old = (timezone.localtime() - timedelta(days=12)).strftime("%Y-%m-%dT%H:%M:%S")
    page.locator("#ch-since").fill(old)
    with page.expect_response(re.compile(r"/explore/changes/\?since=")):
        page.get_by_role("button", name="Show changes").click()
    # From twelve days back the contrast edge and the first tokens row came and went inside
    # the window: in no list.
    expect(page.locator("#changes-added li")).to_have_count(4)
    expect(page.locator("#changes-invalidated")).to_contain_text("No edge was invalidated.")
    expect(page).to_have_url(re.compile(r"/explore/changes/\?since=.+&until="))
    # The form was not re-rendered: only the results region was swapped.
    assert page.evaluate("document.getElementById('changes-form').dataset.marker") == "kept"

    # A browser without a date picker lets people type anything; the 400 is swapped in.
    console_errors.expected = ["the server responded with a status of 400"]
    page.locator("#ch-since").evaluate("el => { el.type = 'text'; el.value = 'last tuesday'; }")
    with page.expect_response(re.compile(r"/explore/changes/")):
        page.get_by_role("button", name="Show changes").click()
    expect(page.locator("#changes-error")).to_contain_text("is not a date and time for since")
    assert page.evaluate("document.getElementById('changes-form').dataset.marker") == "kept"
