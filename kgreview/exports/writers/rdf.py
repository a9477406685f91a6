"""The graph as RDF, three ways, each Turtle: ``turtle`` (everything: the ontology, the
concepts with their types and names, active edges and attribute values as triples, and
each edge's and value's provenance as a reified ``rdf:Statement``), ``skos`` (a thesaurus:
concepts, their names, types as concept schemes, relations as SKOS's where
``KG_SKOS_RELATIONS`` says so) and ``owl`` (an ontology with its individuals, no
provenance). ``kgreview/exports/CONTEXT.md`` describes them; ``exports.rdf`` names every IRI.

Everything is as of an instant: concepts and edges as the other exports read them
(``exports.selectors``), each concept's type as it was then (``graph.history``), the
patterns and attributes in force then. Triples are generated in batches and written as
they come (``rdf.Turtle``), so no export holds the graph in memory; ``triples`` is also
what ``exports.shapes`` validates, put in an rdflib graph.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice

from django.conf import settings
from rdflib import BNode, Literal, URIRef
from rdflib.namespace import DCTERMS, OWL, PROV, RDF, RDFS, SKOS, XSD

from kgreview.graph.history import concept_types_at
from kgreview.graph.models import Attribute, ConceptType, RelationPattern

from .. import rdf, selectors
from ..rdf import Lex, Triple, kg
from .records import ExportStats, buffered, concept_records, edge_records, iso, relation_records

TURTLE, SKOS_VIEW, OWL_VIEW = "turtle", "skos", "owl"
#: What the shapes read and nothing more (``exports.shapes.validate``): the ``owl`` view
#: without names, descriptions or provenance, so the graph held in memory stays small.
CHECKED = "checked"
CONFIDENCE, WEIGHT = kg("confidence"), kg("weight")


@dataclass
class Ontology:
    """The ontology as of ``at``, read once per export (it is small)."""

    at: datetime
    types: list[ConceptType]
    relations: list[dict]
    patterns: list[RelationPattern]
    attributes: list[Attribute]
    stats: ExportStats = field(default_factory=ExportStats)

    @classmethod
    def load(cls, *, at: datetime, stats: ExportStats | None = None) -> Ontology:
        stats = stats or ExportStats()
        return cls(
            at=at,
            types=selectors.export_concept_types(at=at),
            relations=list(relation_records(at=at, stats=stats)),
            patterns=selectors.export_patterns(at=at),
            attributes=selectors.export_attributes(at=at),
            stats=stats,
        )

    def retired(self, row) -> bool:
        return row.retired_at is not None and row.retired_at <= self.at

    def ancestors(self, type_id: int) -> list[ConceptType]:
        """The type and every type above it (the rule book refuses loops; bounded anyway)."""
        by_id = {t.pk: t for t in self.types}
        out: list[ConceptType] = []
        current = by_id.get(type_id)
        while current is not None and current not in out:
            out.append(current)
            current = by_id.get(current.parent_id) if current.parent_id else None
        return out

    def patterns_of(self, key: str) -> list[RelationPattern]:
        return [p for p in self.patterns if p.relation.key == key]

    def types_required(self) -> bool:
        """``KG_REQUIRE_TYPES``: always, never, or (auto) once a type is in force."""
        if settings.KG_REQUIRE_TYPES != "auto":
            return settings.KG_REQUIRE_TYPES == "always"
        return any(not self.retired(t) for t in self.types)


LONG, DOUBLE, DATETIME = XSD.long, XSD.double, XSD.dateTime


def _long(value: int) -> Lex:
    return Lex(str(int(value)), LONG)


def _double(value: float) -> Lex:
    return Lex(repr(float(value)), DOUBLE)


def _when(moment: str | None) -> Lex | None:
    """An instant already written as ISO 8601 with a Z (``records.iso``)."""
    return Lex(moment, DATETIME) if moment else None


def rdf_list(items: list[URIRef]) -> tuple[BNode, list[Triple]]:
    """An RDF collection of ``items``: its head and its triples."""
    nodes = [BNode() for _ in items]
    triples: list[Triple] = []
    for i, (node, item) in enumerate(zip(nodes, items, strict=True)):
        triples.append((node, RDF.first, item))
        triples.append((node, RDF.rest, nodes[i + 1] if i + 1 < len(nodes) else RDF.nil))
    return nodes[0], triples


def _class_of(types: list[URIRef]) -> tuple[URIRef | BNode, list[Triple]]:
    """One class, or the union of several (an anonymous ``owl:unionOf`` class)."""
    if len(types) == 1:
        return types[0], []
    head, triples = rdf_list(types)
    union = BNode()
    return union, [(union, RDF.type, OWL.Class), (union, OWL.unionOf, head), *triples]


# --- The ontology ------------------------------------------------------------------------------


def _type_triples(ont: Ontology, t: ConceptType) -> Iterator[Triple]:
    iri = rdf.concept_type(t.key)
    yield iri, RDF.type, OWL.Class
    yield iri, RDFS.label, Literal(t.label)
    yield iri, kg("key"), Literal(t.key)
    if t.description:
        yield iri, RDFS.comment, Literal(t.description)
    if t.parent_id is not None and t.parent is not None:
        yield iri, RDFS.subClassOf, rdf.concept_type(t.parent.key)
    if ont.retired(t):
        yield iri, OWL.deprecated, Literal(True)


def domain_and_range(ont: Ontology, key: str, symmetric: bool) -> tuple[list[str], list[str]]:
    """The keys of a relation's domain and range types from its patterns (none: open).
    Several patterns give the union of their domains and of their ranges, the most
    ``rdfs:domain`` / ``rdfs:range`` can say; the exact pairs are ``kg:pattern`` nodes and
    the shapes. A symmetric relation's pattern holds both ways round."""
    patterns = ont.patterns_of(key)
    domains = sorted({p.domain.key for p in patterns})
    ranges = sorted({p.range.key for p in patterns})
    if symmetric:
        domains = ranges = sorted(set(domains) | set(ranges))
    return domains, ranges


