"""/healthz answers JSON whatever happens: 200 when the database answers, 503 naming what
is down when it does not, never a 500 page."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

from django.db import OperationalError, connection
from django.test import Client
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[2]


def test_healthz_is_200_json_when_the_database_answers(client, db):
    response = client.get(reverse("healthz"))
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert body["status"] == "ok" and body["down"] == [] and body["database"] == "ok"
    assert body["worker"] == {"alive": False, "seconds_ago": None}


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
        "kgreview.web.views.worker_status", side_effect=OperationalError("server closed")
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


def test_a_head_probe_gets_the_status_without_a_body(client, db):
    """Load balancers often probe with HEAD: it answers like GET, with no body."""
    response = client.head("/healthz")
    assert response.status_code == 200
    assert response.content == b""
