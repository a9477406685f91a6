"""Agreement between people who rate the same things: observed agreement, Cohen's kappa,
Fleiss' kappa and Krippendorff's alpha (nominal), with percentile bootstrap intervals.

Pure: no Django, no database; numbers in, numbers out. Our own code, written from the
published definitions (the agreement packages on the index are GPL):

- Cohen, J. (1960). A coefficient of agreement for nominal scales.
- Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
- Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability.

A *unit* is one thing rated, given as the labels its raters gave (any hashable, orderable
values: here ``accept``, ``reject:<reason>``, ``edit:<digest>``); who gave which does not
matter to alpha, Fleiss' kappa or observed agreement, so a unit is just its labels. A
unit with fewer than two labels is not pairable and is dropped, as Krippendorff does.
Cohen's kappa compares two fixed raters, so it takes ``(first, second)`` pairs.

Every statistic is computed from the *tally* of unit types (how many units had each
multiset of labels, or each ordered pair): the point estimate from the observed tally,
the bootstrap from multinomial resamples of it, which is exactly resampling units with
replacement and costs the same whatever the number of units. Every answer says how many
units it rests on, and when it is undefined (``value`` is ``None``) says why in words.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = [
    "Estimate",
    "Interval",
    "Summary",
    "bootstrap_interval",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha",
    "observed_agreement",
    "summarise",
    "units_from_matrix",
]

Label = Hashable
#: Resamples, confidence level and seed of the intervals unless the caller says otherwise.
RESAMPLES = 1000
LEVEL = 0.95
SEED = 0
#: Resamples drawn and evaluated at once.
CHUNK = 200


@dataclass(frozen=True)
class Estimate:
    """A statistic's value (``None`` when undefined), the number of units it rests on,
    and, when undefined, the reason in words."""

    value: float | None
    items: int
    note: str = ""

    def as_json(self) -> dict:
        return {"value": self.value, "items": self.items, "note": self.note}


@dataclass(frozen=True)
class Interval:
    """A percentile bootstrap interval over units: ``low``/``high`` are ``None`` when it
    cannot be computed (``note`` says why); ``used`` counts the resamples on which the
    statistic was defined (a resample of one category only has no alpha)."""

    low: float | None
    high: float | None
    level: float
    resamples: int
    used: int
    seed: int
    note: str = ""

    def contains(self, value: float) -> bool:
        return self.low is not None and self.high is not None and self.low <= value <= self.high

    def as_json(self) -> dict:
        return {
            "low": self.low,
            "high": self.high,
            "level": self.level,
            "resamples": self.resamples,
            "used": self.used,
            "seed": self.seed,
            "method": "percentile bootstrap over units",
            "note": self.note,
        }


def _key(label: Label) -> tuple[str, str]:
    # A canonical order for any labels (a str and an int cannot be compared directly).
    return type(label).__name__, repr(label)


def units_from_matrix(rows: Sequence[Sequence[Label | None]]) -> list[list[Label]]:
    """Reliability data as Krippendorff tabulates it, one row per rater and one column
    per unit, ``None`` for a missing value, turned into units (each column's labels)."""
    width = max((len(r) for r in rows), default=0)
    return [[r[j] for r in rows if j < len(r) and r[j] is not None] for j in range(width)]


# --- Tallies: what each statistic is computed from ---------------------------------------


@dataclass
class _Tally:
    """Unit types with their counts, and the categories in a fixed order.

    ``shared`` are the categories found in more than one type. A category found in one
    type only (an edit's digest, nearly always) moves with that type's count alone, so
    its share of every sum is folded into a per-type number: the statistics then cost
    types x shared categories, however many distinct edits there are.
    """

    types: list[tuple]
    counts: np.ndarray  # one count per type
    categories: list[Label]
    shared: list[Label]

    @property
    def items(self) -> int:
        return int(self.counts.sum())

    @cached_property
    def spread(self) -> _Spread:
        return _spread(self)


def _tally(keys: Iterable[tuple]) -> _Tally:
    counted = Counter(keys)
    types = sorted(counted, key=lambda t: [_key(v) for v in t])
    seen = Counter(v for t in types for v in set(t))
    categories = sorted(seen, key=_key)
    shared = [c for c in categories if seen[c] > 1]
    return _Tally(types, np.array([counted[t] for t in types], dtype=float), categories, shared)


def _multisets(units: Iterable[Iterable[Label]]) -> _Tally:
    """Each pairable unit as the sorted tuple of its labels (rater identity dropped)."""
    keys = []
    for unit in units:
        labels = [v for v in unit if v is not None]
        if len(labels) >= 2:
            keys.append(tuple(sorted(labels, key=_key)))
    return _tally(keys)


def _pairs(pairs: Iterable[tuple[Label, Label]]) -> _Tally:
    return _tally((a, b) for a, b in pairs if a is not None and b is not None)


# Each statistic below maps a matrix of tallies (one row per resample, one column per
# unit type) to one value per row, NaN where undefined; the point estimate is the row of
# observed counts. One code path for both keeps the interval about the same statistic.


@dataclass(frozen=True)
class _Spread:
    """Per unit type: its number of values ``m``, its agreeing ordered pairs
    ``sum n(n - 1)``, its counts of the shared categories, and the sum of ``n^2`` over
    its categories no other type has."""

    m: np.ndarray
    agreeing: np.ndarray
    shared: np.ndarray  # types x shared categories
    own_squares: np.ndarray


def _spread(tally: _Tally) -> _Spread:
    index = {c: i for i, c in enumerate(tally.shared)}
    size = len(tally.types)
    m, agreeing, own = np.zeros(size), np.zeros(size), np.zeros(size)
    shared = np.zeros((size, len(tally.shared)))
    for t, labels in enumerate(tally.types):
        m[t] = len(labels)
        for value, n in Counter(labels).items():
            agreeing[t] += n * (n - 1)
            if value in index:
                shared[t, index[value]] = n
            else:
                own[t] += n * n
    return _Spread(m, agreeing, shared, own)


def _squares(spread: _Spread, w: np.ndarray) -> np.ndarray:
    """The sum over categories of (how often each occurs)^2, per row of ``w``."""
    n_c = w @ spread.shared
    return (n_c * n_c).sum(axis=1) + (w * w) @ spread.own_squares


def _alpha_rows(tally: _Tally, w: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha, nominal: 1 - (n - 1) * D_o / D_e over the coincidences."""
    spread = tally.spread
    # A unit of m values adds m pairable values, and n_uc(n_uc - 1)/(m - 1) to the
    # diagonal of the coincidence matrix for each of its categories.
    n = w @ spread.m
    disagree = n - w @ (spread.agreeing / (spread.m - 1))
    expected = n * n - _squares(spread, w)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1.0 - (n - 1) * disagree / expected, np.nan)


def _observed_rows(tally: _Tally, w: np.ndarray) -> np.ndarray:
    """Agreeing pairs of raters over all pairs of raters within units."""
    spread = tally.spread
    total = w @ (spread.m * (spread.m - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, (w @ spread.agreeing) / total, np.nan)


def _fleiss_rows(tally: _Tally, w: np.ndarray) -> np.ndarray:
    """Fleiss' kappa: mean per-unit agreement against the pooled category shares; with
    units of unequal size each unit's agreement counts once (it is Fleiss' own formula
    when every unit has as many raters)."""
    spread = tally.spread
    p_unit = spread.agreeing / (spread.m * (spread.m - 1))
    units = w.sum(axis=1)
    values = w @ spread.m
    with np.errstate(divide="ignore", invalid="ignore"):
        p_bar = (w @ p_unit) / units
        p_e = _squares(spread, w) / (values * values)
        return np.where((units > 0) & (p_e < 1 - 1e-12), (p_bar - p_e) / (1 - p_e), np.nan)


def _cohen_rows(tally: _Tally, w: np.ndarray) -> np.ndarray:
    """Cohen's kappa: (p_o - p_e) / (1 - p_e), p_e from each rater's own marginals."""
    index = {c: i for i, c in enumerate(tally.shared)}
    size = len(tally.types)
    first, second = np.zeros((size, len(index))), np.zeros((size, len(index)))
    same, own = np.zeros(size), np.zeros(size)
    for t, (a, b) in enumerate(tally.types):
        same[t] = a == b
        if a in index:
            first[t, index[a]] = 1
        if b in index:
            second[t, index[b]] = 1
        # A category of this type alone adds w_t^2 to sum_c F_c S_c only when both
        # raters chose it.
        own[t] = a == b and a not in index
    n = w.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_o = (w @ same) / n
        p_e = (((w @ first) * (w @ second)).sum(axis=1) + (w * w) @ own) / (n * n)
        return np.where((n > 0) & (p_e < 1 - 1e-12), (p_o - p_e) / (1 - p_e), np.nan)


Rows = Callable[[_Tally, np.ndarray], np.ndarray]


def _point(tally: _Tally, rows: Rows) -> float | None:
    if not tally.types:
        return None
    value = float(rows(tally, tally.counts[None, :])[0])
    return None if np.isnan(value) else value


def _why_undefined(tally: _Tally, *, what: str, raters: str) -> str:
    if not tally.types:
        return f"No unit was rated by {raters}, so {what} cannot be computed."
    if len(tally.categories) == 1:
        only = tally.categories[0]
        return (
            f"Every rating was {only}: with one category there is no disagreement to "
            f"expect by chance, so {what} is undefined (observed agreement is 1)."
        )
    return f"{what} is undefined for these ratings."


def krippendorff_alpha(units: Iterable[Iterable[Label]]) -> Estimate:
    """Krippendorff's alpha for nominal data, any number of raters, missing values
    allowed (a unit is the labels it got; units with fewer than two are dropped)."""
    return _alpha(_multisets(units))


def _alpha(tally: _Tally) -> Estimate:
    value = _point(tally, _alpha_rows)
    note = "" if value is not None else _why_undefined(tally, what="alpha", raters="two people")
    return Estimate(value, tally.items, note)


def fleiss_kappa(units: Iterable[Iterable[Label]]) -> Estimate:
    """Fleiss' kappa (Scott's pi for two raters per unit); raters need not be the same
    people from unit to unit."""
    return _fleiss(_multisets(units))


def _fleiss(tally: _Tally) -> Estimate:
    value = _point(tally, _fleiss_rows)
    note = "" if value is not None else _why_undefined(tally, what="kappa", raters="two people")
    return Estimate(value, tally.items, note)


def observed_agreement(units: Iterable[Iterable[Label]]) -> Estimate:
    """The share of pairs of ratings of one unit that agree (for two raters: the share of
    units both rated alike). Not corrected for chance."""
    return _observed(_multisets(units))


def _observed(tally: _Tally) -> Estimate:
    value = _point(tally, _observed_rows)
    note = "" if value is not None else "No unit was rated by two people."
    return Estimate(value, tally.items, note)


def cohen_kappa(pairs: Iterable[tuple[Label, Label]]) -> Estimate:
    """Cohen's kappa for two raters: each pair is (the first rater's label, the second's)."""
    tally = _pairs(pairs)
    value = _point(tally, _cohen_rows)
    note = "" if value is not None else _why_undefined(tally, what="kappa", raters="both raters")
    return Estimate(value, tally.items, note)


