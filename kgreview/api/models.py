"""Read-only API tokens for downstream agents."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from kgreview.core.nodelete import NoDeleteModel


class ApiToken(NoDeleteModel):
    """A bearer token that reads the graph on behalf of a user; it can never write.

    Only a SHA-256 of the secret is stored: the token is shown once, when it is made.
    ``prefix`` (the public part) names it in lists and logs. Revoked tokens stay, so the
    audit trail of who read what keeps its names.
    """

    DELETE_HINT = "revoke it instead"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=~Q(name=""), name="apitoken_name_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
