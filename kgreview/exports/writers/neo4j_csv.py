"""CSV for neo4j-admin database import: nodes.csv, edges.csv and relation_types.csv
with neo4j-admin headers, streamed inside one zip as it is built."""

from __future__ import annotations

import csv
import io
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime

from django.utils import timezone

from .records import (
    ExportStats,
    buffered,
    concept_records,
    edge_records,
    relation_records,
)

#: neo4j-admin's default array delimiter; a ';' inside one name would split it in two, so
#: it is written as U+FF1B (the full-width semicolon) instead.
ARRAY_DELIMITER = ";"
ARRAY_DELIMITER_STAND_IN = "\uff1b"

# The :ID column has no property name (neo4j would store it as a string); the same id
# follows as a typed property.
NODE_HEADER = [
    ":ID(Concept)",
    "conceptId:long",
    "name",
    "aliases:string[]",
    "description",
    "status",
    "createdAt:datetime",
    "mergedInto:long",
    ":LABEL",
]
EDGE_HEADER = [
    ":START_ID(Concept)",
    ":END_ID(Concept)",
    ":TYPE",
    "edgeId:long",
    "relation",
    "symmetric:boolean",
    "confidence:double",
    "weight:double",
    "reason",
    "status",
    "validAt:datetime",
    "recordedAt:datetime",
    "invalidAt:datetime",
    "evidenceSource",
    "evidenceRevision:long",
    "evidenceStart:long",
    "evidenceEnd:long",
    "evidenceQuote",
    "evidencePage:long",
    "evidenceSection",
    "proposalId:long",
    "decisionId:long",
    "decidedBy",
]
RELATION_HEADER = [
    "relationKey:ID(RelationType)",
    "label",
    "verb",
    "description",
    "directed:boolean",
    "symmetric:boolean",
    "acyclic:boolean",
    "active:boolean",
    "createdAt:datetime",
    "retiredAt:datetime",
    ":LABEL",
]


#: Between the headings of the evidence's section path in edges.csv ("Routing › OSPF").
SECTION_SEPARATOR = " › "


def neo4j_type(key: str) -> str:
    """A relation key as a relationship type, in neo4j's UPPER_SNAKE convention."""
    return re.sub(r"[^0-9A-Za-z]+", "_", key).strip("_").upper() or "RELATED"


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _csv_lines(header: list[str], rows: Iterable[list]) -> Iterator[str]:
    """RFC 4180: comma separated, CRLF line ends, fields with quotes or newlines quoted."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    yield out.getvalue()
    for row in rows:
        out.seek(0)
        out.truncate()
        writer.writerow([_cell(x) for x in row])
        yield out.getvalue()


def _alias_cell(names: list[str]) -> str:
    return ARRAY_DELIMITER.join(n.replace(ARRAY_DELIMITER, ARRAY_DELIMITER_STAND_IN) for n in names)


def csv_nodes(*, at: datetime, stats: ExportStats) -> Iterator[str]:
    rows = (
        [
            c["id"],
            c["id"],
            c["name"],
            _alias_cell(c["aliases"]),
            c["description"],
            c["status"],
            c["created_at"],
            c["merged_into"],
            "Concept",
        ]
        for c in concept_records(at=at, stats=stats)
    )
    return buffered(_csv_lines(NODE_HEADER, rows))


def csv_edges(*, at: datetime, stats: ExportStats) -> Iterator[str]:
    rows = (
        [
            e["source"],
            e["target"],
            neo4j_type(e["relation"]),
            e["id"],
            e["relation"],
            e["symmetric"],
            e["confidence"],
            e["weight"],
            e["reason"],
            e["status"],
            e["valid_at"],
            e["recorded_at"],
            e["invalid_at"],
            e["evidence_source"],
            e["evidence_revision"],
            e["evidence_start"],
            e["evidence_end"],
            e["evidence_quote"],
            e["evidence_page"],
            SECTION_SEPARATOR.join(e["evidence_section"]),
            e["proposal"],
            e["decision"],
            e["decided_by"],
        ]
        for e in edge_records(at=at, stats=stats)
    )
    return buffered(_csv_lines(EDGE_HEADER, rows))


def csv_relation_types(*, at: datetime, stats: ExportStats) -> Iterator[str]:
    rows = (
        [
            r["key"],
            r["label"],
            r["verb"],
            r["description"],
            r["directed"],
            r["symmetric"],
            r["acyclic"],
            r["active"],
            r["created_at"],
            r["retired_at"],
            "RelationType",
        ]
        for r in relation_records(at=at, stats=stats)
    )
    return buffered(_csv_lines(RELATION_HEADER, rows))


#: The files of a CSV export, in the order they are written.
CSV_FILES: tuple[tuple[str, Callable[..., Iterator[str]]], ...] = (
    ("nodes.csv", csv_nodes),
    ("edges.csv", csv_edges),
    ("relation_types.csv", csv_relation_types),
)


class _Sink(io.RawIOBase):
    """A write-only, unseekable byte sink the zip writer fills and the generator drains."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        data = b"".join(self._parts)
        self._parts.clear()
        return data


def write_csv_zip(*, at: datetime, stats: ExportStats | None = None) -> Iterator[bytes]:
    """A zip of nodes.csv, edges.csv and relation_types.csv, streamed as it is built.

    The sink cannot seek, so zipfile writes each member's sizes after its data (a data
    descriptor), which every unzip tool reads.
    """
    stats = stats or ExportStats()
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, writer in CSV_FILES:
            info = zipfile.ZipInfo(name, date_time=timezone.now().timetuple()[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16  # rw-r--r-- once unzipped
            with archive.open(info, "w") as member:
                for chunk in writer(at=at, stats=stats):
                    member.write(chunk.encode("utf-8"))
                    data = sink.take()
                    if data:
                        yield data
            data = sink.take()
            if data:
                yield data
    data = sink.take()  # the central directory, written on close
    if data:
        yield data
