"""Agent runs and worker liveness."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q, QuerySet

from kgreview.core.nodelete import AppendOnlyModel, NoDeleteModel
from kgreview.review.models import Proposal, ProposalOrigin


class AgentRun(NoDeleteModel):
    """One execution of an agent (construct, heal, discover, gaps, import), with its
    progress and cost."""

    DELETE_HINT = "cancel it instead; its proposals point at it"

    class Agent(models.TextChoices):
        CONSTRUCT = "construct", "Construction"
        HEAL = "heal", "Self-healing"
        DISCOVER = "discover", "Ontology discovery"
        GAPS = "gaps", "Gap search (competency questions)"
        BOOTSTRAP = "bootstrap", "Ontology bootstrap"
        IMPORT = "import", "Vocabulary import"
        TYPING = "typing", "Concept typing"
        ANNOTATIONS = "annotations", "Annotation import"

    class Trigger(models.TextChoices):
        MANUAL = "manual", "Run now (web)"
        SCHEDULE = "schedule", "Schedule"
        CLI = "cli", "Command line"
        IMPORT = "import", "After import"
        REQUEUE = "requeue", "New relation type accepted"
        TYPE_ACCEPTED = "type_accepted", "New concept type accepted"

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
    tokens_reserved = models.PositiveBigIntegerField(
        default=0,
        help_text="Model tokens spent or promised to calls in flight, against the run's budget.",
    )
    cancel_requested = models.BooleanField(default=False)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="agent_runs",
    )
    # What review shows of the run beside each proposal it queued (``agents.runs.
    # run_origin`` makes it with the first proposal). Review sits below the agents: the
    # link runs from the run to the origin, never from a proposal to the run.
    origin = models.OneToOneField(
        ProposalOrigin,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="agent_run",
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
    def proposals(self) -> QuerySet[Proposal]:
        """The proposals this run queued."""
        return Proposal.objects.filter(origin__agent_run=self)

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


class AgentRunItem(NoDeleteModel):
    """One source's part of a run: its outcome, error in words, and numbers."""

    DELETE_HINT = "it is the run's record of that source; cancel the run instead"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        UNCHANGED = "unchanged", "Unchanged since it was last read"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    FINISHED = (Status.DONE, Status.UNCHANGED, Status.FAILED, Status.CANCELLED)

    run = models.ForeignKey(AgentRun, on_delete=models.PROTECT, related_name="items")
    source = models.ForeignKey("graph.Source", on_delete=models.PROTECT, related_name="+")
    revision = models.ForeignKey(
        "graph.SourceRevision", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    claimed_by = models.CharField(
        max_length=255, blank=True, help_text="The task (or process) working on it now."
    )
    error = models.TextField(blank=True)
    stats = models.JSONField(default=dict, blank=True)
    llm_usage = models.JSONField(default=dict, blank=True)
    chunks_done = models.PositiveIntegerField(default=0)
    chunks_total = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    renewed_at = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life of the worker reading it."
    )
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "source"], name="agentrunitem_once_per_run")
        ]
        indexes = [models.Index(fields=["run", "status"], name="agentrunitem_run_status")]

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED


class ExtractionRecord(NoDeleteModel):
    """What an extractor read from one source revision, kept so it is never paid twice.

    ``extracted``: READ is done (the LLM was paid), the rest of the loop is not yet.
    ``done``: proposals were written. An unchanged revision with a done record costs no
    LLM call on the next run.
    """

    DELETE_HINT = "it is a paid reading, kept so it is never paid for twice"

    class Status(models.TextChoices):
        EXTRACTED = "extracted", "Extracted"
        DONE = "done", "Done"

    revision = models.ForeignKey(
        "graph.SourceRevision", on_delete=models.PROTECT, related_name="extractions"
    )
    extractor = models.CharField(max_length=200, help_text="provider:model:prompt version")
    status = models.CharField(max_length=16, choices=Status.choices)
    output = models.JSONField()
    llm_usage = models.JSONField(default=dict, blank=True)
    run = models.ForeignKey(
        AgentRun, null=True, blank=True, on_delete=models.PROTECT, related_name="extractions"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["revision", "extractor"], name="extractionrecord_once_per_extractor"
            )
        ]


class ChunkExtraction(AppendOnlyModel):
    """What an extractor read from one chunk of text, keyed by everything the answer
    depends on (the chunk's text and context, extractor, model, prompt version).

    A new revision of a long document re-reads only the chunks whose text changed; the
    rest come from here, whichever revision or source they were first read in. Written
    once, never changed.
    """

    DELETE_HINT = "it is a paid reading, kept so it is never paid for twice"

    key = models.CharField(max_length=64, unique=True)
    extractor = models.CharField(max_length=200)
    output = models.JSONField()
    llm_usage = models.JSONField(default=dict, blank=True)
    run = models.ForeignKey(
        AgentRun, null=True, blank=True, on_delete=models.PROTECT, related_name="chunk_reads"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.extractor} {self.key[:12]}"


class DroppedCandidate(NoDeleteModel):
    """A candidate the loop refused, with its reason; unknown relations feed discovery."""

    DELETE_HINT = "it is why a run left a candidate out; discovery reads it"

    run = models.ForeignKey(AgentRun, on_delete=models.PROTECT, related_name="dropped")
    revision = models.ForeignKey(
        "graph.SourceRevision", on_delete=models.PROTECT, related_name="dropped_candidates"
    )
    reason = models.CharField(max_length=32)
    relation_label = models.CharField(max_length=100, blank=True)
    detail = models.CharField(max_length=500, blank=True)
    candidate = models.JSONField()
    requeued_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When a relation type that covers it was accepted and it was verified again.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["reason", "relation_label"], name="dropped_reason_label"),
            models.Index(fields=["run"], name="dropped_run"),
        ]


class Mutex(models.Model):
    """A named row to lock: writers that must not interleave take it with select_for_update."""

    name = models.CharField(max_length=64, primary_key=True)
