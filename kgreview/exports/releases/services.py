"""Cutting a release: the one audited write (``release_create``), and the request the
Exports page makes for one, carried out by a Celery task (``release_request``,
``release_build_run``).

Locking: a cut holds, inside its transaction, a PostgreSQL advisory lock that every cut
takes (SQLite serialises writers anyway), so two cuts never both read the same release
as "the previous one"; the release's name is unique in the database as well.
"""

from __future__ import annotations

import logging
import secrets
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Min
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from kgreview.agents.items import Heartbeat, item_lease, item_stale_after
from kgreview.core import audit
from kgreview.core.errors import DomainError, NotFound, StateConflict
from kgreview.graph.models import Edge

from ..models import Release, ReleaseBuild, ReleaseFile
from ..shapes import validate
from ..writers.records import iso
from . import files
from .names import check_instant, check_name, check_notes
from .notes import release_changes

if TYPE_CHECKING:
    from django.contrib.auth.models import User

log = logging.getLogger(__name__)

#: Any number: every cut takes this advisory lock (PostgreSQL) for its transaction.
CUT_LOCK = 2026_12_29


class ReleaseNameTaken(DomainError):
    """A release (or a build of one under way) already has this name; releases never
    change, so the new one needs another name."""

    code = "release_name_taken"
    status = 409


class BuildTakenOver(StateConflict):
    """The build this worker was cutting is no longer its own: the sweep took its worker
    for lost and gave the build to another task (or failed it). Nothing is kept."""

    code = "release_build_taken_over"
    status = 409


def latest_release() -> Release | None:
    """The release with the latest instant (the one a new release's notes start from)."""
    return Release.objects.order_by("-as_of", "-id").first()


def _previous(release: Release | None) -> tuple[str, datetime] | None:
    return (release.name, release.as_of) if release is not None else None


def _name_free(name: str, *, build: ReleaseBuild | None = None) -> None:
    taken = Release.objects.filter(name=name).first()
    if taken is not None:
        raise ReleaseNameTaken(
            f'There is already a release named "{name}" (as of {iso(taken.as_of)}). A '
            "release never changes once cut, so give this one another name.",
            field="name",
        )
    other = ReleaseBuild.objects.filter(
        name=name, status__in=[ReleaseBuild.Status.QUEUED, ReleaseBuild.Status.RUNNING]
    )
    if build is not None:
        other = other.exclude(pk=build.pk)
    if other.exists():
        raise ReleaseNameTaken(
            f'A release named "{name}" is being built now; wait for it on the Releases '
            "page, or give this one another name.",
            field="name",
        )


def _checked(
    *, name: str, as_of: datetime | None, notes: str, build: ReleaseBuild | None = None
) -> tuple[str, datetime, str, Release | None]:
    name = check_name(name)
    notes = check_notes(notes)
    now = timezone.now()
    at = as_of or now
    previous = latest_release()
    check_instant(at, now=now, previous=_previous(previous), first_edge=first_edge_at())
    _name_free(name, build=build)
    return name, at, notes, previous


def first_edge_at() -> datetime | None:
    """The first instant the graph held an edge (as of reads count an edge from the later
    of its ``recorded_at`` and ``valid_at``); None while it has none."""
    return Edge.objects.aggregate(first=Min(Greatest("recorded_at", "valid_at")))["first"]


def _lock_cuts() -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [CUT_LOCK])


def _record(
    *,
    name: str,
    at: datetime,
    notes: str,
    previous: Release | None,
    changes: dict,
    report: dict,
    written: list[files.Written],
    staging: Path,
    acting_user: User | None,
    build: ReleaseBuild | None,
) -> Release:
    """The rows of a release whose files are written, its folder put in place, and the
    audit row; one transaction."""
    with transaction.atomic():
        _lock_cuts()
        if latest_release() != previous:
            raise StateConflict(
                f'Another release was cut while "{name}" was being built, so its notes '
                "no longer start from the latest release. Nothing was kept: ask for it "
                "again.",
            )
        if build is not None:
            _still_ours(build)
        _name_free(name, build=build)
        try:
            with transaction.atomic():
                release = Release.objects.create(
                    name=name,
                    as_of=at,
                    previous=previous,
                    notes=notes,
                    changes=changes,
                    validation=report,
                    conforms=bool(report.get("conforms")),
                    created_by=acting_user if getattr(acting_user, "pk", None) else None,
                )
        except IntegrityError:
            if Release.objects.filter(name=name).exists():
                raise ReleaseNameTaken(
                    f'A release named "{name}" was cut a moment ago; give this one another name.',
                    field="name",
                ) from None
            raise StateConflict(
                f'Another release was cut while "{name}" was being recorded, so its notes '
                "no longer start from the latest release. Nothing was kept: ask for it "
                "again.",
            ) from None
        ReleaseFile.objects.bulk_create(
            ReleaseFile(
                release=release,
                format=w.format,
                label=w.label,
                filename=w.filename,
                content_type=w.content_type,
                size=w.size,
                sha256=w.sha256,
            )
            for w in written
        )
        if build is not None:
            ReleaseBuild.objects.filter(pk=build.pk).update(
                status=ReleaseBuild.Status.DONE,
                release=release,
                claimed_by="",
                finished_at=timezone.now(),
            )
        counts = changes["edges"]["counts"]
        audit.record(
            acting_user=acting_user,
            action="release.create",
            subject=release,
            summary=f'Release "{name}" cut as of {iso(at)}: {counts["after"]} edges '
            f"({counts['added']} added, {counts['changed']} changed, {counts['retired']} "
            f"retired since {previous.name if previous else 'the start'}).",
            after={
                "name": name,
                "as_of": iso(at),
                "files": {w.filename: w.sha256 for w in written},
            },
        )
        # Last: a rename either happens or raises, and raising rolls the rows back.
        files.put_in_place(staging, name)
    return release


