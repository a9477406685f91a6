"""The explorer's search, filters and start page; words instead of a blank canvas; hostile
names and evidence inert."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from kgreview.graph import services as graph
from kgreview.graph.models import Edge, RelationType
from kgreview.review.decide import decisions
from tests.browser.explorer.support import (
    HOSTILE_NAME,
    HOSTILE_TEXT,
    INJECTED,
    MARKS,
    click_edge,
    drawing,
    drawn,
)

pytestmark = MARKS


# --- search and controls -----------------------------------------------------------------


def test_search_suggests_concepts_and_the_keyboard_picks_one(page, live_server, login, curriculum):
    """/ focuses the search; arrows move through suggestions; Enter centres on the chosen one."""
    c = curriculum
    login("viewer")
    page.goto(f"{live_server.url}/explore/{c['vs'].pk}/")
    drawn(page, c["vs"].pk)
    page.locator("#ex-canvas").click(position={"x": 5, "y": 5})
    page.keyboard.press("/")
    expect(page.locator("#ex-q")).to_be_focused()
    page.keyboard.type("search")
    options = page.locator("#ex-suggest [role=option]")
    expect(options).to_have_count(2)
    expect(options.nth(0)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("ArrowDown")
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    expect(options.nth(0)).to_have_attribute("aria-selected", "false")
    page.keyboard.press("ArrowDown")
    expect(options.nth(0)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("ArrowUp")
    chosen = options.nth(1).inner_text()
    target = c["kw"] if chosen.startswith("Keyword") else c["vs"]
    assert chosen.startswith(("Keyword search", "Vector search"))
    page.keyboard.press("Enter")
    drawn(page, target.pk)
    expect(page).to_have_url(f"{live_server.url}/explore/{target.pk}/")
    expect(page.locator("#ex-suggest")).to_be_hidden()


def test_search_says_when_nothing_matches(page, live_server, login, curriculum):
    """A query that finds nothing says so in the suggestion list."""
    login("viewer")
    page.goto(f"{live_server.url}/explore/{curriculum['vs'].pk}/")
    drawn(page, curriculum["vs"].pk)
    page.locator("#ex-q").fill("zzqqxx")
    expect(page.locator("#ex-suggest")).to_have_text("No concept matches “zzqqxx”.")


def test_relation_filters_direction_and_edge_labels_change_the_drawing(
    page, live_server, login, curriculum, shot
):
    """Unticking a relation hides its edges and is kept in the address; outgoing only
    keeps edges leaving the centre; labels name each edge's relation."""
    c = curriculum
    login("viewer")
    page.goto(f"{live_server.url}/explore/{c['vs'].pk}/")
    drawn(page, c["vs"].pk)
    page.locator("#ex-relations input[value=contrasts_with]").uncheck()
    drawn(page, c["vs"].pk)
    assert c["contrast"].pk not in drawing(page)["edges"]
    assert "Keyword search" not in drawing(page)["nodes"]
    expect(page).to_have_url(re.compile(r"relation=prerequisite"))
    assert "relation=contrasts_with" not in page.url
    expect(page.locator("#ex-status")).to_have_text(
        "4 concepts and 4 edges within 2 steps of Vector search without Contrasts with, now."
    )
    page.locator("#ex-labels").check()
    look = drawing(page)["look"]
    assert look[str(c["reviewed"].pk)]["label"] == "Prerequisite"
    expect(page).to_have_url(re.compile(r"labels=1"))
    shot("explorer-filtered-labelled")

    page.reload()
    drawn(page, c["vs"].pk)
    expect(page.locator("#ex-relations input[value=contrasts_with]")).not_to_be_checked()
    expect(page.locator("#ex-labels")).to_be_checked()
    assert c["contrast"].pk not in drawing(page)["edges"]

    page.locator("#ex-direction").select_option("in")
    drawn(page, c["vs"].pk)
    # Into Vector search: Embeddings (prerequisite), RAG (builds on), Tokenization into
    # Embeddings; Agents too, as "related" is symmetric and walked both ways.
    assert drawing(page)["nodes"] == [
        "Agents",
        "Embeddings",
        "RAG",
        "Tokenization",
        "Vector search",
    ]

    for box in page.locator("#ex-relations input").all():
        box.uncheck()
    drawn(page, c["vs"].pk, state="empty")
    expect(page.locator("#ex-overlay")).to_have_text(
        "No relation type is ticked: tick at least one under Relations to draw edges."
    )


# --- words, never a blank canvas --------------------------------------------------------


def test_a_concept_without_edges_is_drawn_alone_with_words(page, live_server, login, curriculum, f):
    """An orphan is drawn as one node and the page says there are no edges."""
    lone = f.concept("Lonely idea")
    login("viewer")
    page.goto(f"{live_server.url}/explore/{lone.pk}/")
    drawn(page, lone.pk, state="empty")
    assert drawing(page)["nodes"] == ["Lonely idea"]
    expect(page.locator("#ex-overlay")).to_have_text("No edges within 2 steps of Lonely idea now.")


