"""The embedded mode: one command serves the app with a worker and beat, no servers needed."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request

import pytest

from tests.agents import helpers


def get_json(url: str) -> dict | None:
    """The JSON a URL answers, a 503's too (/healthz names what is down); None when
    nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=3) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            return json.loads(exc.read())
        except ValueError:
            return None
    except OSError:
        return None


@pytest.mark.services
@pytest.mark.own_database
def test_serve_runs_web_worker_and_beat_on_sqlite_and_the_filesystem_broker(tmp_path):
    """manage.py serve answers HTTP, beat schedules the heartbeat, the worker runs it."""
    env = helpers.subprocess_env(KG_VAR_DIR=str(tmp_path), KG_HEARTBEAT_SECONDS="2")
    for key in ("DATABASE_URL", "CELERY_BROKER_URL"):
        env.pop(key, None)
    subprocess.run(
        [helpers.PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=helpers.ROOT,
        env=env,
        check=True,
        timeout=300,
    )
    port = helpers.free_port()
    server = helpers.start(
        [
            helpers.PYTHON,
            "manage.py",
            "serve",
            "--port",
            str(port),
            "--concurrency",
            "1",
            "--web-workers",
            "1",
        ],
        env,
        tmp_path / "serve.log",
    )
    url = f"http://127.0.0.1:{port}/healthz"
    try:
        helpers.wait_for(lambda: get_json(url), timeout=60, what="the web server", proc=server)
        health = helpers.wait_for(
            lambda: (h := get_json(url)) and h["worker"]["alive"] and h,
            timeout=120,
            what="beat and the worker to record a heartbeat",
            proc=server,
        )
        assert health["database"] == "ok"
        assert (tmp_path / "kgreview.sqlite3").exists()
    except AssertionError:
        print((tmp_path / "serve.log").read_text()[-6000:])
        raise
    finally:
        code = helpers.stop(server, timeout=40)
    assert code == 0, (tmp_path / "serve.log").read_text()[-3000:]
    assert get_json(url) is None  # every child stopped with the group
