"""What every page's navigation needs to know about the reader, decided here (never in
templates) and passed down as booleans."""

from __future__ import annotations

from django.http import HttpRequest

from kgreview.core.permissions import can_decide, can_view, is_curator
from kgreview.review import talk


def navigation(request: HttpRequest) -> dict[str, object]:
    """``nav_curator``: the reader is a curator, so the nav offers the curation log.
    ``nav_viewer``: the reader has a role, so the header polls the worker's badge.
    ``nav_answers``: how many of the reader's questions have an answer they have not
    read; a function, so the count (one query on the asker's index) is asked only by a
    page that shows the nav, never by an htmx fragment."""
    user = getattr(request, "user", None)
    writer = user is not None and user.is_authenticated and can_decide(user)
    return {
        "nav_curator": user is not None and is_curator(user),
        "nav_viewer": user is not None and user.is_authenticated and can_view(user),
        "nav_decider": user is not None and user.is_authenticated and can_decide(user),
        "nav_answers": (lambda: talk.unread_answers(user)) if writer else 0,
    }
