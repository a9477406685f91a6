"""Who may do what. Checked in views (never in templates) and passed down as booleans."""

from __future__ import annotations

from functools import wraps

from django.core.exceptions import PermissionDenied


def can_decide(user) -> bool:
    """Reviewers and curators decide proposals; viewers only read."""
    return bool(user.is_authenticated and user.has_perm("review.change_proposal"))


def is_curator(user) -> bool:
    return bool(
        user.is_authenticated and (user.is_superuser or user.groups.filter(name="curator").exists())
    )


def can_view(user) -> bool:
    return bool(user.is_authenticated and user.has_perm("review.view_proposal"))


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
