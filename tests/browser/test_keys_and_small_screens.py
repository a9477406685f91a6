"""Keyboard and small-screen faults a UX run found (issue 28), in a real browser: the
queue's parts each a key away, focus kept after a bulk decision, the key help on every
page, a refused edit that puts the reviewer back in the field it names, both sides of a
contradiction above the decision bar on a laptop, tables and charts that scroll in their
own box on a phone, and the queue's quotes shown as words, not Markdown."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from playwright.sync_api import expect

from kgreview.graph import services as graph
from kgreview.review.decide import decisions
from kgreview.review.models import Decision, Proposal
from kgreview.review.services import flags_text
from tests.browser import test_accessibility
from tests.browser.axe import axe_violations, report
from tests.browser.test_accessibility import LAPTOP, PHONE, open_page, page_width
from tests.browser.test_review import assert_no_reload, card, mark_page, open_focus, pairs, status

# The accessibility tests' planted world (a lesson, a small graph, a contradiction, runs).
world = test_accessibility.world

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]


# --- 1. the queue's parts, each a key away ------------------------------------------------


def test_the_queues_filters_bulk_bar_rows_and_undo_are_each_a_key_away(page, live_server, login, f):
    """/ focuses the filters, b the bulk bar, u undoes; and the links that say so are the
    first stops after "Skip to content", not 28 to 73 Tabs away."""
    older, newer = pairs(f, 2, "Keys")
    login("reviewer")
    decided = f.edge_proposal(f.concept("Chunking"), f.concept("Retrieval"))
    reviewer = Decision._meta.get_field("user").related_model.objects.get(username="reviewer")
    decisions.proposal_accept(proposal_id=decided.pk, acting_user=reviewer)
    page.goto(f"{live_server.url}/review/")
    page.wait_for_load_state("networkidle")

    page.keyboard.press("/")
    status_radio = page.locator("#filters input[name=status]:checked")
    expect(status_radio).to_be_focused()
    page.keyboard.press("b")
    expect(page.locator("#bulk-action")).to_be_focused()
    page.keyboard.press("Escape")  # leaves the select; the keys act again

    # By Tab: skip link, then the queue's own links to its parts.
    page.reload()
    page.wait_for_load_state("networkidle")
    page.keyboard.press("Tab")
    expect(page.locator("a.skip-link")).to_be_focused()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name=re.compile("^Filters"))).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name=re.compile("^Bulk decision"))).to_be_focused()
    page.keyboard.press("Tab")
    rows_link = page.get_by_role("link", name=re.compile("^Rows"))
    expect(rows_link).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator("#undo-button")).to_be_focused()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")  # Rows: the first row, focus on its link
    first_row = page.locator(".queue-row").first
    expect(first_row).to_have_class(re.compile(r"\bselected\b"))
    expect(first_row.locator("a").first).to_be_focused()
    page.keyboard.press("j")  # focus moves with the selection
    expect(page.locator(".queue-row").nth(1).locator("a").first).to_be_focused()

    page.locator("#undo-button").blur()
    page.keyboard.press("u")
    expect(page.locator(".messages")).to_contain_text(f"Undone: accept #{decided.pk}")
    page.wait_for_load_state("networkidle")
    assert status(decided) == "pending"
    assert [status(older), status(newer)] == ["pending", "pending"]

    page.keyboard.press("?")
    help_box = page.locator("#help")
    expect(help_box).to_be_visible()
    for words in ("Filters", "Bulk decision", "Undo your last decision"):
        expect(help_box).to_contain_text(words)


# --- 2. focus and counts after a bulk decision --------------------------------------------


def test_after_a_bulk_apply_focus_stays_in_the_bulk_panel_and_the_counts_are_fresh(
    page, live_server, login, f
):
    """Preview puts focus on "Yes"; Enter applies; focus is on the panel (not lost to the
    page) and Tab reaches Undo; the counts and the rows say what changed, without a reload."""
    e1, e2, e3 = pairs(f, 3, "Bulk")
    login("reviewer")
    page.goto(f"{live_server.url}/review/")
    mark_page(page)
    expect(page.locator("#result-count")).to_have_text("3")
    rows = page.locator(".queue-row")
    for _ in range(2):
        page.keyboard.press("j")
        page.keyboard.press("x")
    page.keyboard.press("b")
    page.select_option("#bulk-action", "accept")
    page.get_by_role("button", name="…the selected").click()
    yes = page.locator("#bulk-confirm")
    expect(yes).to_be_focused()
    page.keyboard.press("Enter")
    panel = page.locator("#bulk-panel")
    expect(panel).to_contain_text("Accepted 2 proposals")
    expect(panel).to_be_focused()
    # The counts are asked for again: two fewer pending.
    expect(page.locator("#result-count")).to_have_text("1")
    pending = page.locator("label.facet", has=page.locator("input[value=pending]"))
    expect(pending.locator(".count")).to_have_text("1")
    expect(rows.nth(0)).to_have_class(re.compile(r"\bdecided\b"))
    expect(rows.nth(1)).to_have_class(re.compile(r"\bdecided\b"))
    expect(rows.nth(0).locator("input[type=checkbox]")).to_be_disabled()
    expect(rows.nth(2)).not_to_have_class(re.compile(r"\bdecided\b"))
    page.keyboard.press("Tab")
    expect(page.locator("#bulk-undo")).to_be_focused()
    assert_no_reload(page)
    assert sorted(status(p) for p in (e1, e2, e3)) == ["accepted", "accepted", "pending"]


# --- 3. the key help on every page --------------------------------------------------------

INSIDE_HELP = "document.getElementById('help').contains(document.activeElement)"
HELP_PAGES = {
    "queue": ("/review/", "Bulk decision"),
    "review": ("/review/focus/", "Accept"),
    "sources": ("/", "Go to a page"),
    "concepts": ("/concepts/", "Search by name or alias"),
    "agents": ("/agents/", "Go to a page"),
    "insights": ("/insights/", "Go to a page"),
    "decisions": ("/review/decisions/", "Go to a page"),
}


def test_question_mark_opens_the_key_help_on_every_page_with_focus_kept_inside(
    page, live_server, login, f
):
    """? opens the help (the page's keys and the site's); Tab stays inside it; a key the
    page knows does nothing behind it; Esc closes it and focus goes back; axe is clean."""
    proposal = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))
    page.set_viewport_size(LAPTOP)
    login("reviewer")
    help_box = page.locator("#help")
    for name, (path, words) in HELP_PAGES.items():
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
        expect(help_box, name).to_be_hidden()
        page.keyboard.press("?")
        expect(help_box, name).to_be_visible()
        expect(help_box.get_by_role("heading", name="Keyboard")).to_be_visible()
        expect(help_box).to_contain_text(words)
        for _ in range(4):
            page.keyboard.press("Tab")
            assert page.evaluate(INSIDE_HELP), f"on {name}, Tab left the open help"
        page.keyboard.press("Shift+Tab")
        assert page.evaluate(INSIDE_HELP)
        found = axe_violations(page)
        assert not found, report(found, f"{name} with the key help open")
        page.keyboard.press("a")  # the card's Accept: not while the help is open
        page.keyboard.press("Escape")
        expect(help_box, name).to_be_hidden()
        assert not page.evaluate(INSIDE_HELP)
    assert status(proposal) == "pending"
    # The second Tab stop of every page, after "Skip to content", opens it too.
    page.goto(f"{live_server.url}/concepts/")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    keys_link = page.get_by_role("link", name="Keyboard keys")
    expect(keys_link).to_be_focused()
    expect(keys_link).to_be_in_viewport()
    page.keyboard.press("Enter")
    expect(help_box).to_be_visible()
    page.locator("#help-close").click()
    expect(help_box).to_be_hidden()
    expect(keys_link).to_be_focused()


def test_slash_puts_the_focus_in_the_concepts_search(page, live_server, login, f):
    """A page's own key from the site's script: / on the Concepts page."""
    login("reviewer")
    page.goto(f"{live_server.url}/concepts/")
    page.keyboard.press("/")
    expect(page.locator("input[name=q]")).to_be_focused()
    page.keyboard.type("emb")  # the / itself was not typed
    expect(page.locator("input[name=q]")).to_have_value("emb")


def test_g_then_a_letter_goes_to_that_page(page, live_server, login, f):
    """g c goes to the concepts, g q to the queue, from any page."""
    login("reviewer")
    page.goto(f"{live_server.url}/insights/")
    page.keyboard.press("g")
    page.keyboard.press("c")
    page.wait_for_url(re.compile(r"/concepts/$"))
    page.keyboard.press("g")
    page.keyboard.press("q")
    page.wait_for_url(re.compile(r"/review/$"))


# --- 4. a refused edit --------------------------------------------------------------------


def test_a_refused_edit_puts_focus_in_the_field_it_names_and_arrow_down_shows_its_choices(
    page, live_server, login, f, shot
):
    """A target name no concept has is refused; focus is in the target's picker (marked
    invalid, described by the refusal), and ↓ lists its choices at once: no dead end."""
    f.concept("Dense retrieval")
    p = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))
    login("reviewer")
    open_focus(page, live_server, p)
    page.keyboard.press("e")
    expect(page.locator("#edit-source")).to_be_focused()
    target = page.locator("#edit-target")
    target.fill("Dense retrieva")  # typed, never picked
    page.locator("#target-options").evaluate("el => el.innerHTML = ''")
    page.keyboard.press("Control+Enter")
    refusal = card(page).locator(".flash.bad")
    expect(refusal).to_contain_text('No concept is called "Dense retrieva"')
    expect(target).to_be_focused()
    expect(target).to_have_attribute("aria-invalid", "true")
    expect(target).to_have_attribute("aria-describedby", re.compile(r"\bcard-error\b"))
    page.keyboard.press("ArrowDown")
    listbox = page.locator("#target-listbox[role=listbox]")
    expect(listbox.locator("[role=option]", has_text="Dense retrieval")).to_be_visible()
    expect(target).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    expect(target).to_have_value("Dense retrieval")
    shot("ux-refused-edit-picked")
    page.keyboard.press("Control+Enter")
    expect(card(page)).to_contain_text(f"Edited and accepted #{p.pk}")
    assert status(p) == "accepted"


def test_arrow_down_in_a_picker_whose_name_is_unchanged_lists_its_choices(
    page, live_server, login, f
):
    """↓ at once, before typing, lists the choices for the name as it stands ("input
    changed" alone ignored it: a dead end), and keeps the concept already picked."""
    emb = f.concept("Embeddings")
    f.concept("Embedding models")
    p = f.edge_proposal(emb, f.concept("Vector search"))
    login("reviewer")
    open_focus(page, live_server, p)
    page.keyboard.press("e")
    source = page.locator("#edit-source")
    expect(source).to_be_focused()
    page.keyboard.press("ArrowDown")
    listbox = page.locator("#source-listbox[role=listbox]")
    expect(listbox.locator("[role=option]", has_text="Embedding models")).to_be_visible()
    expect(source).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#edit-source-id")).to_have_value(str(emb.pk))
    page.keyboard.press("Escape")
    expect(listbox).to_have_count(0)
    expect(source).to_be_focused()


def test_a_picker_swapped_out_does_not_close_the_list_its_successor_opened(
    page, live_server, login, f
):
    """The card re-rendered (a refused edit) removes the focused picker; its "close when
    focus left" timer must not then empty the new picker's list, which has the same ids
    (CI saw ↓ after a refusal show nothing: the old field's timer wiped the fresh list)."""
    f.concept("Embedding models")
    p = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))
    login("reviewer")
    page.clock.install()
    open_focus(page, live_server, p)
    page.keyboard.press("e")
    source = page.locator("#edit-source")
    expect(source).to_be_focused()
    # Time stands still: the old field's timer fires only when the test says so.
    page.clock.pause_at(datetime.now() + timedelta(minutes=1))
    # The swap as htmx does it: the focused field replaced by a fresh copy, focus moved.
    page.evaluate(
        """() => {
            const old = document.getElementById("edit-source");
            const fresh = old.cloneNode(true);
            old.replaceWith(fresh);
            fresh.focus();
        }"""
    )
    page.keyboard.press("ArrowDown")
    listbox = page.locator("#source-listbox[role=listbox]")
    expect(listbox.locator("[role=option]", has_text="Embedding models")).to_be_visible()
    page.clock.run_for(1000)  # past the old field's 150 ms timer
    expect(listbox.locator("[role=option]", has_text="Embedding models")).to_be_visible()
    expect(source).to_have_attribute("aria-expanded", "true")


