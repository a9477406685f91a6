"""``manage.py bench lockout``: people keep working while a worker reads a long source.

Budget (issue 25): while a worker process reads a 50 MB source with the offline reader,
a reviewer's decisions and logins and logouts answer at p95 under a second on SQLite
(the embedded default, one writer at a time); the worker heartbeat and the reaper are
unaffected. Before, the reader held SQLite's write lock for the whole read: a 46 MB
source locked everyone out for 17 minutes.

A real worker: ``manage.py construct`` in its own process on the scratch database,
reading a source of ``megabytes`` of manual text (the evaluation manuals' stored text,
repeated). Once its item is claimed, this process decides ``decisions`` concept
proposals through the service and logs a reviewer in and out through the login page
as often, with a heartbeat and a reaper pass after each, each timed. The worker is then
stopped; the reading is not waited for.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client

from .common import percentiles, plain_static
from .measure import measurement_starts

BUDGET = {"p95_ms": 1000.0}
MANUALS = Path(settings.BASE_DIR) / "evaluation" / "manuals"


def _manual_text(megabytes: int) -> str:
    from construction.documents import read_document

    pages = [
        read_document(p.read_bytes(), filename=p.name, max_bytes=10**8).text
        for p in sorted(MANUALS.glob("*/pages/*"))[:60]
    ]
    block = "\n\n".join(pages)
    repeats = max(1, (megabytes * 1_000_000) // len(block.encode()) + 1)
    return "\n\n".join([block] * repeats)[: megabytes * 1_000_000]


def _database_url() -> str:
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    host, port = s["HOST"] or "localhost", s["PORT"] or 5432
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    return f"postgres://{s['USER']}{password}@{host}:{port}/{s['NAME']}"


REFUSED: dict[str, int] = {}


def _timed(samples: list[float], fn, what: str = "") -> None:
    """Time one call; a refusal (the database busy, a locked table) counts, timed too."""
    from django.db import OperationalError

    from kgreview.core.errors import Busy

    started = time.perf_counter()
    try:
        fn()
    except (Busy, OperationalError) as exc:
        REFUSED[f"{what}: {exc}"[:120]] = REFUSED.get(f"{what}: {exc}"[:120], 0) + 1
    samples.append((time.perf_counter() - started) * 1000)


CREDENTIALS = {"username": "bench-reviewer", "password": "x-bench-12345"}


def _answered(client: Client, path: str, data: dict) -> None:
    """A login or logout that the server answered with anything but its redirect (a 409
    "busy", a 503) is a refusal."""
    from django.db import OperationalError

    status = client.post(path, data).status_code
    if status != 302:
        raise OperationalError(f"answered {status}")


def bench_lockout(*, megabytes: int = 50, decisions: int = 50) -> dict:
    from kgreview.agents.models import AgentRunItem
    from kgreview.graph.sources import source_import
    from kgreview.review.kinds.add_concept import AddConceptKind
    from kgreview.review.services import proposal_create

    REFUSED.clear()
    started = time.perf_counter()
    text = _manual_text(megabytes)
    long_source = source_import(
        slug="long-manual", title="A long manual", text=text, acting_user=None
    )
    short = source_import(
        slug="short",
        title="Short",
        text="\n".join(f"Term {i} is a thing." for i in range(decisions)),
        acting_user=None,
    ).source
    waiting = [
        proposal_create(
            kind=AddConceptKind.key,
            payload={"name": f"Bench term {i}", "aliases": [], "description": ""},
            confidence=0.9,
            reason="Named in the lesson.",
            document=short,
        ).pk
        for i in range(decisions)
    ]
    reviewer = get_user_model().objects.create_user("bench-reviewer", password="x-bench-12345")
    reviewer.groups.add(Group.objects.get(name="reviewer"))
    set_up_s = time.perf_counter() - started
    measurement_starts()

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(DATABASE_URL=_database_url(), KG_LLM_PROVIDER="offline")
    log = Path(settings.VAR_DIR) / "bench-lockout-worker.log"
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "construct", "--source", long_source.source.slug,
         "--provider", "offline"],
        cwd=settings.BASE_DIR, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        # Reading begins once the source is cut into chunks (their count is written).
        while not AgentRunItem.objects.filter(status="running", chunks_total__gt=0).exists():
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the worker never started reading: see {log}")
            time.sleep(0.2)
        time.sleep(2)  # into the reading itself
        decide, login, logout, heartbeat, reap = [], [], [], [], []
        client = Client(raise_request_exception=False)  # a 500 is a refusal, counted
        with plain_static():
            _people_at_work(client, reviewer, waiting, decide, login, logout, heartbeat, reap)
        still_reading = worker.poll() is None
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
    return _result(megabytes, set_up_s, still_reading, decide, login, logout, heartbeat, reap)


def _people_at_work(client, reviewer, waiting, decide, login, logout, heartbeat, reap) -> None:
    from kgreview.agents import reaper
    from kgreview.agents.runs import worker_heartbeat_record
    from kgreview.review.decide.decisions import proposal_accept

    for pk in waiting:
        _timed(
            decide, lambda pk=pk: proposal_accept(proposal_id=pk, acting_user=reviewer), "decide"
        )
        _timed(login, lambda: _answered(client, "/login/", CREDENTIALS), "login")
        _timed(logout, lambda: _answered(client, "/logout/", {}), "logout")
        _timed(
            heartbeat,
            lambda: worker_heartbeat_record(hostname="bench", pid=os.getpid()),
            "heartbeat",
        )
        _timed(reap, reaper.reap, "reap")


def _result(megabytes, set_up_s, still_reading, decide, login, logout, heartbeat, reap) -> dict:
    result = {
        "engine": connection.vendor,
        "refused": dict(REFUSED),
        "source_mb": megabytes,
        "set_up_s": round(set_up_s, 1),
        "worker_still_reading": still_reading,
        "decide": percentiles(decide),
        "login": percentiles(login),
        "logout": percentiles(logout),
        "heartbeat": percentiles(heartbeat),
        "reap": percentiles(reap),
        "budget": BUDGET,
    }
    result["within_budget"] = (
        still_reading
        and not REFUSED
        and all(
            result[k]["p95_ms"] < BUDGET["p95_ms"]
            for k in ("decide", "login", "logout", "heartbeat", "reap")
        )
    )
    return result
