"""The Agents page over HTTP: who may read it, the page itself, a run's live progress,
its chunks and tokens.

Everyone with a role reads; what curators do from it (run now, cancel, pause) is in
test_run_actions.py. Tasks run eagerly in the test settings, so a "Run now" has finished
by the time the redirect is answered.
"""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from kgreview.agents.construct import construct_run_create
from kgreview.agents.models import AgentRun, AgentRunItem, WorkerHeartbeat
from kgreview.agents.schedules import schedule_set_enabled
from kgreview.review.decide import decisions
from tests.agents.pages import (
    HOSTILE,
    HX,
    client_for,
    finished,
    heal_run,
    page,
    run_table_ids,
    running,
    schedule,
)

pytestmark = pytest.mark.django_db

# --- who may read and act ---------------------------------------------------------------


def test_agent_pages_send_anonymous_users_to_login(f):
    """The Agents page and a run's page need a signed-in user."""
    run = heal_run()
    client = client_for(f, "anonymous")
    for url in (reverse("agents:home"), reverse("agents:run", args=[run.pk])):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login") + "?next=")


def test_agent_pages_are_closed_to_users_without_a_role(f):
    """A signed-in account without a role gets 403 on the Agents page and a run's page."""
    run = heal_run()
    client = client_for(f, None)
    assert client.get(reverse("agents:home")).status_code == 403
    assert client.get(reverse("agents:run", args=[run.pk])).status_code == 403
    assert client.get(reverse("agents:run", args=[run.pk]), headers=HX).status_code == 403


def test_anonymous_agent_actions_go_to_login_and_change_nothing(f):
    """Run now, cancel and schedule toggles from a signed-out browser write nothing."""
    run = heal_run()
    heal = schedule("heal")
    client = client_for(f, "anonymous")
    posts = [
        reverse("agents:run-now", args=["heal"]),
        reverse("agents:cancel", args=[run.pk]),
        reverse("agents:schedule-toggle", args=[heal.pk]),
    ]
    for url in posts:
        response = client.post(url, {"enabled": "0"})
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert list(AgentRun.objects.all()) == [run]
    run.refresh_from_db()
    assert run.status == "queued" and not run.cancel_requested
    assert schedule("heal").enabled is True


@pytest.mark.parametrize("role", ["viewer", "reviewer"])
def test_non_curators_cannot_run_cancel_or_pause_agents(f, role):
    """Viewers and reviewers get 403 on every agent action, and nothing changes."""
    f.lesson()
    run = heal_run()
    heal = schedule("heal")
    client = client_for(f, role)
    for agent in ("construct", "heal", "discover"):
        assert client.post(reverse("agents:run-now", args=[agent])).status_code == 403
    assert client.post(reverse("agents:cancel", args=[run.pk])).status_code == 403
    toggle = client.post(reverse("agents:schedule-toggle", args=[heal.pk]), {"enabled": "0"})
    assert toggle.status_code == 403
    assert list(AgentRun.objects.all()) == [run]
    run.refresh_from_db()
    assert run.status == "queued" and not run.cancel_requested
    assert schedule("heal").enabled is True


def test_agent_actions_need_a_post(curator):
    """GET on run now, cancel or a toggle is 405, so a link cannot start or stop anything."""
    run = heal_run()
    heal = schedule("heal")
    assert curator.get(reverse("agents:run-now", args=["heal"])).status_code == 405
    assert curator.get(reverse("agents:cancel", args=[run.pk])).status_code == 405
    assert curator.get(reverse("agents:schedule-toggle", args=[heal.pk])).status_code == 405
    assert AgentRun.objects.count() == 1 and schedule("heal").enabled


# --- the Agents page --------------------------------------------------------------------


