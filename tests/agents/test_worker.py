"""A real Celery worker process takes tasks from a real broker and writes the database."""

from __future__ import annotations

import os
import uuid

import pytest
from celery import Celery

from kgreview.agents.models import WorkerHeartbeat
from kgreview.agents.tasks import worker_heartbeat
from tests.agents import helpers
from tests.conftest import require

REDIS_URL = os.environ.get("KG_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def test_heartbeat_task_called_directly_twice_keeps_one_row(db):
    """The task is idempotent per host: running it again updates, never duplicates."""
    worker_heartbeat()
    first = WorkerHeartbeat.objects.get()
    worker_heartbeat()
    second = WorkerHeartbeat.objects.get()
    assert second.last_seen >= first.last_seen


@pytest.mark.services
def test_a_worker_process_on_redis_runs_the_heartbeat_task(transactional_db, tmp_path):
    """Send through Redis, a separate worker process consumes it and records its host."""
    require(helpers.redis_reachable(REDIS_URL), f"Redis is not reachable at {REDIS_URL}")
    queue = f"kgreview-test-{uuid.uuid4().hex[:8]}"
    env = helpers.subprocess_env(
        DATABASE_URL=helpers.test_database_url(), CELERY_BROKER_URL=REDIS_URL
    )
    worker = helpers.start(
        [
            helpers.PYTHON,
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
        tmp_path / "worker.log",
    )
    try:
        producer = Celery(broker=REDIS_URL)
        producer.send_task("agents.worker_heartbeat", queue=queue)
        helpers.wait_for(
            lambda: WorkerHeartbeat.objects.exists(),
            timeout=90,
            what="the worker to record a heartbeat",
            proc=worker,
        )
    except AssertionError:
        print((tmp_path / "worker.log").read_text()[-4000:])
        raise
    finally:
        helpers.stop(worker)