def _relation_triples(ont: Ontology, r: dict) -> Iterator[Triple]:
    iri = rdf.relation(r["key"])
    yield iri, RDF.type, OWL.ObjectProperty
    if r["symmetric"]:
        yield iri, RDF.type, OWL.SymmetricProperty
    if r.get("inverse"):  # "A prerequisite B" is "B builds_on A"
        yield iri, OWL.inverseOf, rdf.relation(r["inverse"])
    yield iri, RDFS.label, Literal(r["label"])
    yield iri, kg("key"), Literal(r["key"])
    yield iri, kg("verb"), Literal(r["verb"])
    yield iri, kg("acyclic"), Literal(r["acyclic"])
    if r["description"]:
        yield iri, RDFS.comment, Literal(r["description"])
    if r["retired_at"] and datetime.fromisoformat(r["retired_at"]) <= ont.at:
        yield iri, OWL.deprecated, Literal(True)
    domains, ranges = domain_and_range(ont, r["key"], r["symmetric"])
    for prop, keys in ((RDFS.domain, domains), (RDFS.range, ranges)):
        if keys:
            node, extra = _class_of([rdf.concept_type(k) for k in keys])
            yield iri, prop, node
            yield from extra
    for p in ont.patterns_of(r["key"]):
        node = BNode()
        yield iri, kg("pattern"), node
        yield node, kg("domain"), rdf.concept_type(p.domain.key)
        yield node, kg("range"), rdf.concept_type(p.range.key)
        if p.description:
            yield node, RDFS.comment, Literal(p.description)


def _attribute_triples(ont: Ontology, a: Attribute) -> Iterator[Triple]:
    iri = rdf.attribute(a.concept_type.key, a.key)
    yield iri, RDF.type, OWL.DatatypeProperty
    yield iri, RDF.type, OWL.FunctionalProperty
    yield iri, RDFS.label, Literal(a.label)
    yield iri, kg("key"), Literal(a.key)
    yield iri, RDFS.domain, rdf.concept_type(a.concept_type.key)
    yield iri, RDFS.range, rdf.XSD_OF.get(a.datatype, XSD.string)
    if a.description:
        yield iri, RDFS.comment, Literal(a.description)
    if ont.retired(a):
        yield iri, OWL.deprecated, Literal(True)


def ontology_triples(ont: Ontology) -> Iterator[Triple]:
    """Types as classes, relations as object properties, attributes as datatype ones."""
    head = URIRef(f"{rdf.base()}ns/ontology")
    yield head, RDF.type, OWL.Ontology
    yield head, RDFS.label, Literal("kgreview graph")
    yield head, kg("asOf"), Literal(iso(ont.at), datatype=XSD.dateTime)
    for prop in (kg("pattern"), kg("domain"), kg("range"), kg("key"), kg("verb")):
        yield prop, RDF.type, OWL.AnnotationProperty
    for t in ont.types:
        yield from _type_triples(ont, t)
    for r in ont.relations:
        yield from _relation_triples(ont, r)
    for a in ont.attributes:
        yield from _attribute_triples(ont, a)


