"""The SVG charts: well-formed XML, accessible names, one mark per datum with its
tooltip, geometry that follows the numbers, and hostile labels kept as text."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from kgreview.insights.charts.calibration import Bin, reliability_diagram
from kgreview.insights.charts.daily import Series, day_chart
from kgreview.insights.charts.rates import BarRow, GateRow, gate_chart, interval_bars
from kgreview.insights.charts.svg import LABEL_LIMIT, nice_max, pct

NS = {"svg": "http://www.w3.org/2000/svg"}
HOSTILE = "<script>alert('x')</script>&\"<img src=x onerror=alert(1)>"


def parse(svg) -> ET.Element:
    return ET.fromstring(str(svg))


def marks(root: ET.Element) -> list[ET.Element]:
    return [e for e in root.iter() if "mark" in e.get("class", "").split()]


def tip(element: ET.Element) -> str:
    return element.find("svg:title", NS).text


def texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{{{NS['svg']}}}text")]


def assert_accessible(root: ET.Element, chart_id: str, title: str) -> None:
    assert root.tag == f"{{{NS['svg']}}}svg"
    assert root.get("role") == "img"
    assert root.get("id") == chart_id
    assert root.get("aria-label") == title
    assert root.find("svg:title", NS).text == title
    assert root.get("aria-describedby") == f"{chart_id}-desc"
    assert root.find("svg:desc", NS).get("id") == f"{chart_id}-desc"
    assert root.find(".//svg:g[@class='legend']", NS) is not None


def line(labels, *series, **kw):
    return day_chart(
        style="lines",
        chart_id="c-line",
        title="Open proposals",
        desc="Open per day.",
        x_labels=labels,
        series=list(series),
        x_label="Day",
        y_label="Open",
        **kw,
    )


def test_line_chart_has_a_point_with_a_tooltip_for_every_value():
    """Two series over five days: ten circles, each titled with its value."""
    days = ["Mar 1", "Mar 2", "Mar 3", "Mar 4", "Mar 5"]
    root = parse(
        line(
            days,
            Series("Pending", [1, 4, 2, 0, 3], "#000"),
            Series("Held", [0, 1, 1, 2, 5], "#111"),
        )
    )
    assert_accessible(root, "c-line", "Open proposals")
    points = marks(root)
    assert len(points) == 10
    assert [tip(p) for p in points[:5]] == [
        "Pending, Mar 1: 1",
        "Pending, Mar 2: 4",
        "Pending, Mar 3: 2",
        "Pending, Mar 4: 0",
        "Pending, Mar 5: 3",
    ]
    assert len(root.findall(".//svg:polyline", NS)) == 2
    assert {"Pending", "Held", "Day", "Open"} <= set(texts(root))


def test_line_chart_places_points_by_value_on_a_nice_scale():
    """The axis tops out at 5 for a maximum of 5; a value of 0 sits on the x axis and
    the maximum at the top of the plot."""
    root = parse(line(["a", "b"], Series("S", [0, 5], "#000")))
    low, high = marks(root)
    assert float(low.get("cy")) > float(high.get("cy"))
    ticks = [t for t in texts(root) if t.replace(".", "").isdigit()]
    assert ticks[0] == "0" and ticks[-1] == "5"
    axis = root.find(".//svg:line[@class='axis']", NS)
    assert float(low.get("cy")) == pytest.approx(float(axis.get("y1")))


def test_long_x_axes_show_a_readable_subset_of_labels_and_the_last_one():
    """Ninety days label about ten of them, always including today."""
    labels = [f"d{i}" for i in range(90)]
    root = parse(line(labels, Series("S", [1] * 90, "#000")))
    shown = [t for t in texts(root) if t.startswith("d")]
    assert 8 <= len(shown) <= 12
    assert shown[0] == "d0" and shown[-1] == "d89"
    assert len(marks(root)) == 90


def test_stacked_bars_draw_one_segment_per_non_zero_value_stacked_in_order():
    """Zero values draw nothing; segments of one bar touch and sum to its height."""
    svg = day_chart(
        style="stacked_bars",
        chart_id="c-bars",
        title="Decisions",
        desc="Per day.",
        x_labels=["Mon", "Tue", "Wed"],
        series=[
            Series("alice", [2, 0, 1], "#000", ["a-mon", "a-tue", "a-wed"]),
            Series("bob", [2, 3, 0], "#111", ["b-mon", "b-tue", "b-wed"]),
        ],
        x_label="Day",
        y_label="Decisions",
    )
    root = parse(svg)
    assert_accessible(root, "c-bars", "Decisions")
    segments = marks(root)
    assert [tip(s) for s in segments] == ["a-mon", "a-wed", "b-mon", "b-tue"]
    a_mon, _, b_mon, b_tue = segments
    assert float(b_mon.get("y")) + float(b_mon.get("height")) == pytest.approx(
        float(a_mon.get("y"))
    )
    assert float(a_mon.get("height")) == pytest.approx(float(b_mon.get("height")))
    assert float(b_tue.get("height")) == pytest.approx(1.5 * float(a_mon.get("height")), abs=0.1)


def test_interval_bars_draw_bars_whiskers_and_counts_and_pale_bars_for_few_decisions():
    """A bar per row with a value, a whisker per interval, n written out."""
    rows = [
        BarRow("prerequisite", 0.5, 0.2366, 0.7634, 10, "prerequisite: 5 of 10"),
        BarRow("contrasts_with", 2 / 3, 0.2077, 0.9385, 3, "contrasts_with: 2 of 3"),
        BarRow("related", None, None, None, 0, ""),
    ]
    root = parse(
        interval_bars(
            chart_id="c-rate",
            title="Acceptance",
            desc="By relation.",
            rows=rows,
            x_label="Share accepted",
            legend_items=[("Share accepted", "#000", "box")],
        )
    )
    assert_accessible(root, "c-rate", "Acceptance")
    bars = marks(root)
    assert [tip(b) for b in bars] == ["prerequisite: 5 of 10", "contrasts_with: 2 of 3"]
    assert bars[0].get("class") == "mark" and bars[1].get("class") == "mark few"
    whiskers = root.findall(".//svg:g[@class='whisker']", NS)
    assert len(whiskers) == 2
    assert float(bars[1].get("width")) == pytest.approx(
        float(bars[0].get("width")) * 4 / 3, abs=0.1
    )
    words = texts(root)
    assert "50% · n=10" in words and "67% · n=3" in words and "no decisions · n=0" in words


def test_reliability_diagram_has_a_bar_per_bin_with_decisions_and_counts_under_all():
    """Bars only where n > 0, heights by share accepted; the diagonal and the gate."""
    bins = [Bin(i / 10, (i + 1) / 10, 0, None, None) for i in range(10)]
    bins[9] = Bin(0.9, 1.0, 4, 0.5, 0.93)
    bins[6] = Bin(0.6, 0.7, 20, 1.0, 0.64)
    root = parse(
        reliability_diagram(
            chart_id="c-cal", title="Calibration", desc="Bins.", bins=bins, gate=0.6
        )
    )
    assert_accessible(root, "c-cal", "Calibration")
    bars = marks(root)
    assert [tip(b) for b in bars] == [
        "Confidence 0.6–0.7: 20 decided, 100% accepted, mean confidence 0.64",
        "Confidence 0.9–1.0: 4 decided, 50% accepted, mean confidence 0.93",
    ]
    assert float(bars[0].get("height")) == pytest.approx(2 * float(bars[1].get("height")), abs=0.1)
    counts = [t.text for t in root.iter(f"{{{NS['svg']}}}text") if t.get("class") == "bin-n"]
    assert counts == ["0", "0", "0", "0", "0", "0", "20", "0", "0", "4"]
    assert root.find(".//svg:line[@class='diagonal']", NS) is not None
    assert root.get("viewBox") == "0 0 520 440"
    gaps = root.findall(".//svg:rect[@class='gap']", NS)
    assert [tip(g) for g in gaps] == [
        "Claimed 0.64 on average, 100% accepted: 36 points under-confident",
        "Claimed 0.93 on average, 50% accepted: 43 points over-confident",
    ]
    assert tip(root.find(".//svg:line[@class='gate']", NS)) == "Configured gate 0.6"


def test_gate_chart_marks_reachable_gates_and_writes_out_the_unreachable():
    """A dot per reachable gate, at its confidence; "not reachable" in words."""
    root = parse(
        gate_chart(
            chart_id="c-gate",
            title="Gate",
            desc="Gates.",
            rows=[
                GateRow("prerequisite", 0.81, "tip-p", "0.81: 50% would pass"),
                GateRow("contrasts_with", None, "tip-c", "not reachable"),
                GateRow("builds_on", 0.2, "tip-b", "0.2: 100% would pass"),
            ],
            gate=0.6,
        )
    )
    assert_accessible(root, "c-gate", "Gate")
    dots = marks(root)
    assert [tip(d) for d in dots] == ["tip-p", "tip-b"]
    assert float(dots[0].get("cx")) > float(dots[1].get("cx"))
    unreachable = root.find(".//svg:text[@class='unreachable']", NS)
    assert unreachable.text == "not reachable"
    assert tip(unreachable) == "tip-c"


def test_hostile_labels_stay_text_in_every_chart():
    """Markup in labels, series names and tooltips is escaped: it parses back as the
    same characters and creates no element."""
    svgs = [
        line(["x", HOSTILE], Series(HOSTILE, [1, 2], "#000", [HOSTILE, HOSTILE])),
        day_chart(
            style="stacked_bars",
            chart_id="h",
            title=HOSTILE,
            desc=HOSTILE,
            x_labels=[HOSTILE],
            series=[Series(HOSTILE, [1], "#000", [HOSTILE])],
            x_label=HOSTILE,
            y_label=HOSTILE,
        ),
        interval_bars(
            chart_id="h",
            title=HOSTILE,
            desc=HOSTILE,
            rows=[BarRow(HOSTILE, 0.5, 0.1, 0.9, 3, HOSTILE)],
            x_label=HOSTILE,
        ),
        reliability_diagram(
            chart_id="h", title=HOSTILE, desc=HOSTILE, bins=[Bin(0.0, 0.1, 1, 1.0, 0.05)]
        ),
        gate_chart(
            chart_id="h",
            title=HOSTILE,
            desc=HOSTILE,
            rows=[GateRow(HOSTILE, None, HOSTILE, HOSTILE), GateRow(HOSTILE, 0.5, HOSTILE, "x")],
            gate=0.6,
        ),
    ]
    for svg in svgs:
        assert "<script" not in str(svg) and "<img" not in str(svg)
        root = parse(svg)
        tags = {e.tag.split("}")[-1] for e in root.iter()}
        assert tags <= {"svg", "title", "desc", "g", "line", "polyline", "circle", "rect", "text"}
        strings = {e.text for e in root.iter() if e.text} | {root.get("aria-label")}
        assert HOSTILE in strings


def test_long_labels_are_shortened_on_the_chart_and_whole_in_their_tooltip():
    """A 200-character model name fits the label column; hovering shows all of it."""
    name = "provider · " + "m" * 200
    root = parse(
        interval_bars(
            chart_id="c", title="t", desc="d", rows=[BarRow(name, 0.5, n=20)], x_label="x"
        )
    )
    label = next(
        t for t in root.iter(f"{{{NS['svg']}}}text") if t.find("svg:title", NS) is not None
    )
    assert label.text == name[: LABEL_LIMIT - 1] + "…"
    assert tip(label) == name


@pytest.mark.parametrize(
    "value,expected",
    [(0, 1), (0.3, 0.5), (1, 1), (3, 5), (7, 10), (12, 20), (23, 25), (240, 250), (1001, 2000)],
)
def test_axes_end_at_a_round_number_at_or_above_the_largest_value(value, expected):
    """1, 2, 2.5 or 5 times a power of ten."""
    assert nice_max(value) == pytest.approx(expected)


def test_percentages_and_missing_values_are_written_in_words():
    """Shares print as whole percents by default; a missing share is a dash."""
    assert pct(0.8) == "80%"
    assert pct(2 / 3, 1) == "66.7%"
    assert pct(None) == "–"
