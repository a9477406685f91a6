"""Starting real processes (workers, the embedded server) against the test database."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def test_database_url() -> str:
    """A DATABASE_URL that points a subprocess at the database this test is using."""
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    auth = quote(s["USER"] or "")
    if s.get("PASSWORD"):
        auth += ":" + quote(s["PASSWORD"])
    host = s["HOST"] or "localhost"
    port = s["PORT"] or 5432
    return f"postgres://{auth}@{host}:{port}/{s['NAME']}"


def subprocess_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["DJANGO_SETTINGS_MODULE"] = "kgreview.settings"
    env.update(extra)
    return env


def producer(broker: str):
    """A Celery client sending to ``broker``, never made the current app: a current app is
    per thread, so a test that left one current would have its later patches of a task
    (``task.delay``) land on this app while the live server's thread uses the project's."""
    from celery import Celery

    return Celery(broker=broker, set_as_current=False)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def redis_reachable(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


def wait_for(predicate, *, timeout: float, what: str, proc: subprocess.Popen | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"process exited ({proc.returncode}) while waiting for {what}")
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def start(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    handle = log.open("wb")
    return subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
    )


def stop(proc: subprocess.Popen, timeout: float = 20) -> int:
    if proc.poll() is None:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
    return proc.returncode


PYTHON = sys.executable


def start_solo_worker(queue: str, env: dict[str, str], log: Path) -> subprocess.Popen:
    """A real Celery worker process (solo pool) consuming only ``queue``, named after it."""
    return start(
        [
            PYTHON,
            "-m",
            "celery",
            "-A",
            "kgreview",
            "worker",
            "--pool",
            "solo",
            "--queues",
            queue,
            "--hostname",
            f"{queue}@%h",
            "--without-mingle",
            "--without-gossip",
            "--loglevel",
            "INFO",
        ],
        env,
        log,
    )
