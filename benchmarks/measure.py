"""What ``manage.py bench`` wraps round each benchmark's measurement: the machine's
calibration taken right before and right after it, the figures normalised to a reference
machine, and (with ``--profile``) where the measured time went.

A benchmark seeds its data first, then calls :func:`measurement_starts` once, just before
it times anything: the "before" calibration is taken there (after seeding, so the minutes
of ``COPY`` and ``ANALYZE`` are not what it measures) and the profile starts. The command
takes the "after" calibration as soon as the benchmark returns. Called outside the
command (a test calling a bench function directly), :func:`measurement_starts` does
nothing.

**Normalising.** :data:`REFERENCE` is the calibration of the developers' machine behind
the figures in ``docs/performance.md``. For each run the factors are

    python   = REFERENCE python_ms / mean(before python_ms, after python_ms)
    database = REFERENCE database_ms / mean(before database_ms, after database_ms)
    combined = sqrt(python × database)   (the geometric mean: neither side dominates)

and every timing figure of the result (a key ending in ``_ms``, ``_s``, ``seconds``, or
holding such figures, such as ``p95_ms_by_filter``) is multiplied by ``combined``; a rate
(a key with ``_per_`` in it: sources per second, words per CPU second) is divided by it.
So a normalised figure is what the reference machine would have measured, if the
difference between the machines is what the calibration sees. Budgets, counts, sizes
and the calibration itself are left out of the ``normalised`` block; the raw figures stay
where they were.
"""

from __future__ import annotations

import gc
import math
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from django.db import connection

from kgreview.core import heap

from .common import calibration

#: The developers' machine (docs/performance.md: the 1× column, quiet, 2026-11-26, python
#: 595–613 ms, PostgreSQL 327–478 ms; SQLite about 30–35 ms on the same machine).
REFERENCE: dict = {
    "python_ms": 600.0,
    "database_ms": {"postgresql": 400.0, "sqlite": 32.0},
    "taken": "docs/performance.md: the developers' 2-core machine, quiet, 2026-11-26",
}
RULE = (
    "normalised = raw × sqrt((reference python_ms / python_ms) × (reference database_ms / "
    "database_ms)), each measured figure the mean of the calibrations before and after the "
    "measurement; rates (_per_) are divided by the same factor"
)

_window: Window | None = None


def measurement_starts() -> None:
    """A benchmark's data is seeded and its timing starts now: take the "before"
    calibration and start the profile (once; later calls do nothing)."""
    if _window is not None:
        _window.start()


class Window:
    """One benchmark's measurement, from :func:`measurement_starts` to :meth:`stop`."""

    def __init__(self, *, calibrate: bool, profile: bool):
        self.calibrate = calibrate
        self.profiling = profile
        self.started = False
        self.stopped = False
        self.before: dict | None = None
        self.after: dict | None = None
        self.profiler: Profiler | None = None
        self.cpu_before: dict | None = None
        self.cpu_after: dict | None = None

    def start(self) -> None:
        if self.started:
            return
        self.started = True
        # What seeding left in this process is long-lived from here on, as a server
        # process's application is once loaded (``kgreview.wsgi`` settles it the same way):
        # a full collection during the measurement walks only what the measured requests
        # made, as it does in the server.
        heap.settle()
        if self.calibrate:
            self.before = _figures(calibration())
        self.cpu_before = cpu_stat()
        if self.profiling:
            self.profiler = Profiler()
            self.profiler.start()

    def stop(self) -> None:
        """The benchmark returned: stop the profile, take the "after" calibration."""
        if self.stopped:
            return
        self.stopped = True
        if self.profiler is not None:
            self.profiler.stop()
        self.cpu_after = cpu_stat()
        if self.calibrate:
            self.after = _figures(calibration())

    def calibration(self) -> dict | None:
        """Both calibrations, their mean (``python_ms``, ``database_ms``), the reference and
        the factors of :data:`RULE`; ``None`` when calibration was off."""
        taken = [c for c in (self.before, self.after) if c is not None]
        if not taken:
            return None
        vendor = connection.vendor
        mean = {
            k: round(sum(c[k] for c in taken) / len(taken), 1) for k in ("python_ms", "database_ms")
        }
        reference = {
            "python_ms": REFERENCE["python_ms"],
            "database_ms": REFERENCE["database_ms"].get(vendor),
        }
        figures = {
            **mean,
            "database": vendor,
            "before": self.before,
            "after": self.after,
            "reference": reference,
            "factor": factors(mean, vendor),
            "rule": RULE,
        }
        quota = throttling(self.cpu_before, self.cpu_after)
        if quota is not None:
            figures["cpu_quota"] = quota
        if self.before is None:
            figures["note"] = (
                "the benchmark never called measurement_starts(): no calibration before it"
            )
        return figures


