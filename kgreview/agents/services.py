"""Writes for agent runs: start a run, process one source of it, finish it.

Locking rules: an item is claimed under a row lock before any work, so a source is
processed by one worker at a time; a redelivered task (same claim) may take over an item
its dead predecessor left running. All proposal writes for one source happen in one
transaction that holds the ``construct`` mutex, so two workers never interleave their
checks and writes. Run counters are updated under a lock on the run row.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterable
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from construction.errors import ExtractionFailed, LLMTransientError
from construction.pipeline import process_source
from construction.protocols import Extractor
from construction.types import Extraction, LLMUsage
from kgreview.core.errors import NotFound, StateConflict
from kgreview.graph.models import Source

from . import adapters, reading
from .models import (
    AgentRun,
    AgentRunItem,
    ExtractionRecord,
    Mutex,
    WorkerHeartbeat,
)
from .persist import persist_result

log = logging.getLogger(__name__)


def item_lease() -> timedelta:
    """How long a claimed source belongs to its worker before another may take it over."""
    return timedelta(seconds=settings.KG_ITEM_LEASE_SECONDS)


def worker_heartbeat_record(*, hostname: str, pid: int) -> WorkerHeartbeat:
    """Upsert the heartbeat row of one worker host."""
    beat, _ = WorkerHeartbeat.objects.update_or_create(
        hostname=hostname[:255], defaults={"last_seen": timezone.now(), "pid": pid}
    )
    return beat


# --- Runs -------------------------------------------------------------------------------


@transaction.atomic
def construct_run_create(
    *,
    sources: Iterable[Source] | None = None,
    provider: str | None = None,
    trigger: str = AgentRun.Trigger.CLI,
    user=None,
    params: dict | None = None,
) -> AgentRun:
    """A queued construction run with one item per source that has text.

    ``sources=None`` means every active source. The extractor is built now so a bad
    provider fails here, before anything is queued.
    """
    extractor = adapters.extractor_for(provider)
    if sources is None:
        chosen = list(
            Source.objects.filter(status=Source.Status.ACTIVE, current_revision__isnull=False)
            .order_by("slug")
            .only("pk", "current_revision_id")
        )
    else:
        chosen = [s for s in sources if s.current_revision_id is not None]
    run = AgentRun.objects.create(
        agent=AgentRun.Agent.CONSTRUCT,
        trigger=trigger,
        provider=extractor.name,
        model=extractor.model,
        params=params or {},
        requested_by=user if user is not None and user.is_authenticated else None,
        progress_total=len(chosen),
        stats=_empty_stats(len(chosen)),
        llm_usage=LLMUsage().as_json(),
    )
    AgentRunItem.objects.bulk_create(
        [AgentRunItem(run=run, source=s, revision_id=s.current_revision_id) for s in chosen]
    )
    if not chosen:
        _finish_run(run)
    return run


def _empty_stats(total: int) -> dict:
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


def _merge_stats(total: dict, part: dict) -> dict:
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


def _finish_run(run: AgentRun) -> None:
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


def _record_item(item: AgentRunItem, *, status: str, stats=None, usage=None, error="") -> None:
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
    run_stats = _merge_stats(run.stats or _empty_stats(run.progress_total), stats or {})
    bucket = {
        AgentRunItem.Status.DONE: "processed",
        AgentRunItem.Status.UNCHANGED: "unchanged",
        AgentRunItem.Status.FAILED: "failed",
        AgentRunItem.Status.CANCELLED: "cancelled",
    }[status]
    run_stats[bucket] = run_stats.get(bucket, 0) + 1
    run.stats = run_stats
    total_usage = LLMUsage(**(run.llm_usage or {})) + LLMUsage(**(usage or {}))
    run.llm_usage = total_usage.as_json()
    run.progress_done += 1  # the run row is locked, so this read-modify-write is safe
    run.save(update_fields=["stats", "llm_usage", "progress_done", "updated_at"])
    if run.progress_done >= run.progress_total:
        _finish_run(run)


def _claim(item_id: int, claim: str) -> AgentRunItem | None:
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
        # A long document renews its lease as its chunks finish.
        alive = max(filter(None, (item.started_at, item.renewed_at)), default=None)
        held_by_other = (
            item.status == AgentRunItem.Status.RUNNING
            and item.claimed_by
            and item.claimed_by != claim
            and alive is not None
            and now - alive < item_lease()
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


def _release(item: AgentRunItem, error: str) -> None:
    """Hand an item back (a transient failure that will be retried)."""
    AgentRunItem.objects.filter(pk=item.pk, claimed_by=item.claimed_by).update(
        status=AgentRunItem.Status.PENDING, claimed_by="", error=error
    )


def construct_item_run(
    *,
    item_id: int,
    claim: str,
    extractor: Extractor | None = None,
    reverify: bool = False,
    final_attempt: bool = True,
) -> AgentRunItem:
    """Read one source of a run and queue what survives, in one transaction.

    READ happens outside any transaction (it may call a model for seconds) and its
    output is stored at once, so a crash afterwards never pays for the same call twice.
    A revision already read by this extractor costs nothing: the item is ``unchanged``.
    A failed READ fails this item with the error in words; nothing is written for it.
    ``LLMTransientError`` is re-raised for a retry unless this is the final attempt.
    """
    item = _claim(item_id, claim)
    if item is None:
        return AgentRunItem.objects.get(pk=item_id)
    run = item.run
    if run.cancel_requested:
        with transaction.atomic():
            _record_item(item, status=AgentRunItem.Status.CANCELLED, error="Run was cancelled.")
        return item
    try:
        return _construct_item(item, run, extractor, reverify, final_attempt)
    except LLMTransientError:
        raise
    except Exception as exc:  # any bug or outage fails this source, not the whole run
        log.exception("construct failed for %s in run %s", item.source.slug, run.pk)
        with transaction.atomic():
            _record_item(
                item,
                status=AgentRunItem.Status.FAILED,
                error=f"Internal error ({exc.__class__.__name__}): {exc}",
            )
        return item


def _construct_item(
    item, run, extractor: Extractor | None, reverify, final_attempt
) -> AgentRunItem:
    started = time.perf_counter()
    extractor = extractor or adapters.extractor_for(run.provider)
    xkey = adapters.extractor_key(extractor)
    revision = item.source.current_revision
    revision.source = item.source
    if item.revision_id != revision.pk:
        AgentRunItem.objects.filter(pk=item.pk).update(revision=revision)
    record = ExtractionRecord.objects.filter(revision=revision, extractor=xkey).first()
    if record is not None and record.status == ExtractionRecord.Status.DONE and not reverify:
        with transaction.atomic():
            _record_item(item, status=AgentRunItem.Status.UNCHANGED, stats={}, usage={})
        return item

    relations = adapters.relation_table()
    vocabulary = adapters.vocabulary(relations)
    doc = adapters.source_doc(revision)
    plans = reading.plans_for(revision, doc, xkey)
    reading.progress_start(item, len(plans))
    usage = LLMUsage()
    local = extractor.local
    extraction = None
    read_stats: dict = {"chunks": len(plans)}
    if record is not None:
        extraction = Extraction.from_json(record.output)
    elif not local:
        # Model calls take seconds: make them outside any transaction, and keep each
        # paid chunk at once, so a crash afterwards never pays for it twice.
        try:
            read = reading.read_remote(
                item=item,
                run=run,
                plans=plans,
                extractor=extractor,
                xkey=xkey,
                vocabulary=vocabulary,
                lexicon=adapters.INDEX_CACHE.get(),
            )
        except reading.ClaimLost:
            return item  # another worker took it over; its outcome is the item's
        except LLMTransientError as exc:
            if not final_attempt:
                _release(item, str(exc))
                raise
            with transaction.atomic():
                _record_item(
                    item, status=AgentRunItem.Status.FAILED, error=str(exc), usage=_paid(exc)
                )
            return item
        except (ExtractionFailed, reading.BudgetSpent) as exc:
            with transaction.atomic():
                if isinstance(exc, reading.BudgetSpent):
                    _stop_for_budget(run, str(exc))
                _record_item(
                    item, status=AgentRunItem.Status.FAILED, error=str(exc), usage=_paid(exc)
                )
            return item
        extraction, usage = read.extraction, read.usage
        read_stats["chunks_cached"] = read.cached
        record = _store_extraction(revision, xkey, extraction, run)

    with transaction.atomic():
        Mutex.objects.select_for_update().get_or_create(name="construct")
        index = adapters.INDEX_CACHE.get()
        if extraction is None:
            # A local extractor reads under the lock, against the same index SEARCH uses.
            extraction = reading.read_local(plans, extractor, vocabulary=vocabulary, lexicon=index)
        result = process_source(
            doc=doc,
            extraction=extraction,
            vocabulary=vocabulary,
            index=index,
            graph=adapters.DbGraphView(relations),
            gate=settings.KG_CONFIDENCE_GATE,
            active_evidence=adapters.active_evidence(revision),
        )
        stats = persist_result(run=run, revision=revision, result=result)
        stats["candidates"] = len(extraction.candidates) + len(extraction.rejected)
        stats["duration_s"] = round(time.perf_counter() - started, 4)
        stats.update(read_stats)
        if record is None:
            _store_extraction(revision, xkey, extraction, run, done=True)
        elif record.status != ExtractionRecord.Status.DONE:
            ExtractionRecord.objects.filter(pk=record.pk).update(
                status=ExtractionRecord.Status.DONE, updated_at=timezone.now()
            )
        AgentRunItem.objects.filter(pk=item.pk).update(chunks_done=len(plans))
        _record_item(item, status=AgentRunItem.Status.DONE, stats=stats, usage=usage.as_json())
    return item


def _paid(exc: Exception) -> dict:
    """What the chunks read before an error cost (kept: they are not paid again)."""
    return getattr(exc, "paid", LLMUsage()).as_json()


def _stop_for_budget(run: AgentRun, message: str) -> None:
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


def _store_extraction(revision, xkey, extraction, run, *, done=False) -> ExtractionRecord:
    status = ExtractionRecord.Status.DONE if done else ExtractionRecord.Status.EXTRACTED
    try:
        with transaction.atomic():
            return ExtractionRecord.objects.create(
                revision=revision,
                extractor=xkey,
                status=status,
                output=extraction.as_json(),
                llm_usage=extraction.usage.as_json(),
                run=run,
            )
    except IntegrityError:
        record = ExtractionRecord.objects.get(revision=revision, extractor=xkey)
        if done and record.status != status:
            ExtractionRecord.objects.filter(pk=record.pk).update(status=status)
        return record


# --- Runs of any agent ------------------------------------------------------------------


class RunCancelled(Exception):
    """A curator asked the run to stop; raised between steps, never in the middle of one."""


@transaction.atomic
def agent_run_create(
    *,
    agent: str,
    trigger: str = AgentRun.Trigger.CLI,
    user=None,
    provider: str = "",
    model: str = "",
    params: dict | None = None,
    total: int = 0,
) -> AgentRun:
    """A queued run of an agent that works in steps (heal, discover) rather than per source."""
    return AgentRun.objects.create(
        agent=agent,
        trigger=trigger,
        provider=provider,
        model=model,
        params=params or {},
        requested_by=user if user is not None and user.is_authenticated else None,
        progress_total=total,
        stats={},
        llm_usage=LLMUsage().as_json(),
    )


def agent_run_current(agent: str) -> AgentRun | None:
    """The newest unfinished run of an agent, or None.

    A schedule asks before starting: runs of one agent never overlap. A run that has
    reported nothing for the lease (its worker died, or its task was lost) is not
    current: a step-wise run (heal, discover) is marked failed in words so a new one can
    start; a construction run is returned anyway, because resuming it (its unfinished
    sources queued again) is the way forward.
    """
    stale = timezone.now() - item_lease()
    for run in AgentRun.objects.filter(agent=agent).exclude(status__in=AgentRun.FINISHED):
        if run.updated_at >= stale or agent == AgentRun.Agent.CONSTRUCT:
            return run
        agent_run_finish(
            run,
            status=AgentRun.Status.FAILED,
            stats=run.stats,
            error=(
                f"No progress for {settings.KG_ITEM_LEASE_SECONDS} s: its worker stopped. "
                "The next scheduled run starts afresh."
            ),
        )
    return None


def agent_run_step(run: AgentRun, *, done: int, total: int | None = None, stats=None) -> None:
    """Record progress; raises ``RunCancelled`` if a curator asked the run to stop."""
    with transaction.atomic():
        locked = AgentRun.objects.select_for_update().get(pk=run.pk)
        now = timezone.now()
        if locked.status == AgentRun.Status.QUEUED:
            locked.status = AgentRun.Status.RUNNING
            locked.started_at = now
        if total is not None:
            locked.progress_total = total
        locked.progress_done = min(done, locked.progress_total)
        if stats:
            locked.stats = {**locked.stats, **stats}
        locked.save(
            update_fields=[
                "status",
                "started_at",
                "progress_total",
                "progress_done",
                "stats",
                "updated_at",
            ]
        )
        run.status, run.started_at = locked.status, locked.started_at
        run.progress_done, run.progress_total, run.stats = (
            locked.progress_done,
            locked.progress_total,
            locked.stats,
        )
        if locked.cancel_requested:
            raise RunCancelled


@transaction.atomic
def agent_run_finish(
    run: AgentRun, *, status: str, stats: dict | None = None, error: str = "", usage=None
) -> AgentRun:
    locked = AgentRun.objects.select_for_update().get(pk=run.pk)
    if locked.is_finished:
        return locked
    now = timezone.now()
    locked.status = status
    locked.started_at = locked.started_at or now
    locked.finished_at = now
    merged = {**locked.stats, **(stats or {})}
    merged["duration_s"] = round((now - locked.started_at).total_seconds(), 3)
    locked.stats = merged
    locked.error = error
    if status == AgentRun.Status.SUCCEEDED:
        locked.progress_done = locked.progress_total
    if usage is not None:
        locked.llm_usage = (LLMUsage(**(locked.llm_usage or {})) + usage).as_json()
    locked.save(
        update_fields=[
            "status",
            "started_at",
            "finished_at",
            "stats",
            "error",
            "progress_done",
            "llm_usage",
            "updated_at",
        ]
    )
    return locked


@transaction.atomic
def agent_run_cancel(*, run_id: int, user) -> AgentRun:
    """Ask a run to stop between sources (or steps). Sources not started are cancelled now;
    one already being read finishes cleanly, and then the run is marked cancelled."""
    run = AgentRun.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        raise NotFound(f"There is no agent run #{run_id}.")
    if run.is_finished:
        raise StateConflict(f"Run #{run.pk} already {run.get_status_display().lower()}.")
    run.cancel_requested = True
    run.save(update_fields=["cancel_requested", "updated_at"])
    if run.agent == AgentRun.Agent.CONSTRUCT:
        now = timezone.now()
        cancelled = run.items.filter(status=AgentRunItem.Status.PENDING).update(
            status=AgentRunItem.Status.CANCELLED,
            finished_at=now,
            error=f"Cancelled by {user.get_username() if user else 'the system'}.",
        )
        if cancelled:
            stats = dict(run.stats)
            stats["cancelled"] = stats.get("cancelled", 0) + cancelled
            run.stats = stats
            run.progress_done = min(run.progress_total, run.progress_done + cancelled)
            run.save(update_fields=["stats", "progress_done", "updated_at"])
        _finish_run(run)
    elif run.status == AgentRun.Status.QUEUED:
        agent_run_finish(run, status=AgentRun.Status.CANCELLED, error="Cancelled before it began.")
    run.refresh_from_db()
    return run


def sources_to_construct(extractor: Extractor) -> list[Source]:
    """Active sources whose current revision this extractor has not read yet."""
    key = adapters.extractor_key(extractor)
    done = ExtractionRecord.objects.filter(
        extractor=key, status=ExtractionRecord.Status.DONE
    ).values("revision_id")
    return list(
        Source.objects.filter(status=Source.Status.ACTIVE, current_revision__isnull=False)
        .exclude(current_revision_id__in=done)
        .order_by("slug")
    )


def schedule_set_enabled(*, schedule, enabled: bool):
    """Pause or resume an agent's schedule; beat notices the change on its next tick."""
    schedule.enabled = enabled
    schedule.save(update_fields=["enabled"])  # django-celery-beat bumps its change marker
    return schedule
