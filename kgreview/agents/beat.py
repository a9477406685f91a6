"""Beat that outlives its database, and a reaper that does not need beat.

``ResilientScheduler`` is django-celery-beat's ``DatabaseScheduler`` with one change:
a database that cannot be reached (stopped, restarting, out of connections) no longer
ends beat ("beat raised exception OperationalError"). Setting up or ticking, beat logs
a warning in words, drops its connections and tries again after
``KG_BEAT_RETRY_SECONDS``; schedules resume by themselves once the database answers.

``ReaperThread`` runs the reaper inside every worker too (``kgreview.celery`` starts it
when a worker is ready), every ``KG_REAPER_SECONDS``: runs whose worker died are resumed
even while no beat runs. Reaping twice is safe (``reaper``'s docstring says why).
"""

from __future__ import annotations

import contextlib
import logging
import threading

from django.conf import settings
from django.db import DatabaseError, InterfaceError, connections
from django_celery_beat.schedulers import DatabaseScheduler

log = logging.getLogger(__name__)

UNREACHABLE = (DatabaseError, InterfaceError)


def _forget_connections() -> None:
    """Close this thread's connections (the next query opens a fresh one), except one
    inside a transaction: whoever opened that transaction ends it."""
    for conn in connections.all(initialized_only=True):
        if conn.in_atomic_block:
            continue
        with contextlib.suppress(*UNREACHABLE):  # a dead server: the socket is gone anyway
            conn.close()


class ResilientScheduler(DatabaseScheduler):
    """``DatabaseScheduler`` that waits out a database outage instead of dying."""

    _ready = False

    def setup_schedule(self) -> None:
        try:
            super().setup_schedule()
            self._ready = True
        except UNREACHABLE as exc:
            self._unreachable("setting up the schedules", exc)

    def tick(self, *args, **kwargs) -> float:
        try:
            if not self._ready:
                super().setup_schedule()
                self._ready = True
            return super().tick(*args, **kwargs)
        except UNREACHABLE as exc:
            return self._unreachable("reading the schedules", exc)

    def _unreachable(self, doing: str, exc: Exception) -> float:
        wait = float(settings.KG_BEAT_RETRY_SECONDS)
        log.warning(
            "beat: the database could not be reached while %s (%s: %s); trying again in "
            "%.0f s, schedules resume once it answers",
            doing,
            exc.__class__.__name__,
            str(exc).strip().splitlines()[0] if str(exc).strip() else "no detail",
            wait,
        )
        _forget_connections()
        return wait


class ReaperThread(threading.Thread):
    """The reaper, every ``KG_REAPER_SECONDS``, in a worker's main process."""

    def __init__(self, every: float | None = None) -> None:
        super().__init__(name="kgreview-reaper", daemon=True)
        self.every = float(every if every is not None else settings.KG_REAPER_SECONDS)
        self.stopped = threading.Event()
        self.passes = 0

    def run(self) -> None:
        while not self.stopped.wait(self.every):
            self.reap_once()

    def reap_once(self) -> int:
        """One pass; an outage is logged, never raised (the next pass tries again)."""
        from .tasks import reap_and_queue

        try:
            queued = reap_and_queue()
            self.passes += 1
            return queued
        except Exception as exc:  # the database or the broker away: try next pass
            log.warning(
                "worker reaper: could not look for lost sources (%s: %s); trying again in %.0f s",
                exc.__class__.__name__,
                exc,
                self.every,
            )
            _forget_connections()
            return 0

    def stop(self) -> None:
        self.stopped.set()
