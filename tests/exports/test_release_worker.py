"""A real Celery worker process builds a release a curator asked for; one killed while
building leaves a build the sweep hands to another."""

from __future__ import annotations

import hashlib
import os
import signal
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F
from django.utils import timezone

from kgreview.exports.models import Release, ReleaseBuild
from kgreview.exports.releases.services import CUT_LOCK, build_stale_after, release_builds_sweep
from tests.agents import helpers
from tests.agents.test_worker import REDIS_URL
from tests.conftest import require


@pytest.mark.services
def test_a_worker_process_on_redis_builds_a_requested_release(
    transactional_db, reference_data, f, tmp_path
):
    """The build sent through Redis is cut by a separate worker: the release, its files
    in KG_RELEASE_DIR and the build marked done."""
    require(helpers.redis_reachable(REDIS_URL), f"Redis is not reachable at {REDIS_URL}")
    f.edge(f.concept("Embeddings"), f.concept("Vector search"))
    build = ReleaseBuild.objects.create(name="from-worker", as_of=timezone.now())
    queue = f"kgreview-test-{uuid.uuid4().hex[:8]}"
    env = helpers.subprocess_env(
        DATABASE_URL=helpers.test_database_url(),
        CELERY_BROKER_URL=REDIS_URL,
        KG_RELEASE_DIR=str(tmp_path / "releases"),
    )
    worker = helpers.start_solo_worker(queue, env, tmp_path / "worker.log")
    try:
        helpers.producer(REDIS_URL).send_task(
            "exports.release_build", kwargs={"build_id": build.pk}, queue=queue
        )
        helpers.wait_for(
            lambda: not ReleaseBuild.objects.get(pk=build.pk).is_open,
            timeout=120,
            what="the worker to cut the release",
            proc=worker,
        )
    except AssertionError:
        print((tmp_path / "worker.log").read_text()[-4000:])
        raise
    finally:
        helpers.stop(worker)
    build.refresh_from_db()
    assert build.status == ReleaseBuild.Status.DONE, build.error
    release = Release.objects.get(name="from-worker")
    assert (tmp_path / "releases" / "from-worker" / "graph.jsonld").stat().st_size == (
        release.files.get(format="jsonld").size
    )


@pytest.mark.services
def test_a_worker_killed_mid_build_leaves_a_build_the_sweep_hands_to_another_worker(
    transactional_db, reference_data, f, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    """A real solo worker takes the build, renews it while it works, and is SIGKILLed
    while it waits to record the release (the test holds the cut lock, so the moment is
    certain). The build stays "building" under the dead worker's claim; the sweep, on a
    fake clock past the heartbeat's window, sends it again with the reason in words and a
    second real worker cuts it: one release, whole, its files as recorded."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (the test holds the cut's advisory lock)")
    require(helpers.redis_reachable(REDIS_URL), f"Redis is not reachable at {REDIS_URL}")
    f.edge(f.concept("Embeddings"), f.concept("Vector search"))
    now = timezone.now()
    build = ReleaseBuild.objects.create(name="killed", as_of=now, renewed_at=now, attempts=1)
    queue = f"kgreview-test-{uuid.uuid4().hex[:8]}"
    env = helpers.subprocess_env(
        DATABASE_URL=helpers.test_database_url(),
        CELERY_BROKER_URL=REDIS_URL,
        KG_RELEASE_DIR=str(tmp_path / "releases"),
        KG_ITEM_HEARTBEAT_SECONDS="1",
        KG_ITEM_STALE_SECONDS="2",
        KG_WORKER_REAPER="0",
    )
    producer = helpers.producer(REDIS_URL)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [CUT_LOCK])
    first = helpers.start_solo_worker(queue, env, tmp_path / "first.log")
    second = None
    try:
        producer.send_task("exports.release_build", kwargs={"build_id": build.pk}, queue=queue)
        claimed = helpers.wait_for(
            lambda: ReleaseBuild.objects.filter(
                pk=build.pk, status="running", renewed_at__gt=F("started_at")
            ).first(),
            timeout=120,
            what="the worker to take the build and renew it",
            proc=first,
        )
        os.killpg(first.pid, signal.SIGKILL)  # no warning, no cleanup: a machine dying
        first.wait(10)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [CUT_LOCK])
        lost = ReleaseBuild.objects.get(pk=build.pk)
        assert lost.status == "running" and lost.claimed_by == claimed.claimed_by
        assert not Release.objects.exists()

        from kgreview.exports import tasks

        monkeypatch.setattr(
            tasks.release_build,
            "delay",
            lambda build_id: producer.send_task(
                "exports.release_build", kwargs={"build_id": build_id}, queue=queue
            ),
        )
        second = helpers.start_solo_worker(queue, env, tmp_path / "second.log")
        later = lost.renewed_at + build_stale_after() + timedelta(seconds=1)
        with django_capture_on_commit_callbacks(execute=True):
            assert release_builds_sweep(now=later) == {"requeued": [build.pk], "failed": []}
        helpers.wait_for(
            lambda: not ReleaseBuild.objects.get(pk=build.pk).is_open,
            timeout=120,
            what="the second worker to cut the release",
            proc=second,
        )
    except AssertionError:
        for log in ("first.log", "second.log"):
            if (tmp_path / log).exists():
                print(log, (tmp_path / log).read_text()[-4000:])
        raise
    finally:
        helpers.stop(first)
        if second is not None:
            helpers.stop(second)
    build.refresh_from_db()
    assert build.status == ReleaseBuild.Status.DONE, build.error
    assert f"its worker ({claimed.claimed_by}) stopped while building" in build.error
    assert build.attempts == 2
    (release,) = Release.objects.all()
    for stored in release.files.all():
        data = (tmp_path / "releases" / "killed" / stored.filename).read_bytes()
        assert hashlib.sha256(data).hexdigest() == stored.sha256
