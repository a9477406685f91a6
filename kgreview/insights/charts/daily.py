"""Day-by-day charts: lines over a shared time axis, and stacked bars per day."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from .svg import frame, joined, legend, nice_max, num, tick_label, time_axis, y_axis


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float]
    colour: str
    tooltips: Sequence[str] | None = None


def line_chart(
    *,
    chart_id: str,
    title: str,
    desc: str,
    x_labels: Sequence[str],
    series: Sequence[Series],
    x_label: str,
    y_label: str,
    width: int = 760,
    height: int = 280,
) -> SafeString:
    """Lines over a shared x axis, a point (``circle.mark``) for every value."""
    left, right, top_pad, bottom = 56, width - 16, 34, height - 46
    top = nice_max(max((max(s.values, default=0) for s in series), default=0))
    count = len(x_labels)
    step = (right - left) / max(count - 1, 1)
    xs = [left + i * step if count > 1 else (left + right) / 2 for i in range(count)]

    def y_of(v: float) -> float:
        return bottom - (bottom - top_pad) * v / top

    parts = [
        y_axis(
            top=top, left=left, right=right, y0=bottom, y1=top_pad, fmt=tick_label, label=y_label
        )
    ]
    radius = 3 if count <= 31 else 2
    for s in series:
        points = " ".join(f"{num(x)},{num(y_of(v))}" for x, v in zip(xs, s.values, strict=True))
        parts.append(
            format_html(
                '<polyline class="line" points="{}" fill="none" stroke="{}" '
                'stroke-width="2" stroke-linejoin="round"/>',
                points,
                s.colour,
            )
        )
        tips = s.tooltips or [
            f"{s.name}, {lab}: {v:g}" for lab, v in zip(x_labels, s.values, strict=True)
        ]
        parts.append(
            format_html_join(
                "",
                '<circle class="mark" cx="{}" cy="{}" r="{}" fill="{}"><title>{}</title></circle>',
                (
                    (num(x), num(y_of(v)), radius, s.colour, tip)
                    for x, v, tip in zip(xs, s.values, tips, strict=True)
                ),
            )
        )
    parts += time_axis(
        left=left,
        right=right,
        bottom=bottom,
        height=height,
        xs=xs,
        x_labels=x_labels,
        x_label=x_label,
    )
    parts.append(legend([(s.name, s.colour, "line") for s in series], x=left, y=18))
    return frame(chart_id, title, desc, width, height, joined(parts))


def stacked_bars(
    *,
    chart_id: str,
    title: str,
    desc: str,
    x_labels: Sequence[str],
    series: Sequence[Series],
    x_label: str,
    y_label: str,
    width: int = 760,
    height: int = 300,
) -> SafeString:
    """One bar per x label, stacked by series; a ``rect.mark`` per non-zero segment."""
    left, right, top_pad, bottom = 56, width - 16, 52, height - 46
    count = len(x_labels)
    totals = [sum(s.values[i] for s in series) for i in range(count)]
    top = nice_max(max(totals, default=0))
    slot = (right - left) / max(count, 1)
    bar = max(slot * 0.72, 1.5)
    xs = [left + slot * (i + 0.5) for i in range(count)]
    parts = [
        y_axis(
            top=top, left=left, right=right, y0=bottom, y1=top_pad, fmt=tick_label, label=y_label
        )
    ]
    scale = (bottom - top_pad) / top
    base = [0.0] * count
    for s in series:
        tips = s.tooltips or [
            f"{s.name}, {lab}: {v:g}" for lab, v in zip(x_labels, s.values, strict=True)
        ]
        marks = []
        for i, v in enumerate(s.values):
            if not v:
                continue
            y = bottom - (base[i] + v) * scale
            marks.append(
                format_html(
                    '<rect class="mark" x="{}" y="{}" width="{}" height="{}" fill="{}">'
                    "<title>{}</title></rect>",
                    num(xs[i] - bar / 2),
                    num(y),
                    num(bar),
                    num(v * scale),
                    s.colour,
                    tips[i],
                )
            )
            base[i] += v
        parts.append(format_html('<g class="series">{}</g>', joined(marks)))
    parts += time_axis(
        left=left,
        right=right,
        bottom=bottom,
        height=height,
        xs=xs,
        x_labels=x_labels,
        x_label=x_label,
    )
    parts.append(legend([(s.name, s.colour, "box") for s in series], x=left, y=18))
    return frame(chart_id, title, desc, width, height, joined(parts))
