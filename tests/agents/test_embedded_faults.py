"""The embedded runtime recovers from its own faults, against a real ``manage.py serve``.

Each test starts serve (gunicorn, a Celery worker with beat) on the test database with a
scratch ``KG_VAR_DIR`` (so the filesystem broker's folders are the test's own) and short
heartbeat and reaper windows, then breaks something: a malformed message file in the
queue folder, the queue folder removed, the worker SIGKILLed half-way through a run.
Every time the web server keeps serving, nobody intervenes, and the run finishes with
the proposals a clean run makes, once each.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from celery import Celery
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.core.management import call_command
from django_celery_beat.models import PeriodicTask

from kgreview.agents.construct import construct_run_create
from kgreview.agents.models import AgentRun
from kgreview.review.models import Proposal
from tests.agents import helpers
from tests.agents.test_distribution import echo_one_edge
from tests.construction.fake_llm import Slow, slow
from tests.graph.test_import_sources import CORPUS

pytestmark = [pytest.mark.services, pytest.mark.usefixtures("reference_data")]

WINDOWS = {
    "KG_HEARTBEAT_SECONDS": "1",
    "KG_ITEM_HEARTBEAT_SECONDS": "1",
    "KG_ITEM_STALE_SECONDS": "3",
    "KG_REAPER_SECONDS": "1",
    "KG_ITEM_REQUEUE_SECONDS": "10",
}
LESSONS = sorted(CORPUS.glob("*.md"))[:4]


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


class Embedded:
    """One ``manage.py serve`` process and what the test needs to poke at it."""

    def __init__(self, var_dir: Path, **env: str) -> None:
        self.var_dir = var_dir
        var_dir.mkdir(parents=True, exist_ok=True)
        self.broker = var_dir / "broker"
        self.port = helpers.free_port()
        self.log = var_dir / "serve.log"
        self.env = helpers.subprocess_env(
            KG_VAR_DIR=str(var_dir), DATABASE_URL=helpers.test_database_url(), **WINDOWS, **env
        )
        self.env.pop("CELERY_BROKER_URL", None)
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Embedded:
        # The agents' own schedules stay out of the way; heartbeat and reaper run.
        PeriodicTask.objects.update(enabled=False)
        self.proc = helpers.start(
            [
                helpers.PYTHON,
                "manage.py",
                "serve",
                "--port",
                str(self.port),
                "--concurrency",
                "1",
                "--web-workers",
                "1",
            ],
            self.env,
            self.log,
        )
        self.wait(self.worker_alive, 120, "the worker's first heartbeat")
        return self

    def stop(self) -> int:
        assert self.proc is not None
        return helpers.stop(self.proc, timeout=40)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait(self, predicate, timeout: float, what: str):
        return helpers.wait_for(predicate, timeout=timeout, what=what, proc=self.proc)

    def worker_pids(self) -> list[int]:
        return [int(n) for n in re.findall(r"serve: worker started \(pid (\d+)\)", self.text())]

    def worker_alive(self) -> bool:
        health = get_json(f"{self.url}/healthz")
        return bool(health and health["worker"]["alive"])

    def web_answers(self) -> bool:
        return get_json(f"{self.url}/healthz") is not None

    def producer(self) -> Celery:
        """A client of this broker, configured as the web app's is."""
        app = helpers.producer("filesystem://")
        app.conf.broker_transport = "kgreview.agents.broker:Transport"
        app.conf.broker_transport_options = {
            "data_folder_in": str(self.broker / "queue"),
            "data_folder_out": str(self.broker / "queue"),
            "processed_folder": str(self.broker / "processed"),
            "control_folder": str(self.broker / "control"),
            "quarantine_folder": str(self.broker / "quarantine"),
        }
        return app

    def queue_run(self, run: AgentRun) -> None:
        with self.producer() as app:
            app.send_task("agents.construct_run", kwargs={"run_id": run.pk})

    def finished(self, run: AgentRun, timeout: float = 180) -> AgentRun:
        return self.wait(
            lambda: AgentRun.objects.filter(pk=run.pk, finished_at__isnull=False).first(),
            timeout,
            f"run #{run.pk} to finish",
        )


