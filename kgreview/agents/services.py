"""Writes for agent runs and worker liveness."""

from __future__ import annotations

from django.utils import timezone

from .models import WorkerHeartbeat


def worker_heartbeat_record(*, hostname: str, pid: int) -> WorkerHeartbeat:
    """Upsert the heartbeat row of one worker host."""
    beat, _ = WorkerHeartbeat.objects.update_or_create(
        hostname=hostname[:255], defaults={"last_seen": timezone.now(), "pid": pid}
    )
    return beat
