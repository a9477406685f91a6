"""Who may do what. Checked in views (never in templates) and passed down as booleans.

Roles are the groups ``viewer``, ``reviewer`` and ``curator`` (a data migration creates
them). A request reads a user's groups once and keeps them on the user object.
"""

from __future__ import annotations

from functools import wraps

from django.core.exceptions import PermissionDenied

ROLES = frozenset({"viewer", "reviewer", "curator"})


def roles(user) -> frozenset[str]:
    """The user's roles, read once per request (superusers hold them all)."""
    if not user.is_authenticated:
        return frozenset()
    cached = getattr(user, "_kg_roles", None)
    if cached is None:
        if user.is_superuser:
            cached = ROLES
        else:
            cached = frozenset(user.groups.values_list("name", flat=True)) & ROLES
        user._kg_roles = cached
    return cached


def remember_roles(user, names: frozenset[str]) -> None:
    """Keep roles read with the user (``core.backends``), so nothing reads them again."""
    user._kg_roles = ROLES if user.is_superuser else names & ROLES


def can_view(user) -> bool:
    return bool(roles(user))


def can_decide(user) -> bool:
    """Reviewers and curators decide proposals; viewers only read."""
    return bool(roles(user) & {"reviewer", "curator"})


def is_curator(user) -> bool:
    return "curator" in roles(user)


def require(check, message: str):
    """A view decorator: 403 with ``message`` unless ``check(user)`` holds."""

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not check(request.user):
                raise PermissionDenied(message)
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


decide_required = require(can_decide, "Your role can read the queue but not decide proposals.")
view_required = require(can_view, "Your account has no role yet; ask a curator for one.")
curator_required = require(is_curator, "Only curators can do this.")
