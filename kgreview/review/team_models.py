"""Team review's rows (``review.team``): a reviewer's blind vote on a doubled proposal,
who holds which card, the parts of the queue curators assign, and how double review treats
each relation. Part of the review app's models (``review.models`` re-exports them)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from kgreview.core.nodelete import NoDeleteModel


class Vote(NoDeleteModel):
    """One reviewer's blind decision on a proposal double review sent to two reviewers
    (``review.team``). Nothing in the graph changes until the two votes are settled: both
    alike, the proposal is applied once by a decision both votes then name; different, a
    curator adjudicates, and the votes name that decision. Votes are never deleted; a
    vote its reviewer takes back (undo) before it is settled is withdrawn."""

    DELETE_HINT = "it is a reviewer's decision, kept for agreement"

    class Action(models.TextChoices):
        ACCEPT = "accept", "Accepted"
        REJECT = "reject", "Rejected"
        EDIT_ACCEPT = "edit_accept", "Edited and accepted"

    proposal = models.ForeignKey("review.Proposal", on_delete=models.PROTECT, related_name="votes")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="votes"
    )
    action = models.CharField(max_length=16, choices=Action.choices)
    reason_code = models.CharField(max_length=64, blank=True)
    note = models.TextField(blank=True)
    payload = models.JSONField(
        default=dict, blank=True, help_text="For an edit: the payload this reviewer accepts."
    )
    confidence = models.FloatField(
        null=True, blank=True, help_text="For an edit: the confidence it sets."
    )
    label = models.CharField(
        max_length=80,
        help_text="What agreement compares: accept, reject:<reason>, or edit:<digest of the edit>.",
    )
    # Copied from the proposal, so agreement per kind and per relation reads one table.
    kind = models.CharField(max_length=32)
    relation_key = models.CharField(max_length=64, blank=True)
    proposal_version = models.PositiveIntegerField()
    created_at = models.DateTimeField()
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    batch = models.UUIDField(
        default=uuid.uuid4, db_index=True, help_text="Undone by the batch, as decisions are."
    )
    decision = models.ForeignKey(
        "review.Decision",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="votes",
        help_text="The decision that settled the proposal: the one both votes agreed on, "
        "or the adjudicator's.",
    )

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["proposal", "user"],
                condition=Q(withdrawn_at__isnull=True, decision__isnull=True),
                name="vote_one_open_per_reviewer",
                violation_error_message="This reviewer has already decided this proposal.",
            ),
            models.CheckConstraint(condition=~Q(label=""), name="vote_label_set"),
        ]
        indexes = [
            models.Index(fields=["user", "created_at"], name="vote_user_time"),
            models.Index(fields=["relation_key", "created_at"], name="vote_relation_time"),
            models.Index(fields=["created_at"], name="vote_time"),
        ]

    def __str__(self) -> str:
        return f"vote {self.label} on #{self.proposal_id} by {self.user_id}"


class Lease(models.Model):
    """Who is looking at an open proposal in the focus queue, until when. One row per
    proposal ever leased, reused: taking a lease, renewing it and releasing it update the
    row (``review.team.leases``), so a lease is never deleted either."""

    proposal = models.OneToOneField(
        "review.Proposal", primary_key=True, on_delete=models.PROTECT, related_name="lease"
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    leased_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["user", "expires_at"], name="lease_user_expiry")]

    def __str__(self) -> str:
        return f"lease of #{self.proposal_id} to {self.user_id} until {self.expires_at}"


class Assignment(NoDeleteModel):
    """A part of the queue (a Queue filter) a curator gives to a person or a group, with
    an optional target. The assignee's focus queue serves it before the shared pool."""

    DELETE_HINT = "close it instead"

    name = models.CharField(max_length=120)
    query = models.CharField(
        max_length=1000, blank=True, help_text="The Queue filter, as its query string."
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="assignments",
    )
    group = models.ForeignKey(
        "auth.Group", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    target = models.PositiveIntegerField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(user__isnull=False) & Q(group__isnull=True))
                | (Q(user__isnull=True) & Q(group__isnull=False)),
                name="assignment_one_assignee",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class DoubleReview(models.Model):
    """How double review treats one relation type: the share of its proposals a curator
    sends to two reviewers (without one, ``KG_DOUBLE_REVIEW_SHARE``), and whether its
    reviewers agree too little, which doubles all of them. Changed through
    ``review.team.doubling`` (a share audited), never deleted."""

    relation = models.OneToOneField(
        "graph.RelationType",
        primary_key=True,
        on_delete=models.PROTECT,
        related_name="double_review",
    )
    share = models.FloatField(
        null=True, blank=True, help_text="Empty: the relation follows KG_DOUBLE_REVIEW_SHARE."
    )
    low_agreement = models.BooleanField(
        default=False,
        help_text="Its reviewers' agreement is under KG_DOUBLE_REVIEW_BELOW: every proposal "
        "of it goes to two reviewers. Kept by review.team.doubling as votes are settled.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(share__isnull=True) | Q(share__gte=0.0, share__lte=1.0),
                name="doublereview_share_0_1",
            )
        ]

    def __str__(self) -> str:
        return f"{self.relation_id}: {self.share if self.share is not None else 'default'}"
