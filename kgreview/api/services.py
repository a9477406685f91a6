"""Issuing and revoking API tokens. Each call is one transaction, which writes its row
of the curation log (``core.audit``): who made or revoked which token, by its id, name
and owner. The secret is never written there, nor anywhere else."""

from __future__ import annotations

import hashlib
import logging
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, transaction
from django.utils import timezone

from construction.text import normal_name
from kgreview.core import audit
from kgreview.core.disk import is_disk_full
from kgreview.core.errors import StateConflict, ValidationFailed

from .models import ApiToken

if TYPE_CHECKING:
    from django.contrib.auth.models import User

log = logging.getLogger(__name__)

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


def _described(token: ApiToken) -> dict:
    """What the curation log keeps of a token: never its secret, nor the secret's prefix."""
    return {
        "id": token.pk,
        "name": token.name,
        "owner": token.user.get_username(),
        "scope": token.scope,
    }


def api_token_create(
    *, owner: User, name: str, acting_user: User | None, scope: str = ApiToken.Scope.READ
) -> IssuedToken:
    """A new token for ``owner``, made by ``acting_user`` (``None`` for the command line,
    which acts as the system): ``read`` only reads; ``propose`` may also submit
    proposals for review. The returned secret is the only copy. Refused in words when
    ``owner`` already holds ``KG_API_MAX_TOKENS_PER_USER`` live tokens."""
    if scope not in ApiToken.Scope.values:
        raise ValidationFailed(
            f'"{scope}" is not a token scope: use read (reads the graph) or propose (also '
            "submits proposals for review)."
        )
    name = normal_name(str(name))
    if not name:
        raise ValidationFailed("Give the token a name, such as the agent that will use it.")
    if len(name) > 100:
        raise ValidationFailed("A token name has at most 100 characters.")
    if not owner.is_active:
        raise ValidationFailed(f"{owner.get_username()} is not an active user.")
    prefix = secrets.token_hex(4)
    secret = f"{TOKEN_PREFIX}_{prefix}_{secrets.token_urlsafe(32)}"
    with transaction.atomic():
        # The owner's row serialises their token writes, so two at once cannot both pass
        # the cap.
        list(get_user_model().objects.select_for_update().filter(pk=owner.pk).values_list("pk"))
        most = settings.KG_API_MAX_TOKENS_PER_USER
        live = ApiToken.objects.filter(user=owner, revoked_at__isnull=True).count()
        if live >= most:
            raise ValidationFailed(
                f"{owner.get_username()} already has {live} live API tokens, the most one "
                f"account may hold (KG_API_MAX_TOKENS_PER_USER={most}); nothing was made. "
                "Revoke one you no longer use (on the API tokens page, or with "
                "manage.py api_token revoke PREFIX) and make the new one then. The rate "
                "limits count per account, so more tokens would not allow more requests."
            )
        token = ApiToken.objects.create(
            user=owner, name=name, scope=scope, prefix=prefix, key_hash=token_hash(secret)
        )
        what = "read-only" if scope == ApiToken.Scope.READ else "proposing"
        audit.record(
            acting_user=acting_user,
            action="api_token.create",
            subject=token,
            summary=f"Made the {what} API token “{name}” for {owner.get_username()}.",
            after=_described(token),
        )
    return IssuedToken(token=token, secret=secret)


def api_token_revoke(*, token: ApiToken, acting_user: User | None) -> ApiToken:
    """Revoke a token: ``acting_user`` is its owner or a staff member, or ``None`` for the
    command line, which acts as the system. Locks the row; revoking twice is refused."""
    with transaction.atomic():
        locked = ApiToken.objects.select_for_update().select_related("user").get(pk=token.pk)
        if (
            acting_user is not None
            and acting_user.pk != locked.user_id
            and not acting_user.is_staff
        ):
            raise ValidationFailed("Only the token's owner or a staff member can revoke it.")
        if locked.revoked_at is not None:
            raise StateConflict(f"The token {locked.name} was already revoked.")
        locked.revoked_at = timezone.now()
        locked.save(update_fields=["revoked_at"])
        audit.record(
            acting_user=acting_user,
            action="api_token.revoke",
            subject=locked,
            summary=f"Revoked the API token “{locked.name}” of {locked.user.get_username()}.",
            before={**_described(locked), "revoked_at": None},
            after={**_described(locked), "revoked_at": locked.revoked_at.isoformat()},
        )
    return locked


def api_token_authenticate(*, secret: str) -> ApiToken | None:
    """The live token for a bearer value, or None. Touches ``last_used_at`` at most once
    a minute, with a conditional update so concurrent readers never block each other;
    on a full disk the touch is skipped (logged) and the token still reads."""
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
        try:
            with transaction.atomic():
                ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        except DatabaseError as exc:
            # A read must not fail because its bookkeeping could not be written.
            if not is_disk_full(exc):
                raise
            log.warning("API token %s: last use not recorded, the disk is full.", token.prefix)
        else:
            token.last_used_at = now
    return token
