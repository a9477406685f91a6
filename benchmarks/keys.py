"""``manage.py bench keys`` and ``bench keys-sample``: the review loop in a real browser,
from a keypress to the next card painted (issue 28).

The app runs as it is deployed: gunicorn (two workers of four threads, as ``serve``
starts it) over the scratch database, with its own middleware, sessions, CSP and
whitenoise, and the review endpoints' ``Server-Timing`` header
(``kgreview.core.server_timing``; ``benchmarks.keys_server`` only adds a profile). A
reviewer is logged in (a session cookie handed to the browser) and headless Chromium opens
``/review/focus/``; then ``decisions`` keypresses are made as a reviewer makes them, in
a repeating pattern of ten: six accepts (``a``), two rejects (``r`` then a reason's digit,
1-5 in turn) and two skips (``s``), with ``pause_ms`` of reading between them.

Each keypress is timed in the page: from the ``keydown`` (``performance.now()`` in a
capturing listener on the window, before the page's own) to the next card painted (the
new ``#card`` element in the DOM, then an animation frame and a ``setTimeout 0`` after it,
which runs once that frame is painted). The same request's Resource Timing entry gives
when it left and when its response had arrived, its ``Server-Timing`` the server's own
time and SQL. ``client`` is the painted time less the server's: the browser, the wire and
the proxy-free local socket.

``keys``: the 1x bench data (``benchmarks.curriculum``: 50,000 concepts, 200,000 edges,
100,000 open edge proposals quoting one synthetic lesson). ``keys-sample``: the sample
curriculum the demo serves (``corpus/``, imported and read by the offline agent as
``manage.py graph --demo`` does), whose cards render lesson Markdown.
"""

from __future__ import annotations

import json
import os
import pstats
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import connection
from django.test import Client

from .common import percentiles, scaled
from .measure import measurement_starts

ROOT = Path(__file__).resolve().parent.parent
BUDGET_P95_MS = 150
#: A reviewer's ten keypresses: six accepts, two rejects (a reason digit after ``r``),
#: two skips.
PATTERN = ("a", "a", "a", "r1", "a", "s", "a", "r3", "a", "s")
REASON_DIGITS = "12345"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

#: The page's stopwatch, installed before any of the page's own scripts.
STOPWATCH = r"""
(() => {
  const K = (window.__keys = { pending: null, done: [] });
  const TIMED = new Set(["a", "s", "1", "2", "3", "4", "5"]);
  try { performance.setResourceTimingBufferSize(100000); } catch (e) {}
  window.addEventListener("keydown", (e) => {
    if (!TIMED.has(e.key) || K.pending) return;
    const card = document.getElementById("card");
    K.pending = { key: e.key, t0: performance.now(), card: card,
                  from: card ? card.dataset.proposal || null : null };
  }, true);
  function request(p) {
    const all = performance.getEntriesByType("resource").filter((r) =>
      r.startTime >= p.t0 && (r.initiatorType === "xmlhttprequest" || r.initiatorType === "fetch")
      && r.name.indexOf("/review/") >= 0 && r.name.indexOf("queue-counts") < 0);
    return all.length ? all[0] : null;
  }
  function timing(r, name) {
    const t = r && (r.serverTiming || []).find((s) => s.name === name);
    return t ? { ms: t.duration, n: t.description ? parseInt(t.description, 10) : null } : null;
  }
  new MutationObserver(() => {
    const p = K.pending;
    const card = document.getElementById("card");
    if (!p || p.swapped || !card || card === p.card) return;
    p.swapped = performance.now();
    requestAnimationFrame(() => setTimeout(() => {
      const painted = performance.now();
      const r = request(p);
      const app = timing(r, "total");
      const sql = timing(r, "db");
      const messages = card.querySelector(".card-messages .flash.bad");
      K.done.push({
        key: p.key, from: p.from, to: card.dataset.proposal || null,
        refused: messages ? messages.textContent.trim().slice(0, 160) : null,
        painted_ms: painted - p.t0,
        swapped_ms: p.swapped - p.t0,
        request_start_ms: r ? r.requestStart - p.t0 : null,
        request_sent_ms: r ? r.startTime - p.t0 : null,
        response_end_ms: r ? r.responseEnd - p.t0 : null,
        server_ms: app ? app.ms : null,
        sql_ms: sql ? sql.ms : null,
        sql_queries: sql ? sql.n : null,
        url: r ? r.name.replace(location.origin, "") : null,
      });
      K.pending = null;
      performance.clearResourceTimings();
    }, 0));
  }).observe(document, { childList: true, subtree: true });
})();
"""


