"""What every page's navigation needs to know about the reader, decided here (never in
templates) and passed down as booleans."""

from __future__ import annotations

from django.http import HttpRequest

from kgreview.core.permissions import can_view, is_curator


def navigation(request: HttpRequest) -> dict[str, bool]:
    """``nav_curator``: the reader is a curator, so the nav offers the curation log.
    ``nav_viewer``: the reader has a role, so the header polls the worker's badge."""
    user = getattr(request, "user", None)
    return {
        "nav_curator": user is not None and is_curator(user),
        "nav_viewer": user is not None and user.is_authenticated and can_view(user),
    }