def test_agents_page_shows_each_agent_with_its_schedule_and_last_run(viewer):
    """Three cards, each with its schedule state and a link to its last run."""
    old = finished(heal_run())
    last = finished(heal_run())
    html = page(viewer.get(reverse("agents:home")))
    for agent, label in [
        ("construct", "Construction"),
        ("heal", "Self-healing"),
        ("discover", "Ontology discovery"),
    ]:
        card = re.search(
            rf'<article class="card agent-card" id="agent-{agent}">(.*?)</article>', html, re.S
        )
        assert card, agent
        assert f"<h2>{label}</h2>" in card.group(1)
        assert 'class="badge ok">on</span>' in card.group(1)
    heal = re.search(r'id="agent-heal">(.*?)</article>', html, re.S).group(1)
    assert f'Last run: <a href="/agents/runs/{last.pk}/">#{last.pk}</a>' in heal
    assert f"#{old.pk}</a> <span" not in heal
    assert "Never run." in re.search(r'id="agent-discover">(.*?)</article>', html, re.S).group(1)


def test_agents_page_gives_viewers_no_buttons(viewer):
    """Viewers read schedules and runs but see no run, pause or edit controls."""
    html = page(viewer.get(reverse("agents:home")))
    assert "Run now" not in html and "Pause schedule" not in html
    assert "/agents/run/" not in html and "/toggle/" not in html and "/admin/" not in html


def test_agents_page_gives_curators_run_and_pause_buttons(curator):
    """Curators get Run now for every agent and a pause form for every enabled schedule."""
    html = page(curator.get(reverse("agents:home")))
    for agent in ("construct", "heal", "discover"):
        assert f'action="/agents/run/{agent}/"' in html and f'id="run-{agent}"' in html
        s = schedule(agent)
        form = re.search(
            rf'action="/agents/schedules/{s.pk}/toggle/">.*?</form>', html, re.S
        ).group(0)
        assert 'name="enabled" value="0"' in form and "Pause schedule" in form


def test_agents_page_offers_resume_for_a_paused_schedule(curator):
    """A paused schedule reads "paused" and its form resumes it."""
    s = schedule_set_enabled(schedule=schedule("discover"), enabled=False, acting_user=None)
    html = page(curator.get(reverse("agents:home")))
    card = re.search(r'id="agent-discover">(.*?)</article>', html, re.S).group(1)
    assert 'class="badge warn">paused' in card
    form = re.search(rf'action="/agents/schedules/{s.pk}/toggle/">.*?</form>', card, re.S)
    assert 'name="enabled" value="1"' in form.group(0) and "Resume schedule" in form.group(0)


def test_agents_page_lists_recent_runs_newest_first_with_who_asked(viewer, curator_user):
    """The runs table shows each run's agent, trigger, requester, status and proposals."""
    first = finished(heal_run(trigger=AgentRun.Trigger.SCHEDULE))
    second = heal_run(trigger=AgentRun.Trigger.MANUAL, acting_user=curator_user)
    html = page(viewer.get(reverse("agents:home")))
    assert run_table_ids(html) == [second.pk, first.pk]
    row = re.search(
        rf'<td><a href="/agents/runs/{second.pk}/">#{second.pk}</a>.*?</tr>', html, re.S
    )
    assert "Self-healing" in row.group(0) and "Run now (web) · cura" in row.group(0)
    assert 'class="badge run-queued">Queued' in row.group(0)
    row = re.search(rf'<td><a href="/agents/runs/{first.pk}/">#{first.pk}</a>.*?</tr>', html, re.S)
    assert "Schedule" in row.group(0) and "Succeeded" in row.group(0)
    assert '<td class="num">–</td>' in row.group(0)


def test_agents_page_links_a_runs_proposals_to_the_queue(curator, duplicates):
    """A run that queued proposals links its count to the queue filtered by that run."""
    response = curator.post(reverse("agents:run-now", args=["heal"]))
    run = AgentRun.objects.get()
    n = run.proposals.count()
    assert n >= 1
    html = page(curator.get(reverse("agents:home")))
    assert f'<a href="/review/?status=all&amp;run={run.pk}">{n}</a>' in html
    assert response.status_code == 302


