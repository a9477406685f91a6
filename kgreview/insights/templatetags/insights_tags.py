"""Number formats for the insights page."""

from __future__ import annotations

from django import template

from kgreview.insights.charts.svg import pct as _pct

register = template.Library()


@register.filter
def pct(value, digits: int = 0) -> str:
    """0.8 → "80%"; None → "–"."""
    return _pct(value, int(digits))


@register.filter
def interval(pair) -> str:
    """A (low, high) pair of shares as "62–91%"."""
    low, high = pair
    return f"{100 * low:.0f}–{100 * high:.0f}%"


@register.filter
def conf(value) -> str:
    """A confidence with two decimals, or "–"."""
    return "–" if value is None else f"{value:.2f}"


@register.filter
def stat(value, digits: int = 2) -> str:
    """An agreement statistic (alpha, kappa) with ``digits`` decimals, or "–"."""
    return "–" if value is None else f"{value:.{int(digits)}f}"


@register.filter
def span(interval: dict) -> str:
    """A bootstrap interval {"low", "high"} as "0.41–0.62", or "–" when there is none."""
    if not interval or interval.get("low") is None:
        return "–"
    return f"{interval['low']:.2f}–{interval['high']:.2f}"
