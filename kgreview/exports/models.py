"""Releases: a named, frozen version of the graph that its curators vouch for.

A ``Release`` is cut once and never changes (append-only, like a decision): its name,
the instant it freezes, the notes generated from the diff since the release before it,
its validation report, and one ``ReleaseFile`` per export stored with it (a file under
``KG_RELEASE_DIR/<name>/`` with its size and SHA-256). Building one can take a while on
a large graph, so a request from the Exports page is a ``ReleaseBuild`` that a Celery
task carries out; the build row says where it is (queued, running, done, failed) and
points at the release it made. ``docs/releases.md`` describes it all.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q, Value
from django.db.models.functions import Coalesce

from kgreview.core.nodelete import AppendOnlyModel, NoDeleteModel


class Release(AppendOnlyModel):
    """A named version of the graph as of ``as_of``; written once, never edited."""

    DELETE_HINT = "a release is cut once and kept for good; cut a new one instead"

    name = models.CharField(max_length=64, unique=True)
    as_of = models.DateTimeField()
    previous = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The release this one's notes are the diff from (none for the first).",
    )
    notes = models.TextField(blank=True, help_text="The curator's own words.")
    changes = models.JSONField(
        help_text="The release notes generated from the diff since the previous release "
        "(exports.releases.notes)."
    )
    validation = models.JSONField(help_text="The SHACL validation report as of ``as_of``.")
    conforms = models.BooleanField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-as_of", "-id"]
        constraints = [
            models.CheckConstraint(condition=~Q(name=""), name="release_name_not_empty"),
            # Releases form one chain: no two name the same release (or none, the first)
            # as the one their notes start from.
            models.UniqueConstraint(
                Coalesce("previous", Value(0)), name="release_one_successor_each"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ReleaseFile(AppendOnlyModel):
    """One export stored with a release: its file's name, size and SHA-256 when cut."""

    DELETE_HINT = "a release's files are part of what it vouches for"

    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="files")
    format = models.CharField(max_length=32)
    label = models.CharField(max_length=100)
    filename = models.CharField(max_length=120)
    content_type = models.CharField(max_length=100)
    size = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)

    class Meta:
        ordering = ["release", "id"]
        constraints = [
            models.UniqueConstraint(fields=["release", "filename"], name="releasefile_once"),
            models.UniqueConstraint(fields=["release", "format"], name="releasefile_format_once"),
        ]

    def __str__(self) -> str:
        return f"{self.release_id}/{self.filename}"


class ReleaseBuild(NoDeleteModel):
    """A curator's request for a release, carried out by a Celery task.

    The worker that takes it claims it (``claimed_by``) and renews ``renewed_at`` while it
    builds (a heartbeat), so a build whose worker died, or whose task message was lost,
    is seen by the sweep (``releases.services.release_builds_sweep``): queued again up to
    ``KG_RELEASE_BUILD_ATTEMPTS`` sends in all, then failed with the reason in words.
    A curator's retry of a failed build is a new build pointing at it (``retry_of``)."""

    DELETE_HINT = "a build request is history; a failed one stays failed"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Building"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    name = models.CharField(max_length=64)
    as_of = models.DateTimeField()
    notes = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    requested_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    claimed_by = models.CharField(
        max_length=200, blank=True, help_text="The task that is building it (while running)."
    )
    started_at = models.DateTimeField(null=True, blank=True)
    renewed_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Its last sign of life: queued, taken by a worker, or renewed by the "
        "worker's heartbeat while it builds.",
    )
    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="How many times its task was sent to the workers."
    )
    retry_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="retries",
        help_text="The failed build a curator asked again.",
    )
    release = models.OneToOneField(
        Release, null=True, blank=True, on_delete=models.PROTECT, related_name="build"
    )

    class Meta:
        ordering = ["-requested_at", "-id"]
        constraints = [
            # One open build per name: a second request for it is refused in words.
            models.UniqueConstraint(
                fields=["name"],
                condition=Q(status__in=["queued", "running"]),
                name="releasebuild_one_open_per_name",
            ),
            models.CheckConstraint(
                condition=~Q(status="done") | Q(release__isnull=False),
                name="releasebuild_done_has_release",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.status})"

    @property
    def is_open(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)