def skos_ontology_triples(ont: Ontology, mapping: dict[str, URIRef]) -> Iterator[Triple]:
    """One scheme for the graph and one per type; relations SKOS has no word for become
    sub-properties of ``skos:semanticRelation``."""
    graph = rdf.scheme("graph")
    yield graph, RDF.type, SKOS.ConceptScheme
    yield graph, SKOS.prefLabel, Literal("kgreview graph")
    yield graph, kg("asOf"), Literal(iso(ont.at), datatype=XSD.dateTime)
    for t in ont.types:
        iri = rdf.scheme("type/" + rdf.segment(t.key))
        yield iri, RDF.type, SKOS.ConceptScheme
        yield iri, SKOS.prefLabel, Literal(t.label)
        yield iri, SKOS.notation, Literal(t.key)
        if t.description:
            yield iri, SKOS.definition, Literal(t.description)
        if t.parent_id is not None and t.parent is not None:
            yield iri, DCTERMS.isPartOf, rdf.scheme("type/" + rdf.segment(t.parent.key))
    for r in ont.relations:
        if r["key"] in mapping:
            continue
        iri = rdf.relation(r["key"])
        yield iri, RDF.type, OWL.ObjectProperty
        yield iri, RDFS.subPropertyOf, SKOS.semanticRelation
        yield iri, RDFS.label, Literal(r["label"])
        if r["description"]:
            yield iri, SKOS.definition, Literal(r["description"])


# --- Concepts ----------------------------------------------------------------------------------


def _typed_batches(ont: Ontology) -> Iterator[list[tuple[dict, ConceptType | None]]]:
    """The export's concepts in batches, each with its type as of the instant (one query
    a batch)."""
    records = concept_records(at=ont.at, stats=ont.stats)
    while batch := list(islice(records, selectors.CHUNK)):
        types = concept_types_at([c["id"] for c in batch], at=ont.at)
        yield [(c, types.get(c["id"])) for c in batch]


def _concept_triples(ont: Ontology, c: dict, t: ConceptType | None, view: str) -> Iterator[Triple]:
    iri = rdf.concept(c["id"])
    yield iri, RDF.type, SKOS.Concept
    if view == CHECKED:
        if t is not None:
            yield iri, RDF.type, rdf.concept_type(t.key)
        return
    if view != SKOS_VIEW:
        yield iri, RDF.type, OWL.NamedIndividual
        if t is not None:
            yield iri, RDF.type, rdf.concept_type(t.key)
        yield iri, RDFS.label, Literal(c["name"])
    else:
        yield iri, SKOS.inScheme, rdf.scheme("graph")
        for above in ont.ancestors(t.pk) if t is not None else []:
            yield iri, SKOS.inScheme, rdf.scheme("type/" + rdf.segment(above.key))
    yield iri, SKOS.prefLabel, Literal(c["name"])
    for alias in c["aliases"]:
        yield iri, SKOS.altLabel, Literal(alias)
    if c["description"]:
        yield iri, SKOS.definition, Literal(c["description"])
    if view == TURTLE:
        yield iri, DCTERMS.identifier, _long(c["id"])
        yield iri, kg("status"), Literal(c["status"])
        if c["merged_into"]:
            yield iri, kg("mergedInto"), rdf.concept(c["merged_into"])


def concept_triples(ont: Ontology, view: str) -> Iterator[Triple]:
    for batch in _typed_batches(ont):
        for c, t in batch:
            yield from _concept_triples(ont, c, t, view)


# --- Edges and their provenance -----------------------------------------------------------------


def _provenance(e: dict) -> Iterator[Triple]:
    """The edge as a reified statement with the terms of the JSON-LD export."""
    node = rdf.edge(e["id"])
    yield node, RDF.type, RDF.Statement
    yield node, RDF.subject, rdf.concept(e["source"])
    yield node, RDF.predicate, rdf.relation(e["relation"])
    yield node, RDF.object, rdf.concept(e["target"])
    yield node, DCTERMS.identifier, _long(e["id"])
    yield node, CONFIDENCE, _double(e["confidence"])
    yield node, WEIGHT, _double(e["weight"])
    yield node, kg("reason"), Literal(e["reason"])
    yield node, kg("status"), Literal(e["status"])
    for prop, moment in (
        (kg("validAt"), e["valid_at"]),
        (PROV.generatedAtTime, e["recorded_at"]),
        (PROV.invalidatedAtTime, e["invalid_at"]),
    ):
        if (value := _when(moment)) is not None:
            yield node, prop, value
    yield from _evidence(node, e)
    if e["proposal"]:
        yield node, kg("proposal"), rdf.proposal(e["proposal"])
    if e["decision"]:
        yield node, PROV.wasGeneratedBy, rdf.decision(e["decision"])
    if e["decided_by"]:
        who = rdf.user(e["decided_by"])
        yield node, PROV.wasAttributedTo, who
        yield who, RDF.type, PROV.Agent
        yield who, rdf.FOAF_ACCOUNT, Literal(e["decided_by"])