def _figures(taken: dict) -> dict:
    return {"python_ms": taken["python_ms"], "database_ms": taken["database_ms"]}


def cpu_stat() -> dict | None:
    """This process's control group's CPU quota counters (Linux cgroup v1 or v2):
    ``periods`` of the quota, how many were ``throttled`` and the ``throttled_ms`` spent
    waiting; None where there is no such group (nothing to say)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            stat = Path("/sys/fs/cgroup", path.lstrip("/"), "cpu.stat")  # v2
        elif "cpu" in controllers.split(","):
            stat = Path("/sys/fs/cgroup", controllers, path.lstrip("/"), "cpu.stat")  # v1
        else:
            continue
        try:
            found = parse_cpu_stat(stat.read_text())
        except OSError:
            continue
        if found is not None:
            return found
    return None


def parse_cpu_stat(text: str) -> dict | None:
    """A ``cpu.stat`` file's quota counters (v1: ``throttled_time`` in ns; v2:
    ``throttled_usec``), or None when it has none."""
    try:
        values = {k: int(v) for k, v in (row.split() for row in text.splitlines() if row.strip())}
    except ValueError:
        return None
    if "nr_periods" not in values:
        return None
    waited = (
        values["throttled_usec"] / 1000
        if "throttled_usec" in values
        else values.get("throttled_time", 0) / 1_000_000
    )
    return {
        "periods": values["nr_periods"],
        "throttled": values.get("nr_throttled", 0),
        "throttled_ms": waited,
    }


def throttling(start: dict | None, end: dict | None) -> dict | None:
    """What a CPU quota did between two :func:`cpu_stat` readings: None when the process
    runs under no quota (no periods counted), else the periods, how many throttled and
    the time spent waiting. A host that throttled has tails the calibration cannot
    normalise (docs/performance.md, "The missing factor")."""
    if start is None or end is None:
        return None
    periods = end["periods"] - start["periods"]
    if periods <= 0:
        return None
    return {
        "periods": periods,
        "throttled": end["throttled"] - start["throttled"],
        "throttled_ms": round(end["throttled_ms"] - start["throttled_ms"], 1),
    }


def factors(mean: dict, vendor: str) -> dict:
    """The factors that turn this machine's times into the reference machine's."""
    python = REFERENCE["python_ms"] / mean["python_ms"] if mean["python_ms"] else 1.0
    reference_db = REFERENCE["database_ms"].get(vendor)
    database = reference_db / mean["database_ms"] if reference_db and mean["database_ms"] else None
    combined = math.sqrt(python * database) if database else python
    return {
        "python": round(python, 4),
        "database": round(database, 4) if database else None,
        "combined": round(combined, 4),
    }


@contextmanager
def window(*, calibrate: bool = True, profile: bool = False) -> Iterator[Window]:
    """The measurement of the benchmark run inside; :func:`measurement_starts` reaches it."""
    global _window
    current = Window(calibrate=calibrate, profile=profile)
    _window = current
    try:
        yield current
    finally:
        if current.profiler is not None and not current.stopped:
            current.profiler.stop()
        _window = None


# --- Normalising a result ---------------------------------------------------------------

#: Left out of the normalised block: what is not measured on this machine.
_NOT_FIGURES = {"calibration", "seeds", "normalised", "profile", "scale", "pause_ms"}
#: Counts that may sit beside times.
_COUNTS = {"samples", "calls", "queries", "questions", "count", "requests", "sources"}


def _kind(key: str) -> str | None:
    k = key.lower()
    if k in _NOT_FIGURES or k.startswith("budget"):
        return "skip"
    if k in _COUNTS or k.endswith(("queries", "_count")):
        return "count"
    if "_per_" in k:
        return "rate"
    if k in ("ms", "seconds") or k.endswith(("_ms", "_s", "_seconds")) or "_ms_" in k:
        return "time"
    return None


def normalised(result: dict, factor: float) -> dict:
    """Every timing figure of ``result`` (and only those), as the reference machine would
    have measured it: times × ``factor``, rates ÷ ``factor``, nested as in ``result``."""

    def walk(value, kind: str | None):
        if isinstance(value, bool):
            return None
        if isinstance(value, int | float):
            if kind == "time":
                return round(value * factor, 4)
            if kind == "rate":
                return round(value / factor, 4)
            return None
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                own = _kind(str(key))
                if own in ("skip", "count"):
                    continue
                walked = walk(item, own or kind)
                if walked not in (None, {}, []):
                    out[key] = walked
            return out or None
        if isinstance(value, list):
            items = [walk(v, kind) for v in value]
            return items if any(i is not None for i in items) else None
        return None

    return walk(result, None) or {}


# --- Where the time goes ------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
PHASES = ("sql", "render", "middleware", "gc", "python")
#: How often the sampler looks at what the measuring thread runs.
SAMPLE_INTERVAL_S = 0.005


class Profiler:
    """Where a benchmark's measured time goes, in this process's measuring thread.

    Exclusive wall time per phase: ``sql`` (inside a database call, through
    ``connection.execute_wrapper``; the statements counted), ``render`` (inside a
    template's ``render``, less its SQL), ``middleware`` (a request inside Django's
    handler but outside the view: the middleware chain, less its SQL), ``gc`` (the
    cyclic garbage collector, through ``gc.callbacks``: its collections counted by
    generation), ``python`` (everything else: views, services, the benchmark's own
    loop). A sampler thread also
    notes every 5 ms which package the measuring thread is in (its innermost frame) and
    which of this project's modules it is under, for the ``python`` share's detail.

    Only while ``--profile`` is asked for: nothing is patched otherwise. Subprocesses
    (a gunicorn server, a fresh process for a memory figure) are not seen.
    """

    def __init__(self) -> None:
        self.thread = threading.get_ident()
        self.totals: dict[str, float] = defaultdict(float)
        self.queries = 0
        self.stack = ["python"]
        self.last = 0.0
        self.started = 0.0
        self.elapsed = 0.0
        self.samples: Counter[str] = Counter()
        self.under: Counter[str] = Counter()
        self.sampled = 0
        self.collections: Counter[int] = Counter()
        self._stop = threading.Event()
        self._sampler: threading.Thread | None = None
        self._exit = ExitStack()

    # Exclusive accounting: each switch charges the time since the last to the phase on
    # top of the stack, so SQL inside a template counts as SQL, not as rendering.
    def _enter(self, phase: str) -> bool:
        if threading.get_ident() != self.thread:
            return False
        now = time.perf_counter()
        self.totals[self.stack[-1]] += now - self.last
        self.last = now
        self.stack.append(phase)
        return True

    def _leave(self) -> None:
        now = time.perf_counter()
        self.totals[self.stack.pop()] += now - self.last
        self.last = now

    def _phase(self, phase: str, fn):
        profiler = self

        def wrapped(*args, **kwargs):
            if not profiler._enter(phase):
                return fn(*args, **kwargs)
            try:
                return fn(*args, **kwargs)
            finally:
                profiler._leave()

        return wrapped

    def _collecting(self, phase: str, info: dict) -> None:
        """A collection starts or ends (``gc.callbacks``); one the measuring thread
        set off is its own phase."""
        if phase == "start":
            if self._enter("gc"):
                self.collections[info["generation"]] += 1
        elif self.stack[-1] == "gc" and threading.get_ident() == self.thread:
            self._leave()

    def start(self) -> None:
        from django.core.handlers.base import BaseHandler
        from django.template.base import Template

        def sql(execute, statement, params, many, context):
            if not self._enter("sql"):
                return execute(statement, params, many, context)
            self.queries += 1
            try:
                return execute(statement, params, many, context)
            finally:
                self._leave()

        from template_partials.templatetags.partials import TemplateProxy

        # A partial (``template#name``, what htmx answers mostly are) renders through its
        # proxy, never through ``Template.render``: both are rendering.
        for owner, name, phase in (
            (Template, "render", "render"),
            (TemplateProxy, "render", "render"),
            (BaseHandler, "get_response", "middleware"),
        ):
            original = owner.__dict__[name]
            setattr(owner, name, self._phase(phase, original))
            self._exit.callback(setattr, owner, name, original)
        # The view itself (looked up per request, so a client made before the profile
        # started is seen too): back to "python" inside the middleware's time.
        atomic = BaseHandler.__dict__["make_view_atomic"]

        def make_view_atomic(handler, view):
            return self._phase("python", atomic(handler, view))

        BaseHandler.make_view_atomic = make_view_atomic  # type: ignore[method-assign]
        self._exit.callback(setattr, BaseHandler, "make_view_atomic", atomic)
        gc.callbacks.append(self._collecting)
        self._exit.callback(gc.callbacks.remove, self._collecting)
        self._exit.enter_context(connection.execute_wrapper(sql))
        self.started = self.last = time.perf_counter()
        self._sampler = threading.Thread(target=self._sample, name="bench-profile", daemon=True)
        self._sampler.start()

    def stop(self) -> None:
        now = time.perf_counter()
        self._stop.set()
        if self._sampler is not None:
            self._sampler.join()
        self._exit.close()
        while len(self.stack) > 1:  # a phase left by an exception: close it at the end
            self._leave()
        self.totals[self.stack[-1]] += now - self.last
        self.last = now
        self.elapsed = now - self.started

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_INTERVAL_S):
            frame = sys._current_frames().get(self.thread)
            if frame is None:
                continue
            self.sampled += 1
            self.samples[_package(frame.f_code.co_filename)] += 1
            while frame is not None:
                ours = _our_module(frame.f_code.co_filename)
                if ours:
                    self.under[ours] += 1
                    break
                frame = frame.f_back

    def report(self, top: int = 8) -> dict:
        measured = self.elapsed or 1e-9
        phases = {
            p: {
                "s": round(self.totals.get(p, 0.0), 4),
                "share": round(self.totals.get(p, 0.0) / measured, 3),
            }
            for p in PHASES
        }
        sampled = self.sampled or 1
        return {
            "measured_s": round(self.elapsed, 4),
            "phases": phases,
            "queries": self.queries,
            "collections_by_generation": {str(g): n for g, n in sorted(self.collections.items())},
            "sampled": {
                "interval_ms": SAMPLE_INTERVAL_S * 1000,
                "samples": self.sampled,
                "by_package": {k: round(n / sampled, 3) for k, n in self.samples.most_common(top)},
                "under_our_module": {
                    k: round(n / sampled, 3) for k, n in self.under.most_common(top)
                },
            },
            "note": "this process's measuring thread only; times under the profile run "
            "slower than without it, read the shares. The sampler runs when the measuring "
            "thread lets go of the interpreter, so its samples overweight waits on the "
            "database (psycopg): the phases are the measure, the samples a pointer",
        }


def _package(filename: str) -> str:
    """A frame's package: ``django.db``, ``psycopg``, ``kgreview.review``, ``stdlib``."""
    path = filename.replace("\\", "/")
    if "site-packages/" in path:
        parts = path.split("site-packages/", 1)[1].split("/")
        if parts[0] == "django" and len(parts) > 2:
            return f"django.{parts[1]}"
        return parts[0].removesuffix(".py")
    ours = _our_module(filename)
    if ours:
        return ".".join(ours.split(".")[:2])
    return "stdlib and builtins"


