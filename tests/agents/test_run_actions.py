"""What curators do from the Agents page over HTTP: run an agent now, cancel a run,
pause and resume a schedule, and what they are told when the broker refuses the task.

Tasks run eagerly in the test settings, so a "Run now" has finished by the time the
redirect is answered.
"""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from django_celery_beat.models import CrontabSchedule, PeriodicTask

from kgreview.agents.construct import construct_run_create
from kgreview.agents.models import AgentRun
from kgreview.agents.runs import RunCancelled, agent_run_step
from kgreview.agents.schedules import schedule_set_enabled
from tests.agents.pages import (
    HOSTILE,
    finished,
    flashes,
    heal_run,
    page,
    running,
    schedule,
)

pytestmark = pytest.mark.django_db

# --- run now ----------------------------------------------------------------------------


def test_curator_runs_heal_now_and_lands_on_the_finished_run(curator, curator_user, duplicates):
    """Run now creates a manual run by the curator; it ran (eagerly) and queued merges."""
    response = curator.post(reverse("agents:run-now", args=["heal"]), follow=True)
    run = AgentRun.objects.get()
    assert response.redirect_chain == [(reverse("agents:run", args=[run.pk]), 302)]
    assert ("success", f"Self-healing run #{run.pk} queued.") in flashes(response)
    assert (run.agent, run.trigger, run.requested_by) == ("heal", "manual", curator_user)
    assert run.status == "succeeded" and run.progress_done == run.progress_total == 4
    big, small = duplicates
    merge = run.proposals.get(kind="merge_concepts")
    assert (merge.payload["survivor_id"], merge.payload["loser_id"]) == (big.pk, small.pk)
    html = page(response)
    assert 'id="run-status">Succeeded' in html
    assert "See the 1 proposal of this run" in html


def test_curator_runs_discovery_now(curator, curator_user):
    """Run now for discovery creates and finishes a discovery run with nothing to propose."""
    response = curator.post(reverse("agents:run-now", args=["discover"]))
    run = AgentRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("agents:run", args=[run.pk])
    assert (run.agent, run.trigger, run.requested_by) == ("discover", "manual", curator_user)
    assert run.status == "succeeded"
    assert not run.proposals.exists()


def test_curator_runs_construction_now_on_sources_not_read_yet(curator, f):
    """Construction reads each unread lesson once and queues its proposals."""
    f.lesson("first")
    f.lesson("second")
    response = curator.post(reverse("agents:run-now", args=["construct"]), follow=True)
    run = AgentRun.objects.get()
    assert ("success", f"Construction run #{run.pk} queued.") in flashes(response)
    assert run.agent == "construct" and run.status == "succeeded"
    assert sorted(run.items.values_list("source__slug", "status")) == [
        ("first", "done"),
        ("second", "done"),
    ]
    assert run.proposals.filter(kind="add_edge").exists()
    html = page(response)
    items = re.search(r'<table class="table small" id="run-items">(.*?)</table>', html, re.S)
    assert items and 'href="/sources/first/"' in items.group(1) and "Done" in items.group(1)


def test_run_construction_when_nothing_is_new_says_so_and_starts_nothing(curator, f):
    """Once every current revision was read, Run now explains there is nothing to read."""
    f.lesson("first")
    curator.post(reverse("agents:run-now", args=["construct"]), follow=True)
    assert AgentRun.objects.count() == 1
    response = curator.post(reverse("agents:run-now", args=["construct"]), follow=True)
    assert response.redirect_chain == [(reverse("agents:home"), 302)]
    assert flashes(response) == [
        ("info", "Nothing new to read: every source's current revision was read.")
    ]
    assert AgentRun.objects.count() == 1


def test_run_construction_with_scope_all_reads_every_source_again(curator, f):
    """scope=all starts a run over every source even when nothing changed."""
    f.lesson("first")
    f.lesson("second")
    curator.post(reverse("agents:run-now", args=["construct"]))
    response = curator.post(reverse("agents:run-now", args=["construct"]), {"scope": "all"})
    again = AgentRun.objects.order_by("-pk").first()
    assert AgentRun.objects.count() == 2
    assert response["Location"] == reverse("agents:run", args=[again.pk])
    assert again.items.count() == 2 and again.is_finished