def _evidence(node: URIRef, e: dict) -> Iterator[Triple]:
    if e["evidence_revision"] is None:
        return
    span = URIRef(f"{node}/evidence")
    revision = rdf.revision(e["evidence_source"], e["evidence_revision"])
    yield node, PROV.wasDerivedFrom, span
    yield span, RDF.type, PROV.Entity
    yield span, RDF.type, kg("EvidenceSpan")
    yield span, PROV.value, Literal(e["evidence_quote"])
    yield span, kg("start"), _long(e["evidence_start"])
    yield span, kg("end"), _long(e["evidence_end"])
    if e.get("evidence_page"):
        yield span, kg("page"), _long(e["evidence_page"])
    yield span, PROV.wasQuotedFrom, revision
    yield span, kg("sourceSlug"), Literal(e["evidence_source"])
    yield revision, DCTERMS.isVersionOf, rdf.source(e["evidence_source"])
    yield revision, kg("revisionNumber"), _long(e["evidence_revision"])


def edge_triples(ont: Ontology, view: str, mapping: dict[str, URIRef]) -> Iterator[Triple]:
    """Each active edge as its direct triple (a symmetric one in its stored direction),
    then, in the turtle export, its provenance."""
    for e in edge_records(at=ont.at, stats=ont.stats):
        prop = rdf.relation(e["relation"])
        if view == SKOS_VIEW:
            prop = mapping.get(e["relation"], prop)
        yield rdf.concept(e["source"]), prop, rdf.concept(e["target"])
        if view == TURTLE:
            yield from _provenance(e)


def attribute_value_triples(ont: Ontology, view: str) -> Iterator[Triple]:
    """Each value current at the instant on its concept, typed by its datatype; in the
    turtle export also reified with its quote."""
    rows = selectors.export_attribute_values(at=ont.at).iterator(chunk_size=selectors.CHUNK)
    for value in rows:
        a = value.attribute
        prop = rdf.attribute(a.concept_type.key, a.key)
        literal = rdf.attribute_literal(a.datatype, value.value)
        yield rdf.concept(value.concept_id), prop, literal
        if view != TURTLE:
            continue
        node = rdf.attribute_value(value.pk)
        yield node, RDF.type, RDF.Statement
        yield node, RDF.subject, rdf.concept(value.concept_id)
        yield node, RDF.predicate, prop
        yield node, RDF.object, literal
        if (recorded := _when(iso(value.recorded_at))) is not None:
            yield node, PROV.generatedAtTime, recorded
        revision = value.evidence_revision
        if revision is not None:
            span = URIRef(f"{node}/evidence")
            yield node, PROV.wasDerivedFrom, span
            yield span, RDF.type, PROV.Entity
            yield span, PROV.value, Literal(value.evidence_quote)
            if value.evidence_start is not None and value.evidence_end is not None:
                yield span, kg("start"), _long(value.evidence_start)
                yield span, kg("end"), _long(value.evidence_end)
            yield span, PROV.wasQuotedFrom, rdf.revision(revision.source.slug, revision.number)


def triples(ont: Ontology, view: str = TURTLE) -> Iterator[Triple]:
    """Every triple of one view of the graph as of ``ont.at``."""
    mapping = rdf.skos_mapping()
    if view == SKOS_VIEW:
        yield from skos_ontology_triples(ont, mapping)
    else:
        yield from ontology_triples(ont)
    yield from concept_triples(ont, view)
    yield from edge_triples(ont, view, mapping)
    if view != SKOS_VIEW:
        yield from attribute_value_triples(ont, view)


def _write(view: str, *, at: datetime, stats: ExportStats | None) -> Iterator[str]:
    ont = Ontology.load(at=at, stats=stats)
    turtle = rdf.Turtle({**rdf.PREFIXES, **rdf.data_prefixes()})
    header = f"# kgreview graph ({view}) as of {iso(at)}\n"
    return buffered(_chain(header, turtle.head, turtle.lines(triples(ont, view))))


def _chain(*parts: str | Iterable[str]) -> Iterator[str]:
    for part in parts:
        if isinstance(part, str):
            yield part
        else:
            yield from part


def write_turtle(*, at: datetime, stats: ExportStats | None = None) -> Iterator[str]:
    """Everything, with each edge's provenance reified (Turtle)."""
    return _write(TURTLE, at=at, stats=stats)


def write_skos(*, at: datetime, stats: ExportStats | None = None) -> Iterator[str]:
    """A SKOS thesaurus of the graph (Turtle)."""
    return _write(SKOS_VIEW, at=at, stats=stats)


def write_owl(*, at: datetime, stats: ExportStats | None = None) -> Iterator[str]:
    """An OWL ontology with the concepts as its individuals (Turtle)."""
    return _write(OWL_VIEW, at=at, stats=stats)
