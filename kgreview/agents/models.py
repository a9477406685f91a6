"""Agent runs and worker liveness."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from kgreview.core.nodelete import NoDeleteModel


class AgentRun(NoDeleteModel):
    """One execution of an agent (construct, heal, discover) with its progress and cost."""

    DELETE_HINT = "cancel it instead; its proposals point at it"

    class Agent(models.TextChoices):
        CONSTRUCT = "construct", "Construction"
        HEAL = "heal", "Self-healing"
        DISCOVER = "discover", "Ontology discovery"

    class Trigger(models.TextChoices):
        MANUAL = "manual", "Run now (web)"
        SCHEDULE = "schedule", "Schedule"
        CLI = "cli", "Command line"
        IMPORT = "import", "After import"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        PARTIAL = "partial", "Finished with errors"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    FINISHED = (Status.SUCCEEDED, Status.PARTIAL, Status.FAILED, Status.CANCELLED)

    agent = models.CharField(max_length=16, choices=Agent.choices)
    trigger = models.CharField(max_length=16, choices=Trigger.choices, default=Trigger.MANUAL)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    provider = models.CharField(max_length=32, blank=True)
    model = models.CharField(max_length=200, blank=True)
    params = models.JSONField(default=dict, blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    stats = models.JSONField(default=dict, blank=True)
    llm_usage = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="agent_runs",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(progress_done__lte=F("progress_total")),
                name="agentrun_progress_within_total",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running"], finished_at__isnull=True)
                | (~Q(status__in=["queued", "running"]) & Q(finished_at__isnull=False)),
                name="agentrun_finished_iff_final",
            ),
        ]
        indexes = [models.Index(fields=["agent", "-created_at"], name="agentrun_agent_time")]

    def __str__(self) -> str:
        return f"{self.agent} run #{self.pk} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def progress_percent(self) -> int:
        if not self.progress_total:
            return 100 if self.is_finished else 0
        return round(100 * self.progress_done / self.progress_total)


class WorkerHeartbeat(models.Model):
    """The last time a Celery worker ran the heartbeat task, per worker host."""

    hostname = models.CharField(max_length=255, unique=True)
    last_seen = models.DateTimeField()
    pid = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-last_seen"]

    def __str__(self) -> str:
        return f"{self.hostname} @ {self.last_seen:%Y-%m-%d %H:%M:%S}"
