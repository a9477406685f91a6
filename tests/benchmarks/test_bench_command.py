"""``manage.py bench``: calibrated on either side of each measurement, figures normalised
to the reference machine, results streamed as JSON Lines, ``--profile``.

The benchmarks here are small stand-ins registered for the test, and the calibration is a
stand-in that counts its calls: what is checked is the method, never a time."""

from __future__ import annotations

import gc
import inspect
import json
from collections.abc import Callable
from contextlib import contextmanager
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.template.base import Template
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from benchmarks import BENCHMARKS, benchmark, measure, seeds
from kgreview.agents.management.commands import bench as command
from kgreview.graph.models import Concept

EVENTS: list[str] = []


def _tiny(*, scale: int = 1) -> dict:
    Concept.objects.create(name=f"Seeded before the calibration {len(EVENTS)}")
    EVENTS.append("seeded")
    measure.measurement_starts()
    EVENTS.append("measured")
    return {
        "benchmark": "tiny",
        "decision": {"p50_ms": 10.0, "p95_ms": 20.0, "samples": 30},
        "p95_ms_by_filter": {"kind=add_edge": 40.0},
        "setup_s": 2.0,
        "sources_per_second": 30.0,
        "max_queries": 15,
        "slowest": [{"action": "accept", "painted_ms": 50.0}],
        "budget": {"decision_p95_ms": 100},
        "within_budget": True,
    }


def _broken(**_: object) -> dict:
    measure.measurement_starts()
    raise RuntimeError("the machine went away")


def _requests(**_: object) -> dict:
    """A reviewer's card and queue page through the test client: SQL, templates and
    middleware all take part."""
    from tests import factories

    n = Concept.objects.count()
    reviewer = factories.user(role="reviewer")
    factories.edge_proposal(factories.concept(f"Embeddings {n}"), factories.concept(f"Search {n}"))
    client = Client()
    client.force_login(reviewer)
    client.get(reverse("review:focus"))  # warm, as a running server is
    measure.measurement_starts()
    with CaptureQueriesContext(connection) as queries:
        for _turn in range(2):
            assert client.get(reverse("review:focus")).status_code == 200
    return {"benchmark": "requests", "queries_seen": len(queries.captured_queries)}


def _garbage(**_: object) -> dict:
    """A measurement during which the cyclic collector runs once, in full."""
    measure.measurement_starts()
    frozen = gc.get_freeze_count()
    gc.collect()
    return {"benchmark": "garbage", "frozen_at_the_start": frozen}


FAKES: dict[str, Callable[..., dict]] = {
    "tiny": _tiny,
    "broken": _broken,
    "requests": _requests,
    "garbage": _garbage,
}


@pytest.fixture
def fakes(monkeypatch):
    """The stand-in benchmarks, a scratch database that is the test's own, and a
    calibration that says how often it was taken (python 600, 1,200, 1,800 ms, ...)."""
    EVENTS.clear()
    for name in FAKES:
        monkeypatch.setitem(BENCHMARKS, name, f"fake:{name}")
    real = command.benchmark
    monkeypatch.setattr(command, "benchmark", lambda name: FAKES.get(name) or real(name))

    @contextmanager
    def scratch(*, keep=False):
        seeds.reset(active=True)
        try:
            yield "test"
        finally:
            seeds.reset(active=False)

    monkeypatch.setattr(command, "scratch_database", scratch)
    taken: list[int] = []

    def calibration():
        taken.append(len(taken) + 1)
        EVENTS.append("calibrated")
        return {
            "python_ms": 600.0 * len(taken),
            "database_ms": 200.0 * len(taken),
            "database": connection.vendor,
        }

    monkeypatch.setattr(measure, "calibration", calibration)
    yield taken
    gc.unfreeze()  # what a measurement froze: the test process goes on collecting it


