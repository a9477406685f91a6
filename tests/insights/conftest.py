"""Fixtures for the insights tests: a clock that stamps decisions when they are needed."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.utils import timezone


@pytest.fixture
def clock(monkeypatch):
    """The time ``timezone.now()`` answers (and ``auto_now_add`` stamps) until moved.

    Decision rows are append-only, so their ``created_at`` is chosen at insert.
    """

    class Clock:
        at: datetime | None = None

        def set(self, when: datetime) -> None:
            self.at = when

    clock = Clock()
    real = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: clock.at or real())
    return clock