def test_a_refused_relation_puts_focus_on_the_relation(page, live_server, login, f):
    """A relation retired after the form opened: the refusal names it, focus is on it."""
    from django.utils import timezone

    from kgreview.graph.models import RelationType

    p = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))
    login("reviewer")
    open_focus(page, live_server, p)
    page.keyboard.press("e")
    page.select_option("#edit-relation", "builds_on")
    RelationType.objects.filter(key="builds_on").update(active=False, retired_at=timezone.now())
    page.keyboard.press("Control+Enter")
    expect(card(page).locator(".flash.bad")).to_contain_text("builds_on")
    expect(page.locator("#edit-relation")).to_be_focused()
    assert status(p) == "pending"


# --- 5. a contradiction on a laptop -------------------------------------------------------

LONG_LESSON = (
    "# Chunking and retrieval\n\n"
    "Chunking decides what a retriever can find. Documents are split into passages of a "
    "few hundred tokens, with some overlap so that a sentence cut in two still appears "
    "whole in one of them. **Retrieval depends on chunking**: a passage that mixes two "
    "topics matches neither query well, and one that is too short loses its context.\n\n"
    "Retrieval comes first in a RAG pipeline, and chunking is tuned afterwards to suit "
    "the retriever's embedding model and its context window; the order matters when you "
    "plan what to learn, since the retriever's needs shape every choice about chunks.\n"
)


