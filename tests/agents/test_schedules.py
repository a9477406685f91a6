"""Scheduled runs of one agent never overlap; a run whose worker died does not block."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from kgreview.agents import tasks
from kgreview.agents.construct import construct_run_create
from kgreview.agents.models import AgentRun, AgentRunItem
from kgreview.agents.runs import agent_run_create, agent_run_step

pytestmark = pytest.mark.django_db


def age(run: AgentRun, seconds: int) -> None:
    """Pretend the run last reported ``seconds`` ago."""
    AgentRun.objects.filter(pk=run.pk).update(
        updated_at=timezone.now() - timedelta(seconds=seconds)
    )


def test_a_scheduled_heal_skips_its_turn_while_another_heal_is_running():
    """Two nightly heals never run at once: the second turn does nothing."""
    busy = agent_run_create(agent=AgentRun.Agent.HEAL)
    agent_run_step(busy, done=1, total=4)
    assert tasks.heal.delay().get() == 0
    assert AgentRun.objects.filter(agent="heal").count() == 1
    busy.refresh_from_db()
    assert busy.status == "running"


def test_a_heal_whose_worker_died_is_failed_in_words_and_a_new_one_runs(settings):
    """No report for the lease: the old run is failed with the reason, the schedule goes on."""
    settings.KG_ITEM_LEASE_SECONDS = 60
    dead = agent_run_create(agent=AgentRun.Agent.HEAL)
    agent_run_step(dead, done=1, total=4)
    age(dead, 120)
    new_id = tasks.heal.delay().get()
    dead.refresh_from_db()
    assert dead.status == "failed" and "No progress for 60 s" in dead.error
    assert new_id != dead.pk and AgentRun.objects.get(pk=new_id).status == "succeeded"


def test_a_manual_run_is_not_blocked_by_the_overlap_guard():
    """Run now hands the task its own run id; that run is carried out."""
    agent_run_create(agent=AgentRun.Agent.DISCOVER)  # someone else's, queued
    mine = agent_run_create(agent=AgentRun.Agent.DISCOVER)
    assert tasks.discover.delay(run_id=mine.pk).get() == mine.pk
    mine.refresh_from_db()
    assert mine.status == "succeeded"


def test_the_hourly_construct_skips_while_a_run_is_going_and_resumes_a_stalled_one(
    f, settings, monkeypatch
):
    """A fresh run in progress: nothing new. A stalled one: its pending sources are queued."""
    settings.KG_ITEM_LEASE_SECONDS = 60
    doc = f.lesson(slug="vs")
    run = construct_run_create(sources=[doc], trigger=AgentRun.Trigger.SCHEDULE)
    resumed = []
    monkeypatch.setattr(tasks.construct_run, "delay", lambda **kw: resumed.append(kw))
    assert tasks.construct_scheduled.delay().get() is None
    assert resumed == [] and AgentRun.objects.filter(agent="construct").count() == 1
    age(run, 120)
    assert tasks.construct_scheduled.delay().get() is None
    assert resumed == [{"run_id": run.pk}]
    assert AgentRun.objects.filter(agent="construct").count() == 1
    assert run.items.get().status == AgentRunItem.Status.PENDING
