"""Celery tasks. Thin: load rows by key, call a service, return early if already done.

Every task is safe to run twice and on any number of workers: a source is claimed by one
worker at a time, proposals are de-duplicated by key in the database, and a finished run
or item is never touched again.
"""

from __future__ import annotations

import logging
import os
import random
import socket

from celery import shared_task
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from construction.errors import LLMTransientError

from . import reaper, runs
from .adapters import extractor_for
from .construct import construct_item_run, construct_run_create, sources_to_construct
from .items import item_lease, item_stale_after, item_stale_q
from .models import AgentRun, AgentRunItem
from .signals import reaper_pass

log = logging.getLogger(__name__)


def kgreview_task(**options):
    """The project's task decorator.

    A task is acknowledged only when it finished (``acks_late``) and handed back to the
    queue if its worker dies (``reject_on_worker_lost``); every task is therefore written
    to be safe to run twice.
    """
    return shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, **options)


@kgreview_task(name="agents.worker_heartbeat", ignore_result=True)
def worker_heartbeat(self) -> str:
    """Record that a worker on this host just ran a task taken from the broker."""
    hostname = socket.gethostname()
    runs.worker_heartbeat_record(hostname=hostname, pid=os.getpid())
    return hostname


# --- Construction -----------------------------------------------------------------------


@kgreview_task(name="agents.construct_source", max_retries=None)
def construct_source(self, *, item_id: int) -> str:
    """Process one source of a construction run; a no-op if it is already finished."""
    limit = settings.KG_TASK_RETRIES
    try:
        item = construct_item_run(
            item_id=item_id,
            claim=f"task:{self.request.id}",
            final_attempt=self.request.retries >= limit,
        )
    except LLMTransientError as exc:
        # Only transient model errors are retried, later, with growing pauses.
        countdown = min(600, 30 * 2**self.request.retries) + random.uniform(0, 5)
        raise self.retry(exc=exc, countdown=countdown, max_retries=limit) from exc
    return item.status


@kgreview_task(name="agents.construct_run")
def construct_run(self, *, run_id: int) -> int:
    """Queue one task per source of the run that is not finished.

    Running it again resumes a run: sources still pending, and sources whose worker
    stopped renewing its claim (``items.item_stale_after``), are queued again.
    """
    run = AgentRun.objects.filter(pk=run_id).first()
    if run is None or run.is_finished:
        return 0
    stale = timezone.now() - item_stale_after()
    item_ids = list(
        run.items.filter(Q(status=AgentRunItem.Status.PENDING) | item_stale_q(stale)).values_list(
            "pk", flat=True
        )
    )
    for item_id in item_ids:
        construct_source.delay(item_id=item_id)
    return len(item_ids)


@kgreview_task(name="agents.construct_scheduled")
def construct_scheduled(self, *, provider: str | None = None) -> int | None:
    """The hourly schedule: read new or changed sources; no run when nothing changed."""
    current = runs.agent_run_current(AgentRun.Agent.CONSTRUCT)
    if current is not None:
        # Never two construction runs at once. One that stopped reporting is resumed (its
        # sources whose worker died are queued again); what changed since waits a turn.
        if current.updated_at < timezone.now() - item_lease():
            construct_run.delay(run_id=current.pk)
        log.info("construct: run #%s is still going; the schedule skips this turn", current.pk)
        return None
    sources = sources_to_construct(extractor_for(provider))
    if not sources:
        return None
    run = construct_run_create(
        sources=sources, provider=provider, trigger=AgentRun.Trigger.SCHEDULE
    )
    construct_run.delay(run_id=run.pk)
    return run.pk