def _run(*args: str) -> tuple[list[dict], str]:
    out, err = StringIO(), StringIO()
    call_command("bench", *args, "--json", stdout=out, stderr=err)
    return [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()


@pytest.mark.django_db
def test_a_bench_is_calibrated_after_its_seeding_and_again_after_its_measurement(fakes):
    """The "before" calibration comes after the bench seeded its data, the "after" one
    as it returns; both are in the result, and the figures are their mean."""
    (result,), _ = _run("tiny")
    assert EVENTS == ["seeded", "calibrated", "measured", "calibrated"]
    figures = result["calibration"]
    assert figures["before"] == {"python_ms": 600.0, "database_ms": 200.0}
    assert figures["after"] == {"python_ms": 1200.0, "database_ms": 400.0}
    assert (figures["python_ms"], figures["database_ms"]) == (900.0, 300.0)
    assert figures["database"] == connection.vendor


@pytest.mark.django_db
def test_each_bench_of_a_run_has_its_own_calibrations(fakes):
    """Nothing is cached across benches: the second bench's calibrations are its own."""
    (first, second), _ = _run("tiny", "tiny")
    assert len(fakes) == 4
    assert first["calibration"]["before"]["python_ms"] == 600.0
    assert second["calibration"]["before"]["python_ms"] == 1800.0
    assert second["calibration"]["after"]["python_ms"] == 2400.0


@pytest.mark.django_db
def test_normalised_figures_follow_the_documented_rule(fakes):
    """Times × the geometric mean of the two factors, rates ÷ it; counts, budgets and
    the calibration are left out; the raw figures stay as they were."""
    (result,), _ = _run("tiny")
    mean = result["calibration"]
    python = measure.REFERENCE["python_ms"] / mean["python_ms"]
    reference_db = measure.REFERENCE["database_ms"][connection.vendor]
    database = reference_db / mean["database_ms"]
    factor = (python * database) ** 0.5
    assert result["calibration"]["factor"]["combined"] == pytest.approx(factor, rel=1e-3)
    normalised = result["normalised"]
    assert normalised["decision"] == {
        "p50_ms": pytest.approx(10.0 * factor, rel=1e-3),
        "p95_ms": pytest.approx(20.0 * factor, rel=1e-3),
    }
    assert normalised["p95_ms_by_filter"]["kind=add_edge"] == pytest.approx(40 * factor, rel=1e-3)
    assert normalised["setup_s"] == pytest.approx(2.0 * factor, rel=1e-3)
    assert normalised["sources_per_second"] == pytest.approx(30.0 / factor, rel=1e-3)
    assert normalised["slowest"] == [{"painted_ms": pytest.approx(50.0 * factor, rel=1e-3)}]
    assert not {"budget", "max_queries", "within_budget", "benchmark"} & set(normalised)
    assert result["decision"]["p95_ms"] == 20.0


def test_normalising_leaves_counts_beside_times_and_inputs_alone():
    """``samples`` and query counts inside a figure's block, and the keys bench's reading
    pause (an input), are not times."""
    result = {
        "ask": {"p95_ms": 10.0, "samples": 60, "queries": 4, "answered": 50},
        "pause_ms": 300,
        "budgets": {"set_p95_ms": 50},
        "within_budget": True,
    }
    assert measure.normalised(result, 0.5) == {"ask": {"p95_ms": 5.0}}


def test_factors_use_the_python_figure_alone_where_no_database_reference_exists():
    """An engine the reference was not measured on: the Python factor alone."""
    factors = measure.factors({"python_ms": 1200.0, "database_ms": 50.0}, "mysql")
    assert factors == {"python": 0.5, "database": None, "combined": 0.5}


@pytest.mark.django_db
def test_json_prints_each_bench_as_it_finishes_and_keeps_it_when_a_later_one_fails(fakes):
    """JSON Lines: one document a line, written before the next bench starts, so an
    interrupted run keeps what finished."""
    out = StringIO()
    with pytest.raises(RuntimeError, match="went away"):
        call_command("bench", "tiny", "broken", "--json", stdout=out, stderr=StringIO())
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0])["benchmark"] == "tiny"


@pytest.mark.django_db
def test_every_option_is_checked_before_the_first_bench_runs(fakes):
    """A bench that refuses ``--scale`` is named before an hour of the others has run."""
    with pytest.raises(CommandError, match="measures fixed documents"):
        call_command("bench", "tiny", "render", "--scale", "5", stdout=StringIO())
    assert EVENTS == []


@pytest.mark.django_db
def test_without_calibration_a_result_has_neither_calibration_nor_normalised_figures(fakes):
    """``--no-calibration`` (a memory figure in a fresh process) takes none."""
    out = StringIO()
    call_command("bench", "tiny", "--json", "--no-calibration", stdout=out)
    (result,) = [json.loads(line) for line in out.getvalue().splitlines()]
    assert fakes == []
    assert "calibration" not in result and "normalised" not in result