def test_both_sides_of_a_contradiction_and_the_decision_bar_fit_a_laptop_screen(
    page, live_server, login, f, shot
):
    """At 1366x768, without scrolling: this proposal's quote and the contradicted edge's,
    each whole, above the decision bar, which is itself on screen."""
    doc = f.lesson("chunks", text=LONG_LESSON)
    rev = doc.current_revision
    chunking, retrieval = f.concept("Chunking"), f.concept("Retrieval")
    old_quote = "Retrieval comes first in a RAG pipeline, and chunking is tuned afterwards"
    new_quote = "**Retrieval depends on chunking**"
    old = f.edge(retrieval, chunking, evidence=f.evidence(rev, old_quote))
    p = f.edge_proposal(chunking, retrieval, doc=doc, quote=new_quote)
    conflicts = [
        {
            "kind": "edge",
            "id": old.pk,
            "rule": "cycle",
            "explanation": "Chunking before Retrieval, and Retrieval before Chunking.",
        }
    ]
    Proposal.objects.filter(pk=p.pk).update(
        payload={**p.payload, "conflicts": conflicts},
        flags=["contradiction"],
        flags_text=flags_text(["contradiction"]),
    )
    page.set_viewport_size(LAPTOP)
    login("reviewer")
    page.goto(f"{live_server.url}/review/focus/?id={p.pk}")
    expect(card(page)).to_have_attribute("data-proposal", str(p.pk))
    page.wait_for_load_state("networkidle")
    shot("ux-contradiction-1366")
    top = page.locator("header.topbar").bounding_box()
    bar = page.locator("#card .actions").bounding_box()
    assert bar["y"] + bar["height"] <= LAPTOP["height"] + 1, f"the decision bar is cut: {bar}"
    band = (top["y"] + top["height"], bar["y"])
    sides = page.locator("#card .conflicts .side-by-side > *")
    expect(sides).to_have_count(2)
    for what, locator in (
        ("this proposal's quote", page.locator("#card .this-side blockquote").first),
        ("this proposal's highlighted words", page.locator("#evidence-text mark").first),
        ("the contradicted edge's quote", page.locator("#card .other-side blockquote").first),
        ("the contradicted edge", page.locator("#card .other-side h4").first),
    ):
        box = locator.bounding_box()
        assert box is not None, f"{what} is not shown"
        assert band[0] <= box["y"] and box["y"] + box["height"] <= band[1] + 0.5, (
            f"{what} is not between the bars without scrolling: {box}, visible band {band}"
        )
    expect(page.locator("#card .other-side")).to_contain_text(f"Edge #{old.pk}")
    found = axe_violations(page)
    assert not found, report(found, "a contradiction at 1366x768")


