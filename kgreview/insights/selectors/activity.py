"""The review activity over a window of days: the size of the queue, and the decisions
of each reviewer, in time buckets; a handful of GROUP BY queries whatever the volume."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.conf import settings
from django.db.models import (
    Case,
    CharField,
    Count,
    F,
    Q,
    Value,
    When,
)
from django.db.models.functions import Trunc
from django.utils import timezone

from kgreview.review.models import OPEN_STATUSES, Decision, Proposal

WINDOWS = (1, 7, 30, 90)
DEFAULT_WINDOW = 30
ACTIONS = tuple(Decision.Action.values)
SYSTEM = "(system)"


# --- Time buckets -------------------------------------------------------------------------


@dataclass(frozen=True)
class Buckets:
    """Consecutive hours (a one-day window) or days, in the current time zone."""

    step: str  # "hour" or "day"
    starts: tuple[datetime, ...]
    end: datetime

    def key(self, moment: datetime) -> date | int:
        """The bucket a truncated timestamp from the database belongs to."""
        if self.step == "day":
            return timezone.localtime(moment).date()
        return int(moment.timestamp()) // 3600

    @property
    def keys(self) -> list[date | int]:
        return [self.key(s) for s in self.starts]

    @property
    def start(self) -> datetime:
        return self.starts[0]

    def trunc(self, column: str) -> Trunc:
        return Trunc(column, self.step, tzinfo=timezone.get_current_timezone())


def time_buckets(*, days: int, now: datetime | None = None) -> Buckets:
    """The last ``days`` calendar days up to today, or the last 24 hours for one day."""
    tz = timezone.get_current_timezone()
    local = timezone.localtime(now or timezone.now(), tz)
    if days <= 1:
        # Counted in UTC so a daylight-saving change neither repeats nor skips an hour.
        last = local.replace(minute=0, second=0, microsecond=0).astimezone(UTC)
        starts = tuple((last - timedelta(hours=23 - i)).astimezone(tz) for i in range(24))
        return Buckets("hour", starts, (last + timedelta(hours=1)).astimezone(tz))
    today = local.date()
    starts = tuple(
        datetime.combine(today - timedelta(days=days - 1 - i), time(), tzinfo=tz)
        for i in range(days)
    )
    return Buckets("day", starts, datetime.combine(today + timedelta(days=1), time(), tzinfo=tz))


# --- Queue size over time -----------------------------------------------------------------


@dataclass(frozen=True)
class QueuePoint:
    """The open proposals at the end of one bucket, and what moved during it."""

    start: datetime
    pending: int
    held: int
    created: int
    closed: int

    @property
    def total(self) -> int:
        return self.pending + self.held


@dataclass(frozen=True)
class QueueHistory:
    step: str
    points: tuple[QueuePoint, ...]
    open_before: dict[str, int]

    @property
    def is_empty(self) -> bool:
        """Nothing was open or moved in the whole window."""
        return not any(p.total or p.created or p.closed for p in self.points)

    @property
    def peak(self) -> int:
        return max((p.total for p in self.points), default=0)


def _lane(gate: float) -> Case:
    """Pending or held: an open proposal's own status; a closed one's lane when it left
    the queue, which was held exactly when its confidence lay below the gate."""
    return Case(
        When(status__in=OPEN_STATUSES, then=F("status")),
        When(confidence__lt=gate, then=Value(Proposal.Status.HELD)),
        default=Value(Proposal.Status.PENDING),
        output_field=CharField(),
    )


def queue_history(
    *, days: int = DEFAULT_WINDOW, now: datetime | None = None, gate: float | None = None
) -> QueueHistory:
    """Open proposals (pending and held apart) at the end of each bucket of the window.

    Reconstructed from when each proposal was created and when it left the open states
    (``decided_at``, set for accepted, rejected and superseded alike): the count open
    when the window began, plus the running sum of created minus closed. Three queries.
    A proposal sent back to the queue by an undo has no ``decided_at`` any more, so it
    counts as open since it was created.
    """
    gate = settings.KG_CONFIDENCE_GATE if gate is None else gate
    buckets = time_buckets(days=days, now=now)
    lanes = Proposal.objects.annotate(lane=_lane(gate))
    before = lanes.filter(created_at__lt=buckets.start).filter(
        Q(decided_at__isnull=True) | Q(decided_at__gte=buckets.start)
    )
    open_before = before.aggregate(
        pending=Count("pk", filter=Q(lane=Proposal.Status.PENDING)),
        held=Count("pk", filter=Q(lane=Proposal.Status.HELD)),
    )
    moves: dict[tuple[object, str], list[int]] = defaultdict(lambda: [0, 0])
    for column, slot in (("created_at", 0), ("decided_at", 1)):
        rows = (
            lanes.filter(**{f"{column}__gte": buckets.start, f"{column}__lt": buckets.end})
            .annotate(bucket=buckets.trunc(column))
            .values("bucket", "lane")
            .annotate(n=Count("pk"))
            .order_by()
        )
        for row in rows:
            moves[(buckets.key(row["bucket"]), row["lane"])][slot] += row["n"]
    level = {"pending": open_before["pending"], "held": open_before["held"]}
    points = []
    for start, key in zip(buckets.starts, buckets.keys, strict=True):
        created = closed = 0
        for lane in level:
            came, went = moves.get((key, lane), (0, 0))
            level[lane] += came - went
            created += came
            closed += went
        points.append(QueuePoint(start, level["pending"], level["held"], created, closed))
    return QueueHistory(buckets.step, tuple(points), open_before)


# --- Decisions per reviewer per day -------------------------------------------------------


@dataclass(frozen=True)
class ReviewerRow:
    """One reviewer's decisions: per bucket and in total, by action."""

    reviewer: str
    per_bucket: tuple[dict[str, int], ...]
    totals: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.totals.values())

    @property
    def bucket_totals(self) -> list[int]:
        return [sum(c.values()) for c in self.per_bucket]