@pytest.mark.django_db
def test_profile_splits_the_measured_time_into_sql_templates_middleware_and_python(fakes):
    """Two card requests under ``--profile``: every phase has its share, the statements
    counted are the ones Django ran, and the table is on stderr."""
    (result,), err = _run("requests", "--profile")
    profile = result["profile"]
    phases = profile["phases"]
    assert set(phases) == {"sql", "render", "middleware", "gc", "python"}
    assert all(phases[p]["s"] > 0 for p in phases if p != "gc")
    assert sum(p["s"] for p in phases.values()) == pytest.approx(profile["measured_s"], rel=0.01)
    # The SQL counted is every statement the requests ran (savepoints included).
    assert profile["queries"] == result["queries_seen"]
    assert "normalised" in result and "profile" not in result["normalised"]
    assert "requests:" in err and "templates" in err and "middleware" in err


@pytest.mark.django_db
def test_a_measurement_starts_with_the_seeded_heap_frozen_and_profiles_the_collector(fakes):
    """What seeding left is out of the collector's way when the timing starts (as a
    server's application is, ``kgreview.core.heap``), and a collection during the
    measurement is its own phase, counted by generation."""
    gc.unfreeze()
    (result,), err = _run("garbage", "--profile")
    assert result["frozen_at_the_start"] > 10_000  # Django, the app, the test session
    profile = result["profile"]
    assert profile["phases"]["gc"]["s"] > 0
    assert profile["collections_by_generation"].get("2", 0) >= 1
    assert "collector" in err
    # The profile's callback went with it.
    assert not any(
        isinstance(getattr(cb, "__self__", None), measure.Profiler) for cb in gc.callbacks
    )


@pytest.mark.django_db
def test_without_profile_nothing_is_patched_and_after_it_everything_is_put_back(fakes):
    """The profile costs nothing when not asked for, and leaves nothing behind."""
    from django.core.handlers.base import BaseHandler
    from template_partials.templatetags.partials import TemplateProxy

    def patched() -> tuple:
        return (
            Template.__dict__["render"],
            TemplateProxy.__dict__["render"],
            BaseHandler.__dict__["get_response"],
        )

    originals = patched()
    patched_during = []

    def peek(**kwargs):
        result = _requests(**kwargs)
        # A partial (what htmx answers are) renders through its proxy: patched as well.
        patched_during.append(all(a is not b for a, b in zip(patched(), originals, strict=True)))
        return result

    FAKES["peek"] = peek
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setitem(BENCHMARKS, "peek", "fake:peek")
            (plain,), _ = _run("peek")
            _run("peek", "--profile")
    finally:
        del FAKES["peek"]
    assert patched_during == [False, True]
    assert "profile" not in plain
    assert patched() == originals


def test_every_benchmark_marks_where_its_measurement_starts():
    """Each registered benchmark calls ``measurement_starts()`` after seeding, so its
    "before" calibration is taken next to what it measures."""
    missing = [
        name
        for name in BENCHMARKS
        if name not in FAKES and "measurement_starts()" not in inspect.getsource(benchmark(name))
    ]
    assert missing == []


def test_outside_the_command_marking_the_measurement_does_nothing(monkeypatch):
    """A test calling a bench function directly takes no calibration."""
    monkeypatch.setattr(measure, "calibration", lambda: pytest.fail("calibrated"))
    measure.measurement_starts()


def test_a_cpu_quotas_throttling_is_read_from_cgroup_v1_and_v2_counters():
    """What a CPU quota did during a measurement goes beside the calibration: periods,
    how many throttled and the wait, from either cgroup version's cpu.stat."""
    from benchmarks.measure import parse_cpu_stat, throttling

    v1 = parse_cpu_stat("nr_periods 10\nnr_throttled 4\nthrottled_time 250000000\n")
    v2 = parse_cpu_stat("usage_usec 9\nnr_periods 30\nnr_throttled 9\nthrottled_usec 400000\n")
    assert v1 == {"periods": 10, "throttled": 4, "throttled_ms": 250.0}
    assert v2 == {"periods": 30, "throttled": 9, "throttled_ms": 400.0}
    assert throttling(v1, v2) == {"periods": 20, "throttled": 5, "throttled_ms": 150.0}
    assert parse_cpu_stat("usage_usec 9\n") is None
    assert parse_cpu_stat("nr_periods many\n") is None
    # No quota: no periods counted, nothing said.
    assert throttling(v1, v1) is None
    assert throttling(None, v1) is None