@pytest.fixture
def embedded(transactional_db, tmp_path):
    """Start serve with ``embedded.start()``; afterwards it is stopped, every child must
    stop with it, and its log is printed (pytest shows it when the test failed)."""
    server = Embedded(tmp_path / "var")
    yield server
    if server.proc is None:
        return
    code = server.stop()
    print(server.text()[-8000:])
    assert code == 0
    assert not server.web_answers()


def lesson_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "lessons"
    folder.mkdir(exist_ok=True)
    for path in LESSONS:
        shutil.copy(path, folder / path.name)
    return folder


def import_lessons(tmp_path: Path) -> None:
    call_command("import_sources", str(lesson_folder(tmp_path)), verbosity=0)


def no_worker_restart(server: Embedded) -> bool:
    return "Restarting the worker" not in server.text() and len(server.worker_pids()) == 1


# --- a malformed message ----------------------------------------------------------------


def test_a_malformed_message_file_is_quarantined_and_the_worker_goes_on(embedded, tmp_path):
    embedded.start()
    bad = embedded.broker / "queue" / "0000000001_bad.celery.msg"
    bad.write_text('{"body": "half a message')
    quarantined = embedded.broker / "quarantine" / bad.name
    embedded.wait(quarantined.exists, 60, "the bad file to be quarantined")
    reason = quarantined.with_name(bad.name + ".reason.txt").read_text()
    assert "not JSON" in reason and not bad.exists()
    assert "quarantined the message file 0000000001_bad.celery.msg" in embedded.text()

    import_lessons(tmp_path)
    run = construct_run_create(provider="offline")
    embedded.queue_run(run)
    assert embedded.finished(run).status == "succeeded"
    assert no_worker_restart(embedded) and embedded.web_answers()


# --- the queue folder removed -----------------------------------------------------------


