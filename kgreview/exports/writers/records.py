"""The records every export format is written from: one plain dict per concept (with the
attribute values it held), edge and relation type of the graph as of an instant, counted
as they are read, and the chunking that turns many small pieces of text into chunks of
about 64 KiB."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice

from kgreview.graph.history import attribute_values_at
from kgreview.graph.selectors import arrived_at, final_survivor_ids
from kgreview.graph.sources import NO_PLACE, RevisionPlaces
from kgreview.review.provenance import value_decisions

from .. import selectors

CHUNK_CHARS = 1 << 16


@dataclass
class ExportStats:
    """Counted while writing, so the numbers describe exactly what was written."""

    concepts: int = 0
    edges: int = 0
    relation_types: int = 0
    attribute_values: int = 0


def iso(moment: datetime | None) -> str | None:
    """UTC, ISO 8601 with a ``Z``: what JSON-LD, GraphML readers and neo4j all accept."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def concept_records(*, at: datetime, stats: ExportStats) -> Iterator[dict]:
    """Concepts in batches of ``CHUNK``; a merged one's ``merged_into`` is the concept its
    names and edges live on now, the end of its chain of merges (one query a batch)."""
    concepts = selectors.export_concepts(at=at).iterator(chunk_size=selectors.CHUNK)
    while batch := list(islice(concepts, selectors.CHUNK)):
        ends = final_survivor_ids(c.pk for c in batch if c.merged_into_id is not None)
        # Each concept's names, prefetched by ``export_concepts`` (a Prefetch's to_attr).
        names = {c.pk: c.export_aliases for c in batch}  # type: ignore[attr-defined]
        # A name that came through a chain of merges: when did the chain reach its holder?
        chained = {
            (a.merged_from_id, c.pk)
            for c in batch
            for a in names[c.pk]
            if a.merged_from_id is not None and a.hop != c.pk
        }
        came = arrived_at(chained) if chained else {}
        values = attribute_values_at([c.pk for c in batch], at=at)
        decided = value_decisions(v.pk for rows in values.values() for v in rows)
        for c in batch:
            stats.concepts += 1
            yield {
                "id": c.pk,
                "name": c.name,
                "aliases": [
                    a.name
                    for a in names[c.pk]
                    if a.merged_from_id is None
                    or a.hop == c.pk
                    or (came.get((a.merged_from_id, c.pk)) or at) <= at
                ],
                "description": c.description,
                "status": c.status,
                "created_at": iso(c.created_at),
                "merged_into": ends.get(c.pk, c.merged_into_id),
                "attributes": [_value_record(v, decided, stats) for v in values.get(c.pk, [])],
            }


def _value_record(v, decided: dict, stats: ExportStats) -> dict:
    """An attribute value the concept held at the instant, with its quote and the
    decision that set it (none for one set by hand)."""
    stats.attribute_values += 1
    revision = v.evidence_revision
    decision = decided.get(v.pk)
    return {
        "key": v.attribute.key,
        "label": v.attribute.label,
        "declared_by": v.attribute.concept_type.key,
        "datatype": v.attribute.datatype,
        "value": v.value,
        "recorded_at": iso(v.recorded_at),
        "evidence_source": revision.source.slug if revision else None,
        "evidence_revision": revision.number if revision else None,
        "evidence_start": v.evidence_start,
        "evidence_end": v.evidence_end,
        "evidence_quote": v.evidence_quote if revision else None,
        "decision": decision.pk if decision is not None else None,
    }


def edge_records(*, at: datetime, stats: ExportStats) -> Iterator[dict]:
    """Edges in batches of ``CHUNK``. Each batch's revisions not known yet have their
    structures read in one query (revisions still quoted stay known for the next batch,
    the others are let go); a revision's text is read only for an old Markdown revision
    without a stored structure, and dropped once its headings are found."""
    edges = selectors.export_edges(at=at).iterator(chunk_size=selectors.CHUNK)
    places = RevisionPlaces()
    while batch := list(islice(edges, selectors.CHUNK)):
        places.load((e.evidence_revision_id for e in batch), forget_others=True)
        for e in batch:
            stats.edges += 1
            yield _edge_record(e, places)


def _edge_record(e, places: RevisionPlaces) -> dict:
    revision = e.evidence_revision
    place = places.place(e.evidence_revision_id, e.evidence_start) if revision else NO_PLACE
    return {
        "id": e.pk,
        "source": e.source_id,
        "target": e.target_id,
        "relation": e.relation.key,
        "relation_label": e.relation.label,
        "symmetric": e.relation.symmetric,
        "acyclic": e.relation.acyclic,
        "confidence": e.confidence,
        "weight": e.weight,
        "reason": e.reason,
        "status": e.status,
        "valid_at": iso(e.valid_at),
        "recorded_at": iso(e.recorded_at),
        "invalid_at": iso(e.invalid_at),
        "evidence_source": revision.source.slug if revision else None,
        "evidence_revision": revision.number if revision else None,
        "evidence_start": e.evidence_start,
        "evidence_end": e.evidence_end,
        "evidence_quote": e.evidence_quote if revision else None,
        # The page is None for unpaged formats; the section is [] outside any heading.
        "evidence_page": place.page,
        "evidence_section": list(place.section),
        "proposal": e.proposal_ref,
        "decision": e.decision_ref,
        "decided_by": e.decided_by.username if e.decided_by_id else None,
    }


#: An edge's own properties, named as GraphML and JSON-LD both name them, with the
#: record's key for each: one list, so the two formats cannot drift apart.
EDGE_PROPERTIES = (
    ("symmetric", "symmetric"),
    ("confidence", "confidence"),
    ("weight", "weight"),
    ("reason", "reason"),
    ("status", "status"),
    ("validAt", "valid_at"),
    ("recordedAt", "recorded_at"),
    ("invalidAt", "invalid_at"),
)


def edge_properties(e: dict) -> dict:
    """``EDGE_PROPERTIES`` of an edge record, under their exported names, in that order."""
    return {name: e[key] for name, key in EDGE_PROPERTIES}


def relation_records(*, at: datetime, stats: ExportStats) -> Iterator[dict]:
    for r in selectors.export_relation_types(at=at):
        stats.relation_types += 1
        yield {
            "key": r.key,
            "label": r.label,
            "verb": r.verb,
            "description": r.description,
            "directed": r.directed,
            "symmetric": r.symmetric,
            "acyclic": r.acyclic,
            # The relation stating its facts the other way round (as declared now).
            "inverse": r.inverse.key if r.inverse is not None else "",
            "active": r.active,
            "created_at": iso(r.created_at),
            "retired_at": iso(r.retired_at),
        }


def buffered(parts: Iterable[str], size: int = CHUNK_CHARS) -> Iterator[str]:
    """Join small pieces into chunks of about ``size`` characters."""
    pending: list[str] = []
    length = 0
    for part in parts:
        pending.append(part)
        length += len(part)
        if length >= size:
            yield "".join(pending)
            pending, length = [], 0
    if pending:
        yield "".join(pending)
