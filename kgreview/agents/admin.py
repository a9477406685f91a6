"""Admin for agent runs and worker liveness (read-only history), and django-celery-beat's
periodic tasks (the agents' schedules) with kgreview's rules."""

from django import forms
from django.contrib import admin, messages
from django.db import transaction
from django_celery_beat import admin as beat_admin
from django_celery_beat.models import PeriodicTask

from construction.text import normal_name
from kgreview.core import audit
from kgreview.core.admin import ReadOnlyAdmin

from .models import AgentRun, WorkerHeartbeat
from .run_now import AGENT_OF_TASK, agent_run_now
from .schedules import schedule_set_enabled


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
    """django-celery-beat's periodic-task admin with kgreview's rules: names in their
    stored form, and every pause, resume and run by hand through the services the Agents
    page uses, so each writes its curation-log row and a run started here is the
    person's (triggered by hand), not the schedule's."""

    form = PeriodicTaskForm

    def _set_enabled(self, request, queryset, enabled) -> None:
        """Pause or resume each schedule through ``schedule_set_enabled`` (audited);
        ``enabled`` is True, False, or None to toggle each one."""
        changed = []
        with transaction.atomic():
            # The rows alone (the admin's query joins the schedules' nullable kinds).
            chosen = PeriodicTask.objects.filter(pk__in=queryset.values("pk"))
            for schedule in chosen.select_for_update().order_by("pk"):
                wanted = (not schedule.enabled) if enabled is None else enabled
                if schedule.enabled != wanted:
                    changed.append(f"“{schedule.name}” {'resumed' if wanted else 'paused'}")
                schedule_set_enabled(schedule=schedule, enabled=wanted, acting_user=request.user)
        self.message_user(
            request,
            "; ".join(changed) + "." if changed else "Nothing changed: each was already so.",
        )

    @admin.action(description="Resume (enable) selected tasks")
    def enable_tasks(self, request, queryset):
        self._set_enabled(request, queryset, True)

    @admin.action(description="Pause (disable) selected tasks")
    def disable_tasks(self, request, queryset):
        self._set_enabled(request, queryset, False)

    @admin.action(description="Toggle activity of selected tasks")
    def toggle_tasks(self, request, queryset):
        self._set_enabled(request, queryset, None)

    @admin.action(description="Run selected tasks now")
    def run_tasks(self, request, queryset):
        """An agent's schedule starts a run by hand through ``agent_run_now``: the run is
        the person's (trigger "manual", audited). Any other task is queued as
        django-celery-beat queues it, with a curation-log row saying who ran it."""
        others = []
        for schedule in queryset.order_by("pk"):
            agent = AGENT_OF_TASK.get(schedule.task)
            if agent is None:
                others.append(schedule.pk)
                continue
            started = agent_run_now(agent=agent, acting_user=request.user)
            level = (
                messages.SUCCESS
                if started.queued
                else messages.INFO
                if started.run is None
                else messages.ERROR
            )
            self.message_user(request, started.words, level=level)
        if not others:
            return
        rest = queryset.model.objects.filter(pk__in=others).order_by("pk")
        super().run_tasks(request, rest)
        with transaction.atomic():
            for schedule in rest:
                audit.record(
                    acting_user=request.user,
                    action="schedule.run",
                    subject=("schedule", schedule.pk),
                    summary=f"Ran the schedule “{schedule.name}” ({schedule.task}) by hand.",
                    after={"task": schedule.task},
                )

    def save_model(self, request, obj, form, change):
        """A pause or resume made in the form goes through ``schedule_set_enabled`` too."""
        if not (change and "enabled" in form.changed_data):
            return super().save_model(request, obj, form, change)
        wanted = obj.enabled
        with transaction.atomic():
            obj.enabled = not wanted
            super().save_model(request, obj, form, change)
            schedule_set_enabled(schedule=obj, enabled=wanted, acting_user=request.user)
        return None
