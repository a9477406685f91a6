"""Issuing and revoking API tokens. Each call is one transaction."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from kgreview.core.errors import StateConflict, ValidationFailed

from .models import ApiToken

TOKEN_PREFIX = "kgr"
# Writing last_used_at on every request would make every read a write; once a minute
# says enough about whether a token is in use.
TOUCH_EVERY = timedelta(minutes=1)


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    secret: str  # the whole bearer value; shown once, never stored


def api_token_create(*, user, name: str) -> IssuedToken:
    """A new read-only token for ``user``. The returned secret is the only copy."""
    name = " ".join(str(name).split())
    if not name:
        raise ValidationFailed("Give the token a name, such as the agent that will use it.")
    if len(name) > 100:
        raise ValidationFailed("A token name has at most 100 characters.")
    if not user.is_active:
        raise ValidationFailed(f"{user.get_username()} is not an active user.")
    prefix = secrets.token_hex(4)
    secret = f"{TOKEN_PREFIX}_{prefix}_{secrets.token_urlsafe(32)}"
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user, name=name, prefix=prefix, key_hash=token_hash(secret)
        )
    return IssuedToken(token=token, secret=secret)


def api_token_revoke(*, token: ApiToken, by) -> ApiToken:
    """Revoke a token (its owner or a staff member). Locks the row; revoking twice is refused."""
    with transaction.atomic():
        locked = ApiToken.objects.select_for_update().get(pk=token.pk)
        if by.pk != locked.user_id and not by.is_staff:
            raise ValidationFailed("Only the token's owner or a staff member can revoke it.")
        if locked.revoked_at is not None:
            raise StateConflict(f"The token {locked.name} was already revoked.")
        locked.revoked_at = timezone.now()
        locked.save(update_fields=["revoked_at"])
    return locked


def api_token_authenticate(*, secret: str) -> ApiToken | None:
    """The live token for a bearer value, or None. Touches ``last_used_at`` at most once
    a minute, with a conditional update so concurrent readers never block each other."""
    if not secret or not secret.startswith(TOKEN_PREFIX + "_") or len(secret) > 200:
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(key_hash=token_hash(secret), revoked_at__isnull=True)
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > TOUCH_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token