STATISTICS: dict[str, tuple[Callable[[Iterable], _Tally], Rows]] = {
    "alpha": (_multisets, _alpha_rows),
    "fleiss": (_multisets, _fleiss_rows),
    "observed": (_multisets, _observed_rows),
    "cohen": (_pairs, _cohen_rows),
}


def bootstrap_interval(
    data: Iterable,
    statistic: str = "alpha",
    *,
    resamples: int = RESAMPLES,
    level: float = LEVEL,
    seed: int = SEED,
) -> Interval:
    """A percentile bootstrap interval of ``statistic`` (alpha, fleiss, observed: over
    units; cohen: over pairs), resampling units with replacement ``resamples`` times from
    a generator seeded with ``seed``, so the same data always give the same interval.
    Resamples on which the statistic is undefined are left out and counted (``used``)."""
    if statistic not in STATISTICS:
        raise ValueError(f"Unknown statistic {statistic!r}: one of {', '.join(STATISTICS)}.")
    make, rows = STATISTICS[statistic]
    return _interval(make(data), rows, resamples=resamples, level=level, seed=seed)


def _interval(tally: _Tally, rows: Rows, *, resamples: int, level: float, seed: int) -> Interval:
    if not 0 < level < 1:
        raise ValueError("The level lies between 0 and 1, e.g. 0.95.")

    def none(note: str) -> Interval:
        return Interval(None, None, level, resamples, used=0, seed=seed, note=note)

    if tally.items < 2:
        return none("An interval needs at least two units.")
    if _point(tally, rows) is None:
        return none("The statistic itself is undefined here.")
    rng = np.random.default_rng(seed)
    shares = tally.counts / tally.items
    # In chunks, so thousands of distinct unit types never hold a thousand rows at once.
    chunks = []
    for start in range(0, resamples, CHUNK):
        drawn = rng.multinomial(tally.items, shares, size=min(CHUNK, resamples - start))
        chunks.append(rows(tally, drawn.astype(float)))
    values = np.concatenate(chunks)
    values = values[~np.isnan(values)]
    if not len(values):
        return none("No resample had the statistic defined.")
    tail = (1 - level) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return Interval(float(low), float(high), level, resamples, used=len(values), seed=seed)


@dataclass(frozen=True)
class Summary:
    """Krippendorff's alpha with its bootstrap interval, Fleiss' kappa and observed
    agreement of one set of units, read from one tally."""

    alpha: Estimate
    fleiss: Estimate
    observed: Estimate
    interval: Interval


def summarise(
    units: Iterable[Iterable[Label]],
    *,
    resamples: int = RESAMPLES,
    level: float = LEVEL,
    seed: int = SEED,
) -> Summary:
    """``krippendorff_alpha``, ``fleiss_kappa``, ``observed_agreement`` and alpha's
    ``bootstrap_interval`` at once: the units are tallied once for all four."""
    tally = _multisets(units)
    return Summary(
        alpha=_alpha(tally),
        fleiss=_fleiss(tally),
        observed=_observed(tally),
        interval=_interval(tally, _alpha_rows, resamples=resamples, level=level, seed=seed),
    )
