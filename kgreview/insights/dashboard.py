"""The dashboard page's content: selectors' numbers turned into charts and words."""

from __future__ import annotations

from datetime import datetime

from django.utils import dateformat, timezone

from .charts.calibration import Bin, reliability_diagram
from .charts.daily import Series, day_chart
from .charts.rates import BarRow, GateRow, interval_bars
from .charts.rates import gate_chart as draw_gate_chart
from .charts.svg import ACCENT, AMBER, FEW, INK, OK, PALETTE, nice_max, pct
from .selectors import decided
from .selectors.activity import (
    ACTIONS,
    QueueHistory,
    ReviewerActivity,
    queue_history,
    reviewer_activity,
)
from .selectors.rates import Calibration, GateNeed, Rate

TOP_REVIEWERS = 7
OTHERS = "everyone else"
ACTION_WORDS = {
    "accept": "accepted",
    "edit_accept": "edited and accepted",
    "reject": "rejected",
    "undo": "undone",
    "supersede": "superseded",
    "hold": "held",
    "release": "released",
}
# The columns of the decisions table; the rarer system actions share one.
ACTION_COLUMNS = ("accept", "edit_accept", "reject", "undo")


def window_label(days: int) -> str:
    return "the last 24 hours" if days == 1 else f"the last {days} days"


def bucket_label(start: datetime, step: str) -> str:
    local = timezone.localtime(start)
    return dateformat.format(local, "H:i" if step == "hour" else "M j")


