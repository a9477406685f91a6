"""The curation log: one append-only row for every change a person makes outside a decision.

Decisions on proposals are their own audit rows (``review.Decision``). Everything else
that changes state (a relation type retired or renamed, a schedule paused, a run started
by hand, an API token made or revoked) writes an ``AuditEntry`` in the same transaction,
through ``kgreview.core.audit.record``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from .nodelete import AppendOnlyModel


class AuditEntry(AppendOnlyModel):
    """Who changed what, when, and how it looked before and after. Never edited or deleted."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="audit_entries",
        help_text="Empty for changes an agent or the system made on its own.",
    )
    action = models.CharField(
        max_length=64, help_text='What was done, as "subject.verb" (e.g. "relation_type.retire").'
    )
    subject_type = models.CharField(max_length=64, help_text="The kind of thing changed.")
    subject_id = models.CharField(max_length=64, blank=True)
    summary = models.CharField(max_length=500, help_text="The change in words, for the log.")
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "curation log entry"
        verbose_name_plural = "curation log"
        indexes = [
            models.Index(fields=["-created_at"], name="audit_time"),
            models.Index(fields=["subject_type", "subject_id"], name="audit_subject"),
            models.Index(fields=["user", "-created_at"], name="audit_user_time"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.subject_type}#{self.subject_id} by {self.user_id or 'system'}"
