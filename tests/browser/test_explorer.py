"""The explorer in headless Chromium: the neighbourhood drawn with cytoscape, re-centring
with history, the evidence panel, the time slider, search by keyboard, filters, words
instead of a blank canvas, hostile names inert, and the changes page; no console errors."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from kgreview.graph import services as graph
from kgreview.graph.models import Edge, RelationType
from kgreview.review.decide import decisions
from tests.factories import LESSON_TEXT

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

VIEWPORT = {"width": 1366, "height": 820}
HOSTILE_NAME = "<img src=x onerror=alert('name ran')>"
HOSTILE_TEXT = "<script>alert('text ran')</script><svg onload=alert('svg ran')>"
INJECTED = "main img, main svg, main iframe, main script:not(#explorer-config)"
QUOTE = "Before learning vector search you should understand embeddings."


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    """A common laptop screen: the drawing and the panel must fit it side by side."""
    return {**browser_context_args, "viewport": VIEWPORT}


class ConsoleErrors(list):
    """Console errors and uncaught exceptions; a test that provokes a failed request on
    purpose names the browser's own message for it in ``expected``."""

    def __init__(self):
        super().__init__()
        self.expected: list[str] = []

    def unexpected(self) -> list[str]:
        return [m for m in self if not any(e in m for e in self.expected)]


@pytest.fixture(autouse=True)
def console_errors(page):
    """Every test ends with no console error and no page error."""
    seen = ConsoleErrors()

    def on_console(message):
        if message.type == "error":
            seen.append(f"console: {message.text} at {message.location.get('url')}")

    page.on("console", on_console)
    page.on("pageerror", lambda e: seen.append(f"pageerror: {e}"))
    yield seen
    assert seen.unexpected() == [], "the page logged errors"


def _back(edge: Edge, days: float) -> Edge:
    when = timezone.now() - timedelta(days=days)
    Edge.objects.filter(pk=edge.pk).update(recorded_at=when, valid_at=when)
    return Edge.objects.get(pk=edge.pk)


@pytest.fixture
def curriculum(f):
    """Vector search at the centre of five edges; all recorded ten days ago but one,
    RAG related to Agents, recorded two days ago. The first edge came through review."""
    doc = f.lesson("vectors")
    rev = doc.current_revision
    emb, vs, rag = f.concept("Embeddings"), f.concept("Vector search"), f.concept("RAG")
    kw, tok, ag = f.concept("Keyword search"), f.concept("Tokenization"), f.concept("Agents")
    rita = f.user("rita", role="reviewer")
    p = f.edge_proposal(emb, vs, doc=doc, quote=QUOTE)
    decisions.proposal_accept(proposal_id=p.pk, acting_user=rita, note="Clear cue phrase.")
    reviewed = _back(Edge.objects.get(provenance__proposal=p), 10)
    builds = _back(
        f.edge(
            rag,
            vs,
            "builds_on",
            evidence=f.evidence(
                rev, "Retrieval-augmented generation (RAG) builds on vector search."
            ),
        ),
        10,
    )
    contrast = _back(
        f.edge(
            kw,
            vs,
            "contrasts_with",
            evidence=f.evidence(rev, "Unlike keyword search, dense retrieval compares meanings."),
        ),
        10,
    )
    tokens = _back(f.edge(tok, emb), 10)
    recent = _back(f.edge(rag, ag, "related", reason="Agents often retrieve."), 2)
    return {
        "emb": emb,
        "vs": vs,
        "rag": rag,
        "kw": kw,
        "tok": tok,
        "ag": ag,
        "reviewed": reviewed,
        "builds": builds,
        "contrast": contrast,
        "tokens": tokens,
        "recent": recent,
    }


# --- helpers ------------------------------------------------------------------------------


def drawn(page, centre_id: int, state: str = "ready") -> None:
    """Wait until the drawing around ``centre_id`` is finished."""
    page.wait_for_function(
        "([id, state]) => { const r = document.getElementById('explorer');"
        " return r.dataset.centre === String(id) && r.dataset.state === state; }",
        arg=[centre_id, state],
    )


def drawing(page) -> dict:
    """What cytoscape holds: node names, edge ids, the centre, and each edge's look."""
    return page.evaluate(
        """() => {
        const cy = window.kgExplorer.cy;
        return {
          nodes: cy.nodes().map(n => n.data('name')).sort(),
          edges: cy.edges().map(e => e.data('eid')).sort((a, b) => a - b),
          centre: cy.nodes('.centre').map(n => n.data('name')),
          look: Object.fromEntries(cy.edges().map(e => [e.data('eid'), {
            colour: e.style('line-color'), arrow: e.style('target-arrow-shape'),
            label: e.style('label')}])),
        };
    }"""
    )


def click_node(page, name: str) -> None:
    box = page.locator("#ex-canvas").bounding_box()
    pos = page.evaluate(
        "name => window.kgExplorer.cy.nodes().filter(n => n.data('name') === name)"
        "[0].renderedPosition()",
        name,
    )
    page.mouse.click(box["x"] + pos["x"], box["y"] + pos["y"])


def click_edge(page, edge_id: int) -> None:
    box = page.locator("#ex-canvas").bounding_box()
    pos = page.evaluate("id => window.kgExplorer.cy.$id('e' + id).renderedMidpoint()", edge_id)
    page.mouse.click(box["x"] + pos["x"], box["y"] + pos["y"])


def rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r},{g},{b})"


def palette(page) -> dict[str, str]:
    return page.evaluate(
        "() => Object.fromEntries(JSON.parse(document.getElementById('explorer-config')"
        ".textContent).relations.map(r => [r.key, r.colour]))"
    )


def no_overlap(a: dict, b: dict) -> bool:
    return a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]


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
