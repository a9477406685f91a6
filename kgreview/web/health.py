"""What ``/healthz`` checks, one cheap probe per part, each answering in words.

The parts, in the order they are reported: the database (``SELECT 1``), the broker (its
folders, embedded; a connection with a one-second timeout otherwise), the cache the API's
rate limits count in (one read), the worker's heartbeat and beat's (one query each, only
when the database answers), and the free disk of ``KG_VAR_DIR`` (below
``KG_HEALTH_MIN_FREE_MB``, or a write that failed for want of space in the last minute).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import connection

from kgreview.agents.selectors import beat_status, worker_status
from kgreview.api.throttle import counter_problem
from kgreview.core import disk

PARTS = ("database", "broker", "cache", "worker", "beat", "disk")
MB = 1024 * 1024


@dataclass
class Health:
    """Each part's report (what the JSON shows) and, for failing parts, why in words."""

    report: dict = field(default_factory=dict)
    words: dict[str, str] = field(default_factory=dict)

    def fail(self, part: str, why: str) -> None:
        self.words[part] = why

    @property
    def failing(self) -> list[str]:
        return [part for part in PARTS if part in self.words]


def _error(exc: BaseException) -> str:
    return f"error: {exc.__class__.__name__}"


def check_database(health: Health) -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any driver error means the database is unreachable
        health.report["database"] = _error(exc)
        health.fail("database", f"The database does not answer ({exc.__class__.__name__}).")
        return False
    health.report["database"] = "ok"
    return True


def _probe_broker(url: str) -> None:
    if url.startswith("filesystem://"):
        queue = Path(settings.BROKER_DIR) / "queue"
        if not queue.is_dir():
            raise FileNotFoundError(f"the broker's queue folder {queue.name}/ is missing")
        if not os.access(queue, os.W_OK):
            raise PermissionError(f"the broker's queue folder {queue.name}/ is not writable")
        return
    if url.startswith(("redis://", "rediss://")):
        import redis

        client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
        try:
            client.ping()
        finally:
            client.close()
        return
    from kombu import Connection

    with Connection(url, connect_timeout=1) as conn:
        conn.connect()


def check_broker(health: Health) -> None:
    try:
        _probe_broker(settings.CELERY_BROKER_URL)
    except Exception as exc:  # unreachable, refused, missing: the queue cannot take tasks
        health.report["broker"] = _error(exc)
        health.fail(
            "broker",
            f"The task queue cannot be reached ({exc.__class__.__name__}): runs cannot be started.",
        )
        return
    health.report["broker"] = "ok"


def check_cache(health: Health) -> None:
    problem = counter_problem()
    health.report["cache"] = problem or "ok"
    if problem:
        health.fail(
            "cache",
            f"The API's rate-limit counter cannot count ({problem[len('error: ') :]}): API "
            "requests are let through uncounted.",
        )


def check_heartbeats(health: Health, database_ok: bool) -> None:
    """The worker's and beat's heartbeats; not judged while the database is down (they
    live in it)."""
    health.report["worker"] = {"alive": False, "seconds_ago": None}
    health.report["beat"] = {"alive": False, "seconds_ago": None}
    if not database_ok:
        return
    try:
        worker = worker_status()
        beat = beat_status(worker)
    except Exception as exc:  # the database went away between the queries
        health.report["database"] = _error(exc)
        health.fail("database", f"The database stopped answering ({exc.__class__.__name__}).")
        return
    health.report["worker"] = {"alive": worker.alive, "seconds_ago": worker.seconds_ago}
    health.report["beat"] = {"alive": beat.alive, "seconds_ago": beat.seconds_ago}
    if not worker.alive:
        health.fail(
            "worker",
            f"No worker has run a task from the queue for {worker.seconds_ago} seconds: runs wait."
            if worker.seconds_ago is not None
            else "No worker has reported yet: runs wait until one starts.",
        )
    if not beat.alive:
        health.fail(
            "beat",
            f"Beat has sent nothing for {beat.seconds_ago} seconds: schedules and the "
            "reaper stopped."
            if beat.seconds_ago is not None
            else "Beat has not run yet: schedules and the reaper wait until it starts.",
        )


def check_disk(health: Health) -> None:
    least = settings.KG_HEALTH_MIN_FREE_MB
    try:
        free_mb: int | None = disk.free_bytes(Path(settings.VAR_DIR)) // MB
    except OSError as exc:
        free_mb = None
        health.fail("disk", f"The data folder cannot be read ({exc.__class__.__name__}).")
    full_ago = disk.seconds_since_full()
    if full_ago is not None:
        health.fail(
            "disk", f"{disk.WORDS} (a write failed for want of space {int(full_ago)} s ago)"
        )
    elif free_mb is not None and free_mb < least:
        health.fail(
            "disk",
            f"{free_mb} MB free in the data folder, under the {least} MB needed "
            "(KG_HEALTH_MIN_FREE_MB): writes will fail.",
        )
    health.report["disk"] = {"ok": "disk" not in health.words, "free_mb": free_mb}


def health() -> Health:
    """Every part checked, in order."""
    result = Health()
    database_ok = check_database(result)
    checks: tuple[Callable[[Health], None], ...] = (check_broker, check_cache)
    for check in checks:
        check(result)
    check_heartbeats(result, database_ok)
    check_disk(result)
    return result
