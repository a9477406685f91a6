"""The dashboard's numbers, every one aggregated by the database.

Each selector runs a fixed handful of GROUP BY queries. Their results grow with the
number of days, reviewers, relation types, agents, models and confidence steps, never
with the number of proposals; the Python that follows only walks those aggregates, so
the page costs the same few queries with 100 proposals or 100,000. Portable: SQLite and
PostgreSQL.

What "the model said" means here: an edit-and-accept may overwrite a proposal's
confidence and relation, so calibration and acceptance read them as the agent proposed
them, from the first edit decision's ``before`` when there is one.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

from django.conf import settings
from django.db.models import (
    Case,
    CharField,
    Count,
    F,
    FloatField,
    Min,
    Q,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce, Floor, Trunc
from django.utils import timezone

from kgreview.agents.models import AgentRun
from kgreview.review.models import OPEN_STATUSES, Decision, Proposal

WINDOWS = (1, 7, 30, 90)
DEFAULT_WINDOW = 30
DEFAULT_TARGET = 0.8
BIN_COUNT = 10
# Gates are searched in steps of 0.01 of confidence, the precision agents report it in
# and a curator would set KG_CONFIDENCE_GATE to; every two-decimal confidence observed is
# a candidate of its own. The result has at most 101 rows per relation type.
STEPS = 100
STEP_NUDGE = 1e-6
DECIDED = (Proposal.Status.ACCEPTED, Proposal.Status.REJECTED)
ACTIONS = tuple(Decision.Action.values)
SYSTEM = "(system)"
ALL = ""  # the key of the "every proposal, any kind" group
# Two ratios equal on paper may differ in the last bit; a target is met when it is met.
EPSILON = 1e-9


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


# --- Decided proposals: acceptance, calibration, gates --------------------------------------


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval for a proportion (95% by default); (0, 1) when n is 0."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Rate:
    """Accepted (edited or not) against rejected, for one group."""

    key: str
    label: str
    accepted: int = 0
    rejected: int = 0
    edited: int = 0

    @property
    def n(self) -> int:
        return self.accepted + self.rejected

    @property
    def rate(self) -> float | None:
        return self.accepted / self.n if self.n else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.accepted, self.n)


@dataclass(frozen=True)
class CalibrationBin:
    index: int
    n: int = 0
    accepted: int = 0
    confidence_sum: float = 0.0

    @property
    def low(self) -> float:
        return self.index / BIN_COUNT

    @property
    def high(self) -> float:
        return (self.index + 1) / BIN_COUNT

    @property
    def share(self) -> float | None:
        return self.accepted / self.n if self.n else None

    @property
    def mean_confidence(self) -> float | None:
        return self.confidence_sum / self.n if self.n else None

    @property
    def gap(self) -> float | None:
        """How far the accepted share falls below (negative) or above the claim."""
        if not self.n:
            return None
        return self.share - self.mean_confidence


@dataclass(frozen=True)
class Calibration:
    key: str
    label: str
    bins: tuple[CalibrationBin, ...]

    @property
    def n(self) -> int:
        return sum(b.n for b in self.bins)

    @property
    def accepted(self) -> int:
        return sum(b.accepted for b in self.bins)

    @property
    def ece(self) -> float | None:
        """Expected calibration error: the n-weighted mean |accepted share - confidence|."""
        if not self.n:
            return None
        return sum(b.n * abs(b.gap) for b in self.bins if b.n) / self.n


@dataclass(frozen=True)
class GateNeed:
    """The lowest observed confidence that keeps the accepted share at the target."""

    key: str
    label: str
    target: float
    decided: int
    threshold: float | None
    passing: int
    passing_accepted: int
    gate: float
    at_gate: int
    at_gate_accepted: int

    @property
    def reachable(self) -> bool:
        return self.threshold is not None

    @property
    def share_passing(self) -> float | None:
        return self.passing / self.decided if self.decided and self.reachable else None

    @property
    def accepted_share(self) -> float | None:
        return self.passing_accepted / self.passing if self.passing else None

    @property
    def share_at_gate(self) -> float | None:
        return self.at_gate / self.decided if self.decided else None

    @property
    def accepted_at_gate(self) -> float | None:
        return self.at_gate_accepted / self.at_gate if self.at_gate else None


@dataclass(frozen=True)
class Outcomes:
    """Everything the dashboard shows about decided proposals."""

    overall: Rate
    by_relation: tuple[Rate, ...]
    by_agent: tuple[Rate, ...]
    by_model: tuple[Rate, ...]
    calibration: dict[str, Calibration]
    gates: tuple[GateNeed, ...]
    target: float
    gate: float
    relations: tuple[str, ...] = field(default=())

    @property
    def is_empty(self) -> bool:
        return self.overall.n == 0


AGENT_LABELS = dict(AgentRun.Agent.choices)
NO_AGENT = "By hand (no agent run)"


def _agent_label(agent: str | None) -> str:
    if agent is None:
        return NO_AGENT
    return AGENT_LABELS.get(agent, agent)


def _model_label(provider: str | None, model: str | None) -> str:
    if provider is None and model is None:
        return NO_AGENT
    if provider and model:
        return f"{provider} · {model}"
    return provider or model or "unknown model"


def _step(confidence) -> Floor:
    """The confidence step (0 to STEPS) of a confidence expression.

    The nudge keeps 0.57, which is 56.999... once multiplied by 100, in step 57.
    """
    return Floor(confidence * STEPS + STEP_NUDGE)


def _by_step(*, gate: float) -> list[dict]:
    """Decided proposals per relation and confidence step, as stored now."""
    accepted = Q(status=Proposal.Status.ACCEPTED)
    passes = Q(confidence__gte=gate)
    return list(
        Proposal.objects.filter(status__in=DECIDED)
        .annotate(step=_step(F("confidence")))
        .values("relation_key", "step")
        .annotate(
            accepted=Count("pk", filter=accepted),
            rejected=Count("pk", filter=~accepted),
            confidence_sum=Sum("confidence"),
            at_gate=Count("pk", filter=passes),
            at_gate_accepted=Count("pk", filter=passes & accepted),
        )
        .order_by()
    )


def _by_origin() -> list[dict]:
    """Decided proposals per agent, provider and model (an edit changes none of these)."""
    accepted = Q(status=Proposal.Status.ACCEPTED)
    return list(
        Proposal.objects.filter(status__in=DECIDED)
        .values("agent_run__agent", "agent_run__provider", "agent_run__model")
        .annotate(
            accepted=Count("pk", filter=accepted),
            rejected=Count("pk", filter=~accepted),
        )
        .order_by()
    )


def _edits(*, gate: float) -> list[dict]:
    """Decided proposals that an edit changed, grouped by what they are now and what the
    agent proposed (read from the first edit decision's ``before``).

    Only edited proposals are read, so this stays small; the caller moves their counts
    from the step they sit in now to the step the agent claimed.
    """
    firsts = (
        Decision.objects.filter(action=Decision.Action.EDIT_ACCEPT)
        .values("proposal_id")
        .annotate(first=Min("id"))
        .values("first")
    )
    now = F("proposal__confidence")
    said = Coalesce(Cast(KT("before__confidence"), FloatField()), now, output_field=FloatField())
    return list(
        Decision.objects.filter(id__in=Subquery(firsts), proposal__status__in=DECIDED)
        .annotate(
            said=said,
            relation_now=F("proposal__relation_key"),
            relation_said=Coalesce(
                KT("before__payload__relation"),
                F("proposal__relation_key"),
                output_field=CharField(),
            ),
            step_now=_step(now),
            step_said=_step(said),
            passes_now=Case(When(proposal__confidence__gte=gate, then=1), default=0),
            passes_said=Case(When(said__gte=gate, then=1), default=0),
            accepted=Case(When(proposal__status=Proposal.Status.ACCEPTED, then=1), default=0),
        )
        .values(
            "relation_now",
            "relation_said",
            "step_now",
            "step_said",
            "passes_now",
            "passes_said",
            "accepted",
            "proposal__agent_run__agent",
            "proposal__agent_run__provider",
            "proposal__agent_run__model",
        )
        .annotate(n=Count("pk"), sum_now=Sum(now), sum_said=Sum("said"))
        .order_by()
    )


@dataclass
class _Cell:
    accepted: int = 0
    rejected: int = 0
    confidence_sum: float = 0.0
    at_gate: int = 0
    at_gate_accepted: int = 0

    @property
    def n(self) -> int:
        return self.accepted + self.rejected

    def add(self, *, n: int, accepted: bool | int, total: float, passes: int, sign: int = 1):
        """``n`` proposals, all accepted or all rejected, all passing the gate or none."""
        if accepted:
            self.accepted += sign * n
        else:
            self.rejected += sign * n
        self.confidence_sum += sign * total
        self.at_gate += sign * n * passes
        self.at_gate_accepted += sign * n * passes * bool(accepted)


def _cells(*, gate: float) -> tuple[dict[tuple[str, int], _Cell], list[dict]]:
    """Decided proposals per (relation, step) as the agent proposed them, and the edits."""
    cells: dict[tuple[str, int], _Cell] = defaultdict(_Cell)
    for row in _by_step(gate=gate):
        cell = cells[(row["relation_key"], int(row["step"]))]
        cell.accepted += row["accepted"]
        cell.rejected += row["rejected"]
        cell.confidence_sum += row["confidence_sum"]
        cell.at_gate += row["at_gate"]
        cell.at_gate_accepted += row["at_gate_accepted"]
    edits = _edits(gate=gate)
    for row in edits:
        n, accepted = row["n"], row["accepted"]
        cells[(row["relation_now"], int(row["step_now"]))].add(
            n=n, accepted=accepted, total=row["sum_now"], passes=row["passes_now"], sign=-1
        )
        cells[(row["relation_said"], int(row["step_said"]))].add(
            n=n, accepted=accepted, total=row["sum_said"], passes=row["passes_said"]
        )
    return {k: c for k, c in cells.items() if c.n}, edits


def _calibration(key: str, label: str, cells: list[tuple[int, _Cell]]) -> Calibration:
    bins = [[0, 0, 0.0] for _ in range(BIN_COUNT)]
    for step, cell in cells:
        b = bins[min(step * BIN_COUNT // STEPS, BIN_COUNT - 1)]
        b[0] += cell.n
        b[1] += cell.accepted
        b[2] += cell.confidence_sum
    return Calibration(
        key, label, tuple(CalibrationBin(i, n, a, s) for i, (n, a, s) in enumerate(bins))
    )


def _gate_need(
    key: str, label: str, cells: list[tuple[int, _Cell]], *, target: float, gate: float
) -> GateNeed:
    per_step: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for step, cell in cells:
        per_step[step][0] += cell.n
        per_step[step][1] += cell.accepted
    threshold, passing, passing_accepted = None, 0, 0
    n = accepted = 0
    # From the most confident down: the last step that still meets the target is the
    # lowest gate that does (the running share need not fall steadily).
    for step in sorted(per_step, reverse=True):
        n += per_step[step][0]
        accepted += per_step[step][1]
        if accepted / n >= target - EPSILON:
            threshold, passing, passing_accepted = step / STEPS, n, accepted
    return GateNeed(
        key=key,
        label=label,
        target=target,
        decided=sum(c.n for _, c in cells),
        threshold=threshold,
        passing=passing,
        passing_accepted=passing_accepted,
        gate=gate,
        at_gate=sum(c.at_gate for _, c in cells),
        at_gate_accepted=sum(c.at_gate_accepted for _, c in cells),
    )


def _rate(key: str, label: str, cells: Iterable[_Cell], edited: int) -> Rate:
    """The acceptance rate of a group: its cells' accepted and rejected summed."""
    accepted = rejected = 0
    for cell in cells:
        accepted += cell.accepted
        rejected += cell.rejected
    return Rate(key, label, accepted, rejected, edited)


def _sorted(rates) -> tuple[Rate, ...]:
    return tuple(sorted(rates, key=lambda r: (-r.n, r.label.casefold())))


def outcomes(*, target: float = DEFAULT_TARGET, gate: float | None = None) -> Outcomes:
    """Acceptance by relation type, agent and model; calibration, and the gate each
    relation type would need to keep ``target`` of what passes accepted. Three queries.

    Relation and confidence count as the agent proposed them: an edit may have changed
    both, so edited proposals are moved back to where the agent put them.
    """
    gate = settings.KG_CONFIDENCE_GATE if gate is None else gate
    cells, edits = _cells(gate=gate)
    edited_by: dict[object, int] = defaultdict(int)
    for row in edits:
        if row["accepted"]:
            origin = (
                row["proposal__agent_run__agent"],
                row["proposal__agent_run__provider"],
                row["proposal__agent_run__model"],
            )
            for key in (
                ("rel", row["relation_said"]),
                ("agent", origin[0]),
                ("model", origin[1:]),
                ("all", ALL),
            ):
                edited_by[key] += row["n"]
    by_relation_cells: dict[str, list[tuple[int, _Cell]]] = defaultdict(list)
    for (relation, step), cell in cells.items():
        by_relation_cells[relation].append((step, cell))
    everything = [(step, cell) for (_, step), cell in cells.items()]
    relations = tuple(sorted(k for k in by_relation_cells if k))

    agents: dict[object, list[_Cell]] = defaultdict(list)
    models: dict[object, list[_Cell]] = defaultdict(list)
    for row in _by_origin():
        cell = _Cell(accepted=row["accepted"], rejected=row["rejected"])
        agents[row["agent_run__agent"]].append(cell)
        models[(row["agent_run__provider"], row["agent_run__model"])].append(cell)
    return Outcomes(
        overall=_rate(ALL, "All proposals", (c for _, c in everything), edited_by[("all", ALL)]),
        by_relation=_sorted(
            _rate(k, k, (c for _, c in by_relation_cells[k]), edited_by[("rel", k)])
            for k in relations
        ),
        by_agent=_sorted(
            _rate(str(k), _agent_label(k), group, edited_by[("agent", k)])
            for k, group in agents.items()
        ),
        by_model=_sorted(
            _rate(f"{k[0]}|{k[1]}", _model_label(*k), group, edited_by[("model", k)])
            for k, group in models.items()
        ),
        calibration={
            ALL: _calibration(ALL, "All proposals", everything),
            **{k: _calibration(k, k, by_relation_cells[k]) for k in relations},
        },
        gates=(
            _gate_need(ALL, "All proposals", everything, target=target, gate=gate),
            *(_gate_need(k, k, by_relation_cells[k], target=target, gate=gate) for k in relations),
        ),
        target=target,
        gate=gate,
        relations=relations,
    )
