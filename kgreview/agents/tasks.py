"""Celery tasks. Thin: load rows by key, call a service, return early if already done."""

from __future__ import annotations

import os
import random
import socket

from celery import shared_task
from django.conf import settings

from construction.errors import LLMTransientError

from . import services
from .models import AgentRun, AgentRunItem


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
    services.worker_heartbeat_record(hostname=hostname, pid=os.getpid())
    return hostname


@kgreview_task(name="agents.construct_source", max_retries=None)
def construct_source(self, *, item_id: int) -> str:
    """Process one source of a construction run; a no-op if it is already finished."""
    limit = settings.KG_TASK_RETRIES
    try:
        item = services.construct_item_run(
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
    """Queue one task per source of the run that is not finished yet."""
    run = AgentRun.objects.filter(pk=run_id).first()
    if run is None or run.is_finished:
        return 0
    pending = list(
        run.items.filter(status__in=[AgentRunItem.Status.PENDING]).values_list("pk", flat=True)
    )
    for item_id in pending:
        construct_source.delay(item_id=item_id)
    return len(pending)
