"""Celery tasks. Thin: load rows by key, call a service, return early if already done."""

from __future__ import annotations

import os
import socket

from celery import shared_task

from . import services

# The project decorator's options: a task is acknowledged only once it finished, and a
# worker that dies mid-task hands it back to the queue.
TASK_OPTIONS = {"acks_late": True, "reject_on_worker_lost": True}


@shared_task(name="agents.worker_heartbeat", ignore_result=True, **TASK_OPTIONS)
def worker_heartbeat() -> str:
    """Record that a worker on this host just ran a task taken from the broker."""
    hostname = socket.gethostname()
    services.worker_heartbeat_record(hostname=hostname, pid=os.getpid())
    return hostname
