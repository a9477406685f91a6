"""Writing the curation log: one call per change, inside the change's own transaction.

Every state-changing service takes ``acting_user`` (``None`` only for an agent's or the
system's own work, which the service documents) and calls ``record`` before it returns.
A change made as part of a decision on a proposal passes ``decided=True``: the decision
row is its audit row, so no second row is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import connection

from .models import AuditEntry

if TYPE_CHECKING:
    from django.contrib.auth.models import User

MAX_SUMMARY = 500


@dataclass(frozen=True)
class Action:
    """A kind of change the curation log records: its name (``app_subject.verb``), the
    words the log shows for it, and the subject it is about (a model's name, or the kind
    of a ``(kind, id)`` subject)."""

    name: str
    words: str
    subject: str


#: Every action, registered once by the app that makes the change (its
#: ``audit_actions.py``, imported when the app is ready). ``record`` refuses any other.
ACTIONS: dict[str, Action] = {}


class UnknownAction(ValueError):
    """A change recorded under a name nobody registered (a typo would make a new action)."""


def action(name: str, words: str, subject: str) -> str:
    """Register an action; registering the same one again is harmless, a different one
    under a taken name is refused."""
    entry = Action(name, words, subject)
    if ACTIONS.setdefault(name, entry) != entry:
        raise ValueError(f"audit action {name!r} is registered twice, differently")
    return name


def actions() -> list[Action]:
    """The registered actions, by name (the curation log's filter)."""
    return [ACTIONS[name] for name in sorted(ACTIONS)]


def _subject(subject: Any) -> tuple[str, str]:
    if isinstance(subject, tuple):
        kind, pk = subject
        return str(kind), "" if pk is None else str(pk)
    meta = getattr(subject, "_meta", None)
    if meta is None:
        raise TypeError(f"cannot audit a change to {subject!r}: give (kind, id) or a model row")
    return meta.model_name, str(subject.pk)


def record(
    *,
    acting_user: User | None,
    action: str,
    subject: Any,
    summary: str,
    before: dict | None = None,
    after: dict | None = None,
    decided: bool = False,
) -> AuditEntry | None:
    """Write one curation log row for a change made in the current transaction.

    ``subject`` is a model row or a ``(kind, id)`` pair. Returns the row, or ``None``
    when the change belongs to a decision (``decided=True``), whose row already says it.
    """
    registered = ACTIONS.get(action)
    if registered is None:
        raise UnknownAction(
            f"{action!r} is not an audit action: register it with audit.action() in its "
            "app's audit_actions.py"
        )
    kind, pk = _subject(subject)
    if kind != registered.subject:
        raise UnknownAction(f"{action!r} is about a {registered.subject}, not a {kind}")
    if decided:
        return None
    if not connection.in_atomic_block:
        raise RuntimeError(f"{action}: an audited change must run inside its transaction")
    user = acting_user if getattr(acting_user, "is_authenticated", False) else None
    if summary and len(summary) > MAX_SUMMARY:
        summary = summary[: MAX_SUMMARY - 1] + "…"
    return AuditEntry.objects.create(
        user=user,
        action=action,
        subject_type=kind,
        subject_id=pk,
        summary=summary,
        before=before or {},
        after=after or {},
    )
