"""A step-wise run (heal, discover, bootstrap) whose worker died is failed in words by the
reaper, so the Ontology page stops saying "running" for ever; a live one is renewed by its
task's heartbeat and never touched. Found by killing the worker during a bootstrap."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from kgreview.agents import reaper
from kgreview.agents.models import AgentRun
from kgreview.agents.runs import (
    RunHeartbeat,
    agent_run_create,
    agent_run_current,
    agent_run_step,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def windows(settings):
    settings.KG_ITEM_HEARTBEAT_SECONDS = 10
    settings.KG_ITEM_STALE_SECONDS = 60
    settings.KG_ITEM_LEASE_SECONDS = 900


def silent_for(run: AgentRun, seconds: float) -> None:
    AgentRun.objects.filter(pk=run.pk).update(
        updated_at=timezone.now() - timedelta(seconds=seconds)
    )


def running(agent: str) -> AgentRun:
    run = agent_run_create(agent=agent)
    agent_run_step(run, done=1, total=3)
    return run


def test_a_running_bootstrap_silent_past_the_heartbeat_window_is_failed_in_words():
    run = running(AgentRun.Agent.BOOTSTRAP)
    silent_for(run, 61)
    report = reaper.reap()
    run.refresh_from_db()
    assert report.failed == [run.pk]
    assert run.status == "failed" and run.finished_at is not None
    assert run.error == (
        "No progress for 60 s: its worker stopped. Draft again from the Ontology page: "
        "what it queued stays, and is not proposed twice."
    )


def test_a_running_bootstrap_renewed_within_the_window_is_left_alone():
    run = running(AgentRun.Agent.BOOTSTRAP)
    silent_for(run, 59)
    assert reaper.reap().failed == []
    run.refresh_from_db()
    assert run.status == "running"


def test_a_queued_run_waits_the_lease_not_the_heartbeat_window():
    """Its message may still wait behind a long construction; only the lease loses it."""
    run = agent_run_create(agent=AgentRun.Agent.BOOTSTRAP)
    silent_for(run, 600)
    assert reaper.reap().failed == []
    silent_for(run, 901)
    assert reaper.reap().failed == [run.pk]
    run.refresh_from_db()
    assert run.status == "failed" and run.error.startswith("No progress for 900 s")


def test_an_agent_without_a_heartbeat_is_given_the_lease():
    run = running(AgentRun.Agent.IMPORT)
    silent_for(run, 600)
    assert reaper.reap().failed == []
    silent_for(run, 901)
    assert reaper.reap().failed == [run.pk]


def test_a_lost_heal_frees_the_schedule_and_says_the_next_run_starts_afresh():
    run = running(AgentRun.Agent.HEAL)
    silent_for(run, 61)
    assert agent_run_current(AgentRun.Agent.HEAL) is None
    run.refresh_from_db()
    assert run.status == "failed" and run.error.endswith("The next scheduled run starts afresh.")


def test_a_construction_run_is_never_failed_by_this_pass(f):
    from kgreview.agents.construct import construct_run_create

    f.lesson("one")
    run = construct_run_create(provider="offline")
    AgentRun.objects.filter(pk=run.pk).update(status="running", started_at=timezone.now())
    silent_for(run, 10_000)
    assert run.pk not in reaper.reap().failed
    run.refresh_from_db()
    assert run.status == "running"


def test_the_run_heartbeat_renews_an_unfinished_run_and_stops_once_it_is_finished():
    run = running(AgentRun.Agent.BOOTSTRAP)
    silent_for(run, 61)
    beat = RunHeartbeat(run)
    assert beat.renew() == 1  # what its thread does every KG_ITEM_HEARTBEAT_SECONDS
    assert reaper.reap().failed == []
    AgentRun.objects.filter(pk=run.pk).update(status="cancelled", finished_at=timezone.now())
    assert beat.renew() == 0  # the thread sets ``lost`` and stops on this


def test_a_bootstrap_task_whose_run_was_failed_meanwhile_does_nothing(settings):
    from kgreview.agents import tasks

    run = running(AgentRun.Agent.BOOTSTRAP)
    silent_for(run, 61)
    reaper.reap()
    assert tasks.bootstrap.delay(run_id=run.pk).get() == 0
    run.refresh_from_db()
    assert run.status == "failed"


def test_the_ontology_panel_says_a_lost_bootstrap_failed_and_why_in_one_sentence_each(client, f):
    run = running(AgentRun.Agent.BOOTSTRAP)
    silent_for(run, 61)
    reaper.reap()
    client.force_login(f.user("cura", role="curator"))
    page = client.get("/agents/bootstrap/panel/").content.decode()
    assert f"Bootstrap run #{run.pk}</a>, failed." in page
    assert "its worker stopped. Draft again from the Ontology page" in page
    assert "twice.." not in page