# --- 6. tables and charts on a phone ------------------------------------------------------

TABLE_PAGES = ("queue", "concepts", "agents")


@pytest.mark.parametrize("name", [*TABLE_PAGES, "sources"])
def test_a_wide_table_scrolls_in_a_named_focusable_region_on_a_phone(
    page,
    live_server,
    login,
    world,
    shot,
    name,
):
    """At 390 px a table wider than the screen sits in a region with a name that scrolls
    sideways (the arrow keys scroll it once it has focus); nothing is cut off the page."""
    page.set_viewport_size(PHONE)
    login("curator")
    if name == "sources":
        page.goto(f"{live_server.url}/")
        page.wait_for_load_state("networkidle")
    else:
        open_page(page, live_server, world, name)
    shot(f"ux-table-{name}-390")
    table = page.locator("main table.table").first
    expect(table).to_be_visible()
    region = table.locator("xpath=ancestor::*[@role='region'][1]")
    expect(region).to_have_count(1)
    assert region.get_attribute("aria-label"), "the scrolling region has no name"
    assert region.evaluate("el => getComputedStyle(el).overflowX") in ("auto", "scroll")
    box = region.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] + 1, box
    assert page_width(page) <= PHONE["width"] + 1
    wide = region.evaluate("el => el.scrollWidth > el.clientWidth + 1")
    if wide:
        expect(region).to_have_attribute("tabindex", "0")
        region.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function("el => el.scrollLeft > 0", arg=region.element_handle())
    found = axe_violations(page)
    assert not found, report(found, f"{name} at 390x844")