def sign_in_and_run_now(server: Embedded, username: str, password: str) -> str:
    """Post "Run now" for construction as a curator would; returns the page it lands on."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))

    def token(html: str) -> str:
        return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)

    def post(path: str, data: dict, referer: str) -> str:
        request = urllib.request.Request(
            f"{server.url}{path}",
            data=urllib.parse.urlencode(data).encode(),
            headers={"Referer": f"{server.url}{referer}"},
        )
        with opener.open(request, timeout=30) as response:
            return response.read().decode()

    login = opener.open(f"{server.url}/login/", timeout=30).read().decode()
    post(
        "/login/",
        {"username": username, "password": password, "csrfmiddlewaretoken": token(login)},
        "/login/",
    )
    agents = opener.open(f"{server.url}/agents/", timeout=30).read().decode()
    return post("/agents/run/construct/", {"csrfmiddlewaretoken": token(agents)}, "/agents/")


def test_a_removed_queue_folder_is_made_again_and_run_now_finishes(embedded, f, tmp_path):
    embedded.env["DJANGO_DEBUG"] = "true"  # pages use the static files without collectstatic
    embedded.start()
    queue = embedded.broker / "queue"
    shutil.rmtree(queue)
    embedded.wait(queue.is_dir, 30, "the worker to make the queue folder again")
    time.sleep(2)  # a few more polls of the folder, each of which used to crash the worker
    assert no_worker_restart(embedded)

    shutil.rmtree(queue)  # now the web process is the first to need it
    import_lessons(tmp_path)
    curator = f.user("cura", role="curator")
    # The test settings hash with MD5, which serve's settings do not know.
    curator.password = PBKDF2PasswordHasher().encode("pw-12345", "saltsalt", iterations=1000)
    curator.save(update_fields=["password"])
    page = sign_in_and_run_now(embedded, "cura", "pw-12345")
    run = AgentRun.objects.get()
    assert f"Construction run #{run.pk} queued." in page
    assert embedded.finished(run).status == "succeeded"
    assert run.items.count() == len(LESSONS)
    assert no_worker_restart(embedded) and embedded.web_answers()


# --- the worker killed half-way ---------------------------------------------------------


def echo(delay: float):
    """The fake model: one edge per chunk, quoting it, answered after ``delay`` seconds."""

    def answer(body):
        behaviour = echo_one_edge(body)
        plain = behaviour.then if isinstance(behaviour, Slow) else behaviour
        return slow(delay, plain) if delay else plain

    return answer


def clean_run_keys(tmp_path: Path, fake_llm) -> list[tuple[str, str]]:
    """The proposals a run nobody disturbed makes of the same lessons (its own database)."""
    var = tmp_path / "clean"
    var.mkdir()
    lessons = lesson_folder(tmp_path)
    env = helpers.subprocess_env(KG_VAR_DIR=str(var), **llm_env(fake_llm))
    for key in ("DATABASE_URL", "CELERY_BROKER_URL"):
        env.pop(key, None)
    for args in (
        ["migrate", "--noinput", "-v", "0"],
        ["import_sources", str(lessons), "-v", "0"],
        ["construct", "--provider", "openai", "--json"],
    ):
        subprocess.run(
            [helpers.PYTHON, "manage.py", *args],
            cwd=helpers.ROOT,
            env=env,
            check=True,
            timeout=300,
            capture_output=True,
        )
    with sqlite3.connect(var / "kgreview.sqlite3") as db:
        return sorted(db.execute("SELECT kind, dedup_key FROM review_proposal").fetchall())


def llm_env(fake_llm) -> dict[str, str]:
    return {
        "KG_LLM_PROVIDER": "openai",
        "OPENAI_BASE_URL": fake_llm.base_url,
        "OPENAI_API_KEY": "test-key",
        "KG_LLM_MODEL": "fake-model",
        "KG_LLM_TIMEOUT": "20",
    }


def test_a_worker_killed_mid_run_is_restarted_and_the_reaper_finishes_the_run_once(
    embedded, fake_llm, settings, tmp_path
):
    fake_llm.fallback = echo(0)  # the clean run: no waiting
    clean = clean_run_keys(tmp_path, fake_llm)
    assert clean

    fake_llm.fallback = echo(2.0)  # each chunk takes two seconds: time to kill mid-read
    embedded.env.update(llm_env(fake_llm))
    settings.KG_LLM_PROVIDER = "openai"
    settings.OPENAI_BASE_URL = fake_llm.base_url
    settings.OPENAI_API_KEY = "test-key"
    settings.KG_LLM_MODEL = "fake-model"
    embedded.start()
    import_lessons(tmp_path)
    run = construct_run_create(provider="openai")
    embedded.queue_run(run)
    embedded.wait(
        lambda: run.items.filter(status="running", chunks_total__gt=0).exists(),
        60,
        "a source's chunks to be sent to the model",
    )
    [first_worker] = embedded.worker_pids()
    os.killpg(first_worker, signal.SIGKILL)  # no warning, no cleanup, its messages gone

    embedded.wait(lambda: len(embedded.worker_pids()) == 2, 60, "serve to restart the worker")
    assert "the worker was killed (SIGKILL); the web server keeps serving" in embedded.text()
    assert embedded.web_answers()
    finished = embedded.finished(run)
    assert finished.status == "succeeded", finished.error
    assert finished.progress_done == finished.progress_total == len(LESSONS)
    assert finished.stats["resumed"] >= 1
    assert run.items.filter(attempts__gte=2).exists()  # claimed again after the kill
    assert "queued again" in embedded.text()
    keys = sorted(Proposal.objects.values_list("kind", "dedup_key"))
    assert keys == clean