def _still_ours(build: ReleaseBuild) -> None:
    """Lock the build's row and check this task still holds it (``BuildTakenOver``)."""
    held = (
        ReleaseBuild.objects.select_for_update()
        .filter(pk=build.pk, status=ReleaseBuild.Status.RUNNING, claimed_by=build.claimed_by)
        .exists()
    )
    if not held:
        raise BuildTakenOver(
            f'The build of "{build.name}" was taken from this worker (its heartbeat was '
            "taken for lost) or failed meanwhile; nothing of this attempt was kept."
        )


def release_create(
    *,
    name: str,
    acting_user: User | None,
    as_of: datetime | None = None,
    notes: str = "",
    build: ReleaseBuild | None = None,
) -> Release:
    """Cut release ``name`` of the graph as of ``as_of`` (default: now) for
    ``acting_user`` (a curator; ``None`` is the command line, the system's own).

    Refused in words: a malformed or taken name, an instant in the future or before the
    previous release's. The exports and the validation report are written first, outside
    any transaction (they read the graph as of the instant, which later writes do not
    change); then one transaction records the release, its files with their hashes, the
    ``build`` it carries out (if any) and the curation log's row, and puts the folder in
    place. Must not be called inside a transaction: building a large graph's files is
    long, and nothing of it is kept if the cut is refused.
    """
    name, at, notes, previous = _checked(name=name, as_of=as_of, notes=notes, build=build)
    staging = files.staging_folder()
    try:
        written = list(files.write_exports(staging, at=at))
        report = validate(at=at).as_json()
        written.append(files.write_validation(staging, report))
        changes = release_changes(since=previous.as_of if previous else None, until=at)
        return _record(
            name=name,
            at=at,
            notes=notes,
            previous=previous,
            changes=changes,
            report=report,
            written=written,
            staging=staging,
            acting_user=acting_user,
            build=build,
        )
    finally:
        if staging.exists():
            files.discard(staging)


# --- From the page: a build request, carried out by a task -------------------------------


def release_request(
    *,
    name: str,
    acting_user: User | None,
    as_of: datetime | None = None,
    notes: str = "",
    retry_of: ReleaseBuild | None = None,
) -> ReleaseBuild:
    """Ask for release ``name`` to be cut by the worker, for ``acting_user`` (a curator);
    ``retry_of`` is the failed build this request asks again.

    Checks what it can now (the name, the instant) and refuses in words; records the
    request (a ``ReleaseBuild``, queued) with its curation log row in one transaction,
    then queues ``exports.release_build`` once that commits. A broker that refuses the
    task leaves the build failed with the reason, never queued forever.
    """
    with transaction.atomic():
        name, at, notes, _previous_release = _checked(name=name, as_of=as_of, notes=notes)
        try:
            with transaction.atomic():
                build = ReleaseBuild.objects.create(
                    name=name,
                    as_of=at,
                    notes=notes,
                    requested_by=acting_user if getattr(acting_user, "pk", None) else None,
                    renewed_at=timezone.now(),
                    attempts=1,
                    retry_of=retry_of,
                )
        except IntegrityError:
            raise ReleaseNameTaken(
                f'A release named "{name}" was asked for a moment ago; wait for it on the '
                "Releases page.",
                field="name",
            ) from None
        audit.record(
            acting_user=acting_user,
            action="release.request",
            subject=build,
            summary=f'Release "{name}" asked for, as of {iso(at)}'
            + (f" (again, after build #{retry_of.pk} failed)." if retry_of else "."),
            after={"name": name, "as_of": iso(at), "retry_of": retry_of.pk if retry_of else None},
        )
        transaction.on_commit(lambda: _queue(build.pk))
    return build


