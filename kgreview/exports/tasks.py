"""Celery tasks of the exports: building a release a curator asked for, and the sweep of
builds whose worker died or whose task was lost. Thin: the build row is loaded by key
and one that is finished, or being built by a live worker, is left alone, so running it
twice is safe."""

from __future__ import annotations

from kgreview.agents.tasks import kgreview_task

from .releases.services import release_build_run, release_builds_sweep


@kgreview_task(name="exports.release_build")
def release_build(self, *, build_id: int) -> str:
    """Cut the release build ``build_id`` asks for; a no-op once it is done or failed, or
    while a live worker builds it."""
    build = release_build_run(build_id=build_id, claim=f"task:{self.request.id}")
    return build.status if build is not None else "missing"


def sweep_release_builds(*, now=None, **_kwargs) -> None:
    """The reaper's pass (``agents.signals.reaper_pass``) over release builds."""
    release_builds_sweep(now=now)