@pytest.mark.parametrize("agent", ["nope", "CONSTRUCT", "<script>"])
def test_running_an_unknown_agent_is_404_and_starts_nothing(curator, agent):
    """Only the three agents can be run; any other name is a 404."""
    response = curator.post(reverse("agents:run-now", args=[agent]))
    assert response.status_code == 404
    assert not AgentRun.objects.exists()


# --- cancel -----------------------------------------------------------------------------


def test_cancelling_a_queued_heal_run_cancels_it_at_once(curator):
    """A run that has not begun is cancelled now, with the reason recorded."""
    run = heal_run()
    response = curator.post(reverse("agents:cancel", args=[run.pk]), follow=True)
    assert response.redirect_chain == [(reverse("agents:run", args=[run.pk]), 302)]
    assert ("success", f"Run #{run.pk} cancelled.") in flashes(response)
    run.refresh_from_db()
    assert run.status == "cancelled" and run.cancel_requested and run.finished_at
    assert run.error == "Cancelled before it began."
    assert 'id="cancel-run"' not in page(response)


def test_cancelling_a_running_run_asks_it_to_stop_after_the_current_step(curator):
    """A running run is flagged to stop; the page says it is stopping and it stays running."""
    run = running(heal_run())
    response = curator.post(reverse("agents:cancel", args=[run.pk]), follow=True)
    assert (
        "success",
        f"Run #{run.pk} will stop after the source it is reading now.",
    ) in flashes(response)
    run.refresh_from_db()
    assert run.status == "running" and run.cancel_requested and run.finished_at is None
    assert "stopping after the current source" in page(response)
    with pytest.raises(RunCancelled):
        agent_run_step(run, done=2)


def test_cancelling_a_construction_run_cancels_its_pending_sources(curator, curator_user, f):
    """Sources not started are cancelled with who cancelled them; the run ends cancelled."""
    f.lesson("first")
    f.lesson("second")
    run = construct_run_create(sources=None)
    response = curator.post(reverse("agents:cancel", args=[run.pk]), follow=True)
    assert ("success", f"Run #{run.pk} cancelled.") in flashes(response)
    run.refresh_from_db()
    assert run.status == "cancelled" and run.progress_done == 2
    assert run.stats["cancelled"] == 2
    assert set(run.items.values_list("status", "error")) == {("cancelled", "Cancelled by cura.")}
    assert not run.proposals.exists()


def test_cancelling_a_finished_run_is_refused_in_words(curator):
    """A finished run cannot be cancelled; the message says how it ended, nothing changes."""
    run = finished(heal_run())
    response = curator.post(reverse("agents:cancel", args=[run.pk]), follow=True)
    assert flashes(response) == [("error", f"Run #{run.pk} already succeeded.")]
    run.refresh_from_db()
    assert run.status == "succeeded" and not run.cancel_requested


def test_cancelling_a_missing_run_writes_nothing_and_ends_at_a_404(curator):
    """An unknown run id changes nothing and leads to a 404 page."""
    run = heal_run()
    response = curator.post(reverse("agents:cancel", args=[999999]))
    assert response.status_code == 404
    assert "There is no agent run" not in curator.get(reverse("agents:home")).content.decode()
    run.refresh_from_db()
    assert run.status == "queued" and not run.cancel_requested


# --- schedules --------------------------------------------------------------------------


def test_curator_pauses_and_resumes_an_agent_schedule(curator):
    """enabled=0 pauses the schedule, enabled=1 resumes it; each says so in words."""
    s = schedule("heal")
    url = reverse("agents:schedule-toggle", args=[s.pk])
    response = curator.post(url, {"enabled": "0"}, follow=True)
    assert response.redirect_chain == [(reverse("agents:home"), 302)]
    assert ("success", "“Heal the graph” paused.") in flashes(response)
    assert schedule("heal").enabled is False
    assert schedule("construct").enabled and schedule("discover").enabled
    card = re.search(r'id="agent-heal">(.*?)</article>', page(response), re.S).group(1)
    assert 'class="badge warn">paused' in card
    response = curator.post(url, {"enabled": "1"}, follow=True)
    assert ("success", "“Heal the graph” resumed.") in flashes(response)
    assert schedule("heal").enabled is True


def test_a_toggle_without_enabled_1_pauses(curator):
    """Only enabled=1 resumes; a missing or odd value pauses rather than guessing."""
    s = schedule("discover")
    curator.post(reverse("agents:schedule-toggle", args=[s.pk]), {"enabled": "yes"})
    assert schedule("discover").enabled is False
    schedule_set_enabled(schedule=schedule("discover"), enabled=True, acting_user=None)
    curator.post(reverse("agents:schedule-toggle", args=[s.pk]))
    assert schedule("discover").enabled is False


