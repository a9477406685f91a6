"""Competency questions: what the graph must be able to answer, their runs and results.

A question is never deleted: a curator retires it (and may reactivate it). A run asks
every active question (or one) and writes one append-only result per question, so the
history of each question over time is the list of its results.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from kgreview.core.nodelete import AppendOnlyModel, NoDeleteModel
from kgreview.review.models import Proposal


class CompetencyQuestion(NoDeleteModel):
    """A question the graph must answer, with the answer a curator expects.

    ``expect`` says what kind of answer: a set of concepts that must all be found
    (``expected_names``), a path joining two concepts (``expected_names`` holds its two
    ends), or yes / no (``expected_yes``).
    """

    DELETE_HINT = "retire it instead; its results are its history"

    class Expect(models.TextChoices):
        CONCEPTS = "concepts", "These concepts (all must be found)"
        PATH = "path", "A path between two concepts"
        YES_NO = "yes_no", "Yes or no"

    text = models.CharField(max_length=500, help_text="The question, as a person would ask it.")
    expect = models.CharField(max_length=16, choices=Expect.choices)
    expected_names = models.JSONField(
        default=list,
        blank=True,
        help_text="The concepts the answer must hold, or a path's two ends, by name.",
    )
    expected_yes = models.BooleanField(null=True, blank=True)
    note = models.TextField(blank=True)
    active = models.BooleanField(default=True)
    retired_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="competency_questions",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # What the question's gap searches queued. The link is this app's (``GapProposal``):
    # review sits below the questions and knows nothing of them. A proposal's question
    # is read ``Proposal.objects.filter(competency_question=q)``.
    gap_proposals: models.ManyToManyField[Proposal, GapProposal] = models.ManyToManyField(
        "review.Proposal",
        through="GapProposal",
        related_name="competency_questions",
        related_query_name="competency_question",
        blank=True,
    )

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(expect__in=["concepts", "path", "yes_no"]),
                name="competencyquestion_expect_known",
            ),
            models.CheckConstraint(
                condition=~Q(expect="yes_no") | Q(expected_yes__isnull=False),
                name="competencyquestion_yes_no_has_answer",
            ),
            models.CheckConstraint(
                condition=Q(active=True, retired_at__isnull=True)
                | Q(active=False, retired_at__isnull=False),
                name="competencyquestion_retired_iff_inactive",
            ),
        ]

    def __str__(self) -> str:
        return self.text

    @property
    def expected_words(self) -> str:
        """The expected answer in words."""
        names = ", ".join(self.expected_names)
        if self.expect == self.Expect.CONCEPTS:
            return f"all of: {names}"
        if self.expect == self.Expect.PATH:
            return f"a path between {' and '.join(self.expected_names)}"
        return "yes" if self.expected_yes else "no"


class CompetencyRun(NoDeleteModel):
    """One run of the competency questions (every active one, or one question)."""

    DELETE_HINT = "its results are the questions' history"

    class Trigger(models.TextChoices):
        MANUAL = "manual", "Run now (web)"
        SCHEDULE = "schedule", "Schedule"
        CLI = "cli", "Command line"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        FINISHED = "finished", "Finished"
        FAILED = "failed", "Failed"

    OPEN = (Status.QUEUED, Status.RUNNING)

    trigger = models.CharField(max_length=16, choices=Trigger.choices, default=Trigger.MANUAL)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    question = models.ForeignKey(
        CompetencyQuestion,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="single_runs",
        help_text="Empty: every active question.",
    )
    provider = models.CharField(max_length=32, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="competency_runs",
    )
    claimed_by = models.CharField(
        max_length=255, blank=True, help_text="The task working on it now."
    )
    # True while queued or running, NULL once finished: unique, so two runs can never be
    # open at once, whichever worker, schedule or curator started them.
    open_slot = models.BooleanField(null=True, default=True, editable=False)
    total = models.PositiveIntegerField(default=0)
    passed = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["open_slot"], name="competencyrun_one_open"),
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running"], open_slot=True)
                | (~Q(status__in=["queued", "running"]) & Q(open_slot__isnull=True)),
                name="competencyrun_open_slot_iff_open",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running"], finished_at__isnull=True)
                | (~Q(status__in=["queued", "running"]) & Q(finished_at__isnull=False)),
                name="competencyrun_finished_iff_final",
            ),
        ]

    def __str__(self) -> str:
        return f"competency run #{self.pk} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status not in self.OPEN


class QuestionResult(AppendOnlyModel):
    """What one run found for one question: pass or fail, the answer, what was missing."""

    class Status(models.TextChoices):
        ANSWERED = "answered", "Answered"
        NO_PATH = "no_path", "Not in the graph"
        NOT_UNDERSTOOD = "not_understood", "Not understood"
        ERROR = "error", "Could not be asked"

    run = models.ForeignKey(CompetencyRun, on_delete=models.PROTECT, related_name="results")
    question = models.ForeignKey(
        CompetencyQuestion, on_delete=models.PROTECT, related_name="results"
    )
    passed = models.BooleanField()
    status = models.CharField(max_length=16, choices=Status.choices)
    answer = models.JSONField(default=dict, blank=True, help_text="Answer.as_json() of the ask.")
    missing = models.JSONField(default=list, blank=True)
    extra = models.JSONField(default=list, blank=True)
    gaps = models.JSONField(
        default=list,
        blank=True,
        help_text="Pairs of concepts a missing link would join: where a gap search looks.",
    )
    words = models.TextField(help_text="The outcome in words: what was missing or found besides.")
    latency_ms = models.FloatField(default=0.0)
    graph_at = models.DateTimeField(help_text="The instant the graph was asked at.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "question"], name="questionresult_once_per_run")
        ]
        indexes = [models.Index(fields=["question", "-id"], name="questionresult_question")]

    def __str__(self) -> str:
        return f"{'pass' if self.passed else 'fail'}: {self.question_id} in run {self.run_id}"


class GapProposal(AppendOnlyModel):
    """A proposal a failing question's gap search queued, or found already waiting. A
    proposal belongs to the first question whose search linked it; the link is written
    once and never changed."""

    question = models.ForeignKey(
        CompetencyQuestion, on_delete=models.PROTECT, related_name="gap_links"
    )
    proposal = models.OneToOneField(
        "review.Proposal", on_delete=models.PROTECT, related_name="gap_link"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"proposal {self.proposal_id} for question {self.question_id}"
