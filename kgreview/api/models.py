"""API tokens for downstream agents and the proposal batches they submitted."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from kgreview.core.nodelete import NoDeleteModel


class ApiToken(NoDeleteModel):
    """A bearer token that reads the graph on behalf of a user. Its ``scope`` says what
    more it may do: ``read`` only reads; ``propose`` may also submit proposals to the
    review queue (``POST /api/v1/proposals``). Neither ever writes the graph itself.

    Only a SHA-256 of the secret is stored: the token is shown once, when it is made.
    ``prefix`` (the public part) names it in lists and logs. Revoked tokens stay, so the
    audit trail of who read what keeps its names.
    """

    DELETE_HINT = "revoke it instead"

    class Scope(models.TextChoices):
        READ = "read", "Read the graph"
        PROPOSE = "propose", "Read the graph and submit proposals for review"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.READ)
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=~Q(name=""), name="apitoken_name_not_empty"),
            models.CheckConstraint(
                condition=Q(scope__in=["read", "propose"]), name="apitoken_scope_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class ProposalBatch(NoDeleteModel):
    """A batch of proposals submitted through the API, kept with its answer.

    ``via`` is the door it came through: the writing API or MCP's propose tool.
    ``key`` is the client's ``Idempotency-Key``, unique per submitter (``scope``: the
    token, or the account when no token was used), so a batch sent again under the
    same key is never queued twice: the first answer is answered again. ``body_sha256``
    tells a retry from a different batch under the same key, which is refused.
    """

    DELETE_HINT = "it is the record of what a submitter sent and was answered"

    class Via(models.TextChoices):
        API = "api", "the writing API (POST /api/v1/proposals)"
        MCP = "mcp", "the MCP server's propose tool"

    scope = models.CharField(max_length=40)
    via = models.CharField(max_length=8, choices=Via.choices, default=Via.API)
    # None for a batch sent without an Idempotency-Key (kept, never matched again).
    key = models.CharField(max_length=255, null=True, blank=True)
    body_sha256 = models.CharField(max_length=64)
    token = models.ForeignKey(
        ApiToken, null=True, blank=True, on_delete=models.PROTECT, related_name="batches"
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    items = models.PositiveIntegerField(default=0)
    answer = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["scope", "key"], name="proposalbatch_one_per_key"),
        ]

    def __str__(self) -> str:
        return f"batch {self.key} of {self.scope}"


class SubmittedProposal(NoDeleteModel):
    """Which batch queued a proposal: so an edge accepted from it can say who submitted
    it, through which door, in which batch (``GET /api/v1/edges/{id}/explain``). One per
    proposal a batch queued (its items' and the concept proposals they wait for); a
    proposal an item was merged into belongs to whoever queued it first."""

    DELETE_HINT = "it is the record of who submitted the proposal"

    proposal = models.OneToOneField("review.Proposal", on_delete=models.PROTECT, related_name="+")
    batch = models.ForeignKey(ProposalBatch, on_delete=models.PROTECT, related_name="submitted")

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"proposal #{self.proposal_id} of batch #{self.batch_id}"
