"""A manual of ``evaluation/manuals/`` and the proposals drafted from its pages, read for
``manage.py evaluate --manual`` (the figures are ``construction.manual_eval``'s).

A manual's folder holds ``pages/`` (the HTML pages imported as sources, one source per
file, its slug made from the file name as ``import_sources`` makes it), ``terms.jsonl``
and, once labelled, ``labels.jsonl``. Only proposals drafted from those pages count.
Everything here reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.utils.text import slugify

from construction.manual_eval import EdgeProposal, NameProposal, Page
from construction.manual_gold import GoldError, Labels, TermGold, parse_labels, parse_terms
from kgreview.core.errors import ValidationFailed
from kgreview.graph.importing import MAX_SLUG
from kgreview.graph.models import RelationType, Source
from kgreview.review.kinds.add_concept import AddConceptKind
from kgreview.review.kinds.add_edge import AddEdgeKind
from kgreview.review.models import Proposal

LABELS = "labels.jsonl"


def page_slug(filename: str) -> str:
    """The slug ``import_sources`` gives a page (made from its file name)."""
    return slugify(Path(filename).stem)[:MAX_SLUG].strip("-")


@dataclass
class Manual:
    folder: Path
    slugs: frozenset[str]  # of its pages
    gold: TermGold
    labels: Labels
    symmetric: frozenset[str]

    @property
    def labels_path(self) -> Path:
        return self.folder / LABELS


def _read(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ValidationFailed(f"Cannot read {path}: {exc.strerror}.") from None
    except UnicodeDecodeError:
        raise ValidationFailed(f"{path} is not UTF-8 text.") from None


def symmetric_relations() -> frozenset[str]:
    return frozenset(RelationType.objects.filter(symmetric=True).values_list("key", flat=True))


def load_manual(folder: Path, *, labels_path: Path | None = None) -> Manual:
    """The manual in ``folder``; refuses, in words, a folder that is not one."""
    pages = folder / "pages"
    if not pages.is_dir():
        raise ValidationFailed(f"{folder} is not an evaluation manual: it has no pages/ folder.")
    files = sorted(p.name for p in pages.iterdir() if p.is_file())
    if not files:
        raise ValidationFailed(f"{pages} holds no pages.")
    symmetric = symmetric_relations()
    labels_path = labels_path or folder / LABELS
    try:
        gold = parse_terms(
            _read(folder / "terms.jsonl"), where=str(folder / "terms.jsonl"), page_id=page_slug
        )
        labels = (
            parse_labels(_read(labels_path), symmetric=symmetric, where=str(labels_path))
            if labels_path.exists()
            else Labels()
        )
    except GoldError as exc:
        raise ValidationFailed(str(exc)) from None
    return Manual(
        folder=folder,
        slugs=frozenset(page_slug(f) for f in files),
        gold=gold,
        labels=labels,
        symmetric=symmetric,
    )


def imported_pages(manual: Manual) -> list[Page]:
    """The manual's pages imported as sources, with their current revision's words."""
    rows = (
        Source.objects.filter(slug__in=manual.slugs, current_revision__isnull=False)
        .order_by("slug")
        .values_list("slug", "current_revision__word_count")
    )
    return [Page(id=slug, words=words or 0) for slug, words in rows]


def _proposals(manual: Manual, kind: str):
    return (
        Proposal.objects.filter(kind=kind, document__slug__in=manual.slugs)
        .exclude(status=Proposal.Status.SUPERSEDED)
        .order_by("pk")
        .values_list("pk", "document__slug", "evidence_quote", "payload", "flags", "confidence")
    )


def edge_proposals(manual: Manual) -> list[EdgeProposal]:
    """The manual's add_edge proposals (twins superseded by another left out); above the
    gate unless flagged below it when drafted, whatever was decided since."""
    return [
        EdgeProposal(
            id=pk,
            page=slug,
            quote=quote,
            source=payload["source"]["name"],
            relation=payload["relation"],
            target=payload["target"]["name"],
            above_gate="below_gate" not in (flags or []),
            confidence=confidence,
        )
        for pk, slug, quote, payload, flags, confidence in _proposals(manual, AddEdgeKind.key)
    ]


def concept_proposals(manual: Manual) -> list[NameProposal]:
    """The manual's add_concept proposals, each name with where it was read."""
    return [
        NameProposal(name=payload["name"], page=slug, quote=quote)
        for _, slug, quote, payload, _, _ in _proposals(manual, AddConceptKind.key)
    ]
