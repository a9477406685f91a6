"""Admin for agent runs and worker liveness: read-only history."""

from django.contrib import admin

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
