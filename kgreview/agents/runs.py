"""Agent runs: create, step, cancel and finish them; worker heartbeats; the construct mutex.

A run of any agent is one ``AgentRun`` row. A step-wise agent (heal, discover) reports
progress with ``agent_run_step``, which is also where it learns a curator asked it to
stop. A construction run works per source instead: its items, claims and leases are in
``items``.

Who acts: ``acting_user`` is the curator who started or cancelled a run from the Agents
page, and that change writes a curation-log row in its transaction. ``None`` is the
system (a schedule, the command line, a requeue): such runs are their own record and
write no audit row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from construction.types import LLMUsage
from kgreview.core import audit
from kgreview.core.errors import NotFound, StateConflict
from kgreview.review.models import ProposalOrigin
from kgreview.review.services import proposal_origin

from .items import Heartbeat, construct_run_close, item_lease, item_stale_after
from .models import AgentRun, AgentRunItem, Mutex, WorkerHeartbeat

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def worker_heartbeat_record(*, hostname: str, pid: int) -> WorkerHeartbeat:
    """Upsert the heartbeat row of one worker host."""
    beat, _ = WorkerHeartbeat.objects.update_or_create(
        hostname=hostname[:255], defaults={"last_seen": timezone.now(), "pid": pid}
    )
    return beat


def construct_mutex_hold() -> None:
    """Hold the ``construct`` mutex until the current transaction ends.

    Every write of proposals from a reading (construction, a discovery requeue) takes it,
    so two workers never interleave their checks and writes.
    """
    Mutex.objects.select_for_update().get_or_create(name="construct")


def run_origin(run: AgentRun) -> ProposalOrigin:
    """The origin review shows beside each proposal ``run`` queues (its agent, model and
    number), made with the run's first proposal and kept on the run."""
    origin = run.origin
    if origin is None:
        origin = proposal_origin(
            agent=run.agent,
            agent_label=run.get_agent_display(),
            provider=run.provider,
            model=run.model,
            run=run.pk,
        )
        AgentRun.objects.filter(pk=run.pk, origin__isnull=True).update(origin=origin)
        run.origin = origin
    return origin


def run_start_record(run: AgentRun, *, acting_user: User | None, after: dict) -> None:
    """The curation-log row of a run a curator started by hand (none for the system's)."""
    if acting_user is None:
        return
    audit.record(
        acting_user=acting_user,
        action="agent_run.start",
        subject=run,
        summary=f"Started a {run.agent} run (#{run.pk}) by hand.",
        after={"agent": run.agent, "trigger": run.trigger, "status": run.status, **after},
    )


# --- Runs of any agent ------------------------------------------------------------------


class RunCancelled(Exception):
    """A curator asked the run to stop; raised between steps, never in the middle of one."""


@transaction.atomic
def agent_run_create(
    *,
    agent: str,
    trigger: str = AgentRun.Trigger.CLI,
    acting_user: User | None = None,
    provider: str = "",
    model: str = "",
    params: dict | None = None,
    total: int = 0,
) -> AgentRun:
    """A queued run of an agent that works in steps (heal, discover) rather than per source.

    ``acting_user`` is the curator who asked for it (audited) or ``None`` for the system.
    """
    run = AgentRun.objects.create(
        agent=agent,
        trigger=trigger,
        provider=provider,
        model=model,
        params=params or {},
        requested_by=acting_user
        if acting_user is not None and acting_user.is_authenticated
        else None,
        progress_total=total,
        stats={},
        llm_usage=LLMUsage().as_json(),
    )
    run_start_record(run, acting_user=acting_user, after={"provider": provider})
    return run


# The agents whose task renews its run while it works (``RunHeartbeat``): a running one
# silent for ``item_stale_after()`` lost its worker. The others are given the lease.
BEATING = frozenset({AgentRun.Agent.HEAL, AgentRun.Agent.DISCOVER, AgentRun.Agent.BOOTSTRAP})
# What to do about a run found lost, by agent (the rest: start it again).
AFTER_LOST: dict[str, str] = {
    AgentRun.Agent.HEAL: "The next scheduled run starts afresh.",
    AgentRun.Agent.DISCOVER: "The next scheduled run starts afresh.",
    AgentRun.Agent.BOOTSTRAP: (
        "Draft again from the Ontology page: what it queued stays, and is not proposed twice."
    ),
}