def test_agents_page_shows_only_the_last_25_runs(viewer):
    """The runs table is bounded: 30 runs, the 25 newest listed."""
    runs = [finished(heal_run()) for _ in range(30)]
    ids = run_table_ids(page(viewer.get(reverse("agents:home"))))
    assert ids == [r.pk for r in reversed(runs)][:25]


def test_agents_page_warns_when_no_worker_reported(viewer):
    """Without a recent heartbeat the page says queued runs wait for a worker."""
    warning = "No worker has reported recently"
    assert warning in page(viewer.get(reverse("agents:home")))
    WorkerHeartbeat.objects.create(hostname="w1", last_seen=timezone.now())
    assert warning not in page(viewer.get(reverse("agents:home")))


def test_agents_page_htmx_refresh_returns_only_the_runs_table_polling_while_busy(viewer):
    """htmx gets just the runs table; it keeps polling while any run is unfinished."""
    busy = running(heal_run())
    response = viewer.get(reverse("agents:home"), headers=HX)
    html = page(response)
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="runs-table"')
    assert "<html" not in html and "agent-card" not in html
    assert 'hx-get="/agents/" hx-trigger="every 2s"' in html
    assert run_table_ids(html) == [busy.pk]
    full = page(viewer.get(reverse("agents:home")))
    assert "<html" in full and "agent-card" in full and 'hx-trigger="every 2s"' in full


def test_agents_page_stops_polling_once_every_run_finished(viewer):
    """With every run finished the runs table has no polling attribute, htmx or not."""
    finished(heal_run())
    for headers in ({}, HX):
        html = page(viewer.get(reverse("agents:home"), headers=headers))
        assert '<div id="runs-table">' in html
        assert "every 2s" not in html


def test_agents_page_with_no_runs_says_so(viewer):
    """An empty runs table says there are no runs yet."""
    html = page(viewer.get(reverse("agents:home"), headers=HX))
    assert "No runs yet." in html and run_table_ids(html) == []


# --- a run's page -----------------------------------------------------------------------


def test_run_page_shows_counters_in_words_and_timings_in_seconds(viewer):
    """stats keys read as words; keys ending _s say they are seconds; LLM usage is shown."""
    run = finished(
        heal_run(provider="offline", model="rules"),
        duplicate_pairs=3,
        pairs_compared=120,
        cycles_s=0.25,
    )
    html = page(viewer.get(reverse("agents:run", args=[run.pk])))
    numbers = re.search(r'<table class="table small" id="run-numbers">(.*?)</table>', html, re.S)
    rows = dict(
        re.findall(r'<tr><td>([^<]+)</td><td class="num">([^<]+)</td></tr>', numbers.group(1))
    )
    assert rows["duplicate pairs"] == "3" and rows["pairs compared"] == "120"
    assert rows["cycles (seconds)"] == "0.25"
    assert "duration (seconds)" in rows
    assert f"Self-healing run #{run.pk}" in html and 'id="run-status">Succeeded' in html


def test_run_page_counts_proposals_as_they_stand_for_heal_runs(viewer, curator, f, duplicates):
    """For heal runs the proposal table is counted live: a rejection moves the count."""
    curator.post(reverse("agents:run-now", args=["heal"]))
    run = AgentRun.objects.get()
    url = reverse("agents:run", args=[run.pk])
    assert '<tr><td>merge concepts (pending)</td><td class="num">1</td></tr>' in page(
        viewer.get(url)
    )
    merge = run.proposals.get()
    decisions.proposal_reject(
        proposal_id=merge.pk, acting_user=f.user(role="curator"), reason_code="too_vague"
    )
    html = page(viewer.get(url))
    assert '<tr><td>merge concepts (rejected)</td><td class="num">1</td></tr>' in html
    assert "merge concepts (pending)" not in html


