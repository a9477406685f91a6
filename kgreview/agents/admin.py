"""Admin for agent runs and worker liveness (read-only history), and django-celery-beat's
periodic tasks (the agents' schedules) with kgreview's rules."""

from django import forms
from django.contrib import admin
from django_celery_beat import admin as beat_admin
from django_celery_beat.models import PeriodicTask

from construction.text import normal_name
from kgreview.core.admin import ReadOnlyAdmin

from .models import AgentRun, WorkerHeartbeat


@admin.register(AgentRun)
class AgentRunAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "agent",
        "trigger",
        "status",
        "progress_done",
        "progress_total",
        "provider",
        "created_at",
        "finished_at",
    )
    list_filter = ("agent", "status", "trigger")


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(ReadOnlyAdmin):
    list_display = ("hostname", "last_seen", "pid")


class PeriodicTaskForm(beat_admin.PeriodicTaskForm):
    """django-celery-beat's form, the schedule's name in its stored form (``normal_name``:
    no bidi marks, overrides or other invisible characters)."""

    def clean_name(self) -> str:
        name = normal_name(self.cleaned_data.get("name") or "")
        if not name:
            raise forms.ValidationError("Give the schedule a name that holds words.")
        return name


admin.site.unregister(PeriodicTask)


@admin.register(PeriodicTask)
class PeriodicTaskAdmin(beat_admin.PeriodicTaskAdmin):
    """django-celery-beat's periodic-task admin with kgreview's rules for names."""

    form = PeriodicTaskForm
