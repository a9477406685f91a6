"""SHACL shapes generated from the ontology, and the validation report built on them.

Four rules, each a shape (``kgreview/exports/CONTEXT.md``, "SHACL shapes and validation"):

- **pattern**: per relation with patterns in force, a SHACL-SPARQL constraint that each
  edge's subject has a domain type and its object the matching range type of one pattern
  (a subtype satisfies its parent, through ``rdfs:subClassOf*``; a symmetric relation's
  pattern holds both ways round; an untyped end fits no pattern);
- **typed**: every concept has a type, when ``KG_REQUIRE_TYPES`` says types are required
  (``auto``: once a concept type is in force at the instant);
- **datatype**: per attribute, its values are literals of its XML Schema datatype
  (``sh:datatype``; a value that is not a lexical form of it is exported as a plain string);
- **acyclic**: per acyclic relation, no edge lies on a cycle (SHACL-SPARQL, ``rel*``).

``shapes_triples`` writes them as the ``shacl`` export, in plain SHACL-SPARQL, which any
SHACL engine runs over the ``turtle`` or ``owl`` export. ``validate`` runs the same
constraints through pyshacl over the graph as of an instant, with two changes for speed
that change no answer: each rule's focus nodes are found by one SPARQL query
(SHACL-AF's ``sh:SPARQLTarget``, pyshacl's ``advanced`` mode) instead of one query per
subject, and cycles are found by ``construction.cycles`` (the house's one cycle search,
Tarjan's components) instead of a transitive path per edge, which is quadratic.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import datetime

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS, SH, SKOS, XSD

from construction.cycles import EdgeRecord, find_cycles
from kgreview.graph.models import Concept
from kgreview.graph.selectors import edges_as_of

from . import rdf
from .rdf import Triple, kg
from .writers.rdf import CHECKED, Ontology, triples
from .writers.records import buffered, iso

PATTERN, TYPED, DATATYPE, ACYCLIC = "pattern", "typed", "datatype", "acyclic"
IS_A = f"<{RDF.type}>/<{RDFS.subClassOf}>*"


def _is(var: str, type_key: str) -> str:
    return f"{var} {IS_A} <{rdf.concept_type(type_key)}> ."


def pattern_pairs(ont: Ontology, r: dict) -> list[tuple[str, str]]:
    """The (domain, range) type keys an edge of ``r`` may join, both ways round for a
    symmetric relation."""
    pairs = {(p.domain.key, p.range.key) for p in ont.patterns_of(r["key"])}
    if r["symmetric"]:
        pairs |= {(b, a) for a, b in pairs}
    return sorted(pairs)


def _pattern_body(this: str, r: dict, pairs: list[tuple[str, str]]) -> str:
    fits = " UNION ".join(f"{{ {_is(this, d)} {_is('?value', g)} }}" for d, g in pairs)
    return f"{this} <{rdf.relation(r['key'])}> ?value . FILTER NOT EXISTS {{ {fits} }}"


def _untyped_body(this: str) -> str:
    return (
        f"{this} a <{SKOS.Concept}> . "
        f"FILTER NOT EXISTS {{ {this} a ?type . ?type a <{OWL.Class}> . }}"
    )


def _cycle_body(this: str, key: str) -> str:
    prop = rdf.relation(key)
    return f"{this} <{prop}> ?value . ?value <{prop}>* {this} ."


@dataclass(frozen=True)
class Rule:
    """One shape: its IRI, the rule it checks, its SPARQL body (``$this`` the focus
    node) or a core property constraint, and its core target."""

    iri: URIRef
    check: str
    label: str
    target: tuple[URIRef, URIRef]  # (sh:targetSubjectsOf | sh:targetClass, what)
    body: str = ""
    path: URIRef | None = None
    datatype: URIRef | None = None


def rules(ont: Ontology) -> list[Rule]:
    """The shapes of the ontology as of ``ont.at``."""
    out: list[Rule] = []
    for r in ont.relations:
        pairs = pattern_pairs(ont, r)
        prop = rdf.relation(r["key"])
        if pairs:
            words = ", ".join(f"{d} → {g}" for d, g in pairs)
            out.append(
                Rule(
                    rdf.shape("pattern", r["key"]),
                    PATTERN,
                    f"{r['key']} joins only {words}",
                    (SH.targetSubjectsOf, prop),
                    body=_pattern_body("$this", r, pairs),
                    path=prop,
                )
            )
        if r["acyclic"]:
            out.append(
                Rule(
                    rdf.shape("acyclic", r["key"]),
                    ACYCLIC,
                    f"{r['key']} holds no cycle",
                    (SH.targetSubjectsOf, prop),
                    body=_cycle_body("$this", r["key"]),
                    path=prop,
                )
            )
    if ont.types_required():
        out.append(
            Rule(
                rdf.shape("typed"),
                TYPED,
                "every concept has a type",
                (SH.targetClass, SKOS.Concept),
                body=_untyped_body("$this"),
                path=RDF.type,
            )
        )
    for a in ont.attributes:
        if ont.retired(a):
            continue
        prop = rdf.attribute(a.concept_type.key, a.key)
        out.append(
            Rule(
                rdf.shape("attribute", a.concept_type.key, a.key),
                DATATYPE,
                f"{a.concept_type.key}.{a.key} is {a.datatype}",
                (SH.targetSubjectsOf, prop),
                path=prop,
                datatype=rdf.XSD_OF.get(a.datatype, rdf.XSD_OF["string"]),
            )
        )
    return out


def _rule_triples(rule: Rule, *, fast: bool) -> Iterator[Triple]:
    yield rule.iri, RDF.type, SH.NodeShape
    yield rule.iri, RDFS.label, Literal(rule.label)
    yield rule.iri, kg("check"), Literal(rule.check)
    if rule.datatype is not None and rule.path is not None:
        yield rule.iri, rule.target[0], rule.target[1]
        prop = BNode()
        yield rule.iri, SH.property, prop
        yield prop, SH.path, rule.path
        yield prop, SH.datatype, rule.datatype
        yield prop, SH.maxCount, Literal(1)
        return
    if fast:
        target = BNode()
        found = rule.body.replace("$this", "?this")
        yield rule.iri, SH.target, target
        yield target, RDF.type, SH.SPARQLTarget
        yield target, SH.select, Literal(f"SELECT DISTINCT ?this WHERE {{ {found} }}")
    else:
        yield rule.iri, rule.target[0], rule.target[1]
    constraint = BNode()
    yield rule.iri, SH.sparql, constraint
    yield constraint, RDF.type, SH.SPARQLConstraint
    yield constraint, SH.message, Literal(f"Breaks the rule: {rule.label}.")
    path = f" BIND(<{rule.path}> AS ?path)" if rule.path is not None else ""
    value = "?value" if "?value" in rule.body else ""
    yield (
        constraint,
        SH.select,
        Literal(f"SELECT $this {value} ?path WHERE {{ {rule.body}{path} }}"),
    )


def shapes_triples(ont: Ontology, *, fast: bool = False, cycles: bool = True) -> Iterator[Triple]:
    """The shapes graph: plain SHACL-SPARQL (``fast``: SPARQL targets, SHACL-AF)."""
    head = URIRef(f"{rdf.base()}ns/shapes")
    yield head, RDF.type, OWL.Ontology
    yield head, RDFS.label, Literal("kgreview shapes")
    yield head, kg("asOf"), Literal(iso(ont.at), datatype=XSD.dateTime)
    for rule in rules(ont):
        if rule.check == ACYCLIC and not cycles:
            continue
        yield from _rule_triples(rule, fast=fast)


def write_shacl(*, at: datetime, stats=None) -> Iterator[str]:
    """The shapes of the ontology as of ``at`` (Turtle)."""
    ont = Ontology.load(at=at, stats=stats)
    turtle = rdf.Turtle({**rdf.PREFIXES, **rdf.data_prefixes()})
    header = f"# kgreview SHACL shapes as of {iso(at)}\n"
    return buffered(_parts(header + turtle.head, turtle.lines(shapes_triples(ont))))


def _parts(head: str, rest: Iterator[str]) -> Iterator[str]:
    yield head
    yield from rest


# --- Validation ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Violation:
    focus: str
    path: str
    message: str
    kind: str
    concept: int | None


@dataclass(frozen=True)
class Report:
    at: datetime
    violations: list[Violation]

    @property
    def conforms(self) -> bool:
        return not self.violations

    def as_json(self) -> dict:
        return {
            "conforms": self.conforms,
            "as_of": iso(self.at),
            "violations": [asdict(v) for v in self.violations],
        }


class _Words:
    """Names read from the database for the concepts a message names (the data graph
    holds none), and types read back from the data graph."""

    def __init__(self, data: Graph, ont: Ontology) -> None:
        self.data = data
        self.types = {rdf.concept_type(t.key): t for t in ont.types}
        self.relations = {rdf.relation(r["key"]): r for r in ont.relations}
        self.names: dict[int, str] = {}

    def learn(self, nodes) -> None:
        """Read the names of these concepts' nodes in one query."""
        ids = {pk for pk in map(rdf.concept_id, nodes) if pk is not None} - set(self.names)
        if ids:
            self.names.update(Concept.objects.filter(pk__in=ids).values_list("pk", "name"))

    def name(self, node) -> str:
        pk = rdf.concept_id(node)
        if pk is not None and pk not in self.names:
            self.learn([node])
        return f"“{self.names[pk]}”" if pk in self.names else str(node)

    def type_of(self, node) -> str:
        for t in self.data.objects(node, RDF.type):
            if isinstance(t, URIRef) and t in self.types:
                return f"a {self.types[t].key}"
        return "untyped"


