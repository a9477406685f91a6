"""The curator's pages in a real browser: the Agents page (run now, schedules, live
progress, cancel), merge review, undoing a merge, the concepts list, the ontology page,
roles, and hostile names."""

from __future__ import annotations

import re

import pytest
from django_celery_beat.models import PeriodicTask
from playwright.sync_api import expect

from kgreview.agents.construct import construct_run_create
from kgreview.agents.models import AgentRun, AgentRunItem
from kgreview.agents.runs import agent_run_create, agent_run_finish, agent_run_step
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, ConceptAlias, Edge, RelationType
from kgreview.review.models import Decision, Proposal
from kgreview.review.services import proposal_create

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

VIEWPORT = {"width": 1366, "height": 820}
HOSTILE_NAME = "<img src=x onerror=alert('name ran')>"
HOSTILE_TEXT = "<script>alert('description ran')</script><svg onload=alert('svg ran')>"
INJECTED = "main img, main script, main svg, main iframe"


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    """A common laptop screen: what curators see must fit it."""
    return {**browser_context_args, "viewport": VIEWPORT}


# --- helpers ----------------------------------------------------------------------------


def merge_proposal(survivor: Concept, loser: Concept, *, why: str = "Same idea, two names."):
    """A merge_concepts proposal as the self-healing agent would queue it."""
    return proposal_create(
        kind="merge_concepts",
        payload={"survivor_id": survivor.pk, "loser_id": loser.pk, "score": 93.0, "why": why},
        confidence=0.93,
        reason=f'"{loser.name}" looks like a duplicate of "{survivor.name}".',
        flags=["duplicate"],
        priority=93,
    )


def run_url(live_server, run: AgentRun) -> str:
    return f"{live_server.url}/agents/runs/{run.pk}/"


def polls_of(page, url: str) -> list[str]:
    """htmx requests for ``url`` from now on (a full page load is not a poll)."""
    seen: list[str] = []

    def on_request(request):
        if request.url == url and request.headers.get("hx-request") == "true":
            seen.append(request.url)

    page.on("request", on_request)
    return seen


def csrf_post(page, url: str):
    """A POST from the signed-in browser with a valid CSRF token, past every button."""
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    return page.request.post(url, headers={"X-CSRFToken": token}, max_redirects=0)


def assert_fits_width(page) -> None:
    """Nothing on the page makes it scroll sideways."""
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"


# --- 1. run now -------------------------------------------------------------------------


