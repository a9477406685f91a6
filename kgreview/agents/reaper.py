"""The reaper: construction runs whose sources lost their worker, or whose task messages
never reached one, are resumed from what the database knows, on every broker.

Beat runs it every ``KG_REAPER_SECONDS`` (the ``agents.reap`` task). Recovery never
depends on the broker handing a message back (the embedded filesystem broker deletes a
message when a worker takes it, so a killed worker's tasks are gone):

- A **running** item whose claim was not renewed for ``items.item_stale_after()`` (its
  worker's heartbeat stopped) is handed back: pending, claim cleared, the reason in words.
  It is queued again at once.
- The **pending** items of a run that showed no sign of life for
  ``KG_ITEM_REQUEUE_SECONDS`` (no item claimed, renewed or finished, the run untouched)
  are queued again: their messages were lost (a killed worker had taken them) or refused.
- A run whose items are all finished but which was never closed is closed.
- A **step-wise** run (heal, discover, bootstrap, ...) taken as lost
  (``runs.agent_run_lost``: running and silent past its heartbeat's window, or queued and
  silent for the lease) is failed in words. A bootstrap has no schedule to notice it;
  it would say "running" for ever.

A run the reaper resumed is touched and counts ``stats["resumed"]``, so its sources are
not queued again before another full wait. Running it twice, or on two beats, is safe: a
hand-back is conditional on the claim it saw being unchanged and still stale; a second
task for one item finds it claimed or finished (``items.item_claim``); proposals are
de-duplicated by key in the database. The agents' own bookkeeping: not audited.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from .items import construct_run_close, item_stale_after, item_stale_q
from .models import AgentRun, AgentRunItem
from .runs import agent_runs_fail_lost

log = logging.getLogger(__name__)


@dataclass
class Reaped:
    """What one pass found: item ids to queue again, and runs it closed."""

    lost: list[int] = field(default_factory=list)  # handed back from a dead worker
    stalled: list[int] = field(default_factory=list)  # pending in a run that stalled
    closed: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)  # step-wise runs whose worker died

    @property
    def to_queue(self) -> list[int]:
        return self.lost + self.stalled


def requeue_after() -> timedelta:
    """How long a run may show no sign of life before its pending sources are queued again."""
    return timedelta(seconds=settings.KG_ITEM_REQUEUE_SECONDS)


def reap(*, now: datetime | None = None) -> Reaped:
    """One pass over the unfinished construction runs; returns the item ids to queue.

    The caller (the ``agents.reap`` task) queues them after this returns, so every
    hand-back is committed before a worker can see the task.
    """
    now = now or timezone.now()
    report = Reaped()
    unfinished = (
        AgentRun.objects.filter(agent=AgentRun.Agent.CONSTRUCT)
        .exclude(status__in=AgentRun.FINISHED)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for run_id in list(unfinished):
        _reap_run(run_id, now, report)
    report.failed = agent_runs_fail_lost(now)
    return report


def _reap_run(run_id: int, now: datetime, report: Reaped) -> None:
    lost = _hand_back_lost(run_id, now)
    stalled: list[int] = []
    if not lost and _last_sign_of_life(run_id) < now - requeue_after():
        stalled = list(
            AgentRunItem.objects.filter(run_id=run_id, status=AgentRunItem.Status.PENDING)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
    if lost or stalled:
        _note_resumed(run_id, len(lost) + len(stalled))
        if stalled:
            log.warning(
                "reaper: run #%s showed no sign of life for %s s; its %s pending sources "
                "are queued again (their task messages were lost).",
                run_id,
                settings.KG_ITEM_REQUEUE_SECONDS,
                len(stalled),
            )
        report.lost += lost
        report.stalled += stalled
    elif _close_if_done(run_id):
        report.closed.append(run_id)


def _hand_back_lost(run_id: int, now: datetime) -> list[int]:
    """Items whose worker stopped renewing its claim, made pending again (one conditional
    update each, so a claim renewed or taken meanwhile is left alone)."""
    stale = now - item_stale_after()
    seconds = int(item_stale_after().total_seconds())
    handed: list[int] = []
    candidates = AgentRunItem.objects.filter(item_stale_q(stale), run_id=run_id).values_list(
        "pk", "claimed_by"
    )
    for item_id, claim in list(candidates):
        changed = AgentRunItem.objects.filter(
            item_stale_q(stale), pk=item_id, claimed_by=claim
        ).update(
            status=AgentRunItem.Status.PENDING,
            claimed_by="",
            error=(
                f"Its worker ({claim or 'unknown'}) stopped renewing its claim: no sign "
                f"of life for {seconds} s. Queued again by the reaper."
            ),
        )
        if changed:
            handed.append(item_id)
            log.warning(
                "reaper: run #%s: the worker reading item %s (%s) stopped answering for "
                "%s s; the source is queued again.",
                run_id,
                item_id,
                claim,
                seconds,
            )
    return handed


def _last_sign_of_life(run_id: int) -> datetime:
    """The latest of: the run's last change, and any of its items claimed, renewed or
    finished."""
    run_touched = AgentRun.objects.filter(pk=run_id).values_list("updated_at", flat=True).get()
    marks = AgentRunItem.objects.filter(run_id=run_id).aggregate(
        started=Max("started_at"), renewed=Max("renewed_at"), finished=Max("finished_at")
    )
    return max([run_touched, *(m for m in marks.values() if m is not None)])


@transaction.atomic
def _note_resumed(run_id: int, count: int) -> None:
    """Touch the run (the next requeue waits a full window) and count what was resumed."""
    run = AgentRun.objects.select_for_update().get(pk=run_id)
    stats = dict(run.stats or {})
    stats["resumed"] = stats.get("resumed", 0) + count
    run.stats = stats
    run.save(update_fields=["stats", "updated_at"])


@transaction.atomic
def _close_if_done(run_id: int) -> bool:
    """Close a run whose every item finished but which was left open; True if closed."""
    if (
        AgentRunItem.objects.filter(run_id=run_id)
        .exclude(status__in=AgentRunItem.FINISHED)
        .exists()
    ):
        return False
    run = AgentRun.objects.select_for_update().get(pk=run_id)
    if run.is_finished:
        return False
    construct_run_close(run)
    run.refresh_from_db(fields=["status"])
    return run.is_finished
