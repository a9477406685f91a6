"""What curators do on the Agents page is in the curation log; what agents do alone is not.

Run now, cancel and a schedule toggle each write exactly one ``AuditEntry`` with the
curator as its user, in the change's own transaction; a refused action writes none. Runs
started by a schedule, the command line or a requeue are their own record. Bad input to
the forms is answered in words (a message, or a 400 for htmx), never with a 500.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django_celery_beat.models import CrontabSchedule, PeriodicTask

from kgreview.agents import schedules, tasks
from kgreview.agents.construct import construct_run_create
from kgreview.agents.models import AgentRun
from kgreview.agents.runs import agent_run_cancel, agent_run_create, agent_run_step
from kgreview.agents.schedules import schedule_set_enabled
from kgreview.core.errors import NotFound, StateConflict
from kgreview.core.models import AuditEntry
from tests.pages import HX, flashes

pytestmark = pytest.mark.django_db


def heal_schedule() -> PeriodicTask:
    return PeriodicTask.objects.get(task="agents.heal")


def agent_entries():
    """The curation-log rows about runs and schedules (importing the test's sources writes
    rows of its own)."""
    return AuditEntry.objects.filter(subject_type__in=("agentrun", "schedule"))


def only_entry() -> AuditEntry:
    """The one curation-log row about the agents (the test fails if there are more or none)."""
    entries = list(agent_entries())
    assert len(entries) == 1, [e.summary for e in entries]
    return entries[0]


# --- run now ----------------------------------------------------------------------------


def test_run_now_writes_one_entry_naming_the_run_and_the_curator(curator, curator_user):
    """Starting a heal run by hand is logged once, in words, with what was started."""
    curator.post(reverse("agents:run-now", args=["heal"]))
    run = AgentRun.objects.get()
    entry = only_entry()
    assert (entry.user, entry.action) == (curator_user, "agent_run.start")
    assert (entry.subject_type, entry.subject_id) == ("agentrun", str(run.pk))
    assert entry.summary == f"Started a heal run (#{run.pk}) by hand."
    assert entry.before == {}
    assert entry.after["agent"] == "heal" and entry.after["trigger"] == "manual"


def test_run_now_for_construction_logs_which_sources_it_reads(curator, curator_user, f):
    """A construction run by hand says how many sources, and whether it reads them all."""
    f.lesson("first")
    f.lesson("second")
    curator.post(reverse("agents:run-now", args=["construct"]))
    run = AgentRun.objects.get()
    entry = only_entry()
    assert entry.user == curator_user
    assert entry.summary == f"Started a construct run (#{run.pk}) by hand."
    assert entry.after["sources"] == 2 and entry.after["every_source"] is False
    curator.post(reverse("agents:run-now", args=["construct"]), {"scope": "all"})
    again = AgentRun.objects.order_by("-pk").first()
    latest = agent_entries().order_by("-pk").first()
    assert agent_entries().count() == 2
    assert latest.subject_id == str(again.pk) and latest.after["every_source"] is True


def test_run_now_with_nothing_to_read_writes_no_entry(curator, f):
    """When Run now starts nothing, nothing is logged."""
    f.lesson("first")
    curator.post(reverse("agents:run-now", args=["construct"]))
    assert agent_entries().count() == 1
    curator.post(reverse("agents:run-now", args=["construct"]))
    assert AgentRun.objects.count() == 1 and agent_entries().count() == 1


@pytest.mark.parametrize("headers", [{}, HX], ids=["plain", "htmx"])
def test_run_now_for_an_unknown_agent_writes_no_entry(curator, headers):
    assert (
        curator.post(reverse("agents:run-now", args=["nope"]), headers=headers).status_code == 404
    )
    assert not agent_entries().exists() and not AgentRun.objects.exists()


@pytest.mark.parametrize("agent", ["construct", "heal"])
@pytest.mark.parametrize("scope", ["everything", "ALL", "<script>"])
def test_run_now_with_a_bad_scope_says_so_in_words_and_starts_nothing(curator, f, agent, scope):
    """A scope that is neither "new" nor "all" is refused in words: no run, no entry."""
    f.lesson("first")
    response = curator.post(reverse("agents:run-now", args=[agent]), {"scope": scope}, follow=True)
    assert response.redirect_chain == [(reverse("agents:home"), 302)]
    [(level, words)] = flashes(response)
    assert level == "error"
    assert words.startswith(f"“{scope}” is not a choice of sources")
    assert "<script>" not in response.content.decode()
    assert not AgentRun.objects.exists() and not agent_entries().exists()


@pytest.mark.parametrize("scope", ["everything", "<script>"])
def test_run_now_with_a_bad_scope_over_htmx_is_a_400_in_words(curator, scope):
    """htmx gets a 400 whose text says what was wrong; nothing starts."""
    response = curator.post(reverse("agents:run-now", args=["heal"]), {"scope": scope}, headers=HX)
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/plain")
    assert response.content.decode().startswith(f"“{scope}” is not a choice of sources")
    assert not AgentRun.objects.exists() and not agent_entries().exists()


def test_run_now_over_htmx_with_good_values_answers_as_without(curator, curator_user):
    """With htmx a good Run now is the same redirect to the run, logged once."""
    response = curator.post(reverse("agents:run-now", args=["heal"]), {"scope": "new"}, headers=HX)
    run = AgentRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("agents:run", args=[run.pk])
    assert only_entry().user == curator_user


# --- cancel -----------------------------------------------------------------------------


def test_cancelling_a_queued_run_writes_one_entry_with_before_and_after(curator, curator_user):
    run = agent_run_create(agent=AgentRun.Agent.HEAL)
    curator.post(reverse("agents:cancel", args=[run.pk]))
    entry = only_entry()
    assert (entry.user, entry.action) == (curator_user, "agent_run.cancel")
    assert (entry.subject_type, entry.subject_id) == ("agentrun", str(run.pk))
    assert entry.summary == f"Cancelled the heal run #{run.pk}."
    assert entry.before == {"status": "queued", "cancel_requested": False}
    assert entry.after == {"status": "cancelled", "cancel_requested": True, "sources_cancelled": 0}


def test_cancelling_a_running_run_logs_the_request_to_stop(curator, curator_user):
    run = agent_run_create(agent=AgentRun.Agent.HEAL)
    agent_run_step(run, done=1, total=4)
    curator.post(reverse("agents:cancel", args=[run.pk]))
    entry = only_entry()
    assert entry.user == curator_user
    assert entry.summary == f"Asked the heal run #{run.pk} to stop after its current step."
    assert entry.after["status"] == "running" and entry.after["cancel_requested"] is True


def test_cancelling_a_construction_run_logs_the_sources_it_will_not_read(curator, f):
    f.lesson("first")
    f.lesson("second")
    run = construct_run_create(sources=None)
    curator.post(reverse("agents:cancel", args=[run.pk]))
    entry = only_entry()
    assert entry.summary == (
        f"Cancelled the construct run #{run.pk}. 2 sources not started yet will not be read."
    )
    assert entry.after["sources_cancelled"] == 2


@pytest.mark.parametrize("headers", [{}, HX], ids=["plain", "htmx"])
def test_a_refused_cancel_writes_no_entry(curator, headers):
    """A finished run or a missing one: refused, and nothing is logged."""
    run = agent_run_create(agent=AgentRun.Agent.HEAL)
    curator.post(reverse("agents:cancel", args=[run.pk]), headers=headers)
    assert agent_entries().count() == 1
    response = curator.post(reverse("agents:cancel", args=[run.pk]), headers=headers)
    assert response.status_code == 302
    assert curator.post(reverse("agents:cancel", args=[999999]), headers=headers).status_code == 404
    assert agent_entries().count() == 1


def test_cancel_service_refusals_raise_in_words_and_log_nothing(curator_user):
    run = agent_run_create(agent=AgentRun.Agent.HEAL)
    agent_run_cancel(run_id=run.pk, acting_user=curator_user)
    with pytest.raises(StateConflict, match="already cancelled"):
        agent_run_cancel(run_id=run.pk, acting_user=curator_user)
    with pytest.raises(NotFound, match="There is no agent run #999999"):
        agent_run_cancel(run_id=999999, acting_user=curator_user)
    assert agent_entries().count() == 1


# --- schedules --------------------------------------------------------------------------


def test_pausing_and_resuming_a_schedule_writes_one_entry_each(curator, curator_user):
    s = heal_schedule()
    url = reverse("agents:schedule-toggle", args=[s.pk])
    curator.post(url, {"enabled": "0"})
    entry = only_entry()
    assert (entry.user, entry.action) == (curator_user, "schedule.pause")
    assert (entry.subject_type, entry.subject_id) == ("schedule", str(s.pk))
    assert entry.summary == "Paused the schedule “Heal the graph”."
    assert (entry.before, entry.after) == ({"enabled": True}, {"enabled": False})
    curator.post(url, {"enabled": "1"})
    resumed = agent_entries().order_by("-pk").first()
    assert agent_entries().count() == 2
    assert (resumed.action, resumed.summary) == (
        "schedule.resume",
        "Resumed the schedule “Heal the graph”.",
    )
    assert (resumed.before, resumed.after) == ({"enabled": False}, {"enabled": True})


def test_pausing_a_paused_schedule_changes_nothing_and_logs_nothing(curator):
    s = heal_schedule()
    url = reverse("agents:schedule-toggle", args=[s.pk])
    curator.post(url, {"enabled": "0"})
    response = curator.post(url, {"enabled": "0"}, follow=True)
    assert ("success", "“Heal the graph” paused.") in flashes(response)
    assert heal_schedule().enabled is False and agent_entries().count() == 1


@pytest.mark.parametrize("headers", [{}, HX], ids=["plain", "htmx"])
@pytest.mark.parametrize("value", ["yes", "", "2", "<script>", None])
def test_toggle_with_odd_values_pauses_never_fails(curator, curator_user, headers, value):
    """Only enabled=1 resumes; any other value, or none, pauses (the form's rule), with or
    without htmx, and is logged as a pause."""
    s = heal_schedule()
    data = {} if value is None else {"enabled": value}
    response = curator.post(reverse("agents:schedule-toggle", args=[s.pk]), data, headers=headers)
    assert response.status_code == 302 and response["Location"] == reverse("agents:home")
    assert heal_schedule().enabled is False
    entry = only_entry()
    assert (entry.user, entry.action) == (curator_user, "schedule.pause")


@pytest.mark.parametrize("headers", [{}, HX], ids=["plain", "htmx"])
def test_a_refused_toggle_writes_no_entry(curator, headers):
    """Another app's periodic task (403) or a missing one (404): nothing is logged."""
    crontab = CrontabSchedule.objects.create(minute="5", hour="*")
    other = PeriodicTask.objects.create(
        name="Something else", task="celery.backend_cleanup", crontab=crontab, enabled=True
    )
    url = reverse("agents:schedule-toggle", args=[other.pk])
    assert curator.post(url, {"enabled": "0"}, headers=headers).status_code == 403
    missing = reverse("agents:schedule-toggle", args=[999999])
    assert curator.post(missing, {"enabled": "0"}, headers=headers).status_code == 404
    assert not agent_entries().exists()


def test_the_entry_is_part_of_the_change(curator_user, monkeypatch):
    """If the log row cannot be written, the schedule is not changed either."""

    def broken(**_):
        raise RuntimeError("the log is down")

    monkeypatch.setattr(schedules.audit, "record", broken)
    with pytest.raises(RuntimeError):
        schedule_set_enabled(schedule=heal_schedule(), enabled=False, acting_user=curator_user)
    assert heal_schedule().enabled is True


@pytest.mark.parametrize("role", ["viewer", "reviewer"])
def test_non_curators_leave_no_entry(f, role):
    client = Client()
    client.force_login(f.user(role=role))
    run = agent_run_create(agent=AgentRun.Agent.HEAL)
    client.post(reverse("agents:run-now", args=["heal"]))
    client.post(reverse("agents:cancel", args=[run.pk]))
    client.post(reverse("agents:schedule-toggle", args=[heal_schedule().pk]), {"enabled": "0"})
    assert not agent_entries().exists()


# --- the agents' own work ---------------------------------------------------------------


def test_runs_the_system_starts_are_not_logged(f):
    """Schedules and the command line start runs as the system: the run is the record."""
    f.lesson("first")
    tasks.heal.delay()
    tasks.discover.delay()
    tasks.construct_scheduled.delay()
    construct_run_create(sources=None, trigger=AgentRun.Trigger.CLI)
    agent_run_create(agent=AgentRun.Agent.HEAL, trigger=AgentRun.Trigger.CLI)
    assert AgentRun.objects.count() == 5
    assert not agent_entries().exists()
