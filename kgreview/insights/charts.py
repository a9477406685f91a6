"""Charts as inline SVG, drawn on the server from plain numbers. No JavaScript.

Every chart is an ``<svg role="img">`` with a ``<title>``, a ``<desc>`` and an
``aria-label``, axis ticks and labels, a legend, and a ``<title>`` tooltip on each mark
(the elements with class ``mark``). Text comes from the data (relation keys, usernames,
model names), so all of it goes through ``format_html``, which escapes it.
"""

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


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float]
    colour: str
    tooltips: Sequence[str] | None = None


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
class Bin:
    low: float
    high: float
    n: int
    share: float | None
    mean_confidence: float | None


@dataclass(frozen=True)
class GateRow:
    label: str
    threshold: float | None
    tooltip: str
    note: str


def _f(x: float) -> str:
    return f"{x:.1f}"


def pct(x: float | None, digits: int = 0) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}%"


LABEL_LIMIT = 28


def short(label: str, limit: int = LABEL_LIMIT) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _label_width(labels) -> float:
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


def _tick_label(v: float) -> str:
    return f"{v:g}" if v == int(v) or v >= 10 else f"{v:.2g}"


def _svg(
    chart_id: str, title: str, desc: str, width: int, height: int, body: SafeString
) -> SafeString:
    return format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" id="{id}" class="chart-svg" '
        'viewBox="0 0 {w} {h}" role="img" aria-label="{t}" aria-describedby="{id}-desc" '
        'font-size="12" font-family="system-ui, sans-serif">'
        '<title id="{id}-title">{t}</title><desc id="{id}-desc">{d}</desc>{body}</svg>',
        id=chart_id,
        w=width,
        h=height,
        t=title,
        d=desc,
        body=body,
    )


def _join(parts: Sequence[SafeString]) -> SafeString:
    return mark_safe("".join(parts))  # every part was built by format_html


def legend(items: Sequence[tuple[str, str, str]], *, x: float, y: float) -> SafeString:
    """Swatches left to right: (name, colour, shape), shape "box", "dot", "line" or "dash"."""
    parts = []
    for name, colour, shape in items:
        if shape == "dot":
            mark = format_html(
                '<circle cx="{}" cy="{}" r="5" fill="{}"/>', _f(x + 6), _f(y - 4), colour
            )
        elif shape == "box":
            mark = format_html(
                '<rect x="{}" y="{}" width="12" height="12" rx="2" fill="{}"/>',
                _f(x),
                _f(y - 10),
                colour,
            )
        else:
            mark = format_html(
                '<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="{}" stroke-width="2.5"{}/>',
                _f(x),
                _f(x + 16),
                _f(y - 4),
                _f(y - 4),
                colour,
                mark_safe(' stroke-dasharray="4 3"') if shape == "dash" else "",
            )
        parts.append(
            format_html(
                '<g class="legend-item">{}<text x="{}" y="{}" fill="{}">{}</text></g>',
                mark,
                _f(x + 20),
                _f(y),
                INK,
                name,
            )
        )
        x += 34 + CHAR * len(name)
    return format_html('<g class="legend">{}</g>', _join(parts))


def _y_axis(
    *, top: float, left: float, right: float, y0: float, y1: float, fmt: Callable, label: str
) -> SafeString:
    parts = []
    for v in ticks(top):
        y = y0 - (y0 - y1) * (v / top)
        parts.append(
            format_html(
                '<line x1="{}" x2="{}" y1="{y}" y2="{y}" stroke="{}"/>'
                '<text x="{}" y="{y}" dy="4" text-anchor="end" fill="{}">{}</text>',
                _f(left),
                _f(right),
                GRID,
                _f(left - 6),
                MUTED,
                fmt(v),
                y=_f(y),
            )
        )
    parts.append(
        format_html(
            '<text class="axis-label" transform="translate({} {}) rotate(-90)" '
            'text-anchor="middle" fill="{}">{}</text>',
            _f(14),
            _f((y0 + y1) / 2),
            MUTED,
            label,
        )
    )
    return _join(parts)


def _x_labels(
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
        ((_f(xs[i]), _f(y), labels[i]) for i in shown),
    )


