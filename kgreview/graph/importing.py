"""Reading Markdown lessons from disk into sources, one file at a time.

A bad file (unreadable, binary, empty, oversized, malformed front matter) becomes an
``ImportProblem`` with a sentence saying what is wrong; the rest of the batch goes on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.utils.text import slugify

from kgreview.core.errors import DomainError

from .services import SourceImportResult, source_import

MARKDOWN_SUFFIXES = {".md", ".markdown"}
FRONT_MATTER_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.*)$")
SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")
HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)


@dataclass(frozen=True)
class ParsedSource:
    path: Path
    slug: str
    title: str
    text: str


@dataclass(frozen=True)
class ImportProblem:
    path: str
    message: str


@dataclass
class ImportReport:
    results: list[tuple[str, SourceImportResult]] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(1 for _, r in self.results if r.outcome == outcome)

    def as_json(self) -> dict:
        return {
            "imported": [
                {
                    "path": path,
                    "slug": r.source.slug,
                    "title": r.source.title,
                    "revision": r.revision.number,
                    "outcome": r.outcome,
                    "sha256": r.revision.sha256,
                }
                for path, r in self.results
            ],
            "errors": [{"path": p.path, "error": p.message} for p in self.problems],
            "counts": {
                "created": self.count("created"),
                "revised": self.count("revised"),
                "unchanged": self.count("unchanged"),
                "errors": len(self.problems),
            },
        }


class BadSourceFile(Exception):
    pass


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in {'"', "'"}:
        return value[1:-1]
    return value


def parse_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Split ``---`` front matter (simple ``key: value`` lines) from the body.

    Returns the metadata and the body. Text that does not start with ``---`` has no
    front matter. An opening ``---`` without a closing one is an error, not body text.
    """
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in {"---", "..."}), None)
    if end is None:
        raise BadSourceFile("front matter opened with '---' on line 1 is never closed")
    meta: dict[str, str] = {}
    for index in range(1, end):
        line = lines[index]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = FRONT_MATTER_KEY.match(line)
        if match is None:
            raise BadSourceFile(
                f"front matter line {index + 1} is not a 'key: value' pair: {line.strip()[:60]!r}"
            )
        meta[match.group(1).lower()] = _unquote(match.group(2))
    return meta, "\n".join(lines[end + 1 :])


def parse_source(*, raw: bytes, path: Path, max_bytes: int) -> ParsedSource:
    """Decode, validate and split one Markdown file; raises ``BadSourceFile``."""
    if len(raw) > max_bytes:
        raise BadSourceFile(
            f"file is {len(raw):,} bytes, over the limit of {max_bytes:,} (KG_MAX_SOURCE_BYTES)"
        )
    if b"\x00" in raw[:8192]:
        raise BadSourceFile("file looks binary (it contains NUL bytes), not Markdown text")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadSourceFile(
            f"file is not UTF-8 text (undecodable byte at offset {exc.start})"
        ) from None
    # Offsets of evidence point into the stored text, so store one canonical form.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    meta, body = parse_front_matter(text)
    body = body.strip("\n")
    if not body.strip():
        raise BadSourceFile("file has no text" + (" after its front matter" if meta else ""))
    slug = meta.get("slug") or slugify(path.stem)
    if not slug or not SLUG.match(slug) or len(slug) > 200:
        raise BadSourceFile(
            f"slug {slug!r} is not valid: use letters, digits, hyphens and underscores"
        )
    title = meta.get("title", "").strip()
    if not title:
        heading = HEADING.search(body)
        title = heading.group(1).strip() if heading else path.stem.replace("-", " ").title()
    return ParsedSource(path=path, slug=slug, title=title, text=body + "\n")


def iter_source_files(paths: Iterable[str | Path]) -> Iterator[Path | ImportProblem]:
    """Markdown files named directly or found under folders, in a stable order."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.suffix.lower() in MARKDOWN_SUFFIXES
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
                and (p.is_file() or p.is_symlink())
            )
            if not found:
                yield ImportProblem(str(path), "folder holds no Markdown files (.md, .markdown)")
            yield from found
        elif path.exists() or path.is_symlink():
            if path.suffix.lower() not in MARKDOWN_SUFFIXES:
                yield ImportProblem(str(path), "not a Markdown file (expected .md or .markdown)")
            else:
                yield path
        else:
            yield ImportProblem(str(path), "no such file or folder")


def import_paths(paths: Iterable[str | Path], *, max_bytes: int) -> ImportReport:
    """Import every Markdown file under ``paths``; each file in its own transaction."""
    report = ImportReport()
    seen_slugs: dict[str, str] = {}
    for item in iter_source_files(paths):
        if isinstance(item, ImportProblem):
            report.problems.append(item)
            continue
        where = str(item)
        try:
            raw = item.read_bytes()
        except IsADirectoryError:
            report.problems.append(ImportProblem(where, "is a folder, not a file"))
            continue
        except OSError as exc:
            report.problems.append(
                ImportProblem(where, f"cannot be read: {exc.strerror or exc.__class__.__name__}")
            )
            continue
        try:
            parsed = parse_source(raw=raw, path=item, max_bytes=max_bytes)
        except BadSourceFile as exc:
            report.problems.append(ImportProblem(where, str(exc)))
            continue
        if parsed.slug in seen_slugs:
            report.problems.append(
                ImportProblem(
                    where,
                    f"slug {parsed.slug!r} is already used by {seen_slugs[parsed.slug]} "
                    "in this batch; give one of them a 'slug:' in its front matter",
                )
            )
            continue
        seen_slugs[parsed.slug] = where
        try:
            result = source_import(
                slug=parsed.slug, title=parsed.title, text=parsed.text, origin=where
            )
        except DomainError as exc:
            report.problems.append(ImportProblem(where, str(exc)))
            continue
        report.results.append((where, result))
    return report