def _breakdown(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {ACTION_WORDS[a]}" for a, n in counts.items() if n)


def queue_chart(history: QueueHistory, days: int):
    labels = [bucket_label(p.start, history.step) for p in history.points]
    last = history.points[-1]
    unit = "hour" if history.step == "hour" else "day"

    def tips(name: str, attr: str) -> list[str]:
        return [
            f"{name} at the end of {lab}: {getattr(p, attr)} "
            f"({p.created} created, {p.closed} decided that {unit})"
            for lab, p in zip(labels, history.points, strict=True)
        ]

    return day_chart(
        style="lines",
        chart_id="chart-queue",
        title=f"Open proposals over {window_label(days)}",
        desc=(
            f"Open proposals at the end of each {unit}: {last.pending} pending and "
            f"{last.held} held now; the most at once was {history.peak}."
        ),
        x_labels=labels,
        series=[
            Series(
                "Open in all",
                [p.total for p in history.points],
                INK,
                tips("Open in all", "total"),
            ),
            Series(
                "Pending",
                [p.pending for p in history.points],
                ACCENT,
                tips("Pending", "pending"),
            ),
            Series(
                "Held (below the gate)",
                [p.held for p in history.points],
                AMBER,
                tips("Held", "held"),
            ),
        ],
        x_label="Hour" if history.step == "hour" else "Day",
        y_label="Open proposals",
    )


def reviewer_series(activity: ReviewerActivity) -> list[tuple[str, list[dict]]]:
    """The busiest reviewers each with a colour of their own, the rest as one stack."""
    rows = [(r.reviewer, list(r.per_bucket)) for r in activity.rows[:TOP_REVIEWERS]]
    rest = activity.rows[TOP_REVIEWERS:]
    if rest:
        merged = [
            {a: sum(r.per_bucket[i][a] for r in rest) for a in ACTIONS}
            for i in range(len(activity.starts))
        ]
        rows.append((f"{OTHERS} ({len(rest)})", merged))
    return rows


def activity_chart(activity: ReviewerActivity, days: int):
    labels = [bucket_label(s, activity.step) for s in activity.starts]
    series = []
    for (name, per), colour in zip(reviewer_series(activity), PALETTE, strict=False):
        values = [sum(c.values()) for c in per]
        tooltips = [
            f"{name}, {lab}: {v} decision{'s' if v != 1 else ''} ({_breakdown(c)})"
            for lab, v, c in zip(labels, values, per, strict=True)
        ]
        series.append(Series(name, values, colour, tooltips))
    busiest = activity.rows[0] if activity.rows else None
    return day_chart(
        style="stacked_bars",
        chart_id="chart-reviewers",
        title=f"Decisions per reviewer over {window_label(days)}",
        desc=(
            f"{activity.total} decisions by {len(activity.rows)} reviewers"
            + (f"; the most by {busiest.reviewer} ({busiest.total})." if busiest else ".")
        ),
        x_labels=labels,
        series=series,
        x_label="Hour" if activity.step == "hour" else "Day",
        y_label="Decisions",
    )


def activity_table(activity: ReviewerActivity) -> list[dict]:
    """One row per reviewer and bucket with any decision, newest first."""
    out = []
    for i in reversed(range(len(activity.starts))):
        for row in activity.rows:
            counts = row.per_bucket[i]
            if not any(counts.values()):
                continue
            out.append(
                {
                    "when": bucket_label(activity.starts[i], activity.step),
                    "reviewer": row.reviewer,
                    "counts": [counts[a] for a in ACTION_COLUMNS],
                    "other": sum(n for a, n in counts.items() if a not in ACTION_COLUMNS),
                    "total": sum(counts.values()),
                }
            )
    return out


def _rate_rows(rates) -> list[BarRow]:
    rows = []
    for r in rates:
        low, high = r.interval
        tooltip = (
            f"{r.label}: {r.accepted} of {r.n} accepted ({pct(r.rate, 1)}"
            f"{f', {r.edited} after an edit' if r.edited else ''}); "
            f"95% interval {pct(low)}–{pct(high)}"
        )
        rows.append(BarRow(r.label, r.rate, low, high, r.n, tooltip))
    return rows


def acceptance_chart(chart_id: str, title: str, rates, overall: Rate):
    best = max(rates, key=lambda r: (r.n >= FEW, r.rate or 0), default=None)
    return interval_bars(
        chart_id=chart_id,
        title=title,
        desc=(
            f"Share of decided proposals accepted, with 95% Wilson intervals, for "
            f"{len(rates)} groups; overall {pct(overall.rate)} of {overall.n}."
            + (f" Highest: {best.label}, {pct(best.rate)} of {best.n}." if best else "")
        ),
        rows=_rate_rows(rates),
        x_label="Share accepted (edited and accepted counts as accepted)",
        colour=OK,
        reference=(overall.rate, f"Overall {pct(overall.rate)}") if overall.n else None,
        legend_items=[
            ("Share accepted", OK, "box"),
            ("95% interval", INK, "line"),
            (f"Overall {pct(overall.rate)}", INK, "dash"),
        ],
    )


def calibration_chart(calibration: Calibration, gate: float):
    ece = calibration.ece
    return reliability_diagram(
        chart_id="chart-calibration",
        title=f"Calibration: {calibration.label}",
        desc=(
            f"Share accepted per confidence bin for {calibration.n} decided proposals "
            f"({calibration.label}); expected calibration error "
            + ("not measurable yet." if ece is None else f"{ece:.3f}.")
        ),
        bins=[Bin(b.low, b.high, b.n, b.share, b.mean_confidence) for b in calibration.bins],
        gate=gate,
    )


def ece_chart(calibrations: list[Calibration]):
    measured = [c for c in calibrations if c.n]
    top = nice_max(max((c.ece for c in measured), default=0))
    rows = [
        BarRow(
            c.label,
            c.ece,
            n=c.n,
            tooltip=f"{c.label}: expected calibration error {c.ece:.3f} over {c.n} decisions",
        )
        for c in measured
    ]
    return interval_bars(
        chart_id="chart-ece",
        title="Expected calibration error by relation type",
        desc=(
            "How far, on average, the share accepted lies from the confidence claimed; "
            "0 is perfectly calibrated. "
            + "; ".join(f"{c.label} {c.ece:.3f} (n={c.n})" for c in measured)
        ),
        rows=rows,
        x_label="Expected calibration error (lower is better)",
        colour=ACCENT,
        maximum=top,
        width=560,
        fmt=lambda v: f"{v:.2f}",
        legend_items=[("Expected calibration error", ACCENT, "box")],
    )


def gate_words(need: GateNeed) -> str:
    if not need.decided:
        return "no decisions"
    if not need.reachable:
        return "not reachable"
    return f"{need.threshold:g}: {pct(need.share_passing)} would pass"


def gate_chart(gates, *, target: float, gate: float):
    rows = []
    for need in gates:
        if need.reachable:
            tooltip = (
                f"{need.label}: a gate of {need.threshold:g} keeps "
                f"{need.passing} of {need.decided} decided proposals "
                f"({pct(need.share_passing)}), {pct(need.accepted_share)} "
                "of them accepted"
            )
        else:
            tooltip = (
                f"{need.label}: no confidence gate gets {pct(target)} accepted "
                f"among {need.decided} decided proposals"
            )
        rows.append(GateRow(need.label, need.threshold, tooltip, gate_words(need)))
    reachable = [g for g in gates if g.reachable]
    return draw_gate_chart(
        chart_id="chart-gate",
        title=f"Gate needed for {pct(target)} accepted",
        desc=(
            f"The lowest confidence gate at which at least {pct(target)} of decided "
            f"proposals were accepted, per relation type; the configured gate is {gate:g}. "
            f"Reachable for {len(reachable)} of {len(gates)}."
        ),
        rows=rows,
        gate=gate,
    )


def build(*, days: int, relation: str, target: float, now: datetime | None = None) -> dict:
    """Everything the page shows, for one choice of window, relation type and target."""
    history = queue_history(days=days, now=now)
    activity = reviewer_activity(days=days, now=now)
    outcomes = decided.outcomes(target=target)
    calibration = outcomes.calibration.get(relation) or outcomes.calibration[decided.ALL]
    per_type = [outcomes.calibration[k] for k in outcomes.relations]
    context = {
        "days": days,
        "window": window_label(days),
        "history": history,
        "open_now": history.points[-1],
        "queue_rows": [(bucket_label(p.start, history.step), p) for p in reversed(history.points)],
        "activity": activity,
        "activity_rows": activity_table(activity),
        "action_columns": [ACTION_WORDS[a] for a in ACTION_COLUMNS],
        "outcomes": outcomes,
        "calibration": calibration,
        "overall_calibration": outcomes.calibration[decided.ALL],
        "per_type": per_type,
        "target": target,
        "gate": outcomes.gate,
        "queue_chart": queue_chart(history, days),
        "activity_chart": activity_chart(activity, days) if activity.rows else None,
    }
    if not outcomes.is_empty:
        overall = outcomes.overall
        ece_rows = [outcomes.calibration[decided.ALL], *per_type]
        context.update(
            acceptance=[
                (
                    acceptance_chart(
                        "chart-accept-relation",
                        "Acceptance by relation type",
                        outcomes.by_relation,
                        overall,
                    )
                    if outcomes.by_relation
                    else None,
                    outcomes.by_relation,
                    "Relation type",
                ),
                (
                    acceptance_chart(
                        "chart-accept-agent", "Acceptance by agent", outcomes.by_agent, overall
                    ),
                    outcomes.by_agent,
                    "Agent",
                ),
                (
                    acceptance_chart(
                        "chart-accept-model",
                        "Acceptance by provider and model",
                        outcomes.by_model,
                        overall,
                    ),
                    outcomes.by_model,
                    "Provider and model",
                ),
            ],
            calibration_chart=calibration_chart(calibration, outcomes.gate),
            ece_chart=ece_chart(ece_rows),
            ece_rows=ece_rows,
            gate_chart=gate_chart(outcomes.gates, target=target, gate=outcomes.gate),
            gate_rows=[(g, gate_words(g)) for g in outcomes.gates],
        )
    return context