def test_run_page_uses_construction_counts_and_dropped_reasons(viewer):
    """A construction run shows the proposals it counted and why candidates were dropped."""
    run = construct_run_create(sources=[])
    AgentRun.objects.filter(pk=run.pk).update(
        stats={
            **run.stats,
            "proposals": {"add_edge": {"pending": 4, "held": 2}},
            "dropped": {"unknown_relation": 5, "self_loop": 1},
        }
    )
    html = page(viewer.get(reverse("agents:run", args=[run.pk])))
    assert '<tr><td>add edge (pending)</td><td class="num">4</td></tr>' in html
    assert '<tr><td>add edge (held)</td><td class="num">2</td></tr>' in html
    assert '<tr><td>dropped: unknown relation</td><td class="num">5</td></tr>' in html
    assert '<tr><td>dropped: self loop</td><td class="num">1</td></tr>' in html


def test_run_page_shows_no_proposals_yet_for_an_empty_run(viewer):
    """A run that queued nothing says "None yet." and offers no queue link."""
    run = heal_run()
    html = page(viewer.get(reverse("agents:run", args=[run.pk])))
    assert "None yet." in html and "proposal of this run" not in html


def test_run_page_offers_cancel_only_to_curators_and_only_while_unfinished(f, curator, viewer):
    """The cancel button appears for a curator on a queued or running run, never after."""
    run = running(heal_run())
    url = reverse("agents:run", args=[run.pk])
    mine = page(curator.get(url))
    assert 'id="cancel-run"' in mine and f'action="/agents/runs/{run.pk}/cancel/"' in mine
    assert 'id="cancel-run"' not in page(viewer.get(url))
    assert 'id="cancel-run"' not in page(client_for(f, "reviewer").get(url))
    finished(run)
    assert 'id="cancel-run"' not in page(curator.get(url))


def test_run_page_htmx_poll_returns_only_the_progress_fragment(viewer):
    """htmx gets the progress card alone, polling every second while the run is unfinished."""
    run = running(heal_run(), done=1, total=4)
    url = reverse("agents:run", args=[run.pk])
    html = page(viewer.get(url, headers=HX))
    assert html.lstrip().startswith('<section id="run-progress"')
    assert "<html" not in html and "crumbs" not in html
    assert f'hx-get="/agents/runs/{run.pk}/" hx-trigger="every 1s"' in html
    assert 'id="run-status">Running' in html and "1 of 4 steps · 25%" in html
    full = page(viewer.get(url))
    assert "<html" in full and 'class="crumbs"' in full and 'id="run-progress"' in full


def test_run_page_stops_polling_when_the_run_finished(viewer):
    """A finished run's progress card carries no polling attribute, so htmx stops asking."""
    run = finished(running(heal_run()))
    for headers in ({}, HX):
        html = page(viewer.get(reverse("agents:run", args=[run.pk]), headers=headers))
        assert 'id="run-status">Succeeded' in html
        assert 'hx-trigger="every 1s"' not in html
    assert "4 of 4 steps · 100%" in html


def test_run_page_warns_about_a_missing_worker_only_while_unfinished(viewer):
    """An unfinished run without a live worker says so; a finished one does not."""
    run = heal_run()
    url = reverse("agents:run", args=[run.pk])
    assert "no worker has reported recently" in page(viewer.get(url, headers=HX))
    WorkerHeartbeat.objects.create(hostname="w1", last_seen=timezone.now())
    assert "no worker has reported recently" not in page(viewer.get(url, headers=HX))


def test_run_page_of_a_missing_run_is_404(viewer):
    """An id that names no run is a 404, with or without htmx."""
    assert viewer.get(reverse("agents:run", args=[999999])).status_code == 404
    assert viewer.get(reverse("agents:run", args=[999999]), headers=HX).status_code == 404


def test_run_page_escapes_hostile_errors_and_source_errors(viewer, f):
    """Errors in words can quote anything; they are shown as text."""
    f.lesson("evil")
    run = construct_run_create(sources=None)
    run.items.update(status=AgentRunItem.Status.FAILED, error=HOSTILE, finished_at=timezone.now())
    AgentRun.objects.filter(pk=run.pk).update(
        status=AgentRun.Status.FAILED, error=f"evil: {HOSTILE}", finished_at=timezone.now()
    )
    html = page(viewer.get(reverse("agents:run", args=[run.pk])))
    assert HOSTILE not in html
    assert (
        '<pre class="flash bad run-error">evil: &lt;script&gt;alert(1)&lt;/script&gt;</pre>' in html
    )
    items = re.search(r'id="run-items">(.*?)</table>', html, re.S).group(1)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in items and "Failed" in items


