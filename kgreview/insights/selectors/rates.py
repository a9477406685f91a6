"""What the dashboard says about decided proposals, as values: a rate with its Wilson
interval, calibration bins, the confidence gate a group needs, and all of it together."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

BIN_COUNT = 10


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval for a proportion (95% by default); (0, 1) when n is 0."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def ratio(part: float, whole: float) -> float | None:
    """``part`` over ``whole``; ``None`` (no share to speak of) when ``whole`` is 0."""
    return part / whole if whole else None


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
        return ratio(self.accepted, self.n)

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
        return ratio(self.accepted, self.n)

    @property
    def mean_confidence(self) -> float | None:
        return ratio(self.confidence_sum, self.n)

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
        return ratio(self.passing, self.decided) if self.reachable else None

    @property
    def accepted_share(self) -> float | None:
        return ratio(self.passing_accepted, self.passing)

    @property
    def share_at_gate(self) -> float | None:
        return ratio(self.at_gate, self.decided)

    @property
    def accepted_at_gate(self) -> float | None:
        return ratio(self.at_gate_accepted, self.at_gate)


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