class RunHeartbeat(Heartbeat):
    """Renew a step-wise run (``updated_at``) while its task works on it; ``lost`` once
    it is finished (a curator cancelled it, or the reaper failed it)."""

    def __init__(self, run: AgentRun) -> None:
        super().__init__(f"run-heartbeat-{run.pk}")
        self.run_id = run.pk

    def renew(self) -> int:
        return (
            AgentRun.objects.filter(pk=self.run_id)
            .exclude(status__in=AgentRun.FINISHED)
            .update(updated_at=timezone.now())
        )


def agent_run_lost(run: AgentRun, now) -> str:
    """Why an unfinished step-wise run is taken as lost, in words; "" while its worker may
    still be at it. A running run of an agent that beats is lost after the heartbeat's
    window (``item_stale_after``); a queued one (its message may still wait behind
    others), or one of an agent that does not beat, after the lease."""
    if run.agent == AgentRun.Agent.CONSTRUCT or run.is_finished:
        return ""
    beating = run.status == AgentRun.Status.RUNNING and run.agent in BEATING
    window = item_stale_after() if beating else item_lease()
    if run.updated_at >= now - window:
        return ""
    then = AFTER_LOST.get(run.agent, "Start it again.")
    return f"No progress for {int(window.total_seconds())} s: its worker stopped. {then}"


def agent_run_fail_if_lost(run_id: int, now=None) -> AgentRun | None:
    """Fail in words a step-wise run taken as lost (read again under its row lock, so a
    heartbeat that just renewed it wins); None when it is not lost."""
    now = now or timezone.now()
    with transaction.atomic():
        run = AgentRun.objects.select_for_update().filter(pk=run_id).first()
        why = agent_run_lost(run, now) if run is not None else ""
        if run is None or not why:
            return None
        return agent_run_finish(run, status=AgentRun.Status.FAILED, stats=run.stats, error=why)