def test_toggling_a_schedule_that_is_not_an_agents_is_forbidden(curator):
    """Other periodic tasks are managed in the admin only: 403 and unchanged."""
    crontab = CrontabSchedule.objects.create(minute="5", hour="*")
    other = PeriodicTask.objects.create(
        name="Something else", task="celery.backend_cleanup", crontab=crontab, enabled=True
    )
    response = curator.post(reverse("agents:schedule-toggle", args=[other.pk]), {"enabled": "0"})
    assert response.status_code == 403
    other.refresh_from_db()
    assert other.enabled is True


def test_toggling_a_missing_schedule_is_404(curator):
    """An id that names no periodic task is a 404."""
    response = curator.post(reverse("agents:schedule-toggle", args=[999999]), {"enabled": "0"})
    assert response.status_code == 404


def test_schedule_names_are_escaped_on_the_agents_page_and_in_messages(curator):
    """A schedule described or renamed with markup is shown as text."""
    s = schedule("heal")
    PeriodicTask.objects.filter(pk=s.pk).update(name=HOSTILE, description="<b>bold</b>")
    response = curator.post(
        reverse("agents:schedule-toggle", args=[s.pk]), {"enabled": "0"}, follow=True
    )
    assert ("success", f"“{HOSTILE}” paused.") in flashes(response)
    html = page(response)
    assert HOSTILE not in html and "<b>bold</b>" not in html
    assert "&lt;b&gt;bold&lt;/b&gt;" in html


# --- a broker that refuses the task ----------------------------------------------------


@pytest.fixture
def broken_broker(tmp_path, monkeypatch):
    """Tasks go through the real filesystem broker, whose queue folder cannot be made
    (its parent is a file): every publish fails the way a full or read-only disk does."""
    from kgreview.celery import app

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the broker's folder should be")
    options = dict(app.conf.broker_transport_options or {})
    options.update(
        data_folder_in=str(blocker / "queue"),
        data_folder_out=str(blocker / "queue"),
        control_folder=str(tmp_path / "control"),
    )
    broken = {
        "task_always_eager": False,
        "broker_url": "filesystem://",
        "broker_transport": "kgreview.agents.broker:Transport",
        "broker_transport_options": options,
        "task_publish_retry": False,
    }
    kept = {key: app.conf.get(key) for key in broken}
    app.conf.update(broken)
    monkeypatch.setattr(app, "_pool", None)  # connections made with the settings above
    monkeypatch.setattr(app.amqp, "_producer_pool", None)
    yield
    app.pool.force_close_all()
    app.conf.update(kept)


@pytest.mark.parametrize("agent", ["construct", "heal", "discover"])
def test_run_now_with_a_broken_broker_says_so_and_leaves_no_run_queued(
    curator, f, broken_broker, agent
):
    """No 500: the curator reads why in words, and the run is failed, not queued forever."""
    f.lesson("first")
    response = curator.post(reverse("agents:run-now", args=[agent]), follow=True)
    assert response.status_code == 200
    run = AgentRun.objects.get()
    [(level, words)] = flashes(response)
    assert level == "error" and f"run #{run.pk} could not be started" in words
    assert "task queue refused it" in words and "try again" in words
    assert run.status == "failed" and run.finished_at is not None
    assert "Could not be queued for the workers" in run.error
    if agent == "construct":
        assert list(run.items.values_list("status", flat=True)) == ["failed"]
        assert run.progress_done == run.progress_total == 1


def test_run_now_when_the_broker_connection_fails_says_so(curator, monkeypatch):
    """Any broker's refusal (here Redis or RabbitMQ unreachable) is said in words too."""
    from kombu.exceptions import OperationalError

    from kgreview.agents import tasks

    def unreachable(**kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tasks.heal, "delay", unreachable)
    response = curator.post(reverse("agents:run-now", args=["heal"]), follow=True)
    run = AgentRun.objects.get()
    assert (
        "error",
        f"Self-healing run #{run.pk} could not be started: the task queue refused "
        "it (OperationalError: Error 111 connecting to 127.0.0.1:6379. Connection "
        "refused.). The run is marked failed; try again once the worker's broker is "
        "reachable.",
    ) in flashes(response)
    assert run.status == "failed"
