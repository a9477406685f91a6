"""Reading releases: the list, one by name, one of its files (checked against its hash)."""

from __future__ import annotations

from pathlib import Path

from django.db.models import Prefetch, QuerySet

from kgreview.core.errors import NotFound

from ..models import Release, ReleaseBuild, ReleaseFile
from ..writers.records import iso
from . import files
from .names import name_refusal

#: Builds the Releases page shows: the open ones and the last few finished.
RECENT_BUILDS = 10


def releases() -> QuerySet[Release]:
    """Every release, latest instant first, with its files and who cut it."""
    return Release.objects.select_related("created_by", "previous").prefetch_related(
        Prefetch("files", queryset=ReleaseFile.objects.order_by("id"))
    )


def release_named(name: str) -> Release:
    """The release called ``name``; ``NotFound`` in words otherwise (a malformed name
    too: no release can have it)."""
    if name_refusal(name) is None:
        found = releases().filter(name=name).first()
        if found is not None:
            return found
    shown = name if len(name) <= 64 else name[:61] + "..."
    raise NotFound(f'There is no release named "{shown}". The Releases page lists them all.')


def release_file(release: Release, filename: str) -> ReleaseFile:
    for stored in release.files.all():
        if stored.filename == filename:
            return stored
    shown = filename if len(filename) <= 120 else filename[:117] + "..."
    raise NotFound(
        f'Release "{release.name}" has no file named "{shown}"; its files are '
        + ", ".join(f.filename for f in release.files.all())
        + "."
    )


def release_file_path(stored: ReleaseFile) -> Path:
    """The file on disk, read through and found equal to its recorded SHA-256 and size;
    ``files.ReleaseFileChanged`` in words when it is not."""
    return files.checked_path(
        release_name=stored.release.name,
        filename=stored.filename,
        size=stored.size,
        sha256=stored.sha256,
    )


def download_name(stored: ReleaseFile) -> str:
    """The name a downloaded file is saved under: ``kgreview-<release>-<file>``."""
    return f"kgreview-{stored.release.name}-{stored.filename}"


def recent_builds() -> list[ReleaseBuild]:
    """Open builds, then the latest finished ones (the page's status list)."""
    return list(
        ReleaseBuild.objects.select_related("requested_by", "release").order_by(
            "-requested_at", "-id"
        )[:RECENT_BUILDS]
    )


def any_build_open() -> bool:
    return ReleaseBuild.objects.filter(
        status__in=[ReleaseBuild.Status.QUEUED, ReleaseBuild.Status.RUNNING]
    ).exists()


def release_json(release: Release, *, file_url, detail: bool = False) -> dict:
    """A release as the API says it; ``file_url(release, stored)`` makes each file's
    address. ``detail`` adds the notes generated from the diff and the validation report."""
    out = {
        "name": release.name,
        "as_of": iso(release.as_of),
        "created_at": iso(release.created_at),
        "created_by": release.created_by.username if release.created_by else None,
        "previous": release.previous.name if release.previous else None,
        "notes": release.notes,
        "conforms": release.conforms,
        "counts": {
            "concepts": release.changes["concepts"]["counts"]["after"],
            "edges": release.changes["edges"]["counts"]["after"],
        },
        "files": [
            {
                "format": stored.format,
                "label": stored.label,
                "filename": stored.filename,
                "content_type": stored.content_type,
                "size": stored.size,
                "sha256": stored.sha256,
                "url": file_url(release, stored),
            }
            for stored in release.files.all()
        ],
    }
    if detail:
        out["changes"] = release.changes
        out["validation"] = release.validation
    return out