def _time_axis(*, left, right, bottom, height, xs, x_labels, x_label) -> list:
    """The x axis of the day-by-day charts: its line, its tick labels and its title."""
    return [
        format_html(
            '<line class="axis" x1="{l}" x2="{r}" y1="{b}" y2="{b}" stroke="{}"/>',
            MUTED,
            l=_f(left),
            r=_f(right),
            b=_f(bottom),
        ),
        _x_labels(x_labels, xs, y=bottom + 18),
        format_html(
            '<text class="axis-label" x="{}" y="{}" text-anchor="middle" fill="{}">{}</text>',
            _f((left + right) / 2),
            _f(height - 6),
            MUTED,
            x_label,
        ),
    ]


def _x_grid(
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
        x = _f(x_of(v))
        if top is not None:
            parts.append(
                format_html(
                    '<line x1="{x}" x2="{x}" y1="{}" y2="{}" stroke="{}"/>',
                    _f(top),
                    _f(bottom),
                    GRID,
                    x=x,
                )
            )
        parts.append(
            format_html(
                '<text x="{}" y="{}" text-anchor="middle" fill="{}">{}</text>',
                x,
                _f(bottom + 16),
                MUTED,
                fmt(v),
            )
        )
    return _join(parts)


def _row_label(label: str, *, x: float, y: float) -> SafeString:
    """A row's name right-aligned at ``x``, shortened, the whole name on hover."""
    return format_html(
        '<text x="{}" y="{}" dy="4" text-anchor="end" fill="{}">{}<title>{}</title></text>',
        _f(x),
        _f(y),
        INK,
        short(label),
        label,
    )


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
        _y_axis(
            top=top, left=left, right=right, y0=bottom, y1=top_pad, fmt=_tick_label, label=y_label
        )
    ]
    radius = 3 if count <= 31 else 2
    for s in series:
        points = " ".join(f"{_f(x)},{_f(y_of(v))}" for x, v in zip(xs, s.values, strict=True))
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
                    (_f(x), _f(y_of(v)), radius, s.colour, tip)
                    for x, v, tip in zip(xs, s.values, tips, strict=True)
                ),
            )
        )
    parts += _time_axis(
        left=left,
        right=right,
        bottom=bottom,
        height=height,
        xs=xs,
        x_labels=x_labels,
        x_label=x_label,
    )
    parts.append(legend([(s.name, s.colour, "line") for s in series], x=left, y=18))
    return _svg(chart_id, title, desc, width, height, _join(parts))


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
        _y_axis(
            top=top, left=left, right=right, y0=bottom, y1=top_pad, fmt=_tick_label, label=y_label
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
                    _f(xs[i] - bar / 2),
                    _f(y),
                    _f(bar),
                    _f(v * scale),
                    s.colour,
                    tips[i],
                )
            )
            base[i] += v
        parts.append(format_html('<g class="series">{}</g>', _join(marks)))
    parts += _time_axis(
        left=left,
        right=right,
        bottom=bottom,
        height=height,
        xs=xs,
        x_labels=x_labels,
        x_label=x_label,
    )
    parts.append(legend([(s.name, s.colour, "box") for s in series], x=left, y=18))
    return _svg(chart_id, title, desc, width, height, _join(parts))


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
    row_h = 26
    label_w = _label_width(r.label for r in rows)
    left, right = label_w + 12, width - 120
    top_pad = 40
    bottom = top_pad + row_h * len(rows)
    height = bottom + 46

    def x_of(v: float) -> float:
        return left + (right - left) * min(max(v, 0.0), maximum) / maximum

    parts = [
        _x_grid(
            ticks(maximum, 4 if maximum == 1.0 else 5),
            x_of,
            top=top_pad - 4,
            bottom=bottom,
            fmt=fmt,
        )
    ]
    for i, row in enumerate(rows):
        y = top_pad + i * row_h
        mid = y + row_h / 2
        parts.append(_row_label(row.label, x=label_w, y=mid))
        few = row.n is not None and row.n < FEW
        if row.value is not None:
            parts.append(
                format_html(
                    '<rect class="mark{}" x="{}" y="{}" width="{}" height="{}" rx="2" fill="{}"'
                    ' fill-opacity="{}"><title>{}</title></rect>',
                    " few" if few else "",
                    _f(left),
                    _f(y + 5),
                    _f(max(x_of(row.value) - left, 1)),
                    _f(row_h - 10),
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
                    a=_f(x1),
                    b=_f(x2),
                    m=_f(mid),
                    t=_f(mid - 5),
                    u=_f(mid + 5),
                )
            )
        value_text = "no decisions" if row.value is None else fmt(row.value)
        n_text = "" if row.n is None else f" · n={row.n}"
        parts.append(
            format_html(
                '<text x="{}" y="{}" dy="4" fill="{}">{}{}</text>',
                _f(right + 8),
                _f(mid),
                MUTED if few or row.value is None else INK,
                value_text,
                n_text,
            )
        )
    if reference is not None:
        value, name = reference
        parts.append(
            format_html(
                '<line class="reference" x1="{x}" x2="{x}" y1="{}" y2="{}" stroke="{}" '
                'stroke-width="1.5" stroke-dasharray="4 3"><title>{}</title></line>',
                _f(top_pad - 6),
                _f(bottom),
                INK,
                name,
                x=_f(x_of(value)),
            )
        )
    parts.append(
        format_html(
            '<text class="axis-label" x="{}" y="{}" text-anchor="middle" fill="{}">{}</text>',
            _f((left + right) / 2),
            _f(height - 8),
            MUTED,
            x_label,
        )
    )
    if legend_items:
        parts.append(legend(legend_items, x=left, y=18))
    return _svg(chart_id, title, desc, width, height, _join(parts))


