"""Rates per group: horizontal bars with their 95% intervals, and the confidence gate
each group would need."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from django.utils.html import format_html
from django.utils.safestring import SafeString

from .svg import (
    ACCENT,
    AMBER,
    BAD,
    FEW,
    INK,
    MUTED,
    OK,
    axis_title,
    frame,
    joined,
    label_width,
    legend,
    marker_line,
    num,
    pct,
    row_label,
    ticks,
    x_grid,
)


@dataclass(frozen=True)
class BarRow:
    """One horizontal bar: a value in [0, max], an optional interval, a count."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int | None = None
    tooltip: str = ""


@dataclass(frozen=True)
class GateRow:
    label: str
    threshold: float | None
    tooltip: str
    note: str


ROW_H = 26  # the height of one row (one group) in the charts of rows


class _RowLayout(NamedTuple):
    """Where a chart of one row per group draws: the labels end at ``label_w``, the plot
    runs from ``left`` to ``right`` and from ``top_pad`` down to ``bottom``."""

    label_w: float
    left: float
    right: float
    top_pad: float
    bottom: float
    height: float


def _row_layout(rows, *, width: int, margin: int) -> _RowLayout:
    """Room for the longest label, a row per group, ``margin`` right of the plot for the
    words beside each row, and space below for the axis."""
    label_w = label_width(r.label for r in rows)
    top_pad = 40
    bottom = top_pad + ROW_H * len(rows)
    return _RowLayout(label_w, label_w + 12, width - margin, top_pad, bottom, bottom + 46)


def interval_bars(
    *,
    chart_id: str,
    title: str,
    desc: str,
    rows: Sequence[BarRow],
    x_label: str,
    colour: str = ACCENT,
    maximum: float = 1.0,
    fmt: Callable[[float], str] = pct,
    reference: tuple[float, str] | None = None,
    legend_items: Sequence[tuple[str, str, str]] = (),
    width: int = 760,
) -> SafeString:
    """Horizontal bars with optional interval whiskers and an ``n`` column.

    A bar resting on fewer than ``FEW`` decisions is drawn pale: its rate says little.
    """
    label_w, left, right, top_pad, bottom, height = _row_layout(rows, width=width, margin=120)

    def x_of(v: float) -> float:
        return left + (right - left) * min(max(v, 0.0), maximum) / maximum

    parts = [
        x_grid(
            ticks(maximum, 4 if maximum == 1.0 else 5),
            x_of,
            top=top_pad - 4,
            bottom=bottom,
            fmt=fmt,
        )
    ]
    for i, row in enumerate(rows):
        y = top_pad + i * ROW_H
        mid = y + ROW_H / 2
        parts.append(row_label(row.label, x=label_w, y=mid))
        few = row.n is not None and row.n < FEW
        if row.value is not None:
            parts.append(
                format_html(
                    '<rect class="mark{}" x="{}" y="{}" width="{}" height="{}" rx="2" fill="{}"'
                    ' fill-opacity="{}"><title>{}</title></rect>',
                    " few" if few else "",
                    num(left),
                    num(y + 5),
                    num(max(x_of(row.value) - left, 1)),
                    num(ROW_H - 10),
                    colour,
                    "0.35" if few else "0.85",
                    row.tooltip,
                )
            )
        if row.low is not None and row.high is not None:
            x1, x2 = x_of(row.low), x_of(row.high)
            parts.append(
                format_html(
                    '<g class="whisker" stroke="{}" stroke-width="1.5">'
                    '<line x1="{a}" x2="{b}" y1="{m}" y2="{m}"/>'
                    '<line x1="{a}" x2="{a}" y1="{t}" y2="{u}"/>'
                    '<line x1="{b}" x2="{b}" y1="{t}" y2="{u}"/></g>',
                    INK,
                    a=num(x1),
                    b=num(x2),
                    m=num(mid),
                    t=num(mid - 5),
                    u=num(mid + 5),
                )
            )
        value_text = "no decisions" if row.value is None else fmt(row.value)
        n_text = "" if row.n is None else f" · n={row.n}"
        parts.append(
            format_html(
                '<text x="{}" y="{}" dy="4" fill="{}">{}{}</text>',
                num(right + 8),
                num(mid),
                MUTED if few or row.value is None else INK,
                value_text,
                n_text,
            )
        )
    if reference is not None:
        value, name = reference
        parts.append(
            marker_line(
                kind="reference",
                x=x_of(value),
                y1=top_pad - 6,
                y2=bottom,
                colour=INK,
                width="1.5",
                dash="4 3",
                title=name,
            )
        )
    parts.append(axis_title(x_label, x=(left + right) / 2, y=height - 8))
    if legend_items:
        parts.append(legend(legend_items, x=left, y=18))
    return frame(chart_id, title, desc, width, height, joined(parts))


def gate_chart(
    *,
    chart_id: str,
    title: str,
    desc: str,
    rows: Sequence[GateRow],
    gate: float,
    width: int = 760,
) -> SafeString:
    """Per row, a dot (``circle.mark``) at the confidence gate it needs; the configured
    gate as a dashed line; "not reachable" written out where no gate is enough."""
    label_w, left, right, top_pad, bottom, height = _row_layout(rows, width=width, margin=170)

    def x_of(v: float) -> float:
        return left + (right - left) * v

    parts = [x_grid(ticks(1.0, 10), x_of, top=top_pad - 4, bottom=bottom, fmt=lambda v: f"{v:.1f}")]
    for i, row in enumerate(rows):
        mid = top_pad + i * ROW_H + ROW_H / 2
        parts.append(row_label(row.label, x=label_w, y=mid))
        if row.threshold is None:
            parts.append(
                format_html(
                    '<text class="unreachable" x="{}" y="{}" dy="4" fill="{}" '
                    'font-style="italic">{}<title>{}</title></text>',
                    num(left + 6),
                    num(mid),
                    BAD,
                    row.note,
                    row.tooltip,
                )
            )
            continue
        parts.append(
            format_html(
                '<line x1="{}" x2="{x}" y1="{m}" y2="{m}" stroke="{}" stroke-width="6" '
                'stroke-opacity="0.18"/>'
                '<circle class="mark" cx="{x}" cy="{m}" r="6" fill="{}"><title>{}</title></circle>'
                '<text x="{}" y="{m}" dy="4" fill="{}">{}</text>',
                num(x_of(0)),
                OK,
                OK,
                row.tooltip,
                num(right + 8),
                INK,
                row.note,
                x=num(x_of(row.threshold)),
                m=num(mid),
            )
        )
    parts.append(
        marker_line(
            kind="gate",
            x=x_of(gate),
            y1=top_pad - 6,
            y2=bottom,
            colour=AMBER,
            width="2",
            dash="4 3",
            title=f"Configured gate {gate:g}",
        )
    )
    parts.append(axis_title("Confidence gate", x=(left + right) / 2, y=height - 8))
    parts.append(
        legend(
            [("Gate needed", OK, "dot"), (f"Configured gate {gate:g}", AMBER, "dash")], x=left, y=18
        )
    )
    return frame(chart_id, title, desc, width, height, joined(parts))
