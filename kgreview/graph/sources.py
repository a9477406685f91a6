"""Sources: storing a document's extracted text as a revision, with its structure and
the original file, and saying where in a revision a piece of evidence sits.

Revisions are immutable, so evidence quoted from an older text stays checkable after the
document is rewritten. The original file is kept once per content (sha256) so it can be
downloaded again; re-importing the same content adds nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import IntegrityError, transaction
from django.db.models import Case, F, Max, Q, TextField, Value, When

from construction.documents import markdown_sections, page_of, section_at
from construction.text import normal_name
from construction.types import Section
from kgreview.core import audit
from kgreview.core.errors import ValidationFailed

from .models import Source, SourceConcept, SourceFile, SourceRevision

if TYPE_CHECKING:
    from django.contrib.auth.models import User

__all__ = [
    "NO_PLACE",
    "Place",
    "RevisionPlaces",
    "SourceImportResult",
    "place_of",
    "revision_structure",
    "source_import",
    "text_sha256",
]


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SourceImportResult:
    source: Source
    revision: SourceRevision
    outcome: Literal["created", "revised", "unchanged"]


def _stored_file(data: bytes, media_type: str) -> SourceFile:
    """The file row for these bytes: found by content, or stored now."""
    digest = hashlib.sha256(data).hexdigest()
    found = SourceFile.objects.filter(sha256=digest).only("pk", "sha256").first()
    if found is not None:
        return found
    try:
        with transaction.atomic():
            return SourceFile.objects.create(
                sha256=digest, media_type=media_type, size=len(data), data=data
            )
    except IntegrityError:  # stored by a concurrent import a moment ago
        return SourceFile.objects.only("pk", "sha256").get(sha256=digest)


@transaction.atomic
def source_import(
    *,
    slug: str,
    title: str,
    text: str,
    origin: str = "",
    media_type: str = "text/markdown",
    text_format: str = SourceRevision.TextFormat.MARKDOWN,
    structure: Mapping | None = None,
    original: bytes | None = None,
    filename: str = "",
    acting_user: User | None,
) -> SourceImportResult:
    """Store a source's text: a new source, a new revision, or nothing if unchanged.

    ``structure`` is ``{"sections": [...], "pages": [...]}`` as the document reader
    found it; ``original`` the imported file's bytes. A changed title alone is updated
    in place; the same text and structure are "unchanged" whatever file they came from.
    ``acting_user`` is who imported it (kept on the revision as ``imported_by``), or
    ``None`` for an import the system runs on its own (a command, a benchmark). Each
    change writes one curation log row; an unchanged import writes none.
    """
    try:
        validate_slug(slug)
    except ValidationError:
        raise ValidationFailed(
            f'"{slug}" is not a valid slug: use letters, digits, hyphens and underscores.'
        ) from None
    if len(slug) > 200:
        raise ValidationFailed("A slug is at most 200 characters.")
    if "\x00" in text:
        raise ValidationFailed(f'Source "{slug}" contains NUL bytes, which text cannot hold.')
    if not text.strip():
        raise ValidationFailed(f'Source "{slug}" has no text.')
    if text_format not in SourceRevision.TextFormat.values:
        raise ValidationFailed(f'"{text_format}" is not a text format kgreview knows.')
    title = normal_name(title)[:300] or slug
    origin = origin[:1000]
    filename = filename[:255]
    structure = dict(structure or {})
    digest = text_sha256(text)
    source = Source.objects.select_for_update().filter(slug=slug).first()
    created = False
    if source is None:
        try:
            with transaction.atomic():
                source = Source.objects.create(slug=slug, title=title, origin=origin)
                created = True
        except IntegrityError:
            # Another import created it a moment ago; continue as a re-import.
            source = Source.objects.select_for_update().get(slug=slug)
    current = None if created else source.current_revision
    if (
        current is not None
        and current.sha256 == digest
        and current.text == text
        and (current.structure or {}) == structure
    ):
        if source.title != title or source.origin != origin:
            before = {"title": source.title, "origin": source.origin}
            source.title = title
            source.origin = origin
            source.save(update_fields=["title", "origin", "updated_at"])
            audit.record(
                acting_user=acting_user,
                action="source.retitle",
                subject=source,
                summary=f"Renamed the source “{slug}” to “{title}” (its text is unchanged).",
                before=before,
                after={"title": title, "origin": origin},
            )
        return SourceImportResult(source, current, "unchanged")
    number = 1 if created else (source.revisions.aggregate(n=Max("number"))["n"] or 0) + 1
    revision = SourceRevision.objects.create(
        source=source,
        number=number,
        title=title,
        text=text,
        sha256=digest,
        word_count=len(text.split()),
        origin=origin,
        media_type=media_type[:100],
        text_format=text_format,
        structure=structure,
        page_count=len(structure.get("pages") or ()),
        original=_stored_file(original, media_type) if original is not None else None,
        filename=filename,
        imported_by=acting_user if getattr(acting_user, "is_authenticated", False) else None,
    )
    source.current_revision = revision
    source.title = title
    source.origin = origin
    source.save(update_fields=["current_revision", "title", "origin", "updated_at"])
    audit.record(
        acting_user=acting_user,
        action="source.import",
        subject=source,
        summary=(
            f"Imported the source “{title}”."
            if created
            else f"Imported revision {number} of the source “{title}”."
        ),
        before={} if current is None else {"revision": current.number, "sha256": current.sha256},
        after={"revision": number, "sha256": digest, "title": title},
    )
    return SourceImportResult(source, revision, "created" if created else "revised")


def source_ground(revision: SourceRevision, concept_ids: Sequence[int]) -> None:
    """Record that ``revision``'s source grounds these concepts, as of that revision (a
    concept it grounded before moves to this revision). The agents' own work, inside the
    caller's transaction: a construct run's bookkeeping, not a change a curator makes,
    so it writes no curation log row."""
    sources_ground({(revision.source_id, cid): revision.pk for cid in concept_ids})


def sources_ground(rows: Mapping[tuple[int, int], int]) -> None:
    """Record that sources ground concepts, (source id, concept id) -> revision id, in one
    upsert (a concept a source grounded before moves to the revision given)."""
    if rows:
        SourceConcept.objects.bulk_create(
            [SourceConcept(source_id=s, concept_id=c, revision_id=r) for (s, c), r in rows.items()],
            update_conflicts=True,
            unique_fields=["source", "concept"],
            update_fields=["revision"],
        )


# --- Where evidence sits -----------------------------------------------------------------


@dataclass(frozen=True)
class Structure:
    sections: tuple[Section, ...]
    pages: tuple[int, ...]


@dataclass(frozen=True)
class Place:
    """Where a quote sits in its revision: a 1-based page (paged formats) and a heading
    path; both empty when the revision has neither."""

    page: int | None
    section: tuple[str, ...]

    def as_json(self) -> dict:
        return {"page": self.page, "section": list(self.section)}

    @property
    def label(self) -> str:
        """ "p. 12 · Routing › OSPF", or "" when there is nothing to say."""
        parts = []
        if self.page is not None:
            parts.append(f"p. {self.page}")
        if self.section:
            parts.append(" › ".join(self.section))
        return " · ".join(parts)


NO_PLACE = Place(page=None, section=())


def revision_structure(revision: SourceRevision) -> Structure:
    """The revision's sections and page starts.

    Revisions stored before documents kept their structure are Markdown: their headings
    are found again from the text (cheap, and the same rule the reader uses).
    """
    cached = getattr(revision, "_structure_cache", None)
    if cached is not None:
        return cached
    data = revision.structure or {}
    if data:
        sections = tuple(Section.from_json(s) for s in data.get("sections", ()))
        pages = tuple(int(p) for p in data.get("pages", ()))
    elif revision.text_format == SourceRevision.TextFormat.MARKDOWN:
        sections, pages = markdown_sections(revision.text), ()
    else:
        sections, pages = (), ()
    structure = Structure(sections=sections, pages=pages)
    revision._structure_cache = structure
    return structure


def place_of(revision: SourceRevision | None, offset: int | None) -> Place:
    """The page and section of ``offset`` in ``revision``."""
    if revision is None or offset is None:
        return Place(page=None, section=())
    structure = revision_structure(revision)
    return Place(
        page=page_of(structure.pages, offset), section=section_at(structure.sections, offset)
    )


class RevisionPlaces:
    """The page and heading path of quotes, for rows that name their revision by id only
    (``.values()`` rows, or edges loaded without their revision's text and structure).

    ``load`` reads the structure of the revisions it does not know yet in one query. A
    Markdown revision stored before revisions kept their structure has its headings found
    again from its text, which comes along in that same query for those revisions only
    and is let go once the headings are known. ``forget_others`` keeps the memory of a
    streaming writer bounded by the revisions of one batch.
    """

    def __init__(self, revisions: Iterable[SourceRevision] = ()) -> None:
        self._revisions: dict[int, SourceRevision] = {}
        for revision in revisions:
            self.add(revision)

    def add(self, revision: SourceRevision | None) -> None:
        """A revision already loaded whole (structure and text), e.g. by select_related."""
        if revision is not None:
            revision_structure(revision)
            self._revisions[revision.pk] = revision

    def load(self, revision_ids: Iterable[int | None], *, forget_others: bool = False) -> None:
        wanted = {pk for pk in revision_ids if pk is not None}
        if forget_others:
            self._revisions = {pk: r for pk, r in self._revisions.items() if pk in wanted}
        missing = wanted - self._revisions.keys()
        if not missing:
            return
        legacy = Q(text_format=SourceRevision.TextFormat.MARKDOWN, structure={})
        rows = (
            SourceRevision.objects.filter(pk__in=missing)
            .only("pk", "structure", "text_format")
            .annotate(
                legacy_text=Case(
                    When(legacy, then=F("text")), default=Value(""), output_field=TextField()
                )
            )
        )
        for revision in rows:
            if revision.legacy_text:
                revision.text = revision.legacy_text
            revision_structure(revision)  # cached on the instance: the text is not read again
            revision.__dict__.pop("text", None)
            revision.legacy_text = ""
            self._revisions[revision.pk] = revision

    def place(self, revision_id: int | None, offset: int | None) -> Place:
        if revision_id is None or offset is None:
            return NO_PLACE
        if revision_id not in self._revisions:
            self.load([revision_id])
        return place_of(self._revisions.get(revision_id), offset)
