"""/healthz answers JSON whatever happens: 200 when every part answers (the database,
the broker, the rate limits' cache, the worker's and beat's heartbeats, the free disk),
503 naming what is down and why in words when one does not, never a 500 page."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from unittest import mock

import pytest
from django.db import OperationalError, connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from kgreview.agents.models import WorkerHeartbeat
from kgreview.core import disk

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _forget_the_disk():
    disk.forget()
    yield
    disk.forget()


@pytest.fixture
def beating(db):
    """A worker ran the heartbeat task just now (so beat sent it)."""
    return WorkerHeartbeat.objects.create(hostname="w1", last_seen=timezone.now(), pid=1)


def health(client, query: str = "") -> tuple[int, dict]:
    response = client.get(reverse("healthz") + query)
    assert response["Content-Type"] == "application/json"
    return response.status_code, json.loads(response.content)


def test_healthz_is_200_json_when_every_part_answers(client, beating):
    status, body = health(client)
    # The heartbeat's age as the request saw it: no more than the time passed since it
    # was written (a loaded machine takes seconds between the fixture and the answer).
    passed = math.ceil((timezone.now() - beating.last_seen).total_seconds())
    assert status == 200
    assert body["status"] == "ok" and body["down"] == [] and body["words"] == {}
    assert body["database"] == body["broker"] == body["cache"] == "ok"
    for part in ("worker", "beat"):
        assert body[part]["alive"] is True and 0 <= body[part]["seconds_ago"] <= passed
    assert body["disk"]["ok"] is True and body["disk"]["free_mb"] > 0


def test_no_worker_or_beat_yet_is_503_naming_both(client, db):
    status, body = health(client)
    assert status == 503 and body["status"] == "down"
    assert body["down"] == ["worker", "beat"]
    assert body["worker"] == {"alive": False, "seconds_ago": None}
    assert body["words"]["worker"] == "No worker has reported yet: runs wait until one starts."
    assert body["words"]["beat"].startswith("Beat has not run yet")


def test_a_load_balancer_can_need_only_what_pages_need(client, db):
    """?need=database,disk: the worker down leaves the web server in rotation, said."""
    status, body = health(client, "?need=database,disk")
    assert status == 200 and body["status"] == "degraded"
    assert body["down"] == ["worker", "beat"]


def test_an_unknown_part_in_need_is_refused_in_words(client, db):
    response = client.get(reverse("healthz") + "?need=database,moon")
    assert response.status_code == 400
    assert "moon" in response.json()["detail"] and "database, broker" in response.json()["detail"]


def test_a_silent_worker_is_503_naming_the_worker(client, db, settings):
    settings.KG_WORKER_STALE_SECONDS = 120
    WorkerHeartbeat.objects.create(
        hostname="w1", last_seen=timezone.now() - timedelta(minutes=10), pid=1
    )
    PeriodicTask.objects.update(last_run_at=timezone.now())  # beat still sends
    status, body = health(client)
    assert status == 503 and body["down"] == ["worker"]
    assert body["worker"]["alive"] is False and body["worker"]["seconds_ago"] >= 600
    assert body["words"]["worker"].startswith("No worker has run a task from the queue for 6")


def test_a_stopped_beat_is_503_naming_beat(client, db, settings):
    settings.KG_WORKER_STALE_SECONDS = 300
    settings.KG_BEAT_STALE_SECONDS = 60
    WorkerHeartbeat.objects.create(
        hostname="w1", last_seen=timezone.now() - timedelta(seconds=200), pid=1
    )
    PeriodicTask.objects.update(last_run_at=timezone.now() - timedelta(seconds=200))
    status, body = health(client)
    assert status == 503 and body["down"] == ["beat"]
    assert "schedules and the reaper stopped" in body["words"]["beat"]


def test_a_missing_broker_queue_is_503_naming_the_broker(client, beating, settings, tmp_path):
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.BROKER_DIR = tmp_path / "broker"  # no queue folder in it
    status, body = health(client)
    assert status == 503 and body["down"] == ["broker"]
    assert body["broker"] == "error: FileNotFoundError"
    assert "runs cannot be started" in body["words"]["broker"]


def test_a_stopped_redis_broker_is_503_naming_the_broker(client, beating, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    status, body = health(client)
    assert status == 503 and body["down"] == ["broker"]
    assert body["broker"] == "error: ConnectionError"


def test_a_stopped_shared_cache_is_503_naming_the_cache(client, beating, settings):
    settings.KG_CACHE_URL = "redis://127.0.0.1:1/0"
    settings.CACHES = {
        **settings.CACHES,
        "shared": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
        },
    }
    status, body = health(client)
    assert status == 503 and body["down"] == ["cache"]
    assert body["cache"] == "error: ConnectionError"
    assert "API requests are let through uncounted" in body["words"]["cache"]


def test_a_nearly_full_disk_is_503_naming_the_disk(client, beating, settings):
    settings.KG_HEALTH_MIN_FREE_MB = 50
    with mock.patch.object(disk, "free_bytes", return_value=10 * 1024 * 1024):
        status, body = health(client)
    assert status == 503 and body["down"] == ["disk"]
    assert body["disk"] == {"ok": False, "free_mb": 10}
    assert "10 MB free in the data folder, under the 50 MB needed" in body["words"]["disk"]


def test_after_a_write_failed_for_want_of_space_healthz_says_the_disk_is_full(
    client, beating, f, monkeypatch
):
    """The write failed on a disk that shows some free space (SQLite needs more than it
    has): /healthz still says so, in the same words the person got."""

    def full(*args, **kwargs):
        raise OperationalError("database or disk is full")

    monkeypatch.setattr("kgreview.agents.run_now.agent_run_create", full)
    curator = Client(raise_request_exception=False)
    curator.force_login(f.user("cu", role="curator"))
    refused = curator.post(reverse("agents:run-now", args=["heal"]), {"scope": "new"})
    assert refused.status_code == 503
    status, body = health(client)
    assert status == 503 and body["down"] == ["disk"]
    assert body["words"]["disk"].startswith("The server's disk is full: nothing was saved.")


def test_healthz_is_503_json_naming_the_database_when_it_is_down(db):
    """The connection refuses every query, as a database that went away does."""
    client = Client(raise_request_exception=False)
    with mock.patch.object(connection, "cursor", side_effect=OperationalError("gone")):
        response = client.get(reverse("healthz"))
    assert response.status_code == 503 and response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert body["status"] == "down" and body["down"] == ["database"]
    assert body["database"] == "error: OperationalError"


def test_healthz_is_503_json_when_the_database_fails_after_the_first_query(db):
    """The database answers SELECT 1 and then fails on the worker's heartbeat table."""
    client = Client(raise_request_exception=False)
    with mock.patch(
        "kgreview.web.health.worker_status", side_effect=OperationalError("server closed")
    ):
        response = client.get(reverse("healthz"))
    assert response.status_code == 503
    assert json.loads(response.content)["down"] == ["database"]


def test_healthz_against_a_closed_port_is_503_json(tmp_path):
    """A real unreachable PostgreSQL server (nothing listens on port 1), the real settings
    and middleware, in a fresh process: JSON 503, no 500 page."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("KG_", "DJANGO_", "DATABASE_URL", "CELERY_"))
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "kgreview.settings",
            "KG_VAR_DIR": str(tmp_path),
            "DATABASE_URL": "postgres://kg@127.0.0.1:1/nothing",
        }
    )
    code = (
        "import django; django.setup(); from django.test import Client; "
        "r = Client(raise_request_exception=False).get('/healthz'); "
        "print(r.status_code, r['Content-Type']); print(r.content.decode())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    status, body = out.stdout.split("\n", 1)
    assert status == "503 application/json"
    assert json.loads(body)["down"] == ["database"]


def test_a_head_probe_gets_the_status_without_a_body(client, beating):
    """Load balancers often probe with HEAD: it answers like GET, with no body."""
    response = client.head("/healthz")
    assert response.status_code == 200
    assert response.content == b""