def _message(rule: Rule, words: _Words, focus, value, ont: Ontology) -> str:
    if rule.check == PATTERN:
        r = words.relations[rule.path] if rule.path is not None else {}
        pairs = ", ".join(f"{d} → {g}" for d, g in pattern_pairs(ont, r))
        return (
            f"{words.name(focus)} {r['verb']} {words.name(value)} breaks the relation's "
            f"patterns: {words.name(focus)} is {words.type_of(focus)} and "
            f"{words.name(value)} is {words.type_of(value)}, but {r['key']} joins only {pairs}."
        )
    if rule.check == TYPED:
        return f"{words.name(focus)} has no type, and every concept needs one here."
    label = rule.label.split(" is ")[0]
    return (
        f"{words.name(focus)} has {label} = “{value}”, which is not a value of its "
        f"datatype ({rule.label.split(' is ')[-1]})."
    )


def _shacl_violations(data: Graph, ont: Ontology) -> list[Violation]:
    from pyshacl import validate as shacl_validate

    by_iri = {r.iri: r for r in rules(ont)}
    shapes = Graph()
    for s, p, o in shapes_triples(ont, fast=True, cycles=False):
        shapes.add((s, p, o.literal() if isinstance(o, rdf.Lex) else o))
    _conforms, results, _text = shacl_validate(
        data, shacl_graph=shapes, advanced=True, inference="none", allow_warnings=True
    )
    words = _Words(data, ont)
    words.learn(
        node
        for result in results.subjects(RDF.type, SH.ValidationResult)
        for node in (results.value(result, SH.focusNode), results.value(result, SH.value))
    )
    found = []
    for result in results.subjects(RDF.type, SH.ValidationResult):
        shape = results.value(result, SH.sourceShape)
        rule = by_iri.get(shape)
        if rule is None:  # a property shape's result: its node shape holds it
            rule = next((r for r in by_iri.values() if (r.iri, SH.property, shape) in shapes), None)
        focus = results.value(result, SH.focusNode)
        value = results.value(result, SH.value)
        path = results.value(result, SH.resultPath)
        message = (
            _message(rule, words, focus, value, ont)
            if rule is not None
            else str(results.value(result, SH.resultMessage))
        )
        found.append(
            Violation(
                focus=str(focus),
                path=str(path or (rule.path if rule else "")),
                message=message,
                kind=rule.check if rule else "shape",
                concept=rdf.concept_id(focus),
            )
        )
    return found