def bench_keys(
    *,
    scale: int = 1,
    concepts: int | None = None,
    edges: int | None = None,
    proposals: int | None = None,
    decisions: int = 200,
    pause_ms: int = 300,
    seed: int = 28,
    warm: int = 16,
) -> dict:
    """``decisions`` keypresses in Chromium on the 1x bench data (times ``scale``)."""
    from .curriculum import (
        BASE_CONCEPTS,
        BASE_EDGES,
        BASE_PROPOSALS,
        seed_curriculum,
        seed_proposals,
    )

    started = time.perf_counter()
    concepts = concepts or scaled(BASE_CONCEPTS, scale)
    edges = edges or scaled(BASE_EDGES, scale)
    graph = seed_curriculum(concepts=concepts, edges=edges)
    seeded = seed_proposals(graph, proposals or scaled(BASE_PROPOSALS, scale))
    setup_s = time.perf_counter() - started
    measurement_starts()
    result = run_loop(decisions=decisions, pause_ms=pause_ms, seed=seed, warm=warm)
    return {
        "benchmark": "keys",
        "corpus": "bench",
        "concepts": concepts,
        "edges": edges,
        "proposals": seeded,
        "setup_s": round(setup_s, 1),
        **result,
    }


def bench_keys_sample(*, decisions: int = 200, pause_ms: int = 300, seed: int = 28) -> dict:
    """``decisions`` keypresses in Chromium on the sample curriculum (the demo's data)."""
    from kgreview.review.models import Proposal

    started = time.perf_counter()
    # As ``graph --demo`` builds the demo, with the offline reader whatever
    # KG_LLM_PROVIDER says: the same proposals on every machine, no model called.
    with open(os.devnull, "w") as sink:  # the commands' progress is not the bench's output
        call_command("import_sources", str(ROOT / "corpus"), stdout=sink, stderr=sink)
        call_command("construct", "--all", "--provider", "offline", stdout=sink, stderr=sink)
    pending = Proposal.objects.filter(status="pending").count()
    setup_s = time.perf_counter() - started
    measurement_starts()
    result = run_loop(decisions=decisions, pause_ms=pause_ms, seed=seed)
    return {
        "benchmark": "keys-sample",
        "corpus": "sample",
        "proposals": pending,
        "setup_s": round(setup_s, 1),
        **result,
    }


# --- The loop ---------------------------------------------------------------------------


def run_loop(*, decisions: int, pause_ms: int, seed: int, warm: int = 16) -> dict:
    """Serve the scratch database, log a reviewer in, make ``decisions`` keypresses."""
    from kgreview.review.models import Proposal

    cookie = _reviewer_session("bench-keys")
    profile_dir = tempfile.mkdtemp(prefix="kg-keys-prof-") if _profiling() else None
    # The machine's load can move a lot in the minutes of the loop: besides the
    # calibration before and after it (manage.py bench), the result says the load average
    # on either side of it.
    load_before = os.getloadavg()
    with _Server(profile_dir) as server:
        server.warm(cookie, warm)
        seen, browser_info, console = _drive(server.url, cookie, decisions, pause_ms, seed)
    load_after = os.getloadavg()
    # Back from the browser (Playwright's event loop is gone): the ORM again.
    decided = Proposal.objects.filter(decided_by__username="bench-keys").count()
    result = _report(seen, decided, browser_info, console, profile_dir)
    result["load_average"] = {
        "before": [round(x, 2) for x in load_before],
        "after": [round(x, 2) for x in load_after],
        "cpus": os.cpu_count(),
    }
    return result


def _profiling() -> bool:
    return os.environ.get("KG_BENCH_PROFILE", "") not in ("", "0")


def _reviewer_session(username: str) -> dict:
    user = get_user_model().objects.create_user(username, password="x-bench-12345")
    user.groups.add(Group.objects.get(name="reviewer"))
    client = Client()
    client.force_login(user)
    morsel = client.cookies[settings.SESSION_COOKIE_NAME]
    return {"name": settings.SESSION_COOKIE_NAME, "value": morsel.value}


