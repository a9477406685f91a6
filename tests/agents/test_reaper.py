"""The reaper resumes construction runs from the database's claims, on every broker.

A running source whose worker stopped renewing its claim is handed back and queued again;
the pending sources of a run that showed no sign of life are queued again; a live claim,
a run still moving and a finished run are left alone. Tasks run eagerly here, so a
source the reaper queues is read before ``tasks.reap`` returns.
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from kgreview.agents import reaper, tasks
from kgreview.agents.construct import construct_item_run, construct_run_create
from kgreview.agents.items import ClaimHeartbeat, item_claim
from kgreview.agents.models import AgentRun, AgentRunItem
from kgreview.review.models import Proposal

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def windows(settings):
    settings.KG_ITEM_HEARTBEAT_SECONDS = 10
    settings.KG_ITEM_STALE_SECONDS = 60
    settings.KG_ITEM_LEASE_SECONDS = 900
    settings.KG_ITEM_REQUEUE_SECONDS = 300


def ago(seconds: float):
    return timezone.now() - timedelta(seconds=seconds)


def run_of(f, *slugs: str) -> AgentRun:
    for slug in slugs:
        f.lesson(slug)
    return construct_run_create(provider="offline")


def claimed(item: AgentRunItem, *, claim="task:dead", started=0.0, renewed=None) -> None:
    """Pretend a worker claimed ``item`` ``started`` seconds ago (renewed ``renewed`` ago)."""
    AgentRunItem.objects.filter(pk=item.pk).update(
        status="running",
        claimed_by=claim,
        attempts=1,
        started_at=ago(started),
        renewed_at=None if renewed is None else ago(renewed),
    )
    AgentRun.objects.filter(pk=item.run_id).update(status="running", started_at=ago(started))


def quiet(run: AgentRun, seconds: float) -> None:
    """Pretend the run last changed ``seconds`` ago."""
    AgentRun.objects.filter(pk=run.pk).update(updated_at=ago(seconds))


# --- which items the reaper takes ------------------------------------------------------


def test_a_running_item_whose_heartbeat_went_stale_is_handed_back_in_words(f):
    run = run_of(f, "one")
    item = run.items.get()
    claimed(item, started=600, renewed=90)
    report = reaper.reap()
    assert report.lost == [item.pk] and report.stalled == []
    item.refresh_from_db()
    assert (item.status, item.claimed_by) == ("pending", "")
    assert "task:dead" in item.error and "no sign of life for 60 s" in item.error
    run.refresh_from_db()
    assert run.stats["resumed"] == 1 and run.status == "running"


def test_a_claim_never_renewed_counts_from_when_it_was_taken(f):
    run = run_of(f, "one")
    item = run.items.get()
    claimed(item, started=61)
    assert reaper.reap().lost == [item.pk]


def test_a_live_heartbeat_keeps_its_item_however_long_ago_it_started(f):
    run = run_of(f, "one")
    item = run.items.get()
    claimed(item, started=3600, renewed=5)
    report = reaper.reap()
    assert report.to_queue == [] and report.closed == []
    item.refresh_from_db()
    assert (item.status, item.claimed_by, item.error) == ("running", "task:dead", "")


def test_a_claim_renewed_after_the_reaper_looked_is_left_alone(f, monkeypatch):
    """The hand-back is conditional on the claim still being stale when it is written."""
    run = run_of(f, "one")
    item = run.items.get()
    claimed(item, started=600, renewed=90)
    look = reaper._hand_back_lost

    def renewed_meanwhile(run_id, now):
        AgentRunItem.objects.filter(pk=item.pk).update(renewed_at=timezone.now())
        return look(run_id, now)

    monkeypatch.setattr(reaper, "_hand_back_lost", renewed_meanwhile)
    assert reaper.reap().lost == []
    item.refresh_from_db()
    assert item.status == "running" and item.claimed_by == "task:dead"


def test_pending_items_of_a_run_silent_past_the_requeue_window_are_queued_again_once(f):
    """Their messages never reached a worker; the run is touched so the next pass waits."""
    run = run_of(f, "one", "two")
    quiet(run, 301)
    first = reaper.reap()
    assert sorted(first.stalled) == sorted(run.items.values_list("pk", flat=True))
    run.refresh_from_db()
    assert run.stats["resumed"] == 2 and run.status == "queued"
    assert reaper.reap().to_queue == []


def test_pending_items_of_a_run_that_is_moving_are_not_queued_again(f):
    run = run_of(f, "one", "two")
    quiet(run, 3600)
    first, _ = run.items.order_by("pk")
    claimed(first, started=3600, renewed=2)  # another source is being read right now
    assert reaper.reap().to_queue == []


def test_a_fresh_queued_run_is_left_to_its_messages(f):
    run = run_of(f, "one")
    assert reaper.reap().to_queue == []
    run.refresh_from_db()
    assert run.status == "queued" and "resumed" not in run.stats


def test_a_finished_run_is_never_touched(f):
    run = run_of(f, "one")
    tasks.construct_run.delay(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "succeeded"
    before = (run.updated_at, run.stats, list(run.items.values_list("status", "attempts")))
    quiet(run, 3600)
    run.refresh_from_db()
    touched = run.updated_at
    assert reaper.reap().to_queue == []
    run.refresh_from_db()
    assert run.updated_at == touched and run.stats == before[1]
    assert list(run.items.values_list("status", "attempts")) == before[2]


def test_a_run_whose_items_all_finished_but_was_left_open_is_closed(f):
    run = run_of(f, "one")
    AgentRunItem.objects.filter(run=run).update(status="done", finished_at=timezone.now())
    AgentRun.objects.filter(pk=run.pk).update(status="running", progress_done=1)
    assert reaper.reap().closed == [run.pk]
    run.refresh_from_db()
    assert run.status == "succeeded" and run.finished_at is not None


# --- the task: resumed runs finish, once ----------------------------------------------


def test_the_reap_task_resumes_a_lost_source_and_the_run_finishes_without_duplicates(f):
    run = run_of(f, "one", "two", "three")
    first, second, third = run.items.order_by("pk")
    construct_item_run(item_id=first.pk, claim="task:alive")
    claimed(second, started=600, renewed=120)  # its worker was killed mid-read
    assert tasks.reap.delay().get() == 1
    second.refresh_from_db()
    assert second.status == "done" and second.attempts == 2 and second.error == ""
    assert tasks.reap.delay().get() == 0  # nothing left to resume; third is still queued
    tasks.construct_source.delay(item_id=third.pk)
    count = Proposal.objects.count()
    tasks.construct_source.delay(item_id=second.pk)  # a late duplicate delivery: a no-op
    run.refresh_from_db()
    assert run.status == "succeeded" and run.progress_done == 3 and run.stats["resumed"] == 1
    assert Proposal.objects.count() == count
    keys = list(run.proposals.values_list("kind", "dedup_key"))
    assert keys and len(keys) == len(set(keys))


def test_a_second_delivery_of_a_reaped_item_adds_no_proposal(f):
    run = run_of(f, "one")
    item = run.items.get()
    claimed(item, started=600, renewed=120)
    tasks.reap.delay()
    run.refresh_from_db()
    count = Proposal.objects.count()
    assert run.status == "succeeded" and count
    tasks.construct_source.delay(item_id=item.pk)
    assert Proposal.objects.count() == count


# --- claims and heartbeats -------------------------------------------------------------


def test_another_worker_takes_over_a_claim_whose_heartbeat_went_stale(f):
    run = run_of(f, "one")
    item = run.items.get()
    claimed(item, claim="task:A", started=600, renewed=5)
    assert item_claim(item.pk, "task:B") is None  # alive: turned away
    AgentRunItem.objects.filter(pk=item.pk).update(renewed_at=ago(61))
    taken = item_claim(item.pk, "task:B")
    assert taken is not None and taken.claimed_by == "task:B" and taken.attempts == 2


def wait_until(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


@pytest.mark.django_db(transaction=True)
def test_the_claim_heartbeat_renews_a_claim_while_its_worker_reads(f, settings):
    settings.KG_ITEM_HEARTBEAT_SECONDS = 1
    run = run_of(f, "one")
    item = item_claim(run.items.get().pk, "task:reader")
    with ClaimHeartbeat(item) as beat:
        renewed = wait_until(
            lambda: AgentRunItem.objects.filter(pk=item.pk, renewed_at__isnull=False).exists()
        )
    assert renewed and not beat.lost


@pytest.mark.django_db(transaction=True)
def test_the_claim_heartbeat_stops_when_the_claim_was_taken_away(f, settings):
    settings.KG_ITEM_HEARTBEAT_SECONDS = 1
    run = run_of(f, "one")
    item = item_claim(run.items.get().pk, "task:reader")
    AgentRunItem.objects.filter(pk=item.pk).update(status="pending", claimed_by="")
    with ClaimHeartbeat(item) as beat:
        assert wait_until(lambda: beat.lost)
    assert AgentRunItem.objects.get(pk=item.pk).renewed_at is None