def _queue(build_id: int) -> None:
    """Send the build's task (the send was counted in ``attempts`` by the transaction
    that decided it); a broker that refuses it fails the build in words, never leaves it
    queued."""
    from ..tasks import release_build  # the task module imports this one

    try:
        release_build.delay(build_id=build_id)
    except Exception as exc:  # any broker failure: said in words, the build not left queued
        log.exception("release build #%s: the broker refused the task", build_id)
        release_build_fail(
            build_id=build_id,
            reason=f"the task queue refused it ({exc.__class__.__name__}: {exc}); ask again "
            "once the worker's broker is reachable.",
        )


def release_build_fail(*, build_id: int, reason: str, claim: str | None = None) -> bool:
    """Mark an open build failed with ``reason`` (the system's own bookkeeping: the
    request's audit row already names who asked). With ``claim``, only while that task
    still holds it (a build the sweep gave to another task is that task's now). True if
    it was failed."""
    rows = ReleaseBuild.objects.filter(
        pk=build_id, status__in=[ReleaseBuild.Status.QUEUED, ReleaseBuild.Status.RUNNING]
    )
    if claim is not None:
        rows = rows.filter(claimed_by=claim)
    return bool(
        rows.update(
            status=ReleaseBuild.Status.FAILED,
            error=reason[:2000],
            claimed_by="",
            finished_at=timezone.now(),
        )
    )


# --- A build's life: claimed, renewed while it builds, swept when its worker is lost -----


def build_stale_after() -> timedelta:
    """How long a running build may go without its heartbeat before its worker is taken
    as dead: the agents' claim window (``KG_ITEM_STALE_SECONDS``)."""
    return item_stale_after()


def build_unclaimed_after() -> timedelta:
    """How long a queued build may wait for a worker before its task is taken as lost:
    the agents' lease (``KG_ITEM_LEASE_SECONDS``; a message may wait behind others)."""
    return item_lease()


def build_lost(build: ReleaseBuild, now: datetime) -> str:
    """Why an open build is taken as lost, in words; "" while a worker may still be at it
    (running, and its heartbeat recent; queued, and sent recently)."""
    if not build.is_open:
        return ""
    last = build.renewed_at or build.started_at or build.requested_at
    if build.status == ReleaseBuild.Status.RUNNING:
        window = build_stale_after()
        if last >= now - window:
            return ""
        who = build.claimed_by or "unknown"
        return (
            f"its worker ({who}) stopped while building: no sign of life for "
            f"{int(window.total_seconds())} s (killed, or its machine lost)"
        )
    window = build_unclaimed_after()
    if last >= now - window:
        return ""
    return (
        f"no worker took it for {int(window.total_seconds())} s (its task message was lost, "
        "or no worker is running)"
    )


class BuildHeartbeat(Heartbeat):
    """Renew a running build (``renewed_at``) while its task builds it; ``lost`` once the
    build is no longer this task's (the sweep gave it to another, or failed it)."""

    def __init__(self, build_id: int, claim: str) -> None:
        super().__init__(f"release-build-heartbeat-{build_id}")
        self.build_id = build_id
        self.claim = claim

    def renew(self) -> int:
        return ReleaseBuild.objects.filter(
            pk=self.build_id, status=ReleaseBuild.Status.RUNNING, claimed_by=self.claim
        ).update(renewed_at=timezone.now())


def release_build_claim(
    *, build_id: int, claim: str, now: datetime | None = None
) -> ReleaseBuild | None:
    """Take build ``build_id`` for the task ``claim``: a queued build, or a running one
    whose worker is lost (``build_lost``: a message the broker handed back after its
    worker died). None when it is not this task's to build (finished, missing, or
    running under a live worker)."""
    now = now or timezone.now()
    with transaction.atomic():
        build = ReleaseBuild.objects.select_for_update().filter(pk=build_id).first()
        if build is None or not build.is_open:
            return None
        if build.status == ReleaseBuild.Status.RUNNING and not build_lost(build, now):
            return None
        ReleaseBuild.objects.filter(pk=build.pk).update(
            status=ReleaseBuild.Status.RUNNING,
            claimed_by=claim[:200],
            started_at=now,
            renewed_at=now,
        )
    return ReleaseBuild.objects.get(pk=build_id)