def test_curator_runs_self_healing_now_and_follows_its_merge_proposal_to_the_queue(
    page, live_server, login, f, shot
):
    """Run now on Self-healing lands on a finished run whose link opens its merge proposal."""
    one, many = f.concept("Vector database"), f.concept("Vector databases")
    f.edge(f.concept("Embeddings"), one)
    login("curator")
    page.goto(f"{live_server.url}/agents/")
    expect(page.locator(".agent-card")).to_have_count(3)
    for agent, label, task in (
        ("construct", "Construction", "agents.construct_scheduled"),
        ("heal", "Self-healing", "agents.heal"),
        ("discover", "Ontology discovery", "agents.discover"),
    ):
        card = page.locator(f"#agent-{agent}")
        expect(card.locator("h2")).to_have_text(label)
        schedule = PeriodicTask.objects.get(task=task)
        expect(card.locator(".schedule")).to_contain_text(schedule.description)
        expect(card.locator(".badge", has_text="on")).to_be_visible()
        expect(card.get_by_role("button", name="Run now")).to_be_visible()
        expect(card.get_by_role("link", name="Edit schedule")).to_have_attribute(
            "href", f"/admin/django_celery_beat/periodictask/{schedule.pk}/change/"
        )
    expect(page.locator("#runs-table")).to_contain_text("No runs yet")
    expect(page.locator(".nav a[aria-current=page]")).to_have_text(["Agents"])
    assert_fits_width(page)
    shot("curator-agents")

    page.locator("#run-heal").click()
    (run,) = AgentRun.objects.all()
    expect(page).to_have_url(run_url(live_server, run))
    expect(page.locator("h1")).to_have_text(f"Self-healing run #{run.pk}")
    expect(page.locator("#run-status")).to_have_text("Succeeded")
    numbers = page.locator("#run-numbers")
    expect(numbers.locator("tr", has_text="duplicate pairs")).to_contain_text("1")
    expect(numbers.locator("tr", has_text="merge proposals")).to_contain_text("1")
    expect(numbers.locator("tr", has_text="concepts")).to_contain_text("3")
    expect(page.locator("#run-proposals")).to_contain_text("merge concepts (pending)")
    expect(page.locator(".progress.big")).to_have_attribute("aria-valuenow", "4")
    expect(page.locator("#cancel-run")).to_have_count(0)
    assert_fits_width(page)
    shot("curator-run-heal")

    (merge,) = Proposal.objects.filter(origin__agent_run=run)
    assert merge.kind == "merge_concepts"
    assert {merge.payload["survivor_id"], merge.payload["loser_id"]} == {one.pk, many.pk}
    with page.expect_response(re.compile(r"/review/counts/")):
        page.get_by_role("link", name="See the 1 proposal of this run").click()
    expect(page.locator("#result-count")).to_have_text("1")
    # The facet counts arrive in a second request; the address stays the queue's.
    expect(page).to_have_url(re.compile(rf"/review/\?status=all&run={run.pk}$"))
    rows = page.locator(".queue-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("merge")
    expect(page.locator("#f-run")).to_have_value(str(run.pk))

    page.goto(f"{live_server.url}/agents/")
    last = page.locator("#agent-heal")
    expect(last).to_contain_text(f"#{run.pk}")
    expect(page.locator("#runs-table tbody tr")).to_have_count(1)
    expect(page.locator("#runs-table tbody tr td.num")).to_have_text("1")
    shot("curator-agents-after-run")
    expect(page.locator("#runs-table")).not_to_have_attribute("hx-trigger", re.compile("every"))
    page.locator("#agent-heal").get_by_role("link", name="Edit schedule").click()
    expect(page.locator("#id_name")).to_have_value("Heal the graph")


# --- 2. schedules -----------------------------------------------------------------------


def test_pausing_then_resuming_a_schedule_flips_its_badge_and_its_row(page, live_server, login):
    """Pause schedule shows "paused" and disables the task; Resume turns it back on."""
    login("curator")
    page.goto(f"{live_server.url}/agents/")
    card = page.locator("#agent-discover")
    card.get_by_role("button", name="Pause schedule").click()
    expect(page.locator(".messages")).to_contain_text("paused")
    expect(card.locator(".schedule .badge")).to_have_text("paused")
    assert PeriodicTask.objects.get(task="agents.discover").enabled is False
    # The other agents' schedules are untouched.
    assert PeriodicTask.objects.get(task="agents.heal").enabled is True
    expect(page.locator("#agent-heal .schedule .badge")).to_have_text("on")

    card.get_by_role("button", name="Resume schedule").click()
    expect(page.locator(".messages")).to_contain_text("resumed")
    expect(card.locator(".schedule .badge")).to_have_text("on")
    expect(card.get_by_role("button", name="Pause schedule")).to_be_visible()
    assert PeriodicTask.objects.get(task="agents.discover").enabled is True


# --- 3. progress and cancel -------------------------------------------------------------


def test_cancelling_a_queued_construct_run_stops_it_and_its_page_stops_polling(
    page, live_server, login, f, shot
):
    """A queued run shows its bar and Cancel; cancelling ends every source; polling stops."""
    lessons = [f.lesson(f"lesson-{i}") for i in range(3)]
    run = construct_run_create(sources=lessons)
    url = run_url(live_server, run)
    login("curator")
    page.clock.install()
    page.goto(url)
    expect(page.locator("#run-status")).to_have_text("Queued")
    bar = page.locator("#run-progress .progress.big")
    expect(bar).to_be_visible()
    expect(bar).to_have_attribute("aria-valuemax", "3")
    expect(bar).to_have_attribute("aria-valuenow", "0")
    expect(page.locator("#run-items tbody tr")).to_have_count(3)
    cancel = page.get_by_role("button", name="Cancel this run")
    expect(cancel).to_be_visible()
    shot("curator-run-queued")

    # While unfinished the page asks for news every second.
    polls = polls_of(page, url)
    with page.expect_request(lambda r: r.url == url and r.headers.get("hx-request") == "true"):
        page.clock.run_for(1100)
    expect(page.locator("#run-status")).to_have_text("Queued")

    cancel.click()
    expect(page.locator(".messages")).to_contain_text(f"Run #{run.pk} cancelled.")
    expect(page.locator("#run-status")).to_have_text("Cancelled")
    expect(page.locator("#run-items .badge", has_text="Cancelled")).to_have_count(3)
    expect(page.locator("#cancel-run")).to_have_count(0)
    expect(bar).to_have_attribute("aria-valuenow", "3")
    run.refresh_from_db()
    assert run.status == AgentRun.Status.CANCELLED and run.cancel_requested
    assert set(run.items.values_list("status", flat=True)) == {AgentRunItem.Status.CANCELLED}

    polls.clear()
    page.clock.run_for(5000)
    page.wait_for_timeout(250)
    assert polls == [], "a finished run's page still polls"


def test_a_run_finishing_while_watched_updates_in_place_then_polling_stops(
    page, live_server, login
):
    """The bar moves as steps finish; once the run is done the partial stops asking."""
    run = agent_run_create(agent=AgentRun.Agent.HEAL, total=4)
    url = run_url(live_server, run)
    login("curator")
    page.clock.install()
    page.goto(url)
    page.evaluate("window.__kgNoReload = 'still here'")
    bar = page.locator("#run-progress .progress.big")
    expect(bar).to_have_attribute("aria-valuenow", "0")
    polls = polls_of(page, url)

    agent_run_step(run, done=2, stats={"concepts": 12})
    page.clock.run_for(1100)
    expect(page.locator("#run-status")).to_have_text("Running")
    expect(bar).to_have_attribute("aria-valuenow", "2")
    expect(page.locator("#run-progress")).to_contain_text("2 of 4 steps · 50%")

    agent_run_finish(run, status=AgentRun.Status.SUCCEEDED, stats={"merge_proposals": 0})
    page.clock.run_for(1100)
    expect(page.locator("#run-status")).to_have_text("Succeeded")
    expect(bar).to_have_attribute("aria-valuenow", "4")
    expect(page.locator("#cancel-run")).to_have_count(0)
    assert page.evaluate("window.__kgNoReload") == "still here", "the page was reloaded"
    assert len(polls) >= 2

    polls.clear()
    page.clock.run_for(5000)
    page.wait_for_timeout(250)
    assert polls == [], "a finished run's page still polls"


# --- 4. roles ---------------------------------------------------------------------------


def test_reviewers_and_viewers_read_the_agents_pages_but_cannot_run_or_cancel(
    page, live_server, login, f
):
    """No Run now, schedule or Cancel buttons below curator; a forged run-now POST is 403."""
    run = construct_run_create(sources=[f.lesson("queued-lesson")])
    for role in ("reviewer", "viewer"):
        login(role)
        page.goto(f"{live_server.url}/agents/")
        expect(page.locator(".agent-card")).to_have_count(3)
        expect(page.locator("#runs-table")).to_contain_text(f"#{run.pk}")
        main = page.locator("main")
        for name in ("Run now", "Pause schedule", "Resume schedule"):
            expect(main.get_by_role("button", name=name)).to_have_count(0)
        expect(main.get_by_role("link", name="Edit schedule")).to_have_count(0)
        page.goto(run_url(live_server, run))
        expect(page.locator("#run-status")).to_have_text("Queued")
        expect(main.get_by_role("button", name="Cancel this run")).to_have_count(0)

        refused = csrf_post(page, f"{live_server.url}/agents/run/heal/")
        assert refused.status == 403, refused.status
        assert "Only curators can do this." in refused.text()  # the role, not CSRF
        assert csrf_post(page, f"{run_url(live_server, run)}cancel/").status == 403
        page.get_by_role("button", name="Log out").click()
        expect(page).to_have_url(f"{live_server.url}/login/")
    assert AgentRun.objects.count() == 1
    run.refresh_from_db()
    assert run.status == AgentRun.Status.QUEUED and not run.cancel_requested


# --- 5. merge review --------------------------------------------------------------------


def test_curator_keeps_the_other_concept_of_a_merge_by_keyboard(page, live_server, login, f, shot):
    """Both concepts side by side; choosing the other survivor then a merges that way."""
    suggested = f.concept("Vector database", aliases=["VDB"])
    other = f.concept("Vector store", aliases=["Vector index"])
    f.edge(f.concept("Embeddings"), suggested)
    f.edge(other, f.concept("Retrieval"), "part_of")
    f.edge(f.concept("ANN search"), other, "applies_to")
    p = merge_proposal(suggested, other)
    login("curator")
    page.goto(f"{live_server.url}/review/focus/?id={p.pk}")
    card = page.locator("#card")
    expect(card).to_have_attribute("data-proposal", str(p.pk))
    sides = card.locator(".merge-side")
    expect(sides).to_have_count(2)
    keep, away = sides.nth(0), sides.nth(1)
    expect(keep).to_contain_text("Vector database")
    expect(keep).to_contain_text("VDB")
    expect(keep).to_contain_text("1 active edge")
    expect(away).to_contain_text("Vector store")
    expect(away).to_contain_text("Vector index")
    expect(away).to_contain_text("2 active edges")
    expect(keep.locator(".merge-role")).to_have_text("kept")
    expect(away.locator(".merge-role")).to_have_text("merged away")
    a, b = keep.bounding_box(), away.bounding_box()
    assert abs(a["y"] - b["y"]) < 2 and b["x"] > a["x"] + a["width"] - 1, "not side by side"
    expect(page.locator("#accept-button")).to_have_text(re.compile(r"^Merge"))
    assert_fits_width(page)
    shot("curator-merge-card")

    page.get_by_role("radio", name="keep this one").first.focus()
    page.keyboard.press("ArrowDown")  # a radio group: the arrow moves the choice
    expect(away.get_by_role("radio")).to_be_checked()
    expect(away.locator(".merge-role")).to_have_text("kept")
    expect(keep.locator(".merge-role")).to_have_text("merged away")
    expect(away).to_have_class(re.compile(r"\bkeep\b"))
    expect(page.locator("#merge-loser-name")).to_have_text("Vector database")
    expect(page.locator("#merge-survivor-name")).to_have_text("Vector store")
    shot("curator-merge-card-swapped")
    page.keyboard.press("a")

    expect(card).to_contain_text(f"Accepted #{p.pk}")
    suggested.refresh_from_db()
    other.refresh_from_db()
    assert other.status == Concept.Status.ACTIVE and other.merged_into_id is None
    assert suggested.status == Concept.Status.MERGED and suggested.merged_into_id == other.pk
    assert set(ConceptAlias.objects.filter(concept=other).values_list("name", flat=True)) >= {
        "Vector database",
        "VDB",
        "Vector store",
        "Vector index",
    }
    (decision,) = Decision.objects.filter(proposal=p)
    assert decision.action == "edit_accept" and decision.user.username == "curator"
    assert decision.before["payload"]["survivor_id"] == suggested.pk
    assert Proposal.objects.get(pk=p.pk).status == "accepted"


def test_merge_choice_works_without_javascript(browser, browser_context_args, live_server, f):
    """With scripts off, the radio picked is what the Merge button sends."""
    f.user("curator", role="curator", password="browser-pass-1")
    suggested, other = f.concept("Vector database"), f.concept("Vector store")
    p = merge_proposal(suggested, other)
    context = browser.new_context(**browser_context_args, java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/login/")
        page.fill("#id_username", "curator")
        page.fill("#id_password", "browser-pass-1")
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        page.goto(f"{live_server.url}/review/focus/?id={p.pk}")
        page.locator(f".merge-side[data-concept='{other.pk}'] input[type=radio]").check()
        page.locator("#accept-button").click()
        expect(page.locator(".messages")).to_contain_text(f"Accepted #{p.pk}")
    finally:
        context.close()
    suggested.refresh_from_db()
    assert suggested.merged_into_id == other.pk
    assert Decision.objects.get(proposal=p).action == "edit_accept"


# --- 6. undo a merge --------------------------------------------------------------------


def test_undoing_a_merge_from_the_concept_page_restores_its_names_and_edges(
    page, live_server, login, f, shot
):
    """Undo this merge: the concept is active again, with its own names and edges."""
    rag = f.concept("Retrieval-augmented generation", aliases=["RAG"])
    twin = f.concept("Retrieval augmented generation", aliases=["Grounded generation"])
    vs = f.concept("Vector search")
    f.edge(twin, vs, "builds_on")
    f.edge(f.concept("Prompting"), twin)
    graph.concept_merge(loser=twin, survivor=rag, reason="Same idea.", acting_user=None)
    assert not Edge.objects.filter(status="active", source=twin).exists()
    login("curator")
    page.goto(f"{live_server.url}/concepts/{twin.pk}/")
    expect(page.locator("h1")).to_contain_text("merged")
    expect(page.locator(".page-head")).to_contain_text("Merged into")
    expect(page.get_by_role("link", name="Retrieval-augmented generation").first).to_be_visible()
    assert_fits_width(page)
    shot("curator-concept-merged")

    page.locator("#unmerge").click()
    expect(page.locator(".messages")).to_contain_text(
        '"Retrieval augmented generation" is a concept of its own again.'
    )
    expect(page.locator("h1")).to_have_text("Retrieval augmented generation")
    expect(page.locator("#unmerge")).to_have_count(0)
    edges = page.locator("#concept-edges")
    expect(edges).to_contain_text("Vector search")
    expect(edges).to_contain_text("Prompting")
    names = page.locator("#concept-names li")
    expect(names).to_have_count(2)
    expect(names.first).to_contain_text("Retrieval augmented generation canonical name")
    expect(names.nth(1)).to_contain_text("Grounded generation alias")
    shot("curator-concept")

    twin.refresh_from_db()
    assert twin.status == Concept.Status.ACTIVE and twin.merged_into_id is None
    assert set(ConceptAlias.objects.filter(concept=twin).values_list("name", flat=True)) == {
        "Retrieval augmented generation",
        "Grounded generation",
    }
    assert ConceptAlias.objects.get(name="RAG").concept_id == rag.pk
    active = Edge.objects.filter(status="active")
    assert active.filter(source=twin, target=vs, relation__key="builds_on").exists()
    assert active.filter(target=twin, source__name="Prompting").exists()
    assert not active.filter(source=rag).exists() and not active.filter(target=rag).exists()


def test_undoing_a_merge_that_a_proposal_made_sends_the_proposal_back_to_the_queue(
    page, live_server, login, f
):
    """The merge came from an accepted proposal: undoing it reopens that proposal."""
    from kgreview.review.decide.decisions import proposal_accept

    kept, away = f.concept("Vector database"), f.concept("Vector databases")
    f.edge(away, f.concept("ANN search"), "applies_to")
    p = merge_proposal(kept, away)
    proposal_accept(proposal_id=p.pk, acting_user=f.user("merger", role="curator"))
    login("curator")
    page.goto(f"{live_server.url}/concepts/{away.pk}/")
    page.locator("#unmerge").click()
    expect(page.locator(".messages")).to_contain_text("is a concept of its own again")
    expect(page.locator("#concept-edges")).to_contain_text("ANN search")
    expect(page.locator("main")).to_contain_text("Waiting for review")
    away.refresh_from_db()
    assert away.status == Concept.Status.ACTIVE
    assert Proposal.objects.get(pk=p.pk).status == "pending"
    assert list(
        Decision.objects.filter(proposal=p).order_by("pk").values_list("action", flat=True)
    ) == [
        "accept",
        "undo",
    ]


# --- 7. concepts list -------------------------------------------------------------------


def test_concepts_are_found_by_alias_and_orphans_are_listed_apart(page, live_server, login, f):
    """Searching an alias finds its concept; Orphans lists only concepts without edges."""
    bm25 = f.concept("BM25", aliases=["Okapi ranking"])
    linked, lonely = f.concept("Dense retrieval"), f.concept("Lonely idea")
    f.edge(linked, bm25, "contrasts_with")
    login("viewer")
    page.goto(f"{live_server.url}/concepts/")
    rows = page.locator("#concept-list tbody tr")
    expect(rows).to_have_count(3)
    page.get_by_label("Name or alias").fill("okapi")
    page.get_by_role("button", name="Show").click()
    expect(page).to_have_url(re.compile(r"q=okapi"))
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("BM25")
    expect(rows.first.locator(".badge")).to_have_text("active")

    page.get_by_label("Name or alias").fill("")
    page.get_by_label("Show").select_option("orphans")
    page.get_by_role("button", name="Show").click()
    expect(page).to_have_url(re.compile(r"show=orphans"))
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Lonely idea")
    expect(rows.first.locator(".badge")).to_have_text("orphan")
    expect(page.locator("#concept-list")).not_to_contain_text("Dense retrieval")
    rows.first.get_by_role("link", name="Lonely idea").click()
    expect(page).to_have_url(f"{live_server.url}/concepts/{lonely.pk}/")
    expect(page.locator("main")).to_contain_text("an orphan")


# --- 8. ontology ------------------------------------------------------------------------


def test_ontology_counts_active_edges_and_curators_describe_and_retire_types(
    page, live_server, login, f, shot
):
    """Counts per type; a curator renames one type and retires another; viewers see no form."""
    a, b, c, d = (f.concept(n) for n in ("Alpha", "Beta", "Gamma", "Delta"))
    f.edge(a, b)
    f.edge(b, c)
    f.edge(c, d, "related")
    gone = f.edge(a, d, "applies_to")
    graph.edge_invalidate(edge=gone, reason="Wrong.", acting_user=None)
    login("curator")
    page.goto(f"{live_server.url}/ontology/")
    table = page.locator("#relation-types")

    def row(key: str):
        # Its key is the first cell's code (another row may name it as its inverse).
        key_cell = page.locator("td:first-child > code", has_text=re.compile(f"^{key}$"))
        return table.locator("tbody tr", has=key_cell)

    for key, n in (("prerequisite", 2), ("related", 1), ("applies_to", 0), ("builds_on", 0)):
        expect(row(key).locator("td.edges")).to_have_text(str(n))
    assert_fits_width(page)
    shot("curator-ontology")

    describe = row("applies_to")
    describe.locator("summary").click()
    describe.get_by_label("Label").fill("Used for")
    describe.get_by_label("Verb").fill("is used for")
    assert_fits_width(page)
    shot("curator-ontology-describe")
    describe.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messages")).to_contain_text('"applies_to" described.')
    expect(row("applies_to")).to_contain_text("is used for")
    relation = RelationType.objects.get(key="applies_to")
    assert (relation.label, relation.verb) == ("Used for", "is used for")

    retire = row("contrasts_with")
    retire.locator("summary").click()
    retire.get_by_role("button", name="Retire").click()
    expect(page.locator(".messages")).to_contain_text('"contrasts_with" retired')
    expect(row("contrasts_with").locator(".badge")).to_contain_text("retired")
    assert RelationType.objects.get(key="contrasts_with").active is False
    shot("curator-ontology-after")

    page.get_by_role("button", name="Log out").click()
    login("viewer")
    page.goto(f"{live_server.url}/ontology/")
    expect(row("prerequisite").locator("td.edges")).to_have_text("2")
    # A viewer changes nothing here: no form that posts, no curator's disclosure; the
    # validation report is a reading (a GET), open to anyone who may view.
    expect(page.locator('main form[method="post"]')).to_have_count(0)
    expect(page.locator("main summary")).to_have_count(0)
    expect(page.get_by_role("button", name="Validate now")).to_be_visible()


# --- 9. hostile names -------------------------------------------------------------------


def test_hostile_names_stay_inert_on_every_curator_page(page, live_server, login, f, dialogs, shot):
    """Markup in names, descriptions, errors and usernames is shown as text, never run."""
    evil = f.concept(HOSTILE_NAME, aliases=[HOSTILE_TEXT], description=HOSTILE_TEXT)
    plain = f.concept("Plain concept")
    f.edge(evil, plain, "related")
    graph.relation_type_describe(
        relation=RelationType.objects.get(key="related"),
        label=HOSTILE_NAME,
        verb=HOSTILE_NAME,
        description=HOSTILE_TEXT,
        acting_user=None,
    )
    p = merge_proposal(plain, evil, why=HOSTILE_TEXT)
    evil_user = f.user(HOSTILE_NAME)
    run = agent_run_create(agent=AgentRun.Agent.HEAL, acting_user=evil_user, total=2)
    agent_run_finish(run, status=AgentRun.Status.FAILED, stats={"concepts": 2}, error=HOSTILE_TEXT)
    queued = agent_run_create(agent=AgentRun.Agent.DISCOVER, acting_user=evil_user)
    login("curator")

    pages = [
        ("/concepts/", HOSTILE_NAME),
        (f"/concepts/?q={HOSTILE_NAME[:8]}", HOSTILE_NAME),
        (f"/concepts/{evil.pk}/", HOSTILE_TEXT),
        (f"/concepts/{plain.pk}/", HOSTILE_NAME),
        ("/ontology/", HOSTILE_TEXT),
        (f"/review/focus/?id={p.pk}", HOSTILE_TEXT),
        (f"/agents/runs/{run.pk}/", HOSTILE_TEXT),
        (f"/agents/runs/{queued.pk}/", HOSTILE_NAME),
    ]
    for path, shown in pages:
        page.goto(f"{live_server.url}{path}")
        expect(page.locator("main")).to_contain_text(shown)
        assert page.locator(INJECTED).count() == 0, path
    # The Agents page polls while a run is queued: the swapped-in table is inert too.
    page.clock.install()
    page.goto(f"{live_server.url}/agents/")
    expect(page.locator("#runs-table")).to_contain_text(HOSTILE_NAME)
    with page.expect_response(lambda r: r.url == f"{live_server.url}/agents/"):
        page.clock.run_for(2100)
    expect(page.locator("#runs-table")).to_contain_text(HOSTILE_NAME)
    assert page.locator(INJECTED).count() == 0
    page.goto(f"{live_server.url}/review/focus/?id={p.pk}")
    expect(page.locator(".merge-side")).to_have_count(2)
    shot("curator-hostile-merge")
    page.wait_for_timeout(300)
    assert page.locator(INJECTED).count() == 0
    assert dialogs == []