def reap_and_queue() -> int:
    """One reaper pass, and the sources it handed back queued again: beat's task and
    every worker's reaper thread (``agents.beat``) run this."""
    report = reaper.reap()
    for item_id in report.to_queue:
        construct_source.delay(item_id=item_id)
    # The apps above sweep their own work in the same pass (a failure there is logged,
    # never the end of this pass).
    for receiver, outcome in reaper_pass.send_robust(sender=reaper.Reaped, now=timezone.now()):
        if isinstance(outcome, Exception):
            log.warning(
                "reaper: %s could not sweep (%s: %s)", receiver, type(outcome).__name__, outcome
            )
    return len(report.to_queue)


@kgreview_task(name="agents.reap", ignore_result=True)
def reap(self) -> int:
    """Queue again the sources whose worker died or whose message was lost (any broker)."""
    return reap_and_queue()


# --- Healing and discovery --------------------------------------------------------------


def _run_for(agent: str, run_id: int | None, trigger: str, provider: str | None):
    """The run a task was given, or (from a schedule) a new one unless one is going."""
    if run_id is not None:
        return AgentRun.objects.filter(pk=run_id).first()
    current = runs.agent_run_current(agent)
    if current is not None:
        log.info("%s: run #%s is still going; the schedule skips this turn", agent, current.pk)
        return None
    return runs.agent_run_create(agent=agent, trigger=trigger, provider=provider or "")


@kgreview_task(name="agents.heal")
def heal(self, *, run_id: int | None = None, trigger: str = AgentRun.Trigger.SCHEDULE) -> int:
    """Look for duplicates, cycles and vanished evidence; queue what it finds."""
    from .heal import heal_run

    run = _run_for(AgentRun.Agent.HEAL, run_id, trigger, None)
    if run is None or run.is_finished:
        return 0
    with runs.RunHeartbeat(run):
        heal_run(run)
    return run.pk


@kgreview_task(name="agents.discover")
def discover(
    self,
    *,
    run_id: int | None = None,
    trigger: str = AgentRun.Trigger.SCHEDULE,
    provider: str | None = None,
) -> int:
    """Turn relations the vocabulary lacks, seen again and again, into proposals."""
    from .discover import discover_run

    run = _run_for(AgentRun.Agent.DISCOVER, run_id, trigger, provider)
    if run is None or run.is_finished:
        return 0
    with runs.RunHeartbeat(run):
        discover_run(run, provider=provider or run.provider or None)
    return run.pk


@kgreview_task(name="agents.requeue_dropped")
def requeue_dropped(self, *, relation_key: str) -> int:
    """A relation type was accepted: verify again the candidates dropped for lacking it."""
    from .discover import requeue_dropped_for

    return requeue_dropped_for(relation_key=relation_key)


@kgreview_task(name="agents.bootstrap")
def bootstrap(self, *, run_id: int) -> int:
    """Draft an ontology from the corpus and queue what the graph lacks as proposals."""
    from .bootstrap import bootstrap_run

    run = AgentRun.objects.filter(pk=run_id).first()
    if run is None or run.is_finished:
        return 0
    with runs.RunHeartbeat(run):  # a worker that dies is seen within minutes (the reaper)
        bootstrap_run(run)
    return run.pk


@kgreview_task(name="agents.release_pattern_holds")
def release_pattern_holds(self, *, relation_keys: list[str] | None = None) -> int:
    """A pattern or a type was accepted: the candidates held for breaking a relation's
    pattern that fit now go back to the queue, and the queued ones that break it now are
    held (``review.pattern_holds``)."""
    from kgreview.review.pattern_holds import hold_pattern_breakers
    from kgreview.review.pattern_holds import release_pattern_holds as release

    released = release(relation_keys=relation_keys)
    return len(released) + len(hold_pattern_breakers(relation_keys=relation_keys))


@kgreview_task(name="agents.type_concepts")
def type_concepts(self, *, type_key: str) -> int:
    """A concept type was accepted: propose it for the untyped concepts it fits, each with
    a stored quote that shows it (``agents.concept_typing``)."""
    from .concept_typing import type_accepted_run

    run = type_accepted_run(type_key=type_key)
    return run.pk if run is not None else 0
