"""Beat waits out a database outage instead of dying, and every worker runs the reaper
(issue 25: stopping PostgreSQL for 45 s killed beat, and with no beat nothing resumed the
interrupted source)."""

from __future__ import annotations

import logging

import pytest
from django.db import OperationalError
from django_celery_beat.schedulers import DatabaseScheduler

from kgreview.agents import tasks
from kgreview.agents.beat import ReaperThread, ResilientScheduler
from kgreview.agents.construct import construct_run_create
from kgreview.agents.models import AgentRunItem
from kgreview.celery import app
from tests.agents.test_reaper import claimed

# Beat runs in autocommit, as here; flushed tables get their reference data back.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("reference_data")]

GONE = OperationalError("server closed the connection unexpectedly")


def outage(monkeypatch, *, setting_up: bool = False) -> list[int]:
    """The database stops answering the scheduler's reads; returns a switch to restore it."""
    down = [1]
    original = DatabaseScheduler.enabled_models

    def enabled_models(self):
        if down:
            raise GONE
        return original(self)

    monkeypatch.setattr(DatabaseScheduler, "enabled_models", enabled_models)
    return down


def test_plain_database_scheduler_dies_when_the_database_is_away(monkeypatch):
    """The fault the issue saw, kept as the reason ResilientScheduler exists."""
    outage(monkeypatch)
    with pytest.raises(OperationalError):
        DatabaseScheduler(app=app, lazy=True).tick()


def test_beat_waits_out_a_database_outage_and_resumes_its_schedules(monkeypatch, settings, caplog):
    settings.KG_BEAT_RETRY_SECONDS = 7
    down = outage(monkeypatch)
    scheduler = ResilientScheduler(app=app, lazy=True)
    with caplog.at_level(logging.WARNING, logger="kgreview.agents.beat"):
        assert scheduler.tick() == 7.0
        assert scheduler.tick() == 7.0
    assert "the database could not be reached while reading the schedules" in caplog.text
    assert "trying again in 7 s" in caplog.text
    down.clear()  # the database is back
    wait = scheduler.tick()
    assert 0 <= wait <= scheduler.max_interval
    assert "Competency questions" in scheduler.schedule  # read from the database again


def test_beat_that_starts_while_the_database_is_away_sets_up_once_it_answers(monkeypatch, settings):
    settings.KG_BEAT_RETRY_SECONDS = 3
    down = [1]
    original = DatabaseScheduler.setup_schedule

    def setup_schedule(self):
        if down:
            raise GONE
        original(self)

    monkeypatch.setattr(DatabaseScheduler, "setup_schedule", setup_schedule)
    scheduler = ResilientScheduler(app=app)  # not lazy: sets up now, and the database is away
    assert scheduler.tick() == 3.0
    down.clear()
    scheduler.tick()
    assert "Competency questions" in scheduler.schedule


def test_the_worker_reaper_queues_a_source_whose_worker_died(f, monkeypatch, settings):
    settings.KG_ITEM_STALE_SECONDS = 60
    f.lesson("orphan")
    run = construct_run_create(provider="offline")
    item = AgentRunItem.objects.get(run=run)
    claimed(item, started=600, renewed=300)
    queued: list[int] = []
    monkeypatch.setattr(tasks.construct_source, "delay", lambda item_id: queued.append(item_id))
    reaper = ReaperThread(every=1)
    assert reaper.reap_once() == 1
    assert queued == [item.pk]
    item.refresh_from_db()
    assert item.status == AgentRunItem.Status.PENDING and item.claimed_by == ""


def test_the_worker_reaper_survives_an_outage_and_tries_again(f, monkeypatch, caplog):
    def away():
        raise GONE

    monkeypatch.setattr("kgreview.agents.reaper.reap", away)
    reaper = ReaperThread(every=30)
    with caplog.at_level(logging.WARNING, logger="kgreview.agents.beat"):
        assert reaper.reap_once() == 0
    assert "could not look for lost sources" in caplog.text
    assert "trying again in 30 s" in caplog.text
    assert reaper.passes == 0
