"""Writing the curation log: one call per change, inside the change's own transaction.

Every state-changing service takes ``acting_user`` (``None`` only for an agent's or the
system's own work, which the service documents) and calls ``record`` before it returns.
A change made as part of a decision on a proposal passes ``decided=True``: the decision
row is its audit row, so no second row is written.
"""

from __future__ import annotations

from typing import Any

from django.db import connection

from .models import AuditEntry

MAX_SUMMARY = 500


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
    acting_user,
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
    if decided:
        return None
    if not connection.in_atomic_block:
        raise RuntimeError(f"{action}: an audited change must run inside its transaction")
    kind, pk = _subject(subject)
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
