"""Day-by-day charts: lines over a shared time axis, or stacked bars per day.

One function draws both (``day_chart``): the axes, the legend and the frame are the
same, and ``CHART_STYLES`` says how each style draws its marks inside them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from .svg import Plot, frame, joined, legend, nice_max, num, tick_label, time_axis, y_axis


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float]
    colour: str
    tooltips: Sequence[str] | None = None

    def tips(self, x_labels: Sequence[str]) -> Sequence[str]:
        """Its own tooltips, or "name, day: value" for each value."""
        return self.tooltips or [
            f"{self.name}, {lab}: {v:g}" for lab, v in zip(x_labels, self.values, strict=True)
        ]


# What a style's drawer returns: the top of the y scale, the x of each label, the marks.
Drawn = tuple[float, list[float], list[SafeString]]


def _lines(plot: Plot, x_labels: Sequence[str], series: Sequence[Series]) -> Drawn:
    """A line per series, a point (``circle.mark``) for every value."""
    left, right, top_pad, bottom = plot.left, plot.right, plot.top_pad, plot.bottom
    top = nice_max(max((max(s.values, default=0) for s in series), default=0))
    count = len(x_labels)
    step = (right - left) / max(count - 1, 1)
    xs = [left + i * step if count > 1 else (left + right) / 2 for i in range(count)]

    def y_of(v: float) -> float:
        return bottom - (bottom - top_pad) * v / top

    marks = []
    radius = 3 if count <= 31 else 2
    for s in series:
        points = " ".join(f"{num(x)},{num(y_of(v))}" for x, v in zip(xs, s.values, strict=True))
        marks.append(
            format_html(
                '<polyline class="line" points="{}" fill="none" stroke="{}" '
                'stroke-width="2" stroke-linejoin="round"/>',
                points,
                s.colour,
            )
        )
        marks.append(
            format_html_join(
                "",
                '<circle class="mark" cx="{}" cy="{}" r="{}" fill="{}"><title>{}</title></circle>',
                (
                    (num(x), num(y_of(v)), radius, s.colour, tip)
                    for x, v, tip in zip(xs, s.values, s.tips(x_labels), strict=True)
                ),
            )
        )
    return top, xs, marks


def _stacked_bars(plot: Plot, x_labels: Sequence[str], series: Sequence[Series]) -> Drawn:
    """One bar per x label, stacked by series; a ``rect.mark`` per non-zero segment."""
    left, right, top_pad, bottom = plot.left, plot.right, plot.top_pad, plot.bottom
    count = len(x_labels)
    totals = [sum(s.values[i] for s in series) for i in range(count)]
    top = nice_max(max(totals, default=0))
    slot = (right - left) / max(count, 1)
    bar = max(slot * 0.72, 1.5)
    xs = [left + slot * (i + 0.5) for i in range(count)]
    scale = (bottom - top_pad) / top
    base = [0.0] * count
    marks = []
    for s in series:
        tips = s.tips(x_labels)
        segments = []
        for i, v in enumerate(s.values):
            if not v:
                continue
            y = bottom - (base[i] + v) * scale
            segments.append(
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
        marks.append(format_html('<g class="series">{}</g>', joined(segments)))
    return top, xs, marks


@dataclass(frozen=True)
class ChartStyle:
    draw: Callable[[Plot, Sequence[str], Sequence[Series]], Drawn]
    top_pad: int  # room above the plot, for the legend
    height: int  # the chart's height unless the caller gives one
    swatch: str  # the legend's shape of each series


CHART_STYLES = {
    "lines": ChartStyle(_lines, top_pad=34, height=280, swatch="line"),
    "stacked_bars": ChartStyle(_stacked_bars, top_pad=52, height=300, swatch="box"),
}


def day_chart(
    *,
    style: str,
    chart_id: str,
    title: str,
    desc: str,
    x_labels: Sequence[str],
    series: Sequence[Series],
    x_label: str,
    y_label: str,
    width: int = 760,
    height: int | None = None,
) -> SafeString:
    """A chart of ``series`` over the days (or hours) of ``x_labels``, drawn as ``style``
    (a key of ``CHART_STYLES``): the y axis, the style's marks, the time axis and a legend."""
    how = CHART_STYLES[style]
    height = height or how.height
    plot = Plot(left=56, right=width - 16, top_pad=how.top_pad, bottom=height - 46)
    top, xs, marks = how.draw(plot, x_labels, series)
    parts = [
        y_axis(
            top=top,
            left=plot.left,
            right=plot.right,
            y0=plot.bottom,
            y1=plot.top_pad,
            fmt=tick_label,
            label=y_label,
        ),
        *marks,
        *time_axis(plot, height=height, xs=xs, x_labels=x_labels, x_label=x_label),
        legend([(s.name, s.colour, how.swatch) for s in series], x=plot.left, y=18),
    ]
    return frame(chart_id, title, desc, width, height, joined(parts))