def _our_module(filename: str) -> str | None:
    """``kgreview.review.services`` for a file of this project (``benchmarks`` included)."""
    root = str(ROOT) + "/"
    if not filename.startswith(root) or "/.venv/" in filename or filename == __file__:
        return None  # the profile's own wrappers are not where the time goes
    relative = filename[len(root) :].removesuffix(".py")
    return relative.replace("/", ".")


def table(name: str, report: dict) -> str:
    """The profile as a short table for the terminal."""
    lines = [f"{name}: {report['measured_s']:.2f} s measured, {report['queries']} SQL statements"]
    labels = {
        "sql": "SQL",
        "render": "templates",
        "middleware": "middleware",
        "gc": "collector",
        "python": "other Python",
    }
    for phase in PHASES:
        row = report["phases"][phase]
        lines.append(f"  {labels[phase]:<13} {row['s']:>9.3f} s {row['share'] * 100:>5.1f} %")
    sampled = report["sampled"]
    if sampled["samples"]:
        top = ", ".join(f"{k} {v * 100:.0f} %" for k, v in sampled["by_package"].items())
        ours = ", ".join(f"{k} {v * 100:.0f} %" for k, v in sampled["under_our_module"].items())
        lines.append(f"  sampled, innermost package: {top}")
        lines.append(f"  sampled, under our module: {ours}")
    return "\n".join(lines)