def reliability_diagram(
    *,
    chart_id: str,
    title: str,
    desc: str,
    bins: Sequence[Bin],
    gate: float | None = None,
    width: int = 520,
    height: int = 440,
) -> SafeString:
    """Share accepted per confidence bin against the diagonal of perfect calibration.

    A ``rect.mark`` per bin that has decisions, a dot on the diagonal at the bin's mean
    confidence (what was claimed), the gap between the two shaded, and the number of
    decisions under each bin.
    """
    left, right, top_pad, bottom = 56, width - 20, 40, height - 74

    def x_of(v: float) -> float:
        return left + (right - left) * v

    def y_of(v: float) -> float:
        return bottom - (bottom - top_pad) * v

    parts = [
        _y_axis(
            top=1.0,
            left=left,
            right=right,
            y0=bottom,
            y1=top_pad,
            fmt=lambda v: pct(v),
            label="Share accepted",
        )
    ]
    parts.append(_x_grid(ticks(1.0, 10), x_of, bottom=bottom, fmt=lambda v: f"{v:.1f}"))
    parts.append(
        format_html(
            '<line class="diagonal" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" '
            'stroke-width="1.5" stroke-dasharray="5 4"><title>Perfect calibration: the '
            "share accepted equals the confidence</title></line>",
            _f(x_of(0)),
            _f(y_of(0)),
            _f(x_of(1)),
            _f(y_of(1)),
            MUTED,
        )
    )
    for b in bins:
        x1, x2 = x_of(b.low), x_of(b.high)
        parts.append(
            format_html(
                '<text class="bin-n" x="{}" y="{}" text-anchor="middle" fill="{}">{}</text>',
                _f((x1 + x2) / 2),
                _f(bottom + 34),
                INK if b.n else MUTED,
                b.n,
            )
        )
        if not b.n:
            continue
        few = b.n < FEW
        tip = (
            f"Confidence {b.low:.1f}–{b.high:.1f}: {b.n} decided, "
            f"{pct(b.share)} accepted, mean confidence {b.mean_confidence:.2f}"
        )
        # A bin where nothing was accepted still shows a sliver to point at.
        bar_h = max(y_of(0) - y_of(b.share), 2)
        parts.append(
            format_html(
                '<rect class="mark{}" x="{}" y="{}" width="{}" height="{}" fill="{}" '
                'fill-opacity="{}"><title>{}</title></rect>',
                " few" if few else "",
                _f(x1 + 2),
                _f(y_of(0) - bar_h),
                _f(x2 - x1 - 4),
                _f(bar_h),
                ACCENT,
                "0.35" if few else "0.8",
                tip,
            )
        )
        gap = b.share - b.mean_confidence
        if abs(gap) >= 0.005:
            claimed, delivered = y_of(b.mean_confidence), y_of(b.share)
            parts.append(
                format_html(
                    '<rect class="gap" x="{}" y="{}" width="{}" height="{}" fill="{}" '
                    'fill-opacity="0.16" stroke="{}" stroke-opacity="0.6" '
                    'stroke-dasharray="3 2"><title>{}</title></rect>',
                    _f(x1 + 2),
                    _f(min(claimed, delivered)),
                    _f(x2 - x1 - 4),
                    _f(abs(claimed - delivered)),
                    BAD,
                    BAD,
                    f"Claimed {b.mean_confidence:.2f} on average, {pct(b.share)} accepted: "
                    f"{abs(gap) * 100:.0f} points {'over' if gap < 0 else 'under'}-confident",
                )
            )
        parts.append(
            format_html(
                '<circle class="claim" cx="{}" cy="{}" r="3.5" fill="{}" stroke="#fff">'
                "<title>Claimed: mean confidence {}</title></circle>",
                _f(x_of(b.mean_confidence)),
                _f(y_of(b.mean_confidence)),
                INK,
                f"{b.mean_confidence:.2f}",
            )
        )
    if gate is not None:
        parts.append(
            format_html(
                '<line class="gate" x1="{x}" x2="{x}" y1="{}" y2="{}" stroke="{}" '
                'stroke-width="2" stroke-dasharray="2 3"><title>Configured gate {}</title></line>',
                _f(top_pad),
                _f(bottom),
                AMBER,
                f"{gate:g}",
                x=_f(x_of(gate)),
            )
        )
    parts.append(
        format_html(
            '<line class="axis" x1="{l}" x2="{r}" y1="{b}" y2="{b}" stroke="{}"/>',
            MUTED,
            l=_f(left),
            r=_f(right),
            b=_f(bottom),
        )
    )
    parts.append(
        format_html(
            '<text x="{}" y="{}" text-anchor="end" fill="{}">n</text>'
            '<text class="axis-label" x="{}" y="{}" text-anchor="middle" fill="{}">{}</text>',
            _f(left - 6),
            _f(bottom + 34),
            MUTED,
            _f((left + right) / 2),
            _f(height - 10),
            MUTED,
            "Confidence the agent reported (bins of 0.1); n = decided proposals per bin",
        )
    )
    items = [
        ("Accepted", ACCENT, "box"),
        ("Claimed", INK, "dot"),
        ("Gap", "#f0b4ad", "box"),
        ("Perfect calibration", MUTED, "dash"),
    ]
    if gate is not None:
        items.append((f"Gate {gate:g}", AMBER, "dash"))
    parts.append(legend(items, x=20, y=18))
    return _svg(chart_id, title, desc, width, height, _join(parts))


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
    row_h = 26
    label_w = _label_width(r.label for r in rows)
    left, right = label_w + 12, width - 170
    top_pad = 40
    bottom = top_pad + row_h * len(rows)
    height = bottom + 46

    def x_of(v: float) -> float:
        return left + (right - left) * v

    parts = [
        _x_grid(ticks(1.0, 10), x_of, top=top_pad - 4, bottom=bottom, fmt=lambda v: f"{v:.1f}")
    ]
    for i, row in enumerate(rows):
        mid = top_pad + i * row_h + row_h / 2
        parts.append(_row_label(row.label, x=label_w, y=mid))
        if row.threshold is None:
            parts.append(
                format_html(
                    '<text class="unreachable" x="{}" y="{}" dy="4" fill="{}" '
                    'font-style="italic">{}<title>{}</title></text>',
                    _f(left + 6),
                    _f(mid),
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
                _f(x_of(0)),
                OK,
                OK,
                row.tooltip,
                _f(right + 8),
                INK,
                row.note,
                x=_f(x_of(row.threshold)),
                m=_f(mid),
            )
        )
    parts.append(
        format_html(
            '<line class="gate" x1="{x}" x2="{x}" y1="{}" y2="{}" stroke="{}" stroke-width="2" '
            'stroke-dasharray="4 3"><title>Configured gate {}</title></line>',
            _f(top_pad - 6),
            _f(bottom),
            AMBER,
            f"{gate:g}",
            x=_f(x_of(gate)),
        )
    )
    parts.append(
        format_html(
            '<text class="axis-label" x="{}" y="{}" text-anchor="middle" fill="{}">{}</text>',
            _f((left + right) / 2),
            _f(height - 8),
            MUTED,
            "Confidence gate",
        )
    )
    parts.append(
        legend(
            [("Gate needed", OK, "dot"), (f"Configured gate {gate:g}", AMBER, "dash")], x=left, y=18
        )
    )
    return _svg(chart_id, title, desc, width, height, _join(parts))
