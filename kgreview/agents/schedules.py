"""Agent schedules: a curator pauses or resumes one (django-celery-beat's PeriodicTask)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from kgreview.core import audit

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@transaction.atomic
def schedule_set_enabled(*, schedule, enabled: bool, acting_user: User | None):
    """Pause or resume an agent's schedule; beat notices the change on its next tick.

    ``acting_user`` is the curator (audited; ``None`` would be the system). Asking for the
    state the schedule is already in saves it again but logs nothing: nothing changed.
    """
    was = schedule.enabled
    schedule.enabled = enabled
    schedule.save(update_fields=["enabled"])  # django-celery-beat bumps its change marker
    if was != enabled:
        verb = "Resumed" if enabled else "Paused"
        audit.record(
            acting_user=acting_user,
            action="schedule.resume" if enabled else "schedule.pause",
            subject=("schedule", schedule.pk),
            summary=f"{verb} the schedule “{schedule.name}”.",
            before={"enabled": was},
            after={"enabled": enabled},
        )
    return schedule