@dataclass(frozen=True)
class ReviewerActivity:
    step: str
    starts: tuple[datetime, ...]
    rows: tuple[ReviewerRow, ...]

    @property
    def total(self) -> int:
        return sum(r.total for r in self.rows)


def reviewer_activity(*, days: int = DEFAULT_WINDOW, now: datetime | None = None):
    """Decisions per reviewer, bucket and action (undo counted as its own action);
    decisions the system took are listed as ``(system)``. One query.

    A decision counts once per proposal a person decided: what came with it (a concept
    accepted with its edge, a twin proposal settled, a re-pointed end) is not counted
    again, so a bulk batch of 93 proposals is 93 decisions, and its undo 93 undos.
    """
    buckets = time_buckets(days=days, now=now)
    rows = (
        Decision.objects.filter(
            created_at__gte=buckets.start, created_at__lt=buckets.end, caused_by__isnull=True
        )
        .annotate(bucket=buckets.trunc("created_at"))
        .values("bucket", "user_id", "user__username", "action")
        .annotate(n=Count("pk"))
        .order_by()
    )
    index = {key: i for i, key in enumerate(buckets.keys)}
    cells: dict[tuple[int | None, str], list[dict[str, int]]] = {}
    for row in rows:
        who = (row["user_id"], row["user__username"] or SYSTEM)
        per = cells.setdefault(who, [dict.fromkeys(ACTIONS, 0) for _ in buckets.starts])
        per[index[buckets.key(row["bucket"])]][row["action"]] += row["n"]
    out = []
    for (_, name), per in cells.items():
        totals = {a: sum(c[a] for c in per) for a in ACTIONS}
        out.append(ReviewerRow(name, tuple(per), totals))
    out.sort(key=lambda r: (-r.total, r.reviewer.casefold()))
    return ReviewerActivity(buckets.step, buckets.starts, tuple(out))
