"""What every chart shares: the palette, number formats, the ``<svg>`` frame with its
title and description, axes, grid lines, row labels and the legend. Every piece is built
by ``format_html``, which escapes the text that comes from the data."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

# The palette of app.css: accent, ok, bad, amber (held), purple, orange, muted, teal.
INK = "#1d2430"
MUTED = "#5d6778"
GRID = "#dde2ea"
ACCENT = "#2f5bd3"
OK = "#1c7c4d"
BAD = "#b42318"
AMBER = "#c99400"
PALETTE = (ACCENT, OK, AMBER, "#6b4fbb", BAD, "#9a4d00", "#0f7b8a", MUTED)
CHAR = 6.6  # the width of one character at the charts' 12-unit font, roughly
FEW = 10  # fewer decisions than this: the rate is drawn pale and said to be uncertain


def num(x: float) -> str:
    return f"{x:.1f}"


def pct(x: float | None, digits: int = 0) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}%"


LABEL_LIMIT = 28


def short(label: str, limit: int = LABEL_LIMIT) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def label_width(labels) -> float:
    """Room for the longest row label (as shortened), within sensible bounds."""
    longest = max((len(short(label)) for label in labels), default=0)
    return min(max(CHAR * longest + 8, 60), CHAR * LABEL_LIMIT + 8)


def nice_max(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 times a power of ten at or above ``value`` (1 for 0)."""
    if value <= 0:
        return 1
    magnitude = 10 ** math.floor(math.log10(value))
    for factor in (1, 2, 2.5, 5, 10):
        if factor * magnitude >= value - 1e-12:
            return factor * magnitude
    return 10 * magnitude  # pragma: no cover - the loop always returns


def ticks(top: float, count: int = 5) -> list[float]:
    return [top * i / count for i in range(count + 1)]


def tick_label(v: float) -> str:
    return f"{v:g}" if v == int(v) or v >= 10 else f"{v:.2g}"


def frame(
    chart_id: str, title: str, desc: str, width: int, height: int, body: SafeString
) -> SafeString:
    return format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" id="{id}" class="chart-svg" '
        'viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{t}" '
        'aria-describedby="{id}-desc" '
        'font-size="12" font-family="system-ui, sans-serif">'
        '<title id="{id}-title">{t}</title><desc id="{id}-desc">{d}</desc>{body}</svg>',
        id=chart_id,
        w=width,
        h=height,
        t=title,
        d=desc,
        body=body,
    )


def joined(parts: Sequence[SafeString]) -> SafeString:
    return mark_safe("".join(parts))  # every part was built by format_html


def legend(items: Sequence[tuple[str, str, str]], *, x: float, y: float) -> SafeString:
    """Swatches left to right: (name, colour, shape), shape "box", "dot", "line" or "dash"."""
    parts = []
    for name, colour, shape in items:
        if shape == "dot":
            mark = format_html(
                '<circle cx="{}" cy="{}" r="5" fill="{}"/>', num(x + 6), num(y - 4), colour
            )
        elif shape == "box":
            mark = format_html(
                '<rect x="{}" y="{}" width="12" height="12" rx="2" fill="{}"/>',
                num(x),
                num(y - 10),
                colour,
            )
        else:
            mark = format_html(
                '<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="{}" stroke-width="2.5"{}/>',
                num(x),
                num(x + 16),
                num(y - 4),
                num(y - 4),
                colour,
                mark_safe(' stroke-dasharray="4 3"') if shape == "dash" else "",
            )
        parts.append(
            format_html(
                '<g class="legend-item">{}<text x="{}" y="{}" fill="{}">{}</text></g>',
                mark,
                num(x + 20),
                num(y),
                INK,
                name,
            )
        )
        x += 34 + CHAR * len(name)
    return format_html('<g class="legend">{}</g>', joined(parts))


def y_axis(
    *, top: float, left: float, right: float, y0: float, y1: float, fmt: Callable, label: str
) -> SafeString:
    parts = []
    for v in ticks(top):
        y = y0 - (y0 - y1) * (v / top)
        parts.append(
            format_html(
                '<line x1="{}" x2="{}" y1="{y}" y2="{y}" stroke="{}"/>'
                '<text x="{}" y="{y}" dy="4" text-anchor="end" fill="{}">{}</text>',
                num(left),
                num(right),
                GRID,
                num(left - 6),
                MUTED,
                fmt(v),
                y=num(y),
            )
        )
    parts.append(
        format_html(
            '<text class="axis-label" transform="translate({} {}) rotate(-90)" '
            'text-anchor="middle" fill="{}">{}</text>',
            num(14),
            num((y0 + y1) / 2),
            MUTED,
            label,
        )
    )
    return joined(parts)