# --- chunks, tokens and the budget ------------------------------------------------------


def reading_run(f, *, done: int = 12, total: int = 40) -> tuple[AgentRun, AgentRunItem]:
    """A construction run reading "handbook" (chunk ``done`` of ``total``), with a second
    source still waiting."""
    f.lesson("handbook")
    f.lesson("waiting")
    run = construct_run_create(sources=None)
    now = timezone.now()
    AgentRun.objects.filter(pk=run.pk).update(status=AgentRun.Status.RUNNING, started_at=now)
    item = run.items.get(source__slug="handbook")
    AgentRunItem.objects.filter(pk=item.pk).update(
        status=AgentRunItem.Status.RUNNING,
        claimed_by="worker-1",
        started_at=now,
        renewed_at=now,
        chunks_done=done,
        chunks_total=total,
    )
    run.refresh_from_db()
    item.refresh_from_db()
    return run, item


def chunk_cells(html: str) -> dict[str, str]:
    """The Chunks cell of each source row of the run page, by source slug, as text."""
    items = re.search(r'id="run-items">(.*?)</table>', html, re.S).group(1)
    rows = re.findall(r'<tr><td><a href="/sources/([^/]+)/">.*?</tr>', items, re.S)
    cells = {}
    for slug in rows:
        row = re.search(rf'<tr><td><a href="/sources/{slug}/">(.*?)</tr>', items, re.S).group(1)
        cells[slug] = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row.split("</td><td>")[3]))
    return {slug: text.strip() for slug, text in cells.items()}


def test_run_page_shows_chunks_of_the_source_being_read_with_a_bar(viewer, f):
    """While a long document is read, its row says "chunks 12 / 40" beside a progress bar,
    and the card keeps polling so the count moves."""
    run, item = reading_run(f)
    html = page(viewer.get(reverse("agents:run", args=[run.pk]), headers=HX))
    assert f'hx-get="/agents/runs/{run.pk}/" hx-trigger="every 1s"' in html
    cells = chunk_cells(html)
    assert cells["handbook"] == "chunks 12 / 40" and cells["waiting"] == "–"
    bar = re.search(rf'<span class="chunks" id="chunks-{item.pk}">(.*?)</span></span>', html)
    assert 'role="progressbar"' in bar.group(1) and 'aria-valuenow="12"' in bar.group(1)
    assert 'aria-valuemax="40"' in bar.group(1) and 'class="pct-6"' in bar.group(
        1
    )  # 30%, in 5% steps
    AgentRunItem.objects.filter(pk=item.pk).update(chunks_done=31)
    html = page(viewer.get(reverse("agents:run", args=[run.pk]), headers=HX))
    assert chunk_cells(html)["handbook"] == "chunks 31 / 40"


def test_run_page_says_how_many_chunks_came_from_the_cache_once_done(viewer, f):
    """A finished source shows its chunks without a bar, and how many cost nothing."""
    run, item = reading_run(f, done=40)
    AgentRunItem.objects.filter(pk=item.pk).update(
        status=AgentRunItem.Status.DONE,
        finished_at=timezone.now(),
        stats={"chunks": 40, "chunks_cached": 31},
    )
    html = page(viewer.get(reverse("agents:run", args=[run.pk])))
    assert chunk_cells(html)["handbook"] == "chunks 40 / 40 · 31 from cache"
    assert f'id="chunks-{item.pk}"><span class="progress"' not in html


