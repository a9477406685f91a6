"""Reads for agent runs and worker liveness."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from .models import WorkerHeartbeat


@dataclass(frozen=True)
class WorkerStatus:
    alive: bool
    last_seen: datetime | None
    hostname: str

    @property
    def seconds_ago(self) -> int | None:
        if self.last_seen is None:
            return None
        return max(0, int((timezone.now() - self.last_seen).total_seconds()))


def worker_status() -> WorkerStatus:
    """Whether any worker ran the heartbeat task recently enough to count as alive."""
    beat = WorkerHeartbeat.objects.order_by("-last_seen").first()
    if beat is None:
        return WorkerStatus(alive=False, last_seen=None, hostname="")
    fresh = timezone.now() - beat.last_seen <= timedelta(seconds=settings.KG_WORKER_STALE_SECONDS)
    return WorkerStatus(alive=fresh, last_seen=beat.last_seen, hostname=beat.hostname)
