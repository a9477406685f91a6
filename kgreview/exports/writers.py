"""Streaming writers: the graph as of an instant as JSON-LD, neo4j-admin CSV or GraphML.

Every writer is a generator of text (or, for the zip, bytes) chunks of about 64 KiB.
Concepts and edges are read with ``.iterator(chunk_size=2000)``, so a large graph never
sits in memory as objects: the command writes chunks to a file, the download view hands
them to ``StreamingHttpResponse``.

Formats are described for people in ``CONTEXT.md`` next to this module.
"""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from xml.sax.saxutils import escape

from django.utils import timezone

from kgreview.graph.sources import NO_PLACE, RevisionPlaces

from . import selectors
from . import vocabulary as v

CHUNK_CHARS = 1 << 16


@dataclass
class ExportStats:
    """Counted while writing, so the numbers describe exactly what was written."""

    concepts: int = 0
    edges: int = 0
    relation_types: int = 0


# --- Where evidence sits ----------------------------------------------------------------


# --- Records: one plain dict per concept / edge, shared by every format ------------------


def iso(moment: datetime | None) -> str | None:
    """UTC, ISO 8601 with a ``Z``: what JSON-LD, GraphML readers and neo4j all accept."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def concept_records(*, at: datetime, stats: ExportStats) -> Iterator[dict]:
    for c in selectors.export_concepts(at=at).iterator(chunk_size=selectors.CHUNK):
        stats.concepts += 1
        yield {
            "id": c.pk,
            "name": c.name,
            "aliases": [a.name for a in c.export_aliases],
            "description": c.description,
            "status": c.status,
            "created_at": iso(c.created_at),
            "merged_into": c.merged_into_id,
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
        "proposal": e.proposal_id,
        "decision": e.decision_id,
        "decided_by": e.decided_by.username if e.decided_by_id else None,
    }


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


# --- JSON-LD ---------------------------------------------------------------------------


def _compact(obj: dict) -> dict:
    return {k: val for k, val in obj.items() if val is not None and val != "" and val != []}


def _jsonld_concept(c: dict) -> dict:
    return _compact(
        {
            "@id": v.concept_iri(c["id"]),
            "@type": "skos:Concept",
            "identifier": c["id"],
            "prefLabel": c["name"],
            "altLabel": c["aliases"],
            "definition": c["description"],
            "status": c["status"],
            "created": c["created_at"],
            "mergedInto": v.concept_iri(c["merged_into"]) if c["merged_into"] else None,
        }
    )


def _jsonld_statement(e: dict) -> dict:
    predicate = v.relation_iri(e["relation"])
    target = v.concept_iri(e["target"])
    evidence = None
    if e["evidence_revision"] is not None:
        evidence = {
            "@type": ["prov:Entity", "kg:EvidenceSpan"],
            "quote": e["evidence_quote"],
            "start": e["evidence_start"],
            "end": e["evidence_end"],
            "page": e["evidence_page"],
            "section": e["evidence_section"],
            "quotedFrom": {
                "@id": v.revision_iri(e["evidence_source"], e["evidence_revision"]),
                "@type": "prov:Entity",
                "isVersionOf": v.source_iri(e["evidence_source"]),
                "sourceSlug": e["evidence_source"],
                "revisionNumber": e["evidence_revision"],
            },
        }
        # No page (an unpaged format) and no heading are left out, like every empty value.
        evidence = {k: val for k, val in evidence.items() if val is not None and val != []}
    decided_by = None
    if e["decided_by"]:
        decided_by = {
            "@id": v.user_iri(e["decided_by"]),
            "@type": "prov:Agent",
            "username": e["decided_by"],
        }
    return _compact(
        {
            "@id": v.edge_iri(e["id"]),
            "@type": "rdf:Statement",
            "identifier": e["id"],
            # The subject carries the direct triple too, so the file is both a list of
            # reified statements with provenance and the plain graph they assert.
            "subject": {"@id": v.concept_iri(e["source"]), predicate: {"@id": target}},
            "predicate": predicate,
            "object": target,
            "relation": e["relation"],
            "symmetric": e["symmetric"],
            "confidence": e["confidence"],
            "weight": e["weight"],
            "reason": e["reason"],
            "status": e["status"],
            "validAt": e["valid_at"],
            "recordedAt": e["recorded_at"],
            "invalidAt": e["invalid_at"],
            "evidence": evidence,
            "proposal": v.proposal_iri(e["proposal"]) if e["proposal"] else None,
            "decision": v.decision_iri(e["decision"]) if e["decision"] else None,
            "decidedBy": decided_by,
        }
    )


def _jsonld_relation(r: dict) -> dict:
    types = ["rdf:Property", "kg:RelationType"]
    if r["symmetric"]:
        types.append("owl:SymmetricProperty")
    return _compact(
        {
            "@id": v.relation_iri(r["key"]),
            "@type": types,
            "key": r["key"],
            "label": r["label"],
            "verb": r["verb"],
            "definition": r["description"],
            "directed": r["directed"],
            "symmetric": r["symmetric"],
            "acyclic": r["acyclic"],
            "active": r["active"],
            "created": r["created_at"],
            "retiredAt": r["retired_at"],
        }
    )


def _dump(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def jsonld_parts(*, at: datetime, stats: ExportStats) -> Iterator[str]:
    counts = selectors.export_counts(at=at)
    yield '{"@context":' + json.dumps(v.context(), indent=1) + ',\n"@graph":[\n'
    yield _dump(
        {
            "@id": "_:export",
            "@type": ["prov:Entity", "kg:Export"],
            "asOf": iso(at),
            "generatedAt": iso(timezone.now()),
            "conceptCount": counts["concepts"],
            "edgeCount": counts["edges"],
        }
    )
    for r in relation_records(at=at, stats=stats):
        yield ",\n" + _dump(_jsonld_relation(r))
    for c in concept_records(at=at, stats=stats):
        yield ",\n" + _dump(_jsonld_concept(c))
    for e in edge_records(at=at, stats=stats):
        yield ",\n" + _dump(_jsonld_statement(e))
    yield "\n]}\n"


def write_jsonld(*, at: datetime, stats: ExportStats | None = None) -> Iterator[str]:
    """One JSON-LD document: the @context inline, then a flat @graph."""
    return buffered(jsonld_parts(at=at, stats=stats or ExportStats()))


# --- CSV for neo4j-admin database import ---------------------------------------------------

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


# --- GraphML ---------------------------------------------------------------------------

GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"

#: (attribute, GraphML type). ``label`` is what Gephi shows; ``weight`` is Gephi's weight.
GRAPH_KEYS = (("asOf", "string"), ("generatedAt", "string"), ("generator", "string"))
NODE_KEYS = (
    ("label", "string"),
    ("conceptId", "long"),
    ("name", "string"),
    ("aliases", "string"),
    ("description", "string"),
    ("status", "string"),
    ("createdAt", "string"),
    ("mergedInto", "long"),
)
EDGE_KEYS = (
    ("label", "string"),
    ("edgeId", "long"),
    ("relation", "string"),
    ("relationLabel", "string"),
    ("symmetric", "boolean"),
    ("acyclic", "boolean"),
    ("confidence", "double"),
    ("weight", "double"),
    ("reason", "string"),
    ("status", "string"),
    ("validAt", "string"),
    ("recordedAt", "string"),
    ("invalidAt", "string"),
    ("evidenceSource", "string"),
    ("evidenceRevision", "long"),
    ("evidenceStart", "long"),
    ("evidenceEnd", "long"),
    ("evidenceQuote", "string"),
    ("evidencePage", "long"),
    ("evidenceSection", "string"),
    ("proposalId", "long"),
    ("decisionId", "long"),
    ("decidedBy", "string"),
)

# Characters XML 1.0 cannot carry at all, not even as character references.
_XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
REPLACEMENT = "\ufffd"


def xml_text(value: str) -> str:
    """Text safe in XML 1.0 element content, read back exactly as written.

    Markup characters are escaped; characters XML 1.0 forbids become U+FFFD; a carriage
    return is written as ``&#13;`` because parsers turn a literal one into a newline.
    """
    text = _XML_FORBIDDEN.sub(REPLACEMENT, value)
    return escape(text, {'"': "&quot;", "\r": "&#13;"})


def _xml_value(value, kind: str) -> str:
    if kind == "boolean":
        return "true" if value else "false"
    if kind == "double":
        return repr(float(value))
    if kind == "long":
        return str(int(value))
    return xml_text(str(value))


def _key_lines(scope: str, prefix: str, keys) -> Iterator[str]:
    for name, kind in keys:
        yield (
            f'  <key id="{prefix}_{name}" for="{scope}" attr.name="{name}" attr.type="{kind}"/>\n'
        )


def _data(prefix: str, keys, values: dict, indent: str) -> str:
    """One <data> per attribute that has a value; a missing or empty one is left out."""
    out = []
    for name, kind in keys:
        value = values.get(name)
        if value is None or value == "":
            continue
        out.append(f'{indent}<data key="{prefix}_{name}">{_xml_value(value, kind)}</data>\n')
    return "".join(out)


def graphml_parts(*, at: datetime, stats: ExportStats) -> Iterator[str]:
    yield (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<graphml xmlns="{GRAPHML_NS}" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        f'xsi:schemaLocation="{GRAPHML_NS} {GRAPHML_NS}/1.0/graphml.xsd">\n'
    )
    yield from _key_lines("graph", "g", GRAPH_KEYS)
    yield from _key_lines("node", "n", NODE_KEYS)
    yield from _key_lines("edge", "e", EDGE_KEYS)
    yield '  <graph id="kgreview" edgedefault="directed">\n'
    yield _data(
        "g",
        GRAPH_KEYS,
        {"asOf": iso(at), "generatedAt": iso(timezone.now()), "generator": "kgreview"},
        "    ",
    )
    for c in concept_records(at=at, stats=stats):
        values = {
            "label": c["name"],
            "conceptId": c["id"],
            "name": c["name"],
            # GraphML has no list type: a JSON array keeps names with any character apart.
            "aliases": json.dumps(c["aliases"], ensure_ascii=False) if c["aliases"] else None,
            "description": c["description"],
            "status": c["status"],
            "createdAt": c["created_at"],
            "mergedInto": c["merged_into"],
        }
        yield f'    <node id="c{c["id"]}">\n{_data("n", NODE_KEYS, values, "      ")}    </node>\n'
    for e in edge_records(at=at, stats=stats):
        values = {
            "label": e["relation"],
            "edgeId": e["id"],
            "relation": e["relation"],
            "relationLabel": e["relation_label"],
            "symmetric": e["symmetric"],
            "acyclic": e["acyclic"],
            "confidence": e["confidence"],
            "weight": e["weight"],
            "reason": e["reason"],
            "status": e["status"],
            "validAt": e["valid_at"],
            "recordedAt": e["recorded_at"],
            "invalidAt": e["invalid_at"],
            "evidenceSource": e["evidence_source"],
            "evidenceRevision": e["evidence_revision"],
            "evidenceStart": e["evidence_start"],
            "evidenceEnd": e["evidence_end"],
            "evidenceQuote": e["evidence_quote"],
            "evidencePage": e["evidence_page"],
            # A JSON array, like aliases: headings keep any character they hold.
            "evidenceSection": json.dumps(e["evidence_section"], ensure_ascii=False)
            if e["evidence_section"]
            else None,
            "proposalId": e["proposal"],
            "decisionId": e["decision"],
            "decidedBy": e["decided_by"],
        }
        yield (
            f'    <edge id="e{e["id"]}" source="c{e["source"]}" target="c{e["target"]}">\n'
            f"{_data('e', EDGE_KEYS, values, '      ')}    </edge>\n"
        )
    yield "  </graph>\n</graphml>\n"


def write_graphml(*, at: datetime, stats: ExportStats | None = None) -> Iterator[str]:
    """GraphML 1.0, directed, one <edge> per edge (ids keep parallel edges apart)."""
    return buffered(graphml_parts(at=at, stats=stats or ExportStats()))


# --- The formats, for the command and the views ------------------------------------------


@dataclass(frozen=True)
class Format:
    key: str
    label: str
    extension: str
    content_type: str
    binary: bool
    write: Callable[..., Iterator]
    summary: str


FORMATS: dict[str, Format] = {
    f.key: f
    for f in (
        Format(
            "jsonld",
            "JSON-LD",
            "jsonld",
            "application/ld+json; charset=utf-8",
            False,
            write_jsonld,
            "One linked-data document: concepts as SKOS concepts, edges as reified "
            "statements with PROV-O provenance, the relation vocabulary as properties. "
            "Reads into rdflib, Apache Jena or any JSON-LD processor.",
        ),
        Format(
            "csv",
            "CSV for Neo4j",
            "zip",
            "application/zip",
            True,
            write_csv_zip,
            "A zip of nodes.csv, edges.csv and relation_types.csv with neo4j-admin "
            "headers, ready for neo4j-admin database import (use --multiline-fields=true).",
        ),
        Format(
            "graphml",
            "GraphML",
            "graphml",
            "application/graphml+xml; charset=utf-8",
            False,
            write_graphml,
            "A directed multigraph with typed attributes for Gephi, yEd, Cytoscape or "
            "networkx; every edge keeps its provenance as attributes.",
        ),
    )
}


def filename(fmt: Format, at: datetime) -> str:
    """e.g. kgreview-graph-20240501T143000Z.jsonld"""
    return f"kgreview-graph-{at.astimezone(UTC):%Y%m%dT%H%M%SZ}.{fmt.extension}"