SMALLEST_TEXT = """() => {
  // Every element with words of its own that is rendered, and its font size as drawn:
  // an svg's text scaled by the svg's transform to the screen.
  const out = [];
  const w = document.documentElement.clientWidth + 1;
  const clipped = el => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if (o !== 'visible' && a.getBoundingClientRect().right <= w) return true;
    }
    return false;
  };
  for (const el of document.querySelectorAll('main *')) {
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none') continue;
    const unseen = '.sr-only, [hidden], title, desc, details:not([open]) > :not(summary)';
    if (el.closest(unseen)) continue;
    let size = parseFloat(style.fontSize);
    if (el instanceof SVGElement && el.ownerSVGElement) {
      size *= el.ownerSVGElement.getScreenCTM().a;
    }
    const r = el.getBoundingClientRect();
    out.push({tag: el.tagName.toLowerCase(), text: el.textContent.trim().slice(0, 30),
              size: Math.round(size * 10) / 10, off: r.right > w && !clipped(el)});
  }
  return out;
}"""


@pytest.mark.parametrize("name", ["explorer", "insights"])
def test_explorer_and_insights_text_is_readable_on_a_phone(
    page,
    live_server,
    login,
    world,
    shot,
    name,
):
    """At 390 px no words are drawn below 12 px (a chart keeps its size and scrolls in its
    box instead of shrinking), and none run off the screen."""
    page.set_viewport_size(PHONE)
    login("curator")
    open_page(page, live_server, world, name)
    shot(f"ux-{name}-390")
    texts = page.evaluate(SMALLEST_TEXT)
    assert texts, "no text found"
    small = [t for t in texts if t["size"] < 11.9]
    assert not small, f"{len(small)} texts below 12 px, e.g. {small[:6]}"
    off = [t for t in texts if t["off"]]
    assert not off, f"text off the screen: {off[:6]}"
    assert page_width(page) <= PHONE["width"] + 1
    if name == "explorer":
        # The graph's labels are drawn on a canvas: asked of the drawing itself.
        page.wait_for_function(
            """() => window.kgExplorer.cy.nodes().every(
                n => parseFloat(n.renderedStyle('font-size')) >= 11.9)"""
        )


# --- 7. the queue's quotes ----------------------------------------------------------------


def test_the_queue_shows_a_quote_as_words_not_markdown(page, live_server, login, f):
    """A quote with emphasis, a link and code reads as its words in the queue's row."""
    quote = "**RAG** builds on [vector search](https://example.org/vs) and `ANN` indexes."
    text = f"Intro.\n\n{quote}\n"
    doc = graph.source_import(slug="md", title="Markdown", text=text, acting_user=None).source
    f.edge_proposal(
        f.concept("RAG"),
        f.concept("Vector search"),
        "builds_on",
        doc=doc,
        quote=quote,
    )
    login("reviewer")
    page.goto(f"{live_server.url}/review/")
    snippet = page.locator(".queue-row .quote-snippet").first
    expect(snippet).to_have_text("RAG builds on vector search and ANN indexes.")
    assert snippet.locator("a, strong, code, script").count() == 0
