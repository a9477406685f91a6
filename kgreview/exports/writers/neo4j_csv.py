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

#: A column of a CSV file: its neo4j-admin header, and the record's key it holds or the
#: function that makes its cell from the record.
Column = tuple[str, str | Callable[[dict], object]]

# The :ID column has no property name (neo4j would store it as a string); the same id
# follows as a typed property.
NODE_COLUMNS: tuple[Column, ...] = (
    (":ID(Concept)", "id"),
    ("conceptId:long", "id"),
    ("name", "name"),
    ("aliases:string[]", lambda c: _alias_cell(c["aliases"])),
    ("description", "description"),
    ("status", "status"),
    ("createdAt:datetime", "created_at"),
    ("mergedInto:long", "merged_into"),
    (":LABEL", lambda c: "Concept"),
)
EDGE_COLUMNS: tuple[Column, ...] = (
    (":START_ID(Concept)", "source"),
    (":END_ID(Concept)", "target"),
    (":TYPE", lambda e: neo4j_type(e["relation"])),
    ("edgeId:long", "id"),
    ("relation", "relation"),
    ("symmetric:boolean", "symmetric"),
    ("confidence:double", "confidence"),
    ("weight:double", "weight"),
    ("reason", "reason"),
    ("status", "status"),
    ("validAt:datetime", "valid_at"),
    ("recordedAt:datetime", "recorded_at"),
    ("invalidAt:datetime", "invalid_at"),
    ("evidenceSource", "evidence_source"),
    ("evidenceRevision:long", "evidence_revision"),
    ("evidenceStart:long", "evidence_start"),
    ("evidenceEnd:long", "evidence_end"),
    ("evidenceQuote", "evidence_quote"),
    ("evidencePage:long", "evidence_page"),
    ("evidenceSection", lambda e: SECTION_SEPARATOR.join(e["evidence_section"])),
    ("proposalId:long", "proposal"),
    ("decisionId:long", "decision"),
    ("decidedBy", "decided_by"),
)
RELATION_COLUMNS: tuple[Column, ...] = (
    ("relationKey:ID(RelationType)", "key"),
    ("label", "label"),
    ("verb", "verb"),
    ("description", "description"),
    ("directed:boolean", "directed"),
    ("symmetric:boolean", "symmetric"),
    ("acyclic:boolean", "acyclic"),
    ("active:boolean", "active"),
    ("createdAt:datetime", "created_at"),
    ("retiredAt:datetime", "retired_at"),
    (":LABEL", lambda r: "RelationType"),
)


#: Between the headings of the evidence's section path in edges.csv ("Routing › OSPF").
SECTION_SEPARATOR = " › "


def neo4j_type(key: str) -> str:
    """A relation key as a relationship type, in neo4j's UPPER_SNAKE convention."""
    return re.sub(r"[^0-9A-Za-z]+", "_", key).strip("_").upper() or "RELATED"


#: A text cell starting with one of these is a formula to a spreadsheet (=, + and -
#: start arithmetic, @ a function in older Excel, tab and CR can hide the rest of the cell
#: and then start a formula). Such a cell is written with a leading apostrophe, which a
#: spreadsheet shows as text and hides (OWASP's advice for CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
FORMULA_GUARD = "'"


def neutralised(text: str) -> str:
    """A text cell a spreadsheet will not run: a leading apostrophe before a formula start."""
    return FORMULA_GUARD + text if text.startswith(FORMULA_STARTS) else text


def _cell(value, *, raw: bool = False) -> str:
    """A value as its CSV cell. Numbers, booleans and instants are written as they are;
    text starting like a formula is neutralised unless ``raw`` (for neo4j-admin, which
    would store the apostrophe)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        return str(value)
    text = str(value)
    return text if raw else neutralised(text)


def _csv_lines(header: list[str], rows: Iterable[list], *, raw: bool) -> Iterator[str]:
    """RFC 4180: comma separated, CRLF line ends, fields with quotes or newlines quoted."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    yield out.getvalue()
    for row in rows:
        out.seek(0)
        out.truncate()
        writer.writerow([_cell(x, raw=raw) for x in row])
        yield out.getvalue()


def _alias_cell(names: list[str]) -> str:
    return ARRAY_DELIMITER.join(n.replace(ARRAY_DELIMITER, ARRAY_DELIMITER_STAND_IN) for n in names)


def _header(columns: tuple[Column, ...]) -> list[str]:
    return [name for name, _ in columns]


NODE_HEADER = _header(NODE_COLUMNS)
EDGE_HEADER = _header(EDGE_COLUMNS)


def _csv_file(columns: tuple[Column, ...], records: Iterable[dict], *, raw: bool) -> Iterator[str]:
    """One CSV file: the columns' headers, then a row per record, cell by column."""
    rows = (
        [record[cell] if isinstance(cell, str) else cell(record) for _, cell in columns]
        for record in records
    )
    return buffered(_csv_lines(_header(columns), rows, raw=raw))


def csv_nodes(*, at: datetime, stats: ExportStats, raw_cells: bool = False) -> Iterator[str]:
    return _csv_file(NODE_COLUMNS, concept_records(at=at, stats=stats), raw=raw_cells)


def csv_edges(*, at: datetime, stats: ExportStats, raw_cells: bool = False) -> Iterator[str]:
    return _csv_file(EDGE_COLUMNS, edge_records(at=at, stats=stats), raw=raw_cells)


def csv_relation_types(
    *, at: datetime, stats: ExportStats, raw_cells: bool = False
) -> Iterator[str]:
    return _csv_file(RELATION_COLUMNS, relation_records(at=at, stats=stats), raw=raw_cells)


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


def write_csv_zip(
    *, at: datetime, stats: ExportStats | None = None, raw_cells: bool = False
) -> Iterator[bytes]:
    """A zip of nodes.csv, edges.csv and relation_types.csv, streamed as it is built.

    Text cells that start like a spreadsheet formula are neutralised (``neutralised``)
    unless ``raw_cells``.

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
                for chunk in writer(at=at, stats=stats, raw_cells=raw_cells):
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