def release_build_carry_out(*, build: ReleaseBuild) -> ReleaseBuild:
    """Cut the release a claimed ``build`` asks for, renewing it while it works. A
    refusal (the name taken meanwhile, another release cut first, the build given to
    another task) fails the build with its words; anything else fails it and is raised."""
    claim = build.claimed_by
    try:
        with BuildHeartbeat(build.pk, claim):
            release_create(
                name=build.name,
                as_of=build.as_of,
                notes=build.notes,
                acting_user=build.requested_by,
                build=build,
            )
    except BuildTakenOver:
        pass  # another task has it now; this one keeps nothing
    except DomainError as exc:
        release_build_fail(build_id=build.pk, reason=exc.message, claim=claim)
    except Exception as exc:
        release_build_fail(
            build_id=build.pk,
            reason=f"the build stopped: {exc.__class__.__name__}: {exc}",
            claim=claim,
        )
        raise
    return ReleaseBuild.objects.get(pk=build.pk)


def release_build_run(*, build_id: int, claim: str = "") -> ReleaseBuild | None:
    """Carry out build ``build_id`` (the task's body, ``claim`` naming the task); a build
    finished, or running under a live worker, is left as it is, so running it twice cuts
    one release."""
    claim = claim or f"local:{secrets.token_hex(6)}"
    build = release_build_claim(build_id=build_id, claim=claim)
    if build is None:
        return ReleaseBuild.objects.filter(pk=build_id).first()
    return release_build_carry_out(build=build)


def release_build_sweep_one(*, build_id: int, now: datetime) -> str:
    """Deal with one build taken as lost: queued again while it has sends left
    (``KG_RELEASE_BUILD_ATTEMPTS``), else failed in words. Returns "requeued", "failed"
    or "" (not lost after all: read again under its row lock, so a heartbeat that just
    renewed it wins)."""
    limit = settings.KG_RELEASE_BUILD_ATTEMPTS
    with transaction.atomic():
        build = ReleaseBuild.objects.select_for_update().filter(pk=build_id).first()
        why = build_lost(build, now) if build is not None else ""
        if build is None or not why:
            return ""
        if build.attempts < limit:
            ReleaseBuild.objects.filter(pk=build.pk).update(
                status=ReleaseBuild.Status.QUEUED,
                claimed_by="",
                renewed_at=now,
                attempts=F("attempts") + 1,
                error=f"Sent to the workers again ({build.attempts + 1} of {limit}): {why}.",
            )
            transaction.on_commit(lambda: _queue(build_id))
            log.warning("release build #%s queued again: %s", build_id, why)
            return "requeued"
        ReleaseBuild.objects.filter(pk=build.pk).update(
            status=ReleaseBuild.Status.FAILED,
            claimed_by="",
            finished_at=now,
            error=(
                f"Stopped after {build.attempts} of {limit} tries: {why}. Nothing of it was "
                "kept; a curator can retry it from the Releases page."
            ),
        )
        log.warning("release build #%s failed: %s", build_id, why)
        return "failed"


def release_builds_sweep(*, now: datetime | None = None) -> dict[str, list[int]]:
    """The reaper's pass over release builds (beat's ``agents.reap`` and every worker's
    reaper thread run it): each open build whose worker is lost or whose task never
    reached one is queued again or failed in words (``release_build_sweep_one``). Safe
    to run twice and on two beats. The system's own bookkeeping: not audited."""
    now = now or timezone.now()
    done: dict[str, list[int]] = {"requeued": [], "failed": []}
    quiet_since = now - min(build_stale_after(), build_unclaimed_after())
    candidates = (
        ReleaseBuild.objects.filter(
            status__in=[ReleaseBuild.Status.QUEUED, ReleaseBuild.Status.RUNNING]
        )
        .annotate(last=Coalesce("renewed_at", "started_at", "requested_at"))
        .filter(last__lt=quiet_since)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for build_id in list(candidates):
        outcome = release_build_sweep_one(build_id=build_id, now=now)
        if outcome:
            done[outcome].append(build_id)
    return done


def release_build_retry(*, build_id: int, acting_user: User | None) -> ReleaseBuild:
    """Ask again for the release a failed build asked for (same name, instant and
    notes), for ``acting_user`` (a curator): a new build pointing at the failed one,
    which stays failed. Refused in words when the build is not failed, or when the name
    or instant no longer fit (``release_request``'s checks)."""
    old = ReleaseBuild.objects.filter(pk=build_id).first()
    if old is None:
        raise NotFound(f"There is no release build #{build_id}; the Releases page lists them.")
    if old.status != ReleaseBuild.Status.FAILED:
        raise StateConflict(
            f'The build of "{old.name}" is {old.get_status_display().lower()}, not failed: '
            "only a failed build can be retried."
        )
    return release_request(
        name=old.name,
        as_of=old.as_of,
        notes=old.notes,
        acting_user=acting_user,
        retry_of=old,
    )
