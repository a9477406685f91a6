"""GraphML 1.0: a directed multigraph with typed attributes (Gephi, yEd, Cytoscape,
networkx); every edge keeps its provenance as attributes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from xml.sax.saxutils import escape

from django.utils import timezone

from .records import (
    ExportStats,
    buffered,
    concept_records,
    edge_properties,
    edge_records,
    iso,
)

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
            "acyclic": e["acyclic"],
            **edge_properties(e),
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