def _cycle_violations(ont: Ontology, words: _Words) -> list[Violation]:
    acyclic = {r["key"]: r for r in ont.relations if r["acyclic"]}
    if not acyclic:
        return []
    rows = (
        edges_as_of(at=ont.at)
        .filter(relation__key__in=list(acyclic))
        .values_list("pk", "source_id", "target_id", "relation__key", "confidence")
    )
    edges = [EdgeRecord(*row) for row in rows.iterator(chunk_size=50_000)]
    by_id = {e.id: e for e in edges}
    out = []
    findings = find_cycles(edges, acyclic=list(acyclic))
    words.learn(rdf.concept(by_id[i].source_id) for f in findings for i in f.edge_ids)
    for finding in findings:
        chain = [by_id[i] for i in finding.edge_ids]
        names = [words.name(rdf.concept(e.source_id)) for e in chain]
        r = acyclic[finding.relation]
        first = chain[0]
        out.append(
            Violation(
                focus=str(rdf.concept(first.source_id)),
                path=str(rdf.relation(r["key"])),
                message=(
                    f"{' → '.join([*names, names[0]])} is a cycle of {r['key']}, which is "
                    f"acyclic: each {r['verb']} the next. Retire one of its edges."
                ),
                kind=ACYCLIC,
                concept=first.source_id,
            )
        )
    return out


def data_graph(ont: Ontology) -> Graph:
    """The graph as of ``ont.at`` as rdflib holds it for the shapes: the ``owl`` export's
    triples less the names (read for the messages' concepts alone, ``_Words``)."""
    graph = Graph()
    for s, p, o in triples(ont, CHECKED):
        graph.add((s, p, o.literal() if isinstance(o, rdf.Lex) else o))
    return graph


def validate(*, at: datetime) -> Report:
    """The graph as of ``at`` checked against its ontology's shapes."""
    ont = Ontology.load(at=at)
    data = data_graph(ont)
    violations = _shacl_violations(data, ont) + _cycle_violations(ont, _Words(data, ont))
    order = {PATTERN: 0, TYPED: 1, DATATYPE: 2, ACYCLIC: 3}
    violations.sort(key=lambda v: (order.get(v.kind, 9), v.concept or 0, v.path, v.message))
    return Report(at=at, violations=violations)


__all__ = ["Report", "Violation", "rules", "shapes_triples", "validate", "write_shacl"]
