"""Reading documents (Markdown, text, HTML, PDF, Word) from disk or an upload into
sources, one file at a time.

A bad file (unreadable, binary, empty, oversized, encrypted, scanned, corrupt, of an
unknown type, past a reading limit) becomes an ``ImportProblem`` with a sentence saying
what is wrong; the rest of the batch goes on. PDF, Word and HTML files are read in a child
process within the ``KG_READ_*`` limits (``construction.doc_sandbox``): a crafted file
costs the child, never this process, and is refused in words naming the limit. Only
regular files inside the paths given are read: a symbolic link or anything else that could
lead outside them (``lessons/leak.md -> ../var/secret_key``) is refused in words, never
followed.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.utils.text import slugify

from construction.doc_limits import ReadLimits
from construction.doc_sandbox import read_bounded
from construction.documents import BadDocument, Document, media_type_for
from construction.formats import SUFFIXES
from kgreview.core.errors import DomainError

from .sources import SourceImportResult, source_import

if TYPE_CHECKING:
    from django.contrib.auth.models import User

SUPPORTED = ", ".join(sorted(SUFFIXES))
MAX_SLUG = 200


@dataclass(frozen=True)
class ImportProblem:
    path: str
    message: str


@dataclass
class ImportReport:
    results: list[tuple[str, SourceImportResult]] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    # Files imported with something changed on the way (control characters removed).
    notes: list[ImportProblem] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(1 for _, r in self.results if r.outcome == outcome)

    def as_json(self) -> dict:
        return {
            "imported": [
                import_json(path, r, notes=[n.message for n in self.notes if n.path == path])
                for path, r in self.results
            ],
            "errors": [{"path": p.path, "error": p.message} for p in self.problems],
            "notes": [{"path": n.path, "note": n.message} for n in self.notes],
            "skipped": list(self.skipped),
            "counts": {
                "created": self.count("created"),
                "revised": self.count("revised"),
                "unchanged": self.count("unchanged"),
                "errors": len(self.problems),
                "skipped": len(self.skipped),
            },
        }


def import_json(path: str, result: SourceImportResult, *, notes: Iterable[str] = ()) -> dict:
    revision = result.revision
    return {
        "notes": list(notes),
        "path": path,
        "slug": result.source.slug,
        "title": result.source.title,
        "revision": revision.number,
        "outcome": result.outcome,
        "sha256": revision.sha256,
        "media_type": revision.media_type,
        "words": revision.word_count,
        "pages": revision.page_count or None,
        "sections": len((revision.structure or {}).get("sections") or []),
    }


class BadSourceFile(Exception):
    pass


def slug_for(document: Document, filename: str) -> str:
    """The front matter's slug, or one made from the file name; raises ``BadSourceFile``."""
    stem = Path(filename).stem
    slug = document.slug or slugify(stem)[:MAX_SLUG].strip("-")
    if not slug and stem.strip():
        # A name in another script ("日本語.md") has no ASCII slug: a stable one made
        # from the name itself, so re-importing the file finds its source again.
        slug = "document-" + hashlib.sha256(stem.encode("utf-8", "replace")).hexdigest()[:10]
    if not slug:
        raise BadSourceFile(
            "cannot make a slug from this file name: give it letters or digits "
            "(or, for Markdown, a 'slug:' in its front matter)"
        )
    try:
        validate_slug(slug)
    except ValidationError:
        raise BadSourceFile(
            f"slug {slug!r} is not valid: use letters, digits, hyphens and underscores"
        ) from None
    if len(slug) > MAX_SLUG:
        raise BadSourceFile(f"slug {slug[:40]!r}… is longer than {MAX_SLUG} characters")
    return slug


def read_limits() -> ReadLimits:
    """The limits of reading one document, from the ``KG_READ_*`` settings."""
    return ReadLimits(
        memory_mb=settings.KG_READ_MEMORY_MB,
        cpu_seconds=settings.KG_READ_CPU_SECONDS,
        max_pages=settings.KG_READ_MAX_PAGES,
        max_chars=settings.KG_READ_MAX_CHARS,
        max_paragraphs=settings.KG_READ_MAX_PARAGRAPHS,
        max_inflation=settings.KG_READ_MAX_INFLATION,
        max_unpacked_bytes=settings.KG_READ_MAX_UNPACKED_BYTES,
    )


def read_upload(raw: bytes, *, filename: str, max_bytes: int) -> tuple[str, Document]:
    """Read one file's bytes as a document and choose its slug; raises ``BadSourceFile``
    (in words, naming the limit a file past one hit)."""
    if media_type_for(filename) is None:
        suffix = Path(filename).suffix.lower() or "(none)"
        raise BadSourceFile(f"unsupported file type {suffix!r}: kgreview reads {SUPPORTED}")
    try:
        document = read_bounded(raw, filename=filename, max_bytes=max_bytes, limits=read_limits())
    except BadDocument as exc:
        raise BadSourceFile(str(exc)) from None
    return slug_for(document, filename), document


