"""A release's files: written once from the export writers, checked whenever served.

Files live under ``settings.KG_RELEASE_DIR``: ``<name>/`` per release, written first in
``.staging/<token>/`` and renamed into place inside the transaction that records them,
so a release's folder is whole or absent. Each file's SHA-256 and size are taken while
it is written (the writers stream, so a large graph never sits in memory) and stored
with the release; ``checked_path`` reads the file again and refuses it, in words, when
either no longer matches.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings

from kgreview.core.errors import DomainError

from .. import writers

#: The exports stored with every release, in the order the page lists them, each with
#: the file name it has in the release's folder.
STORED = (
    ("jsonld", "graph.jsonld"),
    ("csv", "graph-neo4j.zip"),
    ("graphml", "graph.graphml"),
    ("turtle", "graph.ttl"),
    ("shacl", "shapes.ttl"),
)
VALIDATION = ("validation", "validation.json")
READ_CHUNK = 1 << 20


class ReleaseFileChanged(DomainError):
    """A release's file on the server's disk no longer matches the size and SHA-256
    recorded when the release was cut (changed or missing); it is not served."""

    code = "release_file_changed"
    status = 409


@dataclass(frozen=True)
class Written:
    """One file written for a release: what the ``ReleaseFile`` row records."""

    format: str
    label: str
    filename: str
    content_type: str
    size: int
    sha256: str


def root() -> Path:
    return Path(settings.KG_RELEASE_DIR)


def folder(name: str) -> Path:
    """Where release ``name``'s files live (the name is a checked slug)."""
    return root() / name


def staging_folder() -> Path:
    path = root() / ".staging" / secrets.token_hex(8)
    path.mkdir(parents=True)
    return path


def _write(path: Path, chunks: Iterable[str | bytes]) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with path.open("wb") as out:
        for chunk in chunks:
            data = chunk.encode("utf-8") if isinstance(chunk, str) else chunk
            digest.update(data)
            size += len(data)
            out.write(data)
        out.flush()
        os.fsync(out.fileno())
    return size, digest.hexdigest()


def write_exports(where: Path, *, at: datetime) -> Iterator[Written]:
    """Each stored export of the graph as of ``at``, streamed to a file in ``where``."""
    for key, filename in STORED:
        fmt = writers.FORMATS[key]
        size, sha = _write(where / filename, fmt.stream(at=at))
        yield Written(key, fmt.label, filename, fmt.content_type, size, sha)


def write_validation(where: Path, report: dict) -> Written:
    key, filename = VALIDATION
    text = json.dumps(report, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    size, sha = _write(where / filename, [text])
    return Written(key, "Validation report (JSON)", filename, "application/json", size, sha)


def put_in_place(staging: Path, name: str) -> Path:
    """Rename the staging folder to the release's; a folder already there under that
    name belongs to no release (a cut that failed after the rename), so it is moved
    aside to ``.orphans/``, never overwritten or removed."""
    final = folder(name)
    if final.exists():
        aside = root() / ".orphans" / f"{name}-{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}"
        aside.parent.mkdir(parents=True, exist_ok=True)
        final.rename(aside)
    staging.rename(final)
    return final


def discard(staging: Path) -> None:
    """Remove a staging folder no release took (files only: no row names them)."""
    shutil.rmtree(staging, ignore_errors=True)


def _sha256(path: Path) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as stream:
        while block := stream.read(READ_CHUNK):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()


def checked_path(*, release_name: str, filename: str, size: int, sha256: str) -> Path:
    """The path of a release's file, read through and found equal to what was recorded
    when the release was cut; ``ReleaseFileChanged`` in words otherwise."""
    path = folder(release_name) / filename
    where = f'{filename} of release "{release_name}"'
    try:
        found_size, found = _sha256(path)
    except FileNotFoundError:
        raise ReleaseFileChanged(
            f"{where} is missing from the server's disk ({path}). A release never "
            "changes, so kgreview serves nothing in its place: restore the file from a "
            "backup (its SHA-256 is on the release's page)."
        ) from None
    except OSError as exc:
        raise ReleaseFileChanged(
            f"{where} cannot be read on the server's disk ({exc.strerror or exc}); "
            "nothing is served in its place."
        ) from None
    if found_size != size or found != sha256:
        raise ReleaseFileChanged(
            f"{where} was changed on the server's disk: its SHA-256 is now {found} "
            f"({found_size:,} bytes), not the {sha256} ({size:,} bytes) recorded when the "
            "release was cut. A release never changes, so kgreview refuses to serve it: "
            "restore the file from a backup."
        )
    return path