def test_agents_page_shows_the_chunks_of_each_source_a_running_run_reads(viewer, f):
    """The runs table names the source a running construction run reads, with its chunks;
    it goes on polling, and a finished run shows no such line."""
    run, item = reading_run(f, done=3, total=8)
    html = page(viewer.get(reverse("agents:home"), headers=HX))
    assert 'hx-trigger="every 2s"' in html
    reading = re.search(r'<div class="small reading">(.*?)</div>', html, re.S).group(1)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", reading)).strip()
    assert text == "reading handbook : chunks 3 / 8"
    assert 'href="/sources/handbook/"' in reading and 'aria-valuenow="3"' in reading
    AgentRunItem.objects.filter(pk=item.pk).update(
        status=AgentRunItem.Status.DONE, finished_at=timezone.now()
    )
    AgentRun.objects.filter(pk=run.pk).update(
        status=AgentRun.Status.CANCELLED, finished_at=timezone.now()
    )
    assert 'class="small reading"' not in page(viewer.get(reverse("agents:home"), headers=HX))


def test_agents_page_reads_running_sources_in_one_query(viewer, f, django_assert_max_num_queries):
    """Several running construction runs cost one query for their sources, not one each."""
    reading_run(f)
    with django_assert_max_num_queries(12) as few:
        viewer.get(reverse("agents:home"), headers=HX)
    for i in range(3):
        f.lesson(f"more-{i}")
        extra = construct_run_create(sources=None)
        AgentRun.objects.filter(pk=extra.pk).update(
            status=AgentRun.Status.RUNNING, started_at=timezone.now()
        )
        extra.items.filter(source__slug=f"more-{i}").update(
            status=AgentRunItem.Status.RUNNING, chunks_total=5, chunks_done=i
        )
    with django_assert_max_num_queries(len(few.captured_queries)):
        html = page(viewer.get(reverse("agents:home"), headers=HX))
    assert html.count('class="small reading"') == 4


def test_run_page_shows_token_use_and_a_budget_stop_in_words(viewer, f, settings):
    """The tokens used and the budget are shown; a budget stop is said in words, not as a
    "budget stop: True" counter."""
    settings.KG_LLM_MAX_TOKENS_PER_RUN = 20000
    run, _ = reading_run(f)
    url = reverse("agents:run", args=[run.pk])
    html = page(viewer.get(url))
    tokens = re.search(r'<p class="small" id="run-tokens">(.*?)</p>', html, re.S).group(1)
    assert "Model tokens: 0 used" in tokens and "of this run's budget of 20,000" in tokens
    assert 'id="budget-stop"' not in html
    AgentRun.objects.filter(pk=run.pk).update(
        tokens_reserved=19500,
        llm_usage={"total_tokens": 12345},
        stats={**run.stats, "budget_stop": True},
        error="Stopped before overspending.",
    )
    html = page(viewer.get(url, headers=HX))
    tokens = re.search(r'<p class="small" id="run-tokens">(.*?)</p>', html, re.S).group(1)
    assert "Model tokens: 12,345 used" in tokens
    assert "19,500 of this run's budget of 20,000 spent or promised" in tokens
    stop = re.search(r'<p class="flash bad" id="budget-stop">(.*?)</p>', html, re.S).group(1)
    assert stop.startswith("The token budget stopped this run")
    assert "(19,500 of 20,000 tokens spent or promised)" in stop
    assert "budget stop" not in re.search(r'id="run-numbers">(.*?)</table>', html, re.S).group(1)


def test_run_page_says_when_no_token_budget_is_set(viewer, f, settings):
    """Without KG_LLM_MAX_TOKENS_PER_RUN the page says there is no budget."""
    settings.KG_LLM_MAX_TOKENS_PER_RUN = 0
    run, _ = reading_run(f)
    html = page(viewer.get(reverse("agents:run", args=[run.pk])))
    assert "no budget set" in html


def test_heal_runs_show_no_tokens_or_chunks(viewer):
    """Only construction reads documents: other runs have no token line or sources table."""
    run = finished(heal_run())
    html = page(viewer.get(reverse("agents:run", args=[run.pk])))
    assert 'id="run-tokens"' not in html and 'id="run-items"' not in html
