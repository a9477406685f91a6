"""Real distribution: workers on Redis and PostgreSQL, killed mid-run; beat firing schedules."""

from __future__ import annotations

import json
import os
import re
import signal
import time
import uuid

import pytest
from django.core.management import call_command
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from kgreview.agents.construct import construct_run_create
from kgreview.agents.models import AgentRun, ExtractionRecord
from kgreview.review.models import Proposal
from tests.agents import helpers
from tests.agents.test_worker import REDIS_URL
from tests.conftest import require
from tests.construction.fake_llm import reply, slow
from tests.graph.test_import_sources import CORPUS

pytestmark = [pytest.mark.services, pytest.mark.usefixtures("reference_data")]

SENTENCE = re.compile(r"^[A-Z][^\n]{60,300}?[.!?]$", re.MULTILINE)


def echo_one_edge(body) -> object:
    """Answer like a model: one edge, quoting a real sentence of the lesson it was sent."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    sentence = next((m.group() for m in SENTENCE.finditer(user)), None)
    if sentence is None:
        return reply({"concepts": [], "edges": []})
    words = re.findall(r"[A-Za-z][A-Za-z-]+", sentence)
    answer = {
        "concepts": [],
        "edges": [
            {
                "source": " ".join(words[:2]),
                "target": " ".join(words[-2:]),
                "relation": "related",
                "confidence": 0.8,
                "reason": "The lesson relates them.",
                "evidence": sentence,
            }
        ],
    }
    return slow(0.7, reply(json.dumps(answer)))


def worker_env(fake_llm, queue: str, **extra) -> dict[str, str]:
    return helpers.subprocess_env(
        DATABASE_URL=helpers.test_database_url(),
        CELERY_BROKER_URL=REDIS_URL,
        CELERY_TASK_DEFAULT_QUEUE=queue,
        KG_LLM_PROVIDER="openai",
        OPENAI_BASE_URL=fake_llm.base_url,
        OPENAI_API_KEY="test-key",
        KG_LLM_MODEL="fake-model",
        KG_LLM_TIMEOUT="10",
        KG_ITEM_LEASE_SECONDS="3",
        KG_VISIBILITY_TIMEOUT="5",
        **extra,
    )


def start_worker(env, queue: str, name: str, log, *extra_args: str):
    return helpers.start(
        [
            helpers.PYTHON,
            "-m",
            "celery",
            "-A",
            "kgreview",
            "worker",
            "--concurrency",
            "1",
            "--queues",
            queue,
            "--hostname",
            f"{name}-{queue}@%h",
            "--without-mingle",
            "--without-gossip",
            "--loglevel",
            "INFO",
            *extra_args,
        ],
        env,
        log,
    )


def test_a_killed_worker_leaves_a_run_the_rerun_completes_without_duplicates(
    transactional_db, tmp_path, fake_llm, settings
):
    """Two workers construct the corpus; one is killed mid-run; rerunning finishes it once."""
    require(helpers.redis_reachable(REDIS_URL), f"Redis is not reachable at {REDIS_URL}")
    settings.KG_LLM_PROVIDER = "openai"
    settings.OPENAI_BASE_URL = fake_llm.base_url
    settings.OPENAI_API_KEY = "test-key"
    settings.KG_LLM_MODEL = "fake-model"
    fake_llm.fallback = echo_one_edge
    call_command("import_sources", str(CORPUS), verbosity=0)
    run = construct_run_create(provider="openai")
    total = run.progress_total
    queue = f"kgreview-dist-{uuid.uuid4().hex[:8]}"
    env = worker_env(fake_llm, queue)
    a = start_worker(env, queue, "a", tmp_path / "a.log")
    b = start_worker(env, queue, "b", tmp_path / "b.log")
    producer = helpers.producer(REDIS_URL)
    try:
        producer.send_task("agents.construct_run", kwargs={"run_id": run.pk}, queue=queue)
        helpers.wait_for(
            lambda: AgentRun.objects.get(pk=run.pk).progress_done >= 6,
            timeout=120,
            what="the workers to get going",
            proc=b,
        )
        os.killpg(a.pid, signal.SIGKILL)  # no warning, no cleanup: a machine dying
        a.wait(10)
        time.sleep(4)  # let the dead worker's claim outlive its lease
        producer.send_task("agents.construct_run", kwargs={"run_id": run.pk}, queue=queue)
        finished = helpers.wait_for(
            lambda: AgentRun.objects.filter(pk=run.pk, finished_at__isnull=False).first(),
            timeout=240,
            what="the rerun to finish the run",
            proc=b,
        )
    except AssertionError:
        for log in ("a.log", "b.log"):
            print(log, (tmp_path / log).read_text()[-3000:])
        raise
    finally:
        for proc in (a, b):
            helpers.stop(proc)
    assert finished.status == "succeeded", finished.error
    assert finished.progress_done == total
    assert set(run.items.values_list("status", flat=True)) == {"done"}
    keys = list(Proposal.objects.values_list("dedup_key", flat=True))
    assert len(keys) == len(set(keys)), "a proposal was written twice"
    assert ExtractionRecord.objects.filter(status="done").count() == total
    # Each lesson's answer is paid once; at most the one in flight at the kill twice.
    assert len(fake_llm.requests) <= total + 1


def test_beat_in_the_worker_fires_an_agent_schedule(transactional_db, tmp_path, fake_llm):
    """A curator's schedule (here every 2 s) starts heal runs through a real worker."""
    require(helpers.redis_reachable(REDIS_URL), f"Redis is not reachable at {REDIS_URL}")
    every = IntervalSchedule.objects.create(every=2, period=IntervalSchedule.SECONDS)
    PeriodicTask.objects.exclude(task="agents.heal").update(enabled=False)
    heal = PeriodicTask.objects.get(task="agents.heal")
    heal.crontab = None
    heal.interval = every
    heal.save()
    queue = f"kgreview-beat-{uuid.uuid4().hex[:8]}"
    env = worker_env(fake_llm, queue)
    worker = start_worker(
        env,
        queue,
        "beat",
        tmp_path / "beat.log",
        "--beat",
        "--scheduler",
        "kgreview.agents.beat:ResilientScheduler",
        "--schedule",
        str(tmp_path / "beat-schedule"),
    )
    try:
        run = helpers.wait_for(
            lambda: AgentRun.objects.filter(
                agent="heal", trigger="schedule", status="succeeded"
            ).first(),
            timeout=90,
            what="beat to fire the heal schedule",
            proc=worker,
        )
    except AssertionError:
        print((tmp_path / "beat.log").read_text()[-4000:])
        raise
    finally:
        helpers.stop(worker)
    assert run.stats["concepts"] == 0 and run.finished_at is not None
