"""Leases: which open cards the focus queue is showing to whom.

The focus queue leases each reviewer a small window of cards (``KG_LEASE_WINDOW``: the
card shown and the one after it) for ``KG_LEASE_SECONDS``. Another reviewer's focus queue
skips a card someone holds, so two reviewers never see the same open card (double review
sends a doubled card to a second reviewer only after the first has decided it, when its
lease is gone). A lease is renewed while its reviewer works (every card served, and the
card page's heartbeat), given up when the reviewer moves on or logs out, and lapses when
they go idle; nothing waits for it to be cleaned up, since a lapsed lease is simply not
live.

Taking a lease is one conditional UPDATE of the proposal's row (or an INSERT the first
time): when two reviewers reach for the same card at once, the database lets exactly one
of them have it, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import connection
from django.db.models import Exists, OuterRef
from django.utils import timezone

from kgreview.review.models import OPEN_STATUSES, Lease, Vote

if TYPE_CHECKING:
    from datetime import datetime

    from django.contrib.auth.models import User


def ttl() -> timedelta:
    return timedelta(seconds=int(settings.KG_LEASE_SECONDS))


def window() -> int:
    return int(settings.KG_LEASE_WINDOW)


def held_by_others(user: User, now: datetime | None = None) -> Exists:
    """For a proposal query: someone else holds a live lease on the card."""
    now = now or timezone.now()
    return Exists(
        Lease.objects.filter(proposal=OuterRef("pk"), expires_at__gt=now).exclude(user=user)
    )


def voted_by(user: User) -> Exists:
    """For a proposal query: this reviewer's vote on it waits for a second reviewer."""
    return Exists(
        Vote.objects.filter(
            proposal=OuterRef("pk"), user=user, withdrawn_at__isnull=True, decision__isnull=True
        )
    )


def take(user: User, proposal_ids) -> list[int]:
    """Lease these cards to the reviewer, but not one someone else holds: the ids they
    have now. One statement, an upsert whose update applies only to a row that is theirs
    or lapsed, so that two reviewers reaching for one card cannot both have it."""
    ids = list(dict.fromkeys(proposal_ids))
    if not ids:
        return []
    now = timezone.now()
    until = now + ttl()
    table = connection.ops.quote_name(Lease._meta.db_table)
    rows = ", ".join(["(%s, %s, %s, %s)"] * len(ids))
    params: list = []
    for pk in ids:
        params += [pk, user.pk, now, until]
    sql = (
        f"INSERT INTO {table} (proposal_id, user_id, leased_at, expires_at) VALUES {rows} "
        "ON CONFLICT (proposal_id) DO UPDATE SET user_id = excluded.user_id, "
        "leased_at = excluded.leased_at, expires_at = excluded.expires_at "
        f"WHERE {table}.user_id = excluded.user_id OR {table}.expires_at <= %s "
        "RETURNING proposal_id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, now])
        taken = {row[0] for row in cursor.fetchall()}
    return [pk for pk in ids if pk in taken]


def keep_only(user: User, proposal_ids) -> None:
    """Release the reviewer's other live leases: they hold the window they see now."""
    now = timezone.now()
    Lease.objects.filter(user=user, expires_at__gt=now).exclude(
        proposal_id__in=list(proposal_ids)
    ).update(expires_at=now)


def renew(user: User) -> int:
    """Keep the reviewer's live leases for another lease time (they are still working)."""
    now = timezone.now()
    return Lease.objects.filter(user=user, expires_at__gt=now).update(expires_at=now + ttl())


def release_all(user: User) -> int:
    """Give up every card the reviewer holds (logging out)."""
    now = timezone.now()
    return Lease.objects.filter(user=user, expires_at__gt=now).update(expires_at=now)


def holder(proposal_id: int, *, besides: User) -> str:
    """Who else holds a live lease on the card, by name; empty when nobody does."""
    row = (
        Lease.objects.filter(proposal_id=proposal_id, expires_at__gt=timezone.now())
        .exclude(user=besides)
        .select_related("user")
        .first()
    )
    return row.user.get_username() if row is not None else ""


def held(user: User) -> list[int]:
    """The open cards the reviewer holds now, oldest lease first."""
    rows = Lease.objects.filter(
        user=user, expires_at__gt=timezone.now(), proposal__status__in=OPEN_STATUSES
    ).order_by("leased_at")
    return list(rows.values_list("proposal_id", flat=True))


def working_now() -> list[tuple[str, int]]:
    """Who holds cards right now, and how many: the curators' view of the team at work."""
    from django.db.models import Count  # noqa: PLC0415

    rows = (
        Lease.objects.filter(expires_at__gt=timezone.now(), proposal__status__in=OPEN_STATUSES)
        .values("user__username")
        .annotate(n=Count("pk"))
        .order_by("user__username")
    )
    return [(r["user__username"], r["n"]) for r in rows]