def test_a_truncated_neighbourhood_says_so(page, live_server, login, curriculum):
    """Past the node limit the status says only the nearest concepts are drawn."""
    login("viewer")
    page.goto(f"{live_server.url}/explore/{curriculum['vs'].pk}/?limit=3")
    drawn(page, curriculum["vs"].pk)
    assert len(drawing(page)["nodes"]) == 3
    expect(page.locator("#ex-status")).to_contain_text(
        "Only the 3 nearest concepts are drawn: more lie within 2 steps."
    )


def test_api_errors_are_said_in_words_on_the_canvas(
    page, live_server, login, curriculum, console_errors
):
    """A refused request shows the API's reason; an unreachable server says so."""
    vs = curriculum["vs"]
    console_errors.expected = [
        "the server responded with a status of 400",
        "net::ERR_FAILED",
    ]
    login("viewer")
    page.goto(f"{live_server.url}/explore/{vs.pk}/?relation=retracted_kind")
    drawn(page, vs.pk, state="error")
    expect(page.locator("#ex-overlay")).to_contain_text("Unknown relation retracted_kind.")
    assert page.evaluate("window.kgExplorer.cy.elements().length") == 0

    page.route(re.compile(r"/api/v1/concepts/\d+/neighbours"), lambda route: route.abort())
    page.goto(f"{live_server.url}/explore/{vs.pk}/")
    drawn(page, vs.pk, state="error")
    expect(page.locator("#ex-overlay")).to_have_text(
        "The server did not answer. Check the connection and try again."
    )


def test_the_start_page_offers_concepts_and_draws_one_in_place(
    page, live_server, login, curriculum, shot
):
    """/explore/ lists places to start; one click draws it at its own address, and back
    returns to the list."""
    login("viewer")
    page.goto(f"{live_server.url}/explore/")
    expect(page.locator("#ex-start")).to_be_visible()
    expect(page.locator("#ex-canvas")).to_be_hidden()
    expect(page.locator("#ex-time")).to_be_hidden()
    shot("explorer-start")
    page.locator("#ex-starts").get_by_role("link", name="RAG").click()
    drawn(page, curriculum["rag"].pk)
    expect(page).to_have_url(f"{live_server.url}/explore/{curriculum['rag'].pk}/")
    expect(page.locator("#ex-start")).to_be_hidden()
    expect(page.locator("#ex-time")).to_be_visible()
    page.go_back()
    expect(page.locator("#ex-start")).to_be_visible()
    expect(page.locator("h1 #ex-centre-name")).to_have_text("Explore the graph")


# --- hostile content ----------------------------------------------------------------------


def test_hostile_names_and_evidence_stay_inert_in_the_explorer(
    page, live_server, login, f, dialogs, shot
):
    """Markup in a concept name, relation label, evidence, reason, note and username is
    drawn and shown as text: no dialog opens and no element is injected."""
    text = f"{HOSTILE_NAME} is a prerequisite for vector search. {HOSTILE_TEXT}\n"
    doc = f.lesson("hostile", text=text)
    evil, vs = f.concept(HOSTILE_NAME), f.concept("Vector search")
    graph.relation_type_describe(
        relation=RelationType.objects.get(key="related"),
        label=HOSTILE_NAME,
        verb=HOSTILE_NAME,
        description=HOSTILE_TEXT,
        acting_user=None,
    )
    f.edge(vs, f.concept(HOSTILE_TEXT), "related", reason=HOSTILE_TEXT)
    p = f.edge_proposal(
        evil, vs, doc=doc, quote=f"{HOSTILE_NAME} is a prerequisite for vector search."
    )
    decisions.proposal_accept(
        proposal_id=p.pk, acting_user=f.user(HOSTILE_NAME, role="reviewer"), note=HOSTILE_TEXT
    )
    edge = Edge.objects.get(provenance__proposal=p)
    login("viewer")
    page.goto(f"{live_server.url}/explore/{evil.pk}/")
    drawn(page, evil.pk)
    expect(page.locator("h1 #ex-centre-name")).to_have_text(HOSTILE_NAME)
    click_edge(page, edge.pk)
    expect(page.locator("#ex-evidence mark")).to_have_text(
        f"{HOSTILE_NAME} is a prerequisite for vector search."
    )
    expect(page.locator("#ex-trail .note")).to_have_text(HOSTILE_TEXT)
    expect(page.locator("#ex-trail li")).to_contain_text(f"by {HOSTILE_NAME}")
    page.locator("#ex-claim").get_by_role("link", name="Vector search").click()
    drawn(page, vs.pk)
    expect(page.locator("#ex-edge-list")).to_contain_text(HOSTILE_TEXT)
    page.locator("#ex-edge-list button", has_text=HOSTILE_TEXT).click()
    expect(page.locator("#ex-reason")).to_have_text(HOSTILE_TEXT)
    expect(page.locator("#ex-claim")).to_contain_text(HOSTILE_NAME)
    page.locator("#ex-q").fill("img src")
    expect(page.locator("#ex-suggest [role=option]").first).to_contain_text(HOSTILE_NAME)
    shot("explorer-hostile")
    page.goto(f"{live_server.url}/explore/changes/")
    expect(page.locator("#changes-added")).to_contain_text(HOSTILE_NAME)
    assert dialogs == []
    assert page.locator(INJECTED).count() == 0
