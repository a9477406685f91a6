"""A real Celery worker process takes tasks from a real broker and writes the database."""

from __future__ import annotations

import os
import uuid

import pytest

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
    worker = helpers.start_solo_worker(queue, env, tmp_path / "worker.log")
    try:
        producer = helpers.producer(REDIS_URL)
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


@pytest.mark.services
def test_workers_on_redis_construct_the_whole_corpus_through_the_queue(
    transactional_db, reference_data, tmp_path
):
    """construct_run fans out one task per lesson; real workers finish them all, once each."""
    from django.core.management import call_command

    from kgreview.agents.construct import construct_run_create
    from kgreview.agents.models import AgentRun
    from kgreview.review.models import Proposal
    from tests.graph.test_import_sources import CORPUS

    require(helpers.redis_reachable(REDIS_URL), f"Redis is not reachable at {REDIS_URL}")
    call_command("import_sources", str(CORPUS), verbosity=0)
    run = construct_run_create(provider="offline")
    queue = f"kgreview-test-{uuid.uuid4().hex[:8]}"
    env = helpers.subprocess_env(
        DATABASE_URL=helpers.test_database_url(),
        CELERY_BROKER_URL=REDIS_URL,
        CELERY_TASK_DEFAULT_QUEUE=queue,
    )
    worker = helpers.start(
        [
            helpers.PYTHON,
            "-m",
            "celery",
            "-A",
            "kgreview",
            "worker",
            "--concurrency",
            "2",
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
        helpers.producer(REDIS_URL).send_task(
            "agents.construct_run", kwargs={"run_id": run.pk}, queue=queue
        )
        finished = helpers.wait_for(
            lambda: AgentRun.objects.filter(pk=run.pk, finished_at__isnull=False).first(),
            timeout=180,
            what="the workers to finish the run",
            proc=worker,
        )
    except AssertionError:
        print((tmp_path / "worker.log").read_text()[-4000:])
        raise
    finally:
        helpers.stop(worker)
    assert finished.status == "succeeded", finished.error
    assert finished.progress_done == finished.progress_total == run.items.count()
    assert set(run.items.values_list("status", flat=True)) == {"done"}
    assert Proposal.objects.filter(origin__agent_run=run, kind="add_edge").count() > 50
    keys = list(
        Proposal.objects.filter(status__in=["pending", "held"]).values_list("dedup_key", flat=True)
    )
    assert len(keys) == len(set(keys))
