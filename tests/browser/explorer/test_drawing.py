"""The explorer's drawing: coloured relations and arrows, re-centring with the back button,
the evidence panel and its claims, a quote gone from the current revision."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from kgreview.graph import services as graph
from kgreview.graph.models import RelationType
from tests.browser.explorer.support import (
    MARKS,
    QUOTE,
    click_edge,
    click_node,
    drawing,
    drawn,
    no_overlap,
    palette,
    rgb,
)
from tests.factories import LESSON_TEXT

pytestmark = MARKS


# --- the drawing ----------------------------------------------------------------------------


def test_the_neighbourhood_is_drawn_with_coloured_relations_and_arrows(
    page, live_server, login, curriculum, shot
):
    """Nodes within two steps, every edge in its relation's colour, arrows only on
    directed relations, the centre marked, and the counts in words."""
    c = curriculum
    login("viewer")
    page.goto(f"{live_server.url}/explore/{c['vs'].pk}/")
    drawn(page, c["vs"].pk)
    d = drawing(page)
    assert d["nodes"] == sorted(
        ["Vector search", "Embeddings", "RAG", "Keyword search", "Tokenization", "Agents"]
    )
    assert d["edges"] == sorted(
        c[k].pk for k in ("reviewed", "builds", "contrast", "tokens", "recent")
    )
    assert d["centre"] == ["Vector search"]
    colours = palette(page)
    look = {int(k): v for k, v in d["look"].items()}
    assert look[c["reviewed"].pk]["colour"] == rgb(colours["prerequisite"])
    assert look[c["builds"].pk]["colour"] == rgb(colours["builds_on"])
    assert look[c["contrast"].pk]["colour"] == rgb(colours["contrasts_with"])
    assert look[c["reviewed"].pk]["arrow"] == "triangle"
    assert look[c["contrast"].pk]["arrow"] == "none"
    assert look[c["recent"].pk]["arrow"] == "none"
    assert len({v["colour"] for v in look.values()}) == 4
    expect(page.locator("#ex-status")).to_have_text(
        "5 concepts and 5 edges within 2 steps of Vector search, now."
    )
    expect(page.locator("h1 #ex-centre-name")).to_have_text("Vector search")
    expect(page.locator("#ex-relations .ex-rel")).to_have_count(RelationType.objects.count())
    expect(page.locator("#ex-edge-list button")).to_have_count(5)
    # The panel sits beside the drawing, never on it.
    assert no_overlap(
        page.locator("#ex-canvas").bounding_box(), page.locator("#ex-panel").bounding_box()
    )
    shot("explorer-neighbourhood")


def test_clicking_a_node_recentres_and_the_back_button_returns(
    page, live_server, login, curriculum
):
    """A click on RAG draws RAG's neighbourhood at a new address that keeps the depth;
    back and forward move between the two centres."""
    c = curriculum
    login("viewer")
    page.goto(f"{live_server.url}/explore/{c['vs'].pk}/?depth=1")
    drawn(page, c["vs"].pk)
    expect(page.locator("#ex-depth")).to_have_value("1")
    assert "Tokenization" not in drawing(page)["nodes"]
    click_node(page, "RAG")
    drawn(page, c["rag"].pk)
    expect(page).to_have_url(f"{live_server.url}/explore/{c['rag'].pk}/?depth=1")
    assert drawing(page)["centre"] == ["RAG"]
    assert drawing(page)["nodes"] == ["Agents", "RAG", "Vector search"]
    expect(page.locator("h1 #ex-centre-name")).to_have_text("RAG")
    expect(page).to_have_title(re.compile("^RAG · Explorer"))
    page.go_back()
    drawn(page, c["vs"].pk)
    expect(page).to_have_url(f"{live_server.url}/explore/{c['vs'].pk}/?depth=1")
    assert drawing(page)["centre"] == ["Vector search"]
    expect(page.locator("h1 #ex-centre-name")).to_have_text("Vector search")
    page.go_forward()
    drawn(page, c["rag"].pk)
    assert drawing(page)["centre"] == ["RAG"]


def test_clicking_an_edge_shows_its_evidence_and_decisions_in_the_panel(
    page, live_server, login, curriculum, shot
):
    """The panel says the claim, highlights the quote in its surrounding text, links the
    source revision, gives the reason and the decision trail; Esc closes it."""
    c = curriculum
    edge = c["reviewed"]
    login("viewer")
    page.goto(f"{live_server.url}/explore/{c['vs'].pk}/")
    drawn(page, c["vs"].pk)
    click_edge(page, edge.pk)
    panel = page.locator("#ex-panel")
    expect(panel.locator("#ex-claim")).to_have_text(
        "Embeddings is a prerequisite for Vector search"
    )
    expect(panel.locator("#ex-evidence mark")).to_have_text(QUOTE)
    # The lesson is shorter than the context the API quotes: all of it, and no "…".
    expect(panel.locator("#ex-evidence blockquote")).to_have_text(LESSON_TEXT.strip())
    expect(panel.locator("#ex-source a")).to_have_attribute("href", "/sources/vectors/?rev=1")
    expect(panel.locator("#ex-source")).to_contain_text("This is the current revision")
    expect(panel.locator("#ex-reason")).to_have_text("The lesson says so.")
    expect(panel.locator("#ex-trail li")).to_have_count(1)
    expect(panel.locator("#ex-trail li")).to_contain_text("Accept")
    expect(panel.locator("#ex-trail li")).to_contain_text("by rita")
    expect(panel.locator("#ex-trail .note")).to_have_text("Clear cue phrase.")
    expect(panel.get_by_role("link", name="Edge history")).to_have_attribute(
        "href", f"/review/edges/{edge.pk}/"
    )
    expect(panel.get_by_role("link", name="Concept page: Embeddings")).to_have_attribute(
        "href", f"/concepts/{c['emb'].pk}/"
    )
    expect(page).to_have_url(f"{live_server.url}/explore/{c['vs'].pk}/?edge={edge.pk}")
    assert page.evaluate(f"window.kgExplorer.cy.$id('e{edge.pk}').hasClass('picked')"), (
        "the clicked edge is not marked in the drawing"
    )
    assert no_overlap(page.locator("#ex-canvas").bounding_box(), panel.bounding_box())
    shot("explorer-edge-panel")

    # The address is shareable: loading it opens the same panel.
    page.reload()
    drawn(page, c["vs"].pk)
    expect(panel.locator("#ex-evidence mark")).to_have_text(QUOTE)

    page.locator("body").press("Escape")
    expect(panel.locator("#ex-evidence")).to_have_count(0)
    expect(panel.locator("#ex-edge-list")).to_be_visible()
    expect(page).to_have_url(f"{live_server.url}/explore/{c['vs'].pk}/")


def test_a_claim_in_the_panel_recentres_on_the_concept_it_names(
    page, live_server, login, curriculum
):
    """The other end of an edge, clicked in the panel, becomes the centre."""
    c = curriculum
    login("viewer")
    page.goto(f"{live_server.url}/explore/{c['vs'].pk}/?edge={c['tokens'].pk}")
    drawn(page, c["vs"].pk)
    expect(page.locator("#ex-claim")).to_have_text("Tokenization is a prerequisite for Embeddings")
    expect(page.locator("#ex-evidence")).to_have_count(0)
    expect(page.locator("#ex-panel")).to_contain_text("No evidence was recorded for this edge.")
    page.locator("#ex-claim").get_by_role("link", name="Tokenization").click()
    drawn(page, c["tok"].pk)
    expect(page).to_have_url(f"{live_server.url}/explore/{c['tok'].pk}/")


def test_the_panel_says_when_the_quote_is_gone_from_the_current_revision(
    page, live_server, login, curriculum
):
    """After the lesson is rewritten without the quote, the panel still shows the quote in
    the revision it came from and says the current revision no longer has it."""
    c = curriculum
    graph.source_import(
        slug="vectors", title="Vectors", text="Vectors, rewritten.\n", acting_user=None
    )
    login("viewer")
    page.goto(f"{live_server.url}/explore/{c['vs'].pk}/?edge={c['builds'].pk}")
    drawn(page, c["vs"].pk)
    expect(page.locator("#ex-evidence mark")).to_have_text(
        "Retrieval-augmented generation (RAG) builds on vector search."
    )
    expect(page.locator("#ex-source a")).to_have_attribute("href", "/sources/vectors/?rev=1")
    expect(page.locator("#ex-source")).to_contain_text(
        "Not in the current revision (2): the text changed"
    )