def _database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    auth = db.get("USER") or ""
    if db.get("PASSWORD"):
        auth += f":{db['PASSWORD']}"
    host = db.get("HOST") or "127.0.0.1"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{auth}@{host}{port}/{db['NAME']}"


class _Server:
    """gunicorn serving ``benchmarks.keys_server`` on a free local port."""

    def __init__(self, profile_dir: str | None):
        self.profile_dir = profile_dir
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> _Server:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "benchmarks.keys_settings",
            "DATABASE_URL": _database_url(),
        }
        if self.profile_dir:
            env["KG_BENCH_PROFILE"] = self.profile_dir
        self.log = tempfile.TemporaryFile()
        # Committed rows only: the server is another process.
        connection.close()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "benchmarks.keys_server:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
                "--threads",
                "4",
                "--graceful-timeout",
                "5",
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/login/", timeout=2):
                    break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.log.seek(0)
                    said = self.log.read().decode(errors="replace")[-2000:]
                    self.__exit__(None, None, None)
                    raise RuntimeError(f"The bench's server did not start:\n{said}") from None
                time.sleep(0.2)
        return self

    def warm(self, cookie: dict, rounds: int = 16) -> None:
        """A few pages first, so what is timed is a warm server: each worker has imported
        its templates and each thread opened its database connection (as hours of use
        leave them)."""
        request = urllib.request.Request(
            f"{self.url}/review/focus/", headers={"Cookie": f"{cookie['name']}={cookie['value']}"}
        )
        for _ in range(rounds):
            with urllib.request.urlopen(request, timeout=60) as answer:
                answer.read()

    def __exit__(self, *exc) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def _drive(url: str, cookie: dict, decisions: int, pause_ms: int, seed: int):
    """The keypresses, in Chromium; what the page's stopwatch recorded."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    rng = random.Random(seed)
    console: list[str] = []
    unpainted: list[dict] = []
    executable = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.add_cookies([{**cookie, "url": url}])
            context.add_init_script(STOPWATCH)
            page = context.new_page()
            page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
            page.goto(f"{url}/review/focus/")
            page.wait_for_selector("#card")
            reasons = 0
            for i in range(decisions):
                state = page.evaluate(
                    "() => { const c = document.getElementById('card');"
                    " return { id: c && c.dataset.proposal,"
                    " open: !!document.getElementById('accept-button'),"
                    " done: window.__keys.done.length }; }"
                )
                if not state["id"]:
                    break  # the queue is empty
                step = PATTERN[i % len(PATTERN)] if state["open"] else "s"
                if step.startswith("r"):
                    page.keyboard.press("r")
                    page.wait_for_function(
                        "() => document.activeElement && "
                        "document.activeElement.id === 'reject-reason'"
                    )
                    step = REASON_DIGITS[reasons % len(REASON_DIGITS)]
                    reasons += 1
                page.keyboard.press(step)
                try:
                    page.wait_for_function(
                        "n => window.__keys.done.length > n", arg=state["done"], timeout=60_000
                    )
                except PlaywrightTimeout:
                    # No new card a minute after the key: the loop is stuck, and says so.
                    unpainted.append({"key": step, "from": state["id"]})
                    break
                if pause_ms:
                    # A reviewer reads the card before the next key (jittered, as people are).
                    page.wait_for_timeout(pause_ms * rng.uniform(0.5, 1.5))
            seen = page.evaluate("() => window.__keys.done")
            info = {
                "browser": f"Chromium {browser.version}",
                "viewport": "1280x900",
                "unpainted": unpainted,
            }
        finally:
            browser.close()
    return seen, info, console


ACTIONS = {"a": "accept", "s": "skip"}


def _report(seen: list[dict], decided: int, info: dict, console: list[str], profile_dir):
    info = dict(info)
    unpainted = info.pop("unpainted", [])

    def pick(rows, name):
        return [r[name] for r in rows if r.get(name) is not None]

    for r in seen:
        r["action"] = ACTIONS.get(r["key"], "reject")
        if r["server_ms"] is not None:
            r["client_ms"] = r["painted_ms"] - r["server_ms"]
        if r["response_end_ms"] is not None:
            r["after_response_ms"] = r["painted_ms"] - r["response_end_ms"]
            r["to_swap_ms"] = r["swapped_ms"] - r["response_end_ms"]
            r["swap_to_paint_ms"] = r["painted_ms"] - r["swapped_ms"]
    painted = percentiles(pick(seen, "painted_ms"))
    by_action = {}
    for action in ("accept", "reject", "skip"):
        rows = [r for r in seen if r["action"] == action]
        if rows:
            by_action[action] = {
                "painted": percentiles(pick(rows, "painted_ms")),
                "server": percentiles(pick(rows, "server_ms")),
                "max_queries": max(pick(rows, "sql_queries"), default=None),
            }
    refused = Counter(r["refused"] for r in seen if r["refused"])
    result = {
        "browser": info,
        "decisions": len(seen),
        "decided": decided,
        "painted_every_one": not unpainted and all(r["painted_ms"] > 0 for r in seen),
        "unpainted": unpainted,
        "refused": sum(refused.values()),
        "refused_because": dict(refused),
        "keydown_to_painted": painted,
        "server": percentiles(pick(seen, "server_ms")),
        "server_sql": percentiles(pick(seen, "sql_ms")),
        "client": percentiles(pick(seen, "client_ms")),
        "breakdown": {
            # keydown -> the request leaves (the page's own key handling, htmx's set-up)
            "key_to_request": percentiles(pick(seen, "request_sent_ms")),
            # the request sent -> its response read (server, socket, gunicorn)
            "request": percentiles(
                [
                    r["response_end_ms"] - r["request_sent_ms"]
                    for r in seen
                    if r["response_end_ms"] is not None
                ]
            ),
            # the response read -> the new card in the DOM (htmx's parse, swap, scripts)
            "response_to_swap": percentiles(pick(seen, "to_swap_ms")),
            # the new card in the DOM -> painted (style, layout, paint)
            "swap_to_paint": percentiles(pick(seen, "swap_to_paint_ms")),
        },
        "by_action": by_action,
        "slowest": [
            {
                k: r.get(k)
                for k in (
                    "action",
                    "from",
                    "url",
                    "painted_ms",
                    "server_ms",
                    "sql_ms",
                    "sql_queries",
                )
            }
            for r in sorted(seen, key=lambda r: -r["painted_ms"])[:5]
        ],
        "max_queries": max(pick(seen, "sql_queries"), default=None),
        "console_errors": console[:10],
        "budget": {"keydown_to_painted_p95_ms": BUDGET_P95_MS},
        "within_budget": bool(painted) and painted["p95_ms"] <= BUDGET_P95_MS,
    }
    if profile_dir:
        result["server_profile"] = _profile_summary(profile_dir)
    return result


def _profile_summary(folder: str, top: int = 20) -> dict:
    """Where the profiled requests spent their time, a request's mean in ms: the app's own
    functions by cumulative time (the middleware and decorators every request passes
    through left out), and every function by its own time."""
    files = sorted(Path(folder).glob("*.prof"))
    try:
        if not files:
            return {}
        with open(os.devnull, "w") as sink:
            stats = pstats.Stats(str(files[0]), stream=sink)
            for f in files[1:]:
                stats.add(str(f))
        rows = [
            {
                "function": f"{_short(path)}:{line}({name})",
                "calls": calls,
                "own_ms": round(tt * 1000 / len(files), 2),
                "cumulative_ms": round(ct * 1000 / len(files), 2),
            }
            for (path, line, name), (_cc, calls, tt, ct, _callers) in stats.stats.items()
        ]
        passing = ("middleware", "permissions.py", "retry.py", "refusals.py", "decorators")
        own_code = [
            r
            for r in rows
            if r["function"].startswith(("kgreview/", "construction/", "templates/"))
            and not any(p in r["function"] for p in passing)
        ]
        return {
            "requests": len(files),
            "by_cumulative": sorted(own_code, key=lambda r: -r["cumulative_ms"])[:top],
            "by_own_time": sorted(rows, key=lambda r: -r["own_ms"])[:top],
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _short(path: str) -> str:
    for marker in ("site-packages/", str(ROOT) + "/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def dumps(result: dict) -> str:
    return json.dumps(result, indent=2)