def store_document(
    *,
    slug: str,
    document: Document,
    raw: bytes,
    filename: str,
    origin: str,
    acting_user: User | None,
) -> SourceImportResult:
    """One document into the graph as a new source or revision (raises ``DomainError``).

    ``acting_user`` is who imports it, or ``None`` for the system (see ``source_import``).
    """
    return source_import(
        slug=slug,
        title=document.title,
        text=document.text,
        origin=origin,
        media_type=document.media_type,
        text_format=document.text_format,
        structure=document.as_structure(),
        original=raw,
        filename=Path(filename).name,
        acting_user=acting_user,
    )


def store_in_batch(
    *,
    slug: str,
    document: Document,
    raw: bytes,
    filename: str,
    origin: str,
    acting_user: User | None,
    seen: dict[str, str],
    where: str,
    batch: str,
) -> SourceImportResult | str:
    """``store_document`` for one file of a batch (an import, an upload): its result, or in
    words why it was not stored. ``seen`` maps each slug stored so far to the file that
    took it (``where``), so two files of one ``batch`` cannot overwrite each other."""
    if slug in seen:
        return (
            f"slug {slug!r} is already used by {seen[slug]} in this {batch}; rename one of "
            "them (or give a Markdown file a 'slug:' in its front matter)"
        )
    seen[slug] = where
    try:
        return store_document(
            slug=slug,
            document=document,
            raw=raw,
            filename=filename,
            origin=origin,
            acting_user=acting_user,
        )
    except DomainError as exc:
        return str(exc)


# --- Files on disk -----------------------------------------------------------------------


def _refusal(path: Path, root: Path | None) -> str | None:
    """Why ``path`` may not be read, or None: only regular files inside ``root``."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return "no such file or folder"
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc.__class__.__name__}"
    if stat.S_ISLNK(info.st_mode):
        return (
            "is a symbolic link: kgreview reads only regular files inside the paths "
            "given, never what a link points to"
        )
    if stat.S_ISDIR(info.st_mode):
        return "is a folder, not a file"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file (a device, pipe or socket)"
    if root is not None:
        real, boundary = Path(os.path.realpath(path)), Path(os.path.realpath(root))
        if boundary not in real.parents:
            return f"resolves outside the folder {root}: refused"
    return None


def collect_files(paths: Iterable[str | Path]) -> tuple[list[Path], ImportReport]:
    """The files to import, in a stable order, and what was refused or skipped."""
    report = ImportReport()
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_symlink():
            report.problems.append(ImportProblem(str(path), _refusal(path, None) or ""))
        elif path.is_dir():
            inside = _walk(path, report)
            if not inside:
                report.problems.append(
                    ImportProblem(str(path), f"folder holds no documents ({SUPPORTED})")
                )
            found += inside
        else:
            why = _refusal(path, None)
            if why is not None:
                report.problems.append(ImportProblem(str(path), why))
            elif media_type_for(path.name) is None:
                suffix = path.suffix.lower() or "(none)"
                report.problems.append(
                    ImportProblem(
                        str(path), f"unsupported file type {suffix!r}: kgreview reads {SUPPORTED}"
                    )
                )
            else:
                found.append(path)
    return found, report


def _walk(root: Path, report: ImportReport) -> list[Path]:
    """Documents under ``root``; hidden entries skipped, links and other types refused."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        base = Path(folder)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in list(dirs):
            if (base / name).is_symlink():
                dirs.remove(name)
                report.problems.append(
                    ImportProblem(str(base / name), _refusal(base / name, None) or "")
                )
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = base / name
            if media_type_for(name) is None:
                report.skipped.append(str(path))
                continue
            why = _refusal(path, root)
            if why is not None:
                report.problems.append(ImportProblem(str(path), why))
            else:
                found.append(path)
    return sorted(found)


def import_paths(
    paths: Iterable[str | Path],
    *,
    max_bytes: int,
    acting_user: User | None,
    progress: Callable[[int, int, str], None] | None = None,
) -> ImportReport:
    """Import every document under ``paths``; each file in its own transaction.

    ``acting_user`` is who imports them, or ``None`` for the system (a command).

    ``progress(done, total, path)`` is called after each file.
    """
    files, report = collect_files(paths)
    seen_slugs: dict[str, str] = {}
    for done, path in enumerate(files, start=1):
        where = str(path)
        try:
            problem = _import_one(
                path, where, max_bytes, seen_slugs, report, acting_user=acting_user
            )
        finally:
            if progress is not None:
                progress(done, len(files), where)
        if problem is not None:
            report.problems.append(ImportProblem(where, problem))
    return report


def _import_one(
    path, where, max_bytes, seen_slugs, report, *, acting_user: User | None
) -> str | None:
    try:
        size = path.stat().st_size
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc.__class__.__name__}"
    if size > max_bytes:
        return f"file is {size:,} bytes, over the limit of {max_bytes:,} (KG_MAX_SOURCE_BYTES)"
    try:
        # O_NOFOLLOW: a file swapped for a link after it was checked is still refused.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc.__class__.__name__}"
    try:
        slug, document = read_upload(raw, filename=path.name, max_bytes=max_bytes)
    except BadSourceFile as exc:
        return str(exc)
    stored = store_in_batch(
        slug=slug,
        document=document,
        raw=raw,
        filename=path.name,
        origin=where,
        acting_user=acting_user,
        seen=seen_slugs,
        where=where,
        batch="batch",
    )
    if isinstance(stored, str):
        return stored
    report.results.append((where, stored))
    report.notes += [ImportProblem(where, note) for note in document.notes]
    return None
