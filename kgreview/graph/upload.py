"""Uploading documents from the browser: each file read, stored and answered on its own.

A file over ``KG_MAX_SOURCE_BYTES`` is refused while it streams in (``SizeLimit`` skips
the rest of it: nothing past the limit is kept in memory or on disk); every other file is
read by ``importing.read_upload`` and stored by ``importing.store_in_batch``. One bad
file is one result in words and never stops the others.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, SkipFile

from construction.text import visible
from kgreview.core import links

from .importing import SUPPORTED, BadSourceFile, import_json, read_upload, store_in_batch
from .sources import SourceImportResult

if TYPE_CHECKING:
    from django.contrib.auth.models import User

__all__ = [
    "ACCEPT",
    "SizeLimit",
    "UploadResult",
    "clean_name",
    "human_size",
    "status_for",
    "upload_files",
]

log = logging.getLogger(__name__)

FIELD = "files"
# For the file picker's filter; the server decides by the same suffixes.
ACCEPT = ",".join(s.strip() for s in SUPPORTED.split(","))
MAX_NAME = 255
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def human_size(n: int) -> str:
    """Bytes in the units a person reads (decimal, as disks and browsers count them)."""
    if n < 1000:
        return f"{n} byte{'s' if n != 1 else ''}"
    for unit in ("kB", "MB", "GB", "TB"):
        n /= 1000
        if n < 1000 or unit == "TB":
            return f"{n:.1f}".removesuffix(".0") + f" {unit}"
    raise AssertionError("unreachable")


def too_big(max_bytes: int, size: int | None = None) -> str:
    what = f"file is {human_size(size)}" if size is not None else "file is"
    return (
        f"{what} over the limit of {human_size(max_bytes)} for one file "
        "(KG_MAX_SOURCE_BYTES); nothing was saved"
    )


def clean_name(raw: str) -> str:
    """The file's own name: no folders, no control, zero-width or bidi characters, at most
    255 characters (the end, with the extension, kept)."""
    name = unicodedata.normalize("NFC", raw or "")
    name = re.split(r"[\\/]", name)[-1]
    # Controls go first (some are whitespace to Python), then zero-width and bidi marks.
    name = " ".join(visible(_UNPRINTABLE.sub("", name)).split())
    if name in {".", ".."}:
        return ""
    if len(name) > MAX_NAME:
        suffix = PurePosixPath(name).suffix[:20]
        name = name[: MAX_NAME - len(suffix) - 1] + "…" + suffix
    return name


class SizeLimit(FileUploadHandler):
    """Skips each uploaded file as soon as it grows past ``max_bytes``.

    Django would otherwise spool the whole file to a temporary file before the view could
    look at its size. Skipped files do not reach ``request.FILES``; their names are kept
    in ``refused`` so the view can say why.
    """

    def __init__(self, request=None, *, max_bytes: int) -> None:
        super().__init__(request)
        self.max_bytes = max_bytes
        self.refused: list[str] = []

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        if start + len(raw_data) > self.max_bytes:
            self.refused.append(self.file_name or "")
            raise SkipFile()
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the next handler (memory or temporary file) makes the file


@dataclass(frozen=True)
class UploadResult:
    """One file's answer: what was stored, or why nothing was."""

    name: str
    message: str
    ok: bool
    status: int = 200  # what this file alone would answer: 200, 400, or 413 (too big)
    url: str = ""
    outcome: str = ""
    data: dict = field(default_factory=dict)

    def as_json(self) -> dict:
        if not self.ok:
            return {"name": self.name, "error": self.message}
        return {**self.data, "name": self.name, "message": self.message, "url": self.url}


def describe(result: SourceImportResult) -> str:
    """ "created tokenization, revision 1, 12 pages" and the like."""
    revision = result.revision
    pages = revision.page_count
    if pages:
        size = f"{pages:,} page{'s' if pages != 1 else ''}"
    else:
        size = f"{revision.word_count:,} word{'s' if revision.word_count != 1 else ''}"
    slug = result.source.slug
    if result.outcome == "unchanged":
        return f"unchanged: revision {revision.number} of {slug} already holds this text"
    return f"{result.outcome} {slug}, revision {revision.number}, {size}"


def _failed(name: str, message: str, status: int = 400) -> UploadResult:
    return UploadResult(name=name or "(no name)", message=message, ok=False, status=status)


def _read(uploaded: UploadedFile, max_bytes: int) -> bytes | None:
    """The file's bytes, read in chunks; None as soon as they pass ``max_bytes``."""
    parts: list[bytes] = []
    total = 0
    for chunk in uploaded.chunks():
        total += len(chunk)
        if total > max_bytes:
            return None
        parts.append(chunk)
    return b"".join(parts)


def upload_one(
    uploaded: UploadedFile, *, acting_user: User | None, max_bytes: int, seen: dict[str, str]
) -> UploadResult:
    """Read and store one uploaded file; every failure is a result in words."""
    name = clean_name(uploaded.name or "")
    if not name:
        return _failed(name, f"the file has no name: give it one ending in {SUPPORTED}")
    size = uploaded.size
    if size is not None and size > max_bytes:
        return _failed(name, too_big(max_bytes, size), 413)
    try:
        raw = _read(uploaded, max_bytes)
    except OSError as exc:  # the temporary file vanished or the disk failed
        return _failed(name, f"cannot be read: {exc.strerror or exc.__class__.__name__}")
    if raw is None:
        return _failed(name, too_big(max_bytes), 413)
    try:
        slug, document = read_upload(raw, filename=name, max_bytes=max_bytes)
    except BadSourceFile as exc:
        return _failed(name, str(exc))
    except Exception as exc:  # a reader's bug must not cost the other files
        log.exception("reading upload %r failed", name)
        return _failed(
            name,
            f"could not be read ({exc.__class__.__name__}); nothing was saved and the "
            "error was logged for an admin",
        )
    result = store_in_batch(
        slug=slug,
        document=document,
        raw=raw,
        filename=name,
        origin=f"upload:{name}",
        acting_user=acting_user,
        seen=seen,
        where=name,
        batch="upload",
    )
    if isinstance(result, str):
        return _failed(name, result)
    return UploadResult(
        name=name,
        message="; ".join([describe(result), *document.notes]),
        ok=True,
        url=links.url("source", result.source.slug),
        outcome=result.outcome,
        data=import_json(f"upload:{name}", result, notes=document.notes),
    )


def upload_files(
    files: Iterable[UploadedFile],
    *,
    refused: Iterable[str],
    acting_user: User | None,
    max_bytes: int,
) -> list[UploadResult]:
    """Every file's result, in the order sent; ``refused`` were skipped as too big."""
    seen: dict[str, str] = {}
    results = [
        upload_one(f, acting_user=acting_user, max_bytes=max_bytes, seen=seen) for f in files
    ]
    results += [_failed(clean_name(name), too_big(max_bytes), 413) for name in refused]
    return results


def status_for(results: list[UploadResult]) -> int:
    """200 when anything was stored; 413 when every file was too big; else 400."""
    if any(r.ok for r in results):
        return 200
    if results and all(r.status == 413 for r in results):
        return 413
    return 400
