"""Release builds whose worker died or whose task was lost: the sweep sees them (on fake
times, never the wall clock), sends them again or fails them in words, the Releases page
says so, and a curator can retry; a worker that comes back late keeps nothing."""

from __future__ import annotations

import html as htmllib
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from kgreview.agents.tasks import reap_and_queue
from kgreview.core.errors import StateConflict
from kgreview.core.models import AuditEntry
from kgreview.exports.models import Release, ReleaseBuild
from kgreview.exports.releases.services import (
    BuildHeartbeat,
    build_stale_after,
    build_unclaimed_after,
    release_build_carry_out,
    release_build_claim,
    release_build_retry,
    release_build_run,
    release_builds_sweep,
    release_request,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def release_dir(settings, tmp_path):
    settings.KG_RELEASE_DIR = tmp_path / "releases"
    settings.KG_RELEASE_BUILD_ATTEMPTS = 2
    return settings.KG_RELEASE_DIR


@pytest.fixture
def asked(f, graph, monkeypatch, django_capture_on_commit_callbacks):
    """A build a curator asked for, its task sent once (the message held: no worker)."""
    from kgreview.exports import tasks

    sent: list[int] = []
    monkeypatch.setattr(tasks.release_build, "delay", lambda build_id: sent.append(build_id))
    curator = f.user("cora", role="curator")
    with django_capture_on_commit_callbacks(execute=True):
        build = release_request(name="2026-12", acting_user=curator)
    build.refresh_from_db()
    return build, sent, curator


def _gone_quiet(build: ReleaseBuild, *, running: bool) -> timezone.datetime:
    """An instant just after the build's window ran out (fake time: now moves, not us)."""
    window = build_stale_after() if running else build_unclaimed_after()
    return build.renewed_at + window + timedelta(seconds=1)


def test_a_running_build_whose_worker_died_is_sent_again_and_then_cut_once(
    asked, django_capture_on_commit_callbacks, monkeypatch
):
    """Claimed by a worker that then stopped renewing it: within the window the sweep
    leaves it alone; past it, the build is queued again with the reason in words, and
    the new task cuts one release."""
    build, sent, _curator = asked
    assert build.attempts == 1 and sent == [build.pk]
    dead = release_build_claim(build_id=build.pk, claim="task:killed")
    assert dead.status == ReleaseBuild.Status.RUNNING
    # A second delivery of the message while the first worker lives is a no-op.
    assert release_build_claim(build_id=build.pk, claim="task:twin") is None

    just_before = dead.renewed_at + build_stale_after() - timedelta(seconds=1)
    assert release_builds_sweep(now=just_before) == {"requeued": [], "failed": []}

    monkeypatch.undo()  # the resent task runs (eagerly, like the embedded worker)
    with django_capture_on_commit_callbacks(execute=True):
        done = release_builds_sweep(now=_gone_quiet(dead, running=True))
    assert done == {"requeued": [build.pk], "failed": []}
    build.refresh_from_db()
    assert build.status == ReleaseBuild.Status.DONE, build.error
    assert build.attempts == 2
    assert "Sent to the workers again (2 of 2)" in build.error
    assert "its worker (task:killed) stopped while building" in build.error
    assert Release.objects.filter(name="2026-12").count() == 1


def test_a_build_that_keeps_losing_its_worker_fails_in_words_and_a_curator_retries_it(
    asked, f, django_capture_on_commit_callbacks, monkeypatch
):
    """After its last send the build is failed with the reason and stays failed; the
    curator's retry is a new build (audited, pointing at the failed one) that cuts it."""
    build, sent, curator = asked
    for claim in ("task:first", "task:second"):
        dead = release_build_claim(build_id=build.pk, claim=claim)
        assert dead is not None, claim
        release_builds_sweep(now=_gone_quiet(dead, running=True))
        build.refresh_from_db()
    assert build.status == ReleaseBuild.Status.FAILED
    assert build.error.startswith("Stopped after 2 of 2 tries: its worker (task:second)")
    assert "a curator can retry it from the Releases page" in build.error
    assert build.finished_at is not None and not build.claimed_by

    monkeypatch.undo()  # a worker again (eager, like the embedded one)
    with django_capture_on_commit_callbacks(execute=True):
        again = release_build_retry(build_id=build.pk, acting_user=curator)
    again.refresh_from_db()
    assert again.retry_of_id == build.pk and again.as_of == build.as_of
    assert again.status == ReleaseBuild.Status.DONE, again.error
    assert ReleaseBuild.objects.get(pk=build.pk).status == ReleaseBuild.Status.FAILED
    entry = AuditEntry.objects.filter(action="release.request").latest("pk")
    assert entry.user == curator and f"after build #{build.pk} failed" in entry.summary
    with pytest.raises(StateConflict, match="only a failed build can be retried"):
        release_build_retry(build_id=again.pk, acting_user=curator)


def test_a_queued_build_whose_message_was_lost_is_sent_again_then_failed(
    asked, django_capture_on_commit_callbacks
):
    """Queued and never taken: its message is sent once more after the lease; still
    untaken after another lease, it fails saying no worker took it."""
    build, sent, _curator = asked
    assert release_builds_sweep(now=build.renewed_at + timedelta(seconds=1)) == {
        "requeued": [],
        "failed": [],
    }
    with django_capture_on_commit_callbacks(execute=True):  # the resend waits for the commit
        first = release_builds_sweep(now=_gone_quiet(build, running=False))
    assert first["requeued"] == [build.pk]
    build.refresh_from_db()
    assert sent == [build.pk, build.pk] and build.status == ReleaseBuild.Status.QUEUED
    assert "no worker took it for" in build.error
    assert release_builds_sweep(now=_gone_quiet(build, running=False))["failed"] == [build.pk]
    build.refresh_from_db()
    assert build.status == ReleaseBuild.Status.FAILED
    assert "no worker took it for" in build.error and "its task message was lost" in build.error


def test_a_worker_that_comes_back_after_its_build_was_taken_over_keeps_nothing(
    asked, monkeypatch, release_dir
):
    """The first worker only paused (a long GC, a frozen VM): the sweep gave the build to
    a second task, which cut it. The first then tries to record its copy and is told the
    build is no longer its own; one release, no second folder, the build left done."""
    build, _sent, _curator = asked
    paused = release_build_claim(build_id=build.pk, claim="task:paused")
    later = _gone_quiet(paused, running=True)
    release_builds_sweep(now=later)
    taken = release_build_claim(build_id=build.pk, claim="task:second", now=later)
    assert taken is not None
    release_build_carry_out(build=taken)
    assert ReleaseBuild.objects.get(pk=build.pk).status == ReleaseBuild.Status.DONE
    back = release_build_carry_out(build=paused)
    assert back.status == ReleaseBuild.Status.DONE and back.release.name == "2026-12"
    assert Release.objects.count() == 1
    assert sorted(p.name for p in release_dir.iterdir()) == [".staging", "2026-12"]
    assert list((release_dir / ".staging").iterdir()) == []


def test_the_heartbeat_renews_only_the_build_its_task_holds(asked):
    """A renewal moves ``renewed_at`` while the claim is the task's; once another task
    holds the build the heartbeat renews nothing (and stops)."""
    build, _sent, _curator = asked
    mine = release_build_claim(build_id=build.pk, claim="task:mine")
    beat = BuildHeartbeat(build.pk, "task:mine")
    ReleaseBuild.objects.filter(pk=build.pk).update(
        renewed_at=mine.renewed_at - timedelta(minutes=1)
    )
    assert beat.renew() == 1
    assert ReleaseBuild.objects.get(pk=build.pk).renewed_at > mine.renewed_at - timedelta(minutes=1)
    ReleaseBuild.objects.filter(pk=build.pk).update(claimed_by="task:other")
    assert beat.renew() == 0


def test_the_reaper_pass_of_the_agents_sweeps_release_builds(asked, monkeypatch):
    """Beat's agents.reap and every worker's reaper thread run one pass; it reaches the
    release builds through the agents' signal (agents never imports exports)."""
    build, _sent, _curator = asked
    dead = release_build_claim(build_id=build.pk, claim="task:gone")
    later = _gone_quiet(dead, running=True)
    monkeypatch.setattr(timezone, "now", lambda: later)
    from django.conf import settings

    monkeypatch.setattr(settings, "KG_RELEASE_BUILD_ATTEMPTS", 1)
    reap_and_queue()
    build.refresh_from_db()
    assert build.status == ReleaseBuild.Status.FAILED
    assert "its worker (task:gone) stopped while building" in build.error


def test_a_release_build_run_twice_is_cut_once(asked, monkeypatch):
    """Running the task's body for a build being built by a live worker does nothing."""
    build, _sent, _curator = asked
    release_build_claim(build_id=build.pk, claim="task:live")
    again = release_build_run(build_id=build.pk, claim="task:duplicate")
    assert again.status == ReleaseBuild.Status.RUNNING and again.claimed_by == "task:live"
    assert not Release.objects.exists()


# --- The page ---------------------------------------------------------------------------


def _page(client: Client) -> str:
    return htmllib.unescape(client.get(reverse("releases:index")).content.decode())


def test_the_releases_page_says_why_a_build_failed_and_offers_curators_a_retry(
    asked, f, django_capture_on_commit_callbacks, monkeypatch
):
    """The reason in words on the build's row, a Retry button for curators only; the
    retry goes back to the page, where the new build is done."""
    build, _sent, curator = asked
    ReleaseBuild.objects.filter(pk=build.pk).update(attempts=2)
    dead = release_build_claim(build_id=build.pk, claim="task:oom")
    release_builds_sweep(now=_gone_quiet(dead, running=True))

    viewer = Client()
    viewer.force_login(f.user("vic", role="viewer"))
    seen = _page(viewer)
    assert "Stopped after 2 of 2 tries: its worker (task:oom) stopped while building" in seen
    assert reverse("releases:retry", args=[build.pk]) not in seen
    refused = viewer.post(reverse("releases:retry", args=[build.pk]))
    assert refused.status_code == 403 and "Only curators can cut a release" in refused.text

    client = Client()
    client.force_login(curator)
    assert reverse("releases:retry", args=[build.pk]) in _page(client)
    monkeypatch.undo()  # a worker again (eager, like the embedded one)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("releases:retry", args=[build.pk]), follow=True)
    assert response.status_code == 200
    shown = htmllib.unescape(response.content.decode())
    assert 'Release "2026-12" asked for again' in shown
    assert f"a retry of build #{build.pk}" in shown
    assert Release.objects.filter(name="2026-12").count() == 1


def test_retrying_a_build_that_is_not_failed_is_refused_in_words(asked, f):
    """A done (or open) build is not retried; the page says so, no 500, nothing made."""
    build, _sent, curator = asked
    client = Client()
    client.force_login(curator)
    response = client.post(reverse("releases:retry", args=[build.pk]), follow=True)
    assert response.status_code == 200
    assert "only a failed build can be retried" in htmllib.unescape(response.content.decode())
    assert ReleaseBuild.objects.count() == 1
    missing = client.post(reverse("releases:retry", args=[987654]))
    assert missing.status_code == 404 and "no release build #987654" in missing.text