def spaced_x_labels(
    labels: Sequence[str], xs: Sequence[float], *, y: float, most: int = 10
) -> SafeString:
    """At most about ``most`` labels, evenly spaced, the last one always shown."""
    every = max(1, math.ceil(len(labels) / most))
    shown = [i for i in range(len(labels)) if i % every == 0]
    last = len(labels) - 1
    if shown and shown[-1] != last:
        if last - shown[-1] < every / 2 + 1:
            shown.pop()
        shown.append(last)
    return format_html_join(
        "",
        '<text x="{}" y="{}" text-anchor="middle" fill="' + MUTED + '">{}</text>',
        ((num(xs[i]), num(y), labels[i]) for i in shown),
    )


@dataclass(frozen=True)
class Plot:
    """Where the marks go: from ``left`` to ``right``, from ``top_pad`` down to ``bottom``."""

    left: float
    right: float
    top_pad: float
    bottom: float


def time_axis(plot: Plot, *, height: float, xs, x_labels, x_label: str) -> list:
    """The x axis of the day-by-day charts: its line, its tick labels and its title."""
    return [
        x_axis_line(left=plot.left, right=plot.right, y=plot.bottom),
        spaced_x_labels(x_labels, xs, y=plot.bottom + 18),
        axis_title(x_label, x=(plot.left + plot.right) / 2, y=height - 6),
    ]


def x_axis_line(*, left: float, right: float, y: float) -> SafeString:
    """The x axis itself: a line under the plot."""
    return format_html(
        '<line class="axis" x1="{l}" x2="{r}" y1="{b}" y2="{b}" stroke="{}"/>',
        MUTED,
        l=num(left),
        r=num(right),
        b=num(y),
    )


def axis_title(text: str, *, x: float, y: float) -> SafeString:
    """What the x axis measures, centred under it at (``x``, ``y``)."""
    return format_html(
        '<text class="axis-label" x="{}" y="{}" text-anchor="middle" fill="{}">{}</text>',
        num(x),
        num(y),
        MUTED,
        text,
    )


def marker_line(
    *, kind: str, x: float, y1: float, y2: float, colour: str, width: str, dash: str, title: str
) -> SafeString:
    """A dashed vertical line across the plot at ``x`` (a gate, a reference value), of
    class ``kind``, named by ``title`` on hover."""
    return format_html(
        '<line class="{}" x1="{x}" x2="{x}" y1="{}" y2="{}" stroke="{}" stroke-width="{}" '
        'stroke-dasharray="{}"><title>{}</title></line>',
        kind,
        num(y1),
        num(y2),
        colour,
        width,
        dash,
        title,
        x=num(x),
    )


def x_grid(
    values: Sequence[float],
    x_of: Callable[[float], float],
    *,
    bottom: float,
    fmt: Callable[[float], str],
    top: float | None = None,
) -> SafeString:
    """A label under the plot at each value of the x axis; given ``top``, each with a
    vertical grid line from ``top`` down to ``bottom``."""
    parts = []
    for v in values:
        x = num(x_of(v))
        if top is not None:
            parts.append(
                format_html(
                    '<line x1="{x}" x2="{x}" y1="{}" y2="{}" stroke="{}"/>',
                    num(top),
                    num(bottom),
                    GRID,
                    x=x,
                )
            )
        parts.append(
            format_html(
                '<text x="{}" y="{}" text-anchor="middle" fill="{}">{}</text>',
                x,
                num(bottom + 16),
                MUTED,
                fmt(v),
            )
        )
    return joined(parts)


def row_label(label: str, *, x: float, y: float) -> SafeString:
    """A row's name right-aligned at ``x``, shortened, the whole name on hover."""
    return format_html(
        '<text x="{}" y="{}" dy="4" text-anchor="end" fill="{}">{}<title>{}</title></text>',
        num(x),
        num(y),
        INK,
        short(label),
        label,
    )
