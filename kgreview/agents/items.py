"""The items of a construction run: one per source, each claimed by one worker at a time.

An item is claimed under a row lock before any work. While a worker reads it, a
heartbeat thread renews the claim (``renewed_at``) every ``KG_ITEM_HEARTBEAT_SECONDS``;
a claim not renewed for ``item_stale_after()`` belongs to a dead worker, and another
task (a redelivery, or the reaper's, ``agents.reaper``) may take the item over. Finishing
an item adds its numbers to the run under a lock on the run row, and the last one to
finish gives the run its final status. The agent's own bookkeeping: nothing here is
audited.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from construction.types import LLMUsage

from .models import AgentRun, AgentRunItem

log = logging.getLogger(__name__)


def item_lease() -> timedelta:
    """How long a run may show no progress before a schedule resumes it."""
    return timedelta(seconds=settings.KG_ITEM_LEASE_SECONDS)


def item_stale_after() -> timedelta:
    """How long a claim may go unrenewed before its worker is taken as dead: the heartbeat
    window (``KG_ITEM_STALE_SECONDS``), never longer than the lease."""
    return timedelta(seconds=min(settings.KG_ITEM_STALE_SECONDS, settings.KG_ITEM_LEASE_SECONDS))


def item_stale_q(before) -> Q:
    """Running items whose last sign of life (claimed or renewed) is older than ``before``."""
    return Q(status=AgentRunItem.Status.RUNNING, started_at__lt=before) & (
        Q(renewed_at__isnull=True) | Q(renewed_at__lt=before)
    )


class Heartbeat:
    """Renew a row from a background thread while a worker works on it.

    A long piece of work (a local extractor reads a source in one go; a bootstrap drafts
    from the whole corpus) gives no other sign of life; this thread does, every
    ``KG_ITEM_HEARTBEAT_SECONDS``, so a worker that died is visible within
    ``KG_ITEM_STALE_SECONDS``. A renewal that fails (the database is busy) is tried
    again on the next beat; one that renews nothing (the row was taken over or finished)
    sets ``lost`` and stops. ``renew`` returns how many rows it renewed.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=name, daemon=True)

    def renew(self) -> int:
        raise NotImplementedError

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _beat(self) -> None:
        interval = settings.KG_ITEM_HEARTBEAT_SECONDS
        try:
            while not self._stop.wait(interval):
                try:
                    renewed = self.renew()
                except DatabaseError as exc:
                    log.warning("%s: could not renew (%s)", self.name, exc)
                    continue
                if not renewed:
                    self.lost = True
                    return
        finally:
            connection.close()  # this thread's own connection


class ClaimHeartbeat(Heartbeat):
    """Renew an item's claim while its worker reads it; ``lost`` when the claim is gone
    (the reaper handed the item to another task)."""

    def __init__(self, item: AgentRunItem) -> None:
        super().__init__(f"claim-heartbeat-{item.pk}")
        self.item_id = item.pk
        self.claim = item.claimed_by

    def renew(self) -> int:
        return AgentRunItem.objects.filter(
            pk=self.item_id, claimed_by=self.claim, status=AgentRunItem.Status.RUNNING
        ).update(renewed_at=timezone.now())


def run_stats_empty(total: int) -> dict:
    """The counters of a construction run over ``total`` sources, before any is read."""
    return {
        "sources": total,
        "processed": 0,
        "unchanged": 0,
        "failed": 0,
        "cancelled": 0,
        "candidates": 0,
        "proposals": {},
        "dropped": {},
        "flagged_existing": 0,
        "duration_s": 0.0,
    }


def run_stats_merge(total: dict, part: dict) -> dict:
    """``total`` with one source's counters added (candidates, proposals, drops)."""
    merged = dict(total)
    for key in ("candidates", "flagged_existing"):
        merged[key] = merged.get(key, 0) + part.get(key, 0)
    proposals = {k: dict(v) for k, v in merged.get("proposals", {}).items()}
    for kind, by_status in part.get("proposals", {}).items():
        slot = proposals.setdefault(kind, {})
        for status, n in by_status.items():
            slot[status] = slot.get(status, 0) + n
    merged["proposals"] = proposals
    dropped = dict(merged.get("dropped", {}))
    for reason, n in part.get("dropped", {}).items():
        dropped[reason] = dropped.get(reason, 0) + n
    merged["dropped"] = dropped
    return merged


