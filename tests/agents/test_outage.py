"""A deployment outlives its database and its broker (issue 25, finding 3).

A real deployment of its own: a PostgreSQL cluster and a Redis server started by the
test on free ports, migrated, a beat and a worker as separate processes. A source was
being read when its worker died (a claim nobody renews). PostgreSQL and Redis are then
stopped, under the running beat and worker, until beat has found the database away;
then started again, with the broker's queue lost (Redis keeps nothing). Nobody restarts
anything: the run must finish, and beat and the worker must still be the same
processes. Before ResilientScheduler, beat died with "beat raised exception
OperationalError" and the interrupted source stayed "running" until a person came.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest

from tests.agents import helpers
from tests.conftest import require

# Once per CI, in the PostgreSQL suite (it brings its own cluster either way).
pytestmark = [pytest.mark.services, pytest.mark.postgres, pytest.mark.usefixtures("on_postgres")]

PG_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"))), None)
CORPUS = Path(__file__).resolve().parents[2] / "corpus"


class OwnPostgres:
    """A throw-away cluster in ``folder``, run as the postgres account, on ``port``."""

    def __init__(self, folder: Path, port: int) -> None:
        self.data = folder / "pgdata"
        self.port = port
        self.log = folder / "postgres.log"

    def _as_postgres(self, *args: str) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--", *args], check=True, capture_output=True)

    def create(self) -> None:
        self.data.mkdir()
        shutil.chown(self.data, "postgres")
        shutil.chown(self.data.parent, "postgres")
        self._as_postgres(
            str(PG_BIN / "initdb"),
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
            "-E",
            "UTF8",
        )

    def start(self) -> None:
        options = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._as_postgres(
            str(PG_BIN / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-o",
            options,
            "-w",
            "start",
        )

    def stop(self) -> None:
        self._as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def url(self, name: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def query(self, sql: str, *params):
        with psycopg.connect(self.url("kgreview"), connect_timeout=3) as conn:
            return conn.execute(sql, params).fetchall()


def start_redis(port: int, log: Path) -> subprocess.Popen:
    return helpers.start(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        os.environ.copy(),
        log,
    )


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=helpers.ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


INTERRUPTED = """
from django.utils import timezone
from datetime import timedelta
from kgreview.agents.construct import construct_run_create
from kgreview.agents.models import AgentRun, AgentRunItem
run = construct_run_create(provider="offline")
long_ago = timezone.now() - timedelta(minutes=10)
item = AgentRunItem.objects.filter(run=run).order_by("pk").first()
AgentRunItem.objects.filter(pk=item.pk).update(
    status="running", claimed_by="task:killed", attempts=1,
    started_at=long_ago, renewed_at=long_ago,
)
AgentRun.objects.filter(pk=run.pk).update(
    status="running", started_at=long_ago, updated_at=long_ago
)
print(run.pk)
"""


def test_a_run_interrupted_by_an_outage_finishes_without_a_person(tmp_path):
    require(PG_BIN is not None, "needs PostgreSQL's server binaries (initdb, pg_ctl)")
    require(shutil.which("redis-server") is not None, "needs redis-server")
    require(os.geteuid() == 0 and shutil.which("runuser"), "needs root to run as postgres")
    # pytest's own folders are private to root: the cluster gets one postgres can enter.
    pg_home = Path(tempfile.mkdtemp(prefix="kg-outage-"))
    pg = OwnPostgres(pg_home, helpers.free_port())
    pg.create()
    pg.start()
    redis_port = helpers.free_port()
    redis = start_redis(redis_port, tmp_path / "redis.log")
    beat = worker = None
    try:
        subprocess.run(
            ["psql", pg.url(), "-q", "-c", "CREATE DATABASE kgreview"],
            check=True,
            capture_output=True,
        )
        lessons = tmp_path / "lessons"
        lessons.mkdir()
        for path in sorted(CORPUS.glob("*.md"))[:3]:
            shutil.copy(path, lessons / path.name)
        env = helpers.subprocess_env(
            DATABASE_URL=pg.url("kgreview"),
            CELERY_BROKER_URL=f"redis://127.0.0.1:{redis_port}/0",
            KG_CACHE_URL=f"redis://127.0.0.1:{redis_port}/1",
            KG_VAR_DIR=str(tmp_path / "var"),
            KG_LLM_PROVIDER="offline",
            KG_ITEM_HEARTBEAT_SECONDS="1",
            KG_ITEM_STALE_SECONDS="3",
            KG_ITEM_REQUEUE_SECONDS="4",
            KG_REAPER_SECONDS="2",
            KG_HEARTBEAT_SECONDS="2",
            KG_BEAT_RETRY_SECONDS="1",
        )
        manage(env, "migrate", "--noinput", "-v", "0")
        manage(env, "import_sources", str(lessons))
        run_id = int(manage(env, "shell", "-c", INTERRUPTED).split()[-1])

        beat = helpers.start(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "kgreview",
                "beat",
                "--loglevel",
                "INFO",
                "--schedule",
                str(tmp_path / "beat-schedule"),
            ],
            env,
            tmp_path / "beat.log",
        )
        worker = helpers.start(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "kgreview",
                "worker",
                "--concurrency",
                "1",
                "--loglevel",
                "INFO",
                "--hostname",
                "outage@%h",
            ],
            env,
            tmp_path / "worker.log",
        )
        beat_log = tmp_path / "beat.log"
        helpers.wait_for(
            lambda: "Sending due task" in beat_log.read_text(errors="replace"),
            timeout=60,
            what="beat to send its first task",
            proc=beat,
        )
        # Running means started: the worker has connected and said it is ready (a worker
        # that starts during an outage is the broker-retry-on-startup case, not this one).
        helpers.wait_for(
            lambda: " ready." in (tmp_path / "worker.log").read_text(errors="replace"),
            timeout=60,
            what="the worker to be ready",
            proc=worker,
        )

        # The outage: the database and the broker go away under the running processes.
        seen = len(beat_log.read_bytes())
        pg.stop()
        redis.terminate()
        redis.wait(10)
        helpers.wait_for(
            lambda: b"OperationalError" in beat_log.read_bytes()[seen:],
            timeout=60,
            what="beat to find the database away",
            proc=beat,
        )
        assert beat.poll() is None and worker.poll() is None

        # Back, with the broker's queue lost; nobody touches beat or the worker.
        pg.start()
        redis = start_redis(redis_port, tmp_path / "redis-again.log")
        status = helpers.wait_for(
            lambda: _status(pg, run_id) == "succeeded" and "succeeded",
            timeout=120,
            what="the interrupted run to finish",
            proc=worker,
        )
        assert status == "succeeded"
        assert beat.poll() is None, "beat died"
        items = pg.query("SELECT status FROM agents_agentrunitem WHERE run_id = %s", run_id)
        assert sorted(s for (s,) in items) == ["done", "done", "done"]
        assert pg.query("SELECT count(*) FROM review_proposal")[0][0] > 0
    except AssertionError:
        _tell_what_happened(tmp_path, pg, run_id if "run_id" in locals() else None)
        raise
    finally:
        for proc in (beat, worker):
            if proc is not None:
                helpers.stop(proc)
        redis.terminate()
        redis.wait(10)
        with contextlib.suppress(subprocess.CalledProcessError):  # already stopped
            pg.stop()
        shutil.rmtree(pg_home, ignore_errors=True)


def _status(pg: OwnPostgres, run_id: int) -> str | None:
    try:
        rows = pg.query("SELECT status FROM agents_agentrun WHERE id = %s", run_id)
    except psycopg.OperationalError:
        return None
    return rows[0][0] if rows else None


def _tell_what_happened(tmp_path: Path, pg: OwnPostgres, run_id: int | None) -> None:
    """On a failure: the worker's whole story (its warnings and errors first, then its
    last lines), beat's last lines, and where each source of the run stands."""
    worker_log = tmp_path / "worker.log"
    if worker_log.exists():
        lines = worker_log.read_text(errors="replace").splitlines()
        said = [line for line in lines if "WARNING/" in line or "ERROR/" in line]
        print("--- worker.log, warnings and errors\n" + "\n".join(said[-80:]))
        print("--- worker.log, last lines\n" + "\n".join(lines[-60:]))
    beat_log = tmp_path / "beat.log"
    if beat_log.exists():
        print("--- beat.log, last lines\n" + beat_log.read_text(errors="replace")[-1500:])
    if run_id is not None:
        try:
            rows = pg.query(
                "SELECT id, status, claimed_by, attempts, error FROM agents_agentrunitem "
                "WHERE run_id = %s ORDER BY id",
                run_id,
            )
        except psycopg.OperationalError as exc:
            rows = [f"(the database did not answer: {exc})"]
        print("--- the run's sources\n" + "\n".join(map(str, rows)))