def agent_runs_fail_lost(now=None) -> list[int]:
    """The reaper's pass over step-wise runs: fail the lost ones in words (a bootstrap has
    no schedule to notice it, and would say "running" for ever)."""
    now = now or timezone.now()
    # Only runs silent past the shorter window are read again under a lock (most passes:
    # none), so a live run costs this pass nothing.
    unfinished = (
        AgentRun.objects.exclude(agent=AgentRun.Agent.CONSTRUCT)
        .exclude(status__in=AgentRun.FINISHED)
        .filter(updated_at__lt=now - item_stale_after())
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    return [run_id for run_id in list(unfinished) if agent_run_fail_if_lost(run_id, now)]


def agent_run_current(agent: str) -> AgentRun | None:
    """The newest unfinished run of an agent, or None.

    A schedule asks before starting: runs of one agent never overlap. A run taken as lost
    (``agent_run_lost``: its worker died, or its task was lost) is not current: a
    step-wise run (heal, discover) is failed in words so a new one can start; a
    construction run is returned anyway, because resuming it (its unfinished sources
    queued again) is the way forward.
    """
    for run in AgentRun.objects.filter(agent=agent).exclude(status__in=AgentRun.FINISHED):
        if agent == AgentRun.Agent.CONSTRUCT or agent_run_fail_if_lost(run.pk) is None:
            return run
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
    """End a step-wise run with its status, counters, error in words and model usage.

    The agent's own bookkeeping: not audited. A run already finished is left as it is.
    """
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


def agent_run_failed(
    run: AgentRun, exc: BaseException, *, stats: dict | None = None, usage=None
) -> AgentRun:
    """End a run that raised ``exc``: failed, the error named in words, with what it had
    counted and used so far (the agent logs the traceback; the worker stays up)."""
    return agent_run_finish(
        run,
        status=AgentRun.Status.FAILED,
        stats=stats,
        usage=usage,
        error=f"{exc.__class__.__name__}: {exc}",
    )


@transaction.atomic
def agent_run_not_queued(*, run_id: int, reason: str) -> AgentRun:
    """The broker refused a new run's task: the run fails now, in words, instead of
    waiting "queued" for a message that will never arrive.

    Nothing of it was done: a construction run's unfinished sources fail with the same
    words. The system's bookkeeping (the start was audited): not audited again. A run
    already begun (its message got through after all) is left as it is.
    """
    run = AgentRun.objects.select_for_update().get(pk=run_id)
    begun = run.items.exclude(status=AgentRunItem.Status.PENDING).exists()
    if run.status != AgentRun.Status.QUEUED or begun:
        return run
    words = f"Could not be queued for the workers: {reason}"
    stats = dict(run.stats or {})
    if run.agent == AgentRun.Agent.CONSTRUCT:
        failed = run.items.update(
            status=AgentRunItem.Status.FAILED, finished_at=timezone.now(), error=words
        )
        stats["failed"] = stats.get("failed", 0) + failed
        run.progress_done = min(run.progress_total, run.progress_done + failed)
        run.save(update_fields=["progress_done", "updated_at"])
    return agent_run_finish(run, status=AgentRun.Status.FAILED, stats=stats, error=words)


@transaction.atomic
def agent_run_cancel(*, run_id: int, acting_user: User | None) -> AgentRun:
    """Ask a run to stop between sources (or steps). Sources not started are cancelled now;
    one already being read finishes cleanly, and then the run is marked cancelled.

    ``acting_user`` is the curator who asked (audited), or ``None`` for the system.
    Raises ``NotFound`` for an unknown run and ``StateConflict`` for a finished one; a
    refusal writes nothing.
    """
    run = AgentRun.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        raise NotFound(f"There is no agent run #{run_id}.")
    if run.is_finished:
        raise StateConflict(f"Run #{run.pk} already {run.get_status_display().lower()}.")
    before = {"status": run.status, "cancel_requested": run.cancel_requested}
    cancelled = 0
    run.cancel_requested = True
    run.save(update_fields=["cancel_requested", "updated_at"])
    if run.agent == AgentRun.Agent.CONSTRUCT:
        now = timezone.now()
        who = acting_user.get_username() if acting_user else "the system"
        cancelled = run.items.filter(status=AgentRunItem.Status.PENDING).update(
            status=AgentRunItem.Status.CANCELLED, finished_at=now, error=f"Cancelled by {who}."
        )
        if cancelled:
            stats = dict(run.stats)
            stats["cancelled"] = stats.get("cancelled", 0) + cancelled
            run.stats = stats
            run.progress_done = min(run.progress_total, run.progress_done + cancelled)
            run.save(update_fields=["stats", "progress_done", "updated_at"])
        construct_run_close(run)
    elif run.status == AgentRun.Status.QUEUED:
        agent_run_finish(run, status=AgentRun.Status.CANCELLED, error="Cancelled before it began.")
    run.refresh_from_db()
    _cancel_record(run, acting_user=acting_user, before=before, cancelled=cancelled)
    return run


def _cancel_record(
    run: AgentRun, *, acting_user: User | None, before: dict, cancelled: int
) -> None:
    """The curation-log row of a cancel a curator asked for (none for the system's)."""
    if acting_user is None:
        return
    if run.is_finished:
        summary = f"Cancelled the {run.agent} run #{run.pk}."
    else:
        summary = f"Asked the {run.agent} run #{run.pk} to stop after its current step."
    if cancelled:
        plural = "s" if cancelled != 1 else ""
        summary += f" {cancelled} source{plural} not started yet will not be read."
    audit.record(
        acting_user=acting_user,
        action="agent_run.cancel",
        subject=run,
        summary=summary,
        before=before,
        after={"status": run.status, "cancel_requested": True, "sources_cancelled": cancelled},
    )
