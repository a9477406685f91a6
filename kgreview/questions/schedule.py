"""The competency questions' beat entry, beside the agents' schedules.

One django-celery-beat ``PeriodicTask`` runs ``questions.run_scheduled`` every
``KG_COMPETENCY_SCHEDULE_MINUTES`` (default 1440: daily). The setting owns the interval
(it is brought in line after every ``migrate``); curators own whether it is on (pause or
resume it on the Questions page, audited like the agents' schedules).
"""

from __future__ import annotations

import json

from django.conf import settings

SCHEDULE_NAME = "Competency questions"
SCHEDULE_TASK = "questions.run_scheduled"
DEFAULT_MINUTES = 1440


def schedule_minutes() -> int:
    """The interval the setting asks for, at least one minute."""
    try:
        minutes = int(getattr(settings, "KG_COMPETENCY_SCHEDULE_MINUTES", DEFAULT_MINUTES))
    except (TypeError, ValueError):
        minutes = DEFAULT_MINUTES
    return max(1, minutes)


def _every(minutes: int) -> str:
    if minutes % 1440 == 0:
        days = minutes // 1440
        return "Every day" if days == 1 else f"Every {days} days"
    if minutes % 60 == 0:
        hours = minutes // 60
        return "Every hour" if hours == 1 else f"Every {hours} hours"
    return f"Every {minutes} minutes"


def schedule_sync(*, apps=None):
    """Create the beat entry if it is missing, and set its interval from the setting.

    The system's own configuration: not audited. Safe to call any number of times;
    whether the entry is enabled is left as a curator set it.
    """
    if apps is None:
        from django.apps import apps as registry

        apps = registry
    interval_model = apps.get_model("django_celery_beat", "IntervalSchedule")
    task_model = apps.get_model("django_celery_beat", "PeriodicTask")
    minutes = schedule_minutes()
    interval, _ = interval_model.objects.get_or_create(every=minutes, period="minutes")
    description = (
        f"{_every(minutes)}: ask every active competency question; failing ones start a "
        "gap search in the sources (KG_COMPETENCY_SCHEDULE_MINUTES)."
    )
    task, created = task_model.objects.get_or_create(
        name=SCHEDULE_NAME,
        defaults={
            "task": SCHEDULE_TASK,
            "interval": interval,
            "kwargs": json.dumps({}),
            "enabled": True,
            "description": description,
        },
    )
    if not created and (task.interval_id != interval.pk or task.description != description):
        task.interval = interval
        task.crontab = None
        task.description = description
        task.save(update_fields=["interval", "crontab", "description"])
        # A migration state's model sends no signals: tell a running beat itself.
        from django_celery_beat.models import PeriodicTasks

        PeriodicTasks.update_changed()
    return task


def schedule_sync_after_migrate(sender, *, apps=None, using="default", **kwargs) -> None:
    """``post_migrate``: the entry exists and follows the setting after every migrate
    (and after a flush, which sends the signal without a migration state)."""
    if apps is None:
        from django.apps import apps as registry

        apps = registry
    try:
        apps.get_model("django_celery_beat", "PeriodicTask")
    except LookupError:  # migrating backwards past django_celery_beat
        return
    schedule_sync(apps=apps)


def schedule_current():
    """The beat entry (with its interval), or None before the first migrate."""
    from django_celery_beat.models import PeriodicTask

    return PeriodicTask.objects.select_related("interval").filter(task=SCHEDULE_TASK).first()
