"""The Content-Security-Policy in a real browser: a curator goes through the main pages
and none of them trips the policy (no `securitypolicyviolation` event, no console error),
while the pages still work under it: a keyboard decision, the explorer's drawing and
legend, a new API token selected on focus. A planted inline script is refused."""

from __future__ import annotations

import pytest
from django.db import transaction
from playwright.sync_api import expect

from kgreview.agents.runs import agent_run_create, agent_run_step
from kgreview.core import audit
from kgreview.graph.models import RelationType
from kgreview.review.models import Decision
from tests.factories import LESSON_TEXT

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

LINES = LESSON_TEXT.splitlines()

# Runs in every document before the page's own scripts; Playwright's injection is not
# itself subject to the page's policy.
LISTEN = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__csp.push(e.effectiveDirective + " blocked " + (e.blockedURI || "inline")
    + " at " + e.sourceFile + ":" + e.lineNumber + " " + (e.sample || ""));
});
"""


@pytest.fixture
def watched(page):
    """The page with a CSP listener in every document and console errors collected."""
    errors: list[str] = []
    page.add_init_script(LISTEN)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    return page


def violations(page) -> list[str]:
    return page.evaluate("window.__csp || []")


def assert_clean(page, what: str, *, other_errors: bool = True) -> None:
    """No violation event and no CSP console error; with ``other_errors``, no console or
    page error at all."""
    page.wait_for_load_state("networkidle")
    assert violations(page) == [], f"{what}: {violations(page)}"
    csp_errors = [e for e in page.errors if "Content Security Policy" in e]
    assert csp_errors == [], f"{what}: {csp_errors}"
    if other_errors:
        assert page.errors == [], f"{what}: {page.errors}"


@pytest.fixture
def world(f):
    doc = f.lesson("vectors")
    rev = doc.current_revision
    emb, vs, rag = f.concept("Embeddings"), f.concept("Vector search"), f.concept("RAG")
    f.edge(rag, vs, "builds_on", evidence=f.evidence(rev, LINES[1]))
    f.edge(emb, vs, evidence=f.evidence(rev, LINES[0]))
    later = f.edge_proposal(f.concept("Chunking"), f.concept("Retrieval"), doc=doc)
    first = f.edge_proposal(emb, rag, doc=doc)  # newest first: the focus card opens on it
    run = agent_run_create(agent="heal", total=4)
    agent_run_step(run, done=2, stats={"concepts": 5})
    curator = f.user("curator", role="curator", password="browser-pass-1")
    with transaction.atomic():
        audit.record(
            acting_user=curator,
            action="relation_type.retire",
            subject=RelationType.objects.get(key="contrasts_with"),
            summary="Retired the relation type “contrasts_with”.",
        )
    table = f.lesson("table", text="# Costs\n\n| model | tokens |\n|:--|--:|\n| small | 1200 |\n")
    return {"doc": doc, "table": table, "vs": vs, "first": first, "later": later, "run": run}


def sign_in(page, url: str) -> None:
    page.goto(f"{url}/login/")
    assert_clean(page, "login")
    page.fill("#id_username", "curator")
    page.fill("#id_password", "browser-pass-1")
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/")


def test_the_main_pages_raise_no_csp_violation_and_still_work(watched, live_server, world):
    page, url = watched, live_server.url
    sign_in(page, url)
    expect(page.locator("#worker-status.ok, #worker-status.warn")).to_have_count(1)
    assert_clean(page, "home")

    for path, what in [
        ("/review/", "review queue"),
        (f"/sources/{world['doc'].slug}/", "source page"),
        (f"/concepts/{world['vs'].pk}/", "concept page"),
        ("/concepts/", "concepts"),
        ("/ontology/", "ontology"),
        ("/agents/", "agents"),
        (f"/agents/runs/{world['run'].pk}/", "agent run"),
        ("/insights/", "insights"),
        ("/review/decisions/", "decision log"),
        ("/curation/", "curation log"),
        ("/exports/", "exports"),
    ]:
        page.goto(url + path)
        expect(page.locator("main h1").first).to_be_visible()
        assert_clean(page, what)

    # A Markdown table's column alignment arrives as a class, not a style attribute.
    page.goto(f"{url}/sources/{world['table'].slug}/")
    cell = page.locator("#source-text td", has_text="1200")
    assert cell.evaluate("el => getComputedStyle(el).textAlign") == "right"
    assert_clean(page, "source page with an aligned table")

    # The agent run page: its bar is drawn by a class (half done), not a style attribute.
    page.goto(f"{url}/agents/runs/{world['run'].pk}/")
    bar = page.locator("#run-progress .progress.big span")
    ratio = bar.evaluate("el => el.offsetWidth / el.parentElement.offsetWidth")
    assert 0.45 < ratio < 0.55
    assert_clean(page, "agent run bar")


def test_a_keyboard_decision_works_under_the_policy(watched, live_server, world):
    page, url = watched, live_server.url
    sign_in(page, url)
    page.goto(f"{url}/review/focus/")
    card = page.locator("#card")
    expect(card).to_have_attribute("data-proposal", str(world["first"].pk))
    page.keyboard.press("a")
    expect(card).to_have_attribute("data-proposal", str(world["later"].pk))
    assert Decision.objects.get(proposal=world["first"]).action == "accept"
    assert_clean(page, "focus card after a keyboard decision")


def test_a_decision_after_a_long_quote_trips_no_policy(watched, live_server, f):
    """A long quote makes the card's evidence box grow (a style set by script); the next
    card's arrival must not copy that style back as an attribute, which the policy
    refuses (htmx settles only class, width and height)."""
    long = " ".join(f"Sentence {i} of the long quote says more of embeddings." for i in range(40))
    doc = f.lesson("long", text=f"# Long\n\nIntro line.\n\n{long}\n\nA short closing line.\n")
    later = f.edge_proposal(
        f.concept("Chunking"), f.concept("Retrieval"), doc=doc, quote="A short closing line."
    )
    first = f.edge_proposal(f.concept("Embeddings"), f.concept("RAG"), doc=doc, quote=long)
    f.user("curator", role="curator", password="browser-pass-1")
    page, url = watched, live_server.url
    sign_in(page, url)
    page.goto(f"{url}/review/focus/")
    card = page.locator("#card")
    expect(card).to_have_attribute("data-proposal", str(first.pk))
    assert page.locator("#evidence-text").evaluate("el => el.style.maxHeight") != ""
    page.keyboard.press("a")
    expect(card).to_have_attribute("data-proposal", str(later.pk))
    assert_clean(page, "focus card after a long quote")


def test_the_explorer_draws_and_paints_its_legend_under_the_policy(watched, live_server, world):
    page, url = watched, live_server.url
    sign_in(page, url)
    page.goto(f"{url}/explore/{world['vs'].pk}/")
    page.wait_for_function(
        "id => { const r = document.getElementById('explorer');"
        " return r.dataset.centre === String(id) && r.dataset.state === 'ready'; }",
        arg=world["vs"].pk,
    )
    colours = page.locator("#ex-relations .ex-swatch").evaluate_all(
        "els => els.map(el => getComputedStyle(el).getPropertyValue('--c').trim())"
    )
    assert colours and all(c.startswith("#") for c in colours)
    assert len(set(colours)) == len(colours)
    assert_clean(page, "explorer")


def test_a_new_api_token_is_selected_on_focus_under_the_policy(watched, live_server, world):
    page, url = watched, live_server.url
    sign_in(page, url)
    page.goto(f"{url}/api/tokens/")
    page.fill("#token-name", "tutor-bot")
    page.click("button:has-text('Make a token')")
    token = page.locator("#new-token")
    token.focus()
    selected = token.evaluate("el => el.value.substring(el.selectionStart, el.selectionEnd)")
    assert selected == token.input_value() and selected.startswith("kgr_")
    assert_clean(page, "api tokens")


def test_the_api_docs_and_the_admin_raise_no_csp_violation(watched, live_server, world):
    page, url = watched, live_server.url
    sign_in(page, url)
    page.goto(f"{url}/api/docs")
    expect(page.locator(".swagger-ui .info .title")).to_be_visible()
    assert_clean(page, "api docs")
    # Django's admin pages name no icon, so the browser's /favicon.ico is a 404: only the
    # policy is judged there.
    for path in (
        "/admin/",
        "/admin/graph/concept/",
        f"/admin/graph/concept/{world['vs'].pk}/change/",
    ):
        page.goto(url + path)
        expect(page.locator("#site-name")).to_be_visible()
        assert_clean(page, path, other_errors=False)


def test_an_injected_inline_script_is_refused_and_reported(watched, live_server, world):
    """The check above can see a violation: a script element put in by hand never runs."""
    page, url = watched, live_server.url
    sign_in(page, url)
    page.evaluate(
        "() => { const s = document.createElement('script');"
        " s.textContent = 'window.__ran = true'; document.body.appendChild(s); }"
    )
    page.wait_for_function("window.__csp.length > 0")
    assert page.evaluate("window.__ran === undefined")
    assert any(v.startswith("script-src-elem blocked inline") for v in violations(page))
