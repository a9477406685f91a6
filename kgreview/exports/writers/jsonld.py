"""JSON-LD: one document, the @context inline, then a flat @graph of the export itself,
the relation vocabulary as properties, concepts as SKOS concepts and edges as reified
statements with PROV-O provenance."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime

from django.utils import timezone

from .. import selectors
from .. import vocabulary as v
from .records import (
    ExportStats,
    buffered,
    concept_records,
    edge_properties,
    edge_records,
    iso,
    relation_records,
)


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
            "attribute": [_jsonld_value(a) for a in c["attributes"]],
        }
    )


def _evidence(e: dict) -> dict | None:
    """The evidence span of an edge or attribute value record (None when it has none)."""
    if e["evidence_revision"] is None:
        return None
    evidence = {
        "@type": ["prov:Entity", "kg:EvidenceSpan"],
        "quote": e["evidence_quote"],
        "start": e["evidence_start"],
        "end": e["evidence_end"],
        "page": e.get("evidence_page"),
        "section": e.get("evidence_section"),
        "quotedFrom": {
            "@id": v.revision_iri(e["evidence_source"], e["evidence_revision"]),
            "@type": "prov:Entity",
            "isVersionOf": v.source_iri(e["evidence_source"]),
            "sourceSlug": e["evidence_source"],
            "revisionNumber": e["evidence_revision"],
        },
    }
    # No page (an unpaged format) and no heading are left out, like every empty value.
    return {k: val for k, val in evidence.items() if val is not None and val != []}


def _jsonld_value(a: dict) -> dict:
    """A concept's attribute value: its attribute, the value as a literal typed by its
    datatype (``vocabulary.XSD_OF``), when it was recorded, its quote and decision."""
    return _compact(
        {
            "@type": "kg:AttributeValue",
            "attributeKey": a["key"],
            "label": a["label"],
            "declaredBy": a["declared_by"],
            "datatype": a["datatype"],
            "value": {"@value": a["value"], "@type": v.XSD_OF[a["datatype"]]},
            "recordedAt": a["recorded_at"],
            "evidence": _evidence(a),
            "decision": v.decision_iri(a["decision"]) if a["decision"] else None,
        }
    )


def _jsonld_statement(e: dict) -> dict:
    predicate = v.relation_iri(e["relation"])
    target = v.concept_iri(e["target"])
    evidence = _evidence(e)
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
            **edge_properties(e),
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
