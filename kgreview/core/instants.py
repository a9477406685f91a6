"""Instants people and agents type: one reading of ISO 8601 for the API, the exports and
the changes page. Naive times are in the project's time zone; every result is aware UTC
(databases refuse odd offsets such as +20:58), and instants past the calendar's ends are
refused in words instead of overflowing later."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

from django.utils import timezone

from .errors import ValidationFailed

AS_OF_HELP = (
    "an ISO 8601 date or date-time, e.g. 2024-05-01, 2024-05-01T14:30 or "
    "2024-05-01T14:30:00+02:00 (a date means 00:00 that day; no offset means the "
    "project's time zone)"
)


def aware_utc(value: datetime) -> datetime:
    """``value`` as an aware UTC datetime; ``ValidationFailed`` when it has none."""
    if timezone.is_naive(value):
        try:
            value = timezone.make_aware(value, timezone.get_default_timezone())
        except (OverflowError, ValueError):
            raise ValidationFailed("That instant is outside the range of dates.") from None
    try:
        return value.astimezone(UTC)
    except (OverflowError, ValueError):
        raise ValidationFailed("That instant is outside the range of dates.") from None


def parse_instant(value: str) -> datetime:
    """An aware UTC datetime from ISO 8601 text (a date alone means 00:00 that day).

    Raises ``ValidationFailed`` with a sentence a person can act on.
    """
    text = (value or "").strip()
    if not text:
        raise ValidationFailed(f"Give the instant as {AS_OF_HELP}.")
    shown = text if len(text) <= 60 else text[:57] + "..."
    try:
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            # datetime.fromisoformat reads dates too; this also accepts the week and
            # ordinal forms date.fromisoformat knows (2024-W18-3, 2024-122).
            parsed = datetime.combine(date.fromisoformat(text), time())
        return aware_utc(parsed)
    except (ValueError, OverflowError, ValidationFailed):
        raise ValidationFailed(f'"{shown}" is not a date or time: use {AS_OF_HELP}.') from None
