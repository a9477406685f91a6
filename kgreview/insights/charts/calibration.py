"""Calibration: the share accepted per confidence bin against the diagonal of what the
confidence claimed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import format_html
from django.utils.safestring import SafeString

from .svg import (
    ACCENT,
    AMBER,
    BAD,
    FEW,
    INK,
    MUTED,
    axis_title,
    frame,
    joined,
    legend,
    marker_line,
    num,
    pct,
    ticks,
    x_axis_line,
    x_grid,
    y_axis,
)


@dataclass(frozen=True)
class Bin:
    low: float
    high: float
    n: int
    share: float | None
    mean_confidence: float | None


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
        y_axis(
            top=1.0,
            left=left,
            right=right,
            y0=bottom,
            y1=top_pad,
            fmt=lambda v: pct(v),
            label="Share accepted",
        )
    ]
    parts.append(x_grid(ticks(1.0, 10), x_of, bottom=bottom, fmt=lambda v: f"{v:.1f}"))
    parts.append(
        format_html(
            '<line class="diagonal" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" '
            'stroke-width="1.5" stroke-dasharray="5 4"><title>Perfect calibration: the '
            "share accepted equals the confidence</title></line>",
            num(x_of(0)),
            num(y_of(0)),
            num(x_of(1)),
            num(y_of(1)),
            MUTED,
        )
    )
    for b in bins:
        x1, x2 = x_of(b.low), x_of(b.high)
        parts.append(
            format_html(
                '<text class="bin-n" x="{}" y="{}" text-anchor="middle" fill="{}">{}</text>',
                num((x1 + x2) / 2),
                num(bottom + 34),
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
                num(x1 + 2),
                num(y_of(0) - bar_h),
                num(x2 - x1 - 4),
                num(bar_h),
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
                    num(x1 + 2),
                    num(min(claimed, delivered)),
                    num(x2 - x1 - 4),
                    num(abs(claimed - delivered)),
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
                num(x_of(b.mean_confidence)),
                num(y_of(b.mean_confidence)),
                INK,
                f"{b.mean_confidence:.2f}",
            )
        )
    if gate is not None:
        parts.append(
            marker_line(
                kind="gate",
                x=x_of(gate),
                y1=top_pad,
                y2=bottom,
                colour=AMBER,
                width="2",
                dash="2 3",
                title=f"Configured gate {gate:g}",
            )
        )
    parts.append(x_axis_line(left=left, right=right, y=bottom))
    parts.append(
        format_html(
            '<text x="{}" y="{}" text-anchor="end" fill="{}">n</text>',
            num(left - 6),
            num(bottom + 34),
            MUTED,
        )
    )
    parts.append(
        axis_title(
            "Confidence the agent reported (bins of 0.1); n = decided proposals per bin",
            x=(left + right) / 2,
            y=height - 10,
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
    return frame(chart_id, title, desc, width, height, joined(parts))