def construct_run_close(run: AgentRun) -> None:
    """Once every item of a construction run is finished, give the run its final status
    (cancelled, failed, partial or succeeded) and the first failures in words."""
    counts = Counter(run.items.values_list("status", flat=True))
    finished = sum(counts[s] for s in AgentRunItem.FINISHED)
    if finished < run.progress_total:
        return
    if counts[AgentRunItem.Status.CANCELLED]:
        status = AgentRun.Status.CANCELLED
    elif counts[AgentRunItem.Status.FAILED] and counts[AgentRunItem.Status.FAILED] == finished:
        status = AgentRun.Status.FAILED
    elif counts[AgentRunItem.Status.FAILED]:
        status = AgentRun.Status.PARTIAL
    else:
        status = AgentRun.Status.SUCCEEDED
    now = timezone.now()
    run.status = status
    run.finished_at = now
    run.started_at = run.started_at or now
    stats = dict(run.stats)
    stats["duration_s"] = round((now - run.started_at).total_seconds(), 3)
    run.stats = stats
    failed = list(
        run.items.filter(status=AgentRunItem.Status.FAILED)
        .select_related("source")
        .values_list("source__slug", "error")[:20]
    )
    if failed:
        run.error = "\n".join(f"{slug}: {error}" for slug, error in failed)
    run.save(update_fields=["status", "finished_at", "started_at", "stats", "error", "updated_at"])


def item_finish(item: AgentRunItem, *, status: str, stats=None, usage=None, error="") -> None:
    """Finish one item and add its numbers to the run, under a lock on the run row.

    The item's update is conditional on it not being finished yet, so a second worker
    that somehow got here too adds nothing to the run's counters.
    """
    run = AgentRun.objects.select_for_update().get(pk=item.run_id)
    now = timezone.now()
    changed = (
        AgentRunItem.objects.filter(pk=item.pk)
        .exclude(status__in=AgentRunItem.FINISHED)
        .update(
            status=status,
            error=error,
            stats=stats or {},
            llm_usage=usage or {},
            finished_at=now,
            claimed_by="",
        )
    )
    if not changed:
        return
    item.status, item.stats, item.error = status, stats or {}, error
    run_stats = run_stats_merge(run.stats or run_stats_empty(run.progress_total), stats or {})
    buckets: dict[str, str] = {
        AgentRunItem.Status.DONE: "processed",
        AgentRunItem.Status.UNCHANGED: "unchanged",
        AgentRunItem.Status.FAILED: "failed",
        AgentRunItem.Status.CANCELLED: "cancelled",
    }
    bucket = buckets[status]
    run_stats[bucket] = run_stats.get(bucket, 0) + 1
    run.stats = run_stats
    total_usage = LLMUsage(**(run.llm_usage or {})) + LLMUsage(**(usage or {}))
    run.llm_usage = total_usage.as_json()
    run.progress_done += 1  # the run row is locked, so this read-modify-write is safe
    run.save(update_fields=["stats", "llm_usage", "progress_done", "updated_at"])
    if run.progress_done >= run.progress_total:
        construct_run_close(run)


def item_claim(item_id: int, claim: str) -> AgentRunItem | None:
    """Take an item for this worker, or None if it is finished or another worker has it."""
    with transaction.atomic():
        item = (
            AgentRunItem.objects.select_for_update(of=("self",))
            .select_related("run", "source__current_revision")
            .filter(pk=item_id)
            .first()
        )
        if item is None or item.is_finished:
            return None
        now = timezone.now()
        # A worker renews its claim while it reads (a heartbeat, and each chunk read).
        alive = max(filter(None, (item.started_at, item.renewed_at)), default=None)
        held_by_other = (
            item.status == AgentRunItem.Status.RUNNING
            and item.claimed_by
            and item.claimed_by != claim
            and alive is not None
            and now - alive < item_stale_after()
        )
        if held_by_other:
            return None
        item.status = AgentRunItem.Status.RUNNING
        item.claimed_by = claim[:255]
        item.attempts += 1
        item.started_at = now
        item.save(update_fields=["status", "claimed_by", "attempts", "started_at"])
        if item.run.status == AgentRun.Status.QUEUED:
            run = AgentRun.objects.select_for_update().get(pk=item.run_id)
            if run.status == AgentRun.Status.QUEUED:
                run.status = AgentRun.Status.RUNNING
                run.started_at = now
                run.save(update_fields=["status", "started_at", "updated_at"])
            item.run = run
        return item


def item_release(item: AgentRunItem, error: str) -> None:
    """Hand an item back (a transient failure that will be retried)."""
    AgentRunItem.objects.filter(pk=item.pk, claimed_by=item.claimed_by).update(
        status=AgentRunItem.Status.PENDING, claimed_by="", error=error
    )


def run_stop_for_budget(run: AgentRun, message: str) -> None:
    """The token budget is spent: the sources not started yet are cancelled, in words."""
    locked = AgentRun.objects.select_for_update().get(pk=run.pk)
    now = timezone.now()
    cancelled = locked.items.filter(status=AgentRunItem.Status.PENDING).update(
        status=AgentRunItem.Status.CANCELLED, finished_at=now, error=message
    )
    stats = dict(locked.stats)
    stats["cancelled"] = stats.get("cancelled", 0) + cancelled
    stats["budget_stop"] = True
    locked.stats = stats
    locked.error = message
    locked.progress_done = min(locked.progress_total, locked.progress_done + cancelled)
    locked.save(update_fields=["stats", "error", "progress_done", "updated_at"])
