"""The RDF exports (turtle, skos, owl, shacl) and manage.py validate: parse back with
rdflib, validate with pyshacl against the exported shapes, report planted breakers."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone
from pyshacl import validate as shacl_validate
from rdflib import Graph, Literal, URIRef
from rdflib import namespace as ns

from kgreview.exports import rdf
from kgreview.exports.shapes import validate
from kgreview.graph import services
from kgreview.graph.models import (
    Attribute,
    AttributeValue,
    Concept,
    ConceptType,
    ConceptTypeChange,
    Edge,
    RelationPattern,
    RelationType,
)
from tests.exports.support import text_of

pytestmark = pytest.mark.django_db


@dataclass
class Onto:
    vacuum: Concept
    work_mem: Concept
    checkpoint: Concept
    wal: Concept
    default: Attribute


def _type(key: str, parent: str = "") -> ConceptType:
    return services.concept_type_create(
        key=key, label=key.replace("_", " ").title(), parent_key=parent, acting_user=None
    )


def _typed(f, name: str, type_key: str) -> Concept:
    c = f.concept(name)
    return services.concept_set_type(concept=c, type_key=type_key, acting_user=None)


def _raw_edge(src: Concept, dst: Concept, key: str) -> Edge:
    """An edge written past the services (and so past every rule), as a bad import would."""
    now = timezone.now()
    return Edge.objects.create(
        source=src,
        target=dst,
        relation=RelationType.objects.get(key=key),
        confidence=0.5,
        reason="Planted.",
        valid_at=now,
        recorded_at=now,
    )


def _value(concept: Concept, attribute: Attribute, value: str) -> AttributeValue:
    return AttributeValue.objects.create(
        concept=concept, attribute=attribute, value=value, recorded_at=timezone.now()
    )


@pytest.fixture
def onto(f) -> Onto:
    """Commands apply to settings (and to processes); settings take an integer default."""
    _type("thing")
    for key in ("command", "setting", "process"):
        _type(key, parent="thing")
    _type("maintenance_command", parent="command")
    applies = RelationType.objects.get(key="applies_to")
    for rng in ("setting", "process"):
        RelationPattern.objects.create(
            relation=applies,
            domain=ConceptType.objects.get(key="command"),
            range=ConceptType.objects.get(key=rng),
        )
    default = Attribute.objects.create(
        concept_type=ConceptType.objects.get(key="setting"),
        key="default_value",
        label="Default value",
        datatype="integer",
    )
    vacuum = _typed(f, "VACUUM", "maintenance_command")
    work_mem = _typed(f, "work_mem", "setting")
    checkpoint = _typed(f, "Checkpoint", "process")
    wal = _typed(f, "WAL", "process")
    f.edge(vacuum, work_mem, "applies_to")  # a subtype of command satisfies the pattern
    f.edge(vacuum, checkpoint, "applies_to")
    f.edge(wal, checkpoint, "prerequisite")
    _value(work_mem, default, "4096")
    return Onto(vacuum, work_mem, checkpoint, wal, default)


def turtle(fmt: str = "turtle", at=None) -> Graph:
    return Graph().parse(data=text_of(fmt, at), format="turtle")


def shacl(data: Graph) -> tuple[bool, Graph]:
    conforms, results, _ = shacl_validate(data, shacl_graph=turtle("shacl"), inference="none")
    return conforms, results


def foci(results: Graph) -> set[tuple[str, str]]:
    return {
        (str(results.value(r, ns.SH.focusNode)), str(results.value(r, ns.SH.resultPath)))
        for r in results.subjects(ns.RDF.type, ns.SH.ValidationResult)
    }


def run_validate(*args: str) -> tuple[int, dict]:
    out = io.StringIO()
    try:
        call_command("validate", "--json", *args, stdout=out)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, json.loads(out.getvalue())


# --- Round trip --------------------------------------------------------------------------------


def test_a_clean_graph_exports_parses_and_conforms_to_its_exported_shapes(onto):
    """export → parse with rdflib → pyshacl against the exported shapes: conforms; and
    manage.py validate says so, exiting 0."""
    data = turtle()
    conforms, results = shacl(data)
    assert conforms, results.serialize(format="turtle")
    code, report = run_validate()
    assert (code, report["conforms"], report["violations"]) == (0, True, [])
    assert shacl(turtle("owl"))[0]


def test_the_turtle_export_holds_ontology_concepts_edges_values_and_provenance(graph, onto):
    """Types are classes under their parents, relations object properties with their
    patterns' domain and range (a union for several), attributes datatype properties;
    concepts are individuals of their type; edges are triples, reified with provenance.
    (The provenance fixture's graph first: its untyped applies_to edge predates the
    patterns, which would refuse it.)"""
    g = turtle()
    command, setting = rdf.concept_type("command"), rdf.concept_type("setting")
    assert (command, ns.RDF.type, ns.OWL.Class) in g
    assert (command, ns.RDFS.subClassOf, rdf.concept_type("thing")) in g
    applies = rdf.relation("applies_to")
    assert (applies, ns.RDF.type, ns.OWL.ObjectProperty) in g
    assert g.value(applies, ns.RDFS.domain) == command
    union = g.value(g.value(applies, ns.RDFS.range), ns.OWL.unionOf)
    assert set(g.items(union)) == {setting, rdf.concept_type("process")}
    prop = rdf.attribute("setting", "default_value")
    assert (prop, ns.RDF.type, ns.OWL.DatatypeProperty) in g
    assert g.value(prop, ns.RDFS.range) == ns.XSD.integer
    work_mem = rdf.concept(onto.work_mem.pk)
    assert (work_mem, ns.RDF.type, setting) in g
    assert (work_mem, prop, Literal("4096", datatype=ns.XSD.integer)) in g
    assert (rdf.concept(onto.vacuum.pk), applies, work_mem) in g
    # The accepted edge of the provenance fixture: its statement, quote, decision, who.
    statement = rdf.edge(graph.accepted.pk)
    assert g.value(statement, ns.RDF.subject) == rdf.concept(graph.emb.pk)
    assert g.value(statement, ns.RDF.predicate) == rdf.relation("prerequisite")
    span = g.value(statement, URIRef("http://www.w3.org/ns/prov#wasDerivedFrom"))
    quote = g.value(span, URIRef("http://www.w3.org/ns/prov#value"))
    assert str(quote) == "Before learning vector search you should understand embeddings."
    assert g.value(statement, URIRef("http://www.w3.org/ns/prov#wasGeneratedBy")) is not None
    who = g.value(statement, URIRef("http://www.w3.org/ns/prov#wasAttributedTo"))
    assert who == rdf.user("rita")
    assert float(g.value(statement, rdf.kg("confidence"))) == graph.accepted.confidence


def test_the_skos_export_maps_relations_and_puts_concepts_in_their_types_schemes(onto, f):
    """part_of becomes skos:broader (KG_SKOS_RELATIONS' default), applies_to keeps its own
    property under skos:semanticRelation; a concept is in its type's scheme and the
    schemes of the types above it."""
    whole, piece = f.concept("Storage"), f.concept("Heap file")
    f.edge(piece, whole, "part_of")
    g = turtle("skos")
    assert (rdf.concept(piece.pk), ns.SKOS.broader, rdf.concept(whole.pk)) in g
    assert (rdf.relation("applies_to"), ns.RDFS.subPropertyOf, ns.SKOS.semanticRelation) in g
    vacuum = rdf.concept(onto.vacuum.pk)
    assert (vacuum, ns.SKOS.prefLabel, Literal("VACUUM")) in g
    schemes = set(g.objects(vacuum, ns.SKOS.inScheme))
    assert {rdf.scheme("type/maintenance_command"), rdf.scheme("type/command")} <= schemes
    assert rdf.scheme("graph") in schemes
    assert (rdf.scheme("type/command"), ns.RDF.type, ns.SKOS.ConceptScheme) in g


@override_settings(KG_SKOS_RELATIONS="applies_to:related")
def test_the_skos_mapping_is_a_setting(onto):
    g = turtle("skos")
    assert (rdf.concept(onto.vacuum.pk), ns.SKOS.related, rdf.concept(onto.work_mem.pk)) in g


@override_settings(KG_RDF_BASE="https://graph.example.org/kb/")
def test_iris_live_under_the_configured_base(onto):
    g = turtle()
    assert (URIRef(f"https://graph.example.org/kb/id/concepts/{onto.vacuum.pk}"), None, None) in g
    assert (URIRef("https://graph.example.org/kb/ns/type/command"), ns.RDF.type, ns.OWL.Class) in g


# --- Planted breakers ------------------------------------------------------------------------


def test_a_planted_edge_that_breaks_a_pattern_is_reported_with_its_focus_and_words(onto):
    """Checkpoint (a process) applies_to work_mem: only commands apply to anything. It is
    in validate --json with the subject as focus, the relation as path, both names in the
    message; exit 1; pyshacl over the exported files finds the same focus and path."""
    _raw_edge(onto.checkpoint, onto.work_mem, "applies_to")
    code, report = run_validate()
    assert code == 1 and report["conforms"] is False
    (v,) = report["violations"]
    focus, path = str(rdf.concept(onto.checkpoint.pk)), str(rdf.relation("applies_to"))
    assert (v["focus"], v["path"], v["kind"], v["concept"]) == (
        focus,
        path,
        "pattern",
        onto.checkpoint.pk,
    )
    assert "“Checkpoint”" in v["message"] and "“work_mem”" in v["message"]
    assert "a process" in v["message"] and "command → setting" in v["message"]
    conforms, results = shacl(turtle())
    assert not conforms and foci(results) == {(focus, path)}


def test_a_concept_without_a_type_is_reported_once_types_exist(onto, f):
    """An untyped concept breaks the typed rule (KG_REQUIRE_TYPES=auto: a type is in force);
    with never it conforms."""
    stray = f.concept("Autovacuum launcher")
    code, report = run_validate()
    assert code == 1
    (v,) = report["violations"]
    assert (v["kind"], v["concept"]) == ("typed", stray.pk)
    assert "“Autovacuum launcher” has no type" in v["message"]
    assert not shacl(turtle())[0]
    with override_settings(KG_REQUIRE_TYPES="never"):
        assert run_validate()[0] == 0
        assert validate(at=timezone.now()).conforms


def test_an_untyped_graph_without_types_conforms(f):
    a, b = f.concept("Alpha"), f.concept("Beta")
    f.edge(a, b, "related")
    assert run_validate()[0] == 0
    assert shacl(turtle())[0]


def test_an_attribute_value_of_the_wrong_datatype_is_reported(onto):
    """ "lots" is no integer: written as a plain string, so the file holds no ill-typed
    literal, and sh:datatype reports it with the concept and the value in words."""
    shared = _typed_concept = services.concept_create(name="shared_buffers", acting_user=None)
    services.concept_set_type(concept=_typed_concept, type_key="setting", acting_user=None)
    _value(shared, onto.default, "lots")
    prop = rdf.attribute("setting", "default_value")
    g = turtle()
    assert (rdf.concept(shared.pk), prop, Literal("lots")) in g
    code, report = run_validate()
    assert code == 1
    (v,) = report["violations"]
    assert (v["kind"], v["focus"], v["path"]) == (
        "datatype",
        str(rdf.concept(shared.pk)),
        str(prop),
    )
    assert "“shared_buffers”" in v["message"] and "“lots”" in v["message"]
    conforms, results = shacl(g)
    assert not conforms and foci(results) == {(str(rdf.concept(shared.pk)), str(prop))}


def test_a_cycle_in_an_acyclic_relation_is_reported_and_the_exported_shape_finds_it(onto):
    """Checkpoint → WAL written past the services closes WAL → Checkpoint → WAL."""
    _raw_edge(onto.checkpoint, onto.wal, "prerequisite")
    code, report = run_validate()
    assert code == 1
    (v,) = report["violations"]
    assert v["kind"] == "acyclic" and v["path"] == str(rdf.relation("prerequisite"))
    assert "“WAL”" in v["message"] and "“Checkpoint”" in v["message"]
    assert "cycle of prerequisite" in v["message"]
    conforms, results = shacl(turtle())
    assert not conforms
    assert {f for f, _ in foci(results)} == {
        str(rdf.concept(onto.checkpoint.pk)),
        str(rdf.concept(onto.wal.pk)),
    }


def test_validate_prints_sentences_without_json(onto):
    _raw_edge(onto.checkpoint, onto.work_mem, "applies_to")
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("validate", stdout=out)
    assert exit_.value.code == 1
    assert "1 violation of the ontology's shapes" in out.getvalue()
    assert "“Checkpoint”" in out.getvalue()


# --- As of ----------------------------------------------------------------------------------------


def test_an_export_as_of_an_instant_gives_the_type_a_concept_had_then(onto):
    """work_mem was a setting, then a process: the export as of before the change says
    setting, and validate as of then conforms where now it does not."""
    before = timezone.now()
    services.concept_set_type(concept=onto.work_mem, type_key="process", acting_user=None)
    work_mem = rdf.concept(onto.work_mem.pk)
    then, now = turtle(at=before), turtle()
    assert (work_mem, ns.RDF.type, rdf.concept_type("setting")) in then
    assert (work_mem, ns.RDF.type, rdf.concept_type("process")) not in then
    assert (work_mem, ns.RDF.type, rdf.concept_type("process")) in now
    # Its default value belongs to settings: as a process's value it is still an integer,
    # so nothing breaks; the edge from VACUUM still fits (command → process).
    assert run_validate("--as-of", before.isoformat())[0] == 0
    assert validate(at=before).conforms


def test_validate_as_of_a_bad_instant_is_refused_in_words():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--as-of"):
        call_command("validate", "--as-of", "yesterday-ish")


# --- Names and IRIs -------------------------------------------------------------------------------

WEIRD = [
    "Tab\tand space",
    "Ünïcödé 日本語 🚀",
    'Quote " and """ triple',
    "Back\\slash and <angle> & {brace} %20 #hash /slash",
    "Line\nbreak",
]


def test_weird_names_round_trip_through_every_rdf_export(f):
    """Names holding quotes, backslashes, markup, percent signs, line breaks and unicode
    come back from each Turtle export exactly."""
    made = [services.concept_create(name=n, acting_user=None) for n in WEIRD if "\n" not in n]
    for fmt in ("turtle", "skos", "owl"):
        g = turtle(fmt)
        for c in made:
            assert g.value(rdf.concept(c.pk), ns.SKOS.prefLabel) == Literal(c.name), (fmt, c.name)


def test_a_type_key_no_slug_allows_still_gives_one_valid_iri(f):
    """A key written past the services with a space, a slash, a percent sign and unicode
    is percent-encoded whole: the IRI is ASCII, parses back, and the concept keeps it."""
    odd = ConceptType.objects.create(key="sœur type/%41", label="Odd")
    c = f.concept("Member")  # the services refuse the key, so the type is set past them
    Concept.objects.filter(pk=c.pk).update(type=odd)
    ConceptTypeChange.objects.create(concept=c, type=odd, changed_at=timezone.now())
    iri = rdf.concept_type(odd.key)
    assert str(iri).isascii() and " " not in str(iri)
    assert str(iri).endswith("/ns/type/s%C5%93ur%20type%2F%2541")
    g = turtle()
    assert (rdf.concept(c.pk), ns.RDF.type, iri) in g
    assert g.value(iri, rdf.kg("key")) == Literal("sœur type/%41")


@pytest.mark.parametrize(
    "text", ["nul \x00 byte", "bell \x07", "del \x7f", "crlf\r\n", 'q"q', "tab\t", "é𝄞"]
)
def test_turtle_literals_escape_every_control_character(text):
    """No stored text holds control characters, but the writer escapes them anyway: the
    line parses back with rdflib to the same string."""
    writer = rdf.Turtle(rdf.PREFIXES)
    line = "".join(writer.lines([(URIRef("http://x/s"), ns.RDFS.label, Literal(text))]))
    assert "\x00" not in line and "\n" not in line.rstrip("\n")
    (triple,) = Graph().parse(data=writer.head + line, format="turtle")
    assert str(triple[2]) == text


def test_an_iri_with_characters_iris_forbid_is_written_escaped():
    writer = rdf.Turtle({})
    text = writer.iri(URIRef("http://x/a b<c>é"))
    assert text == "<http://x/a%20b%3Cc%3E%C3%A9>"


# --- Registered like every format ---------------------------------------------------------------


def test_export_command_writes_each_rdf_format(onto):
    for fmt in ("turtle", "skos", "owl", "shacl"):
        out, err = io.StringIO(), io.StringIO()
        call_command("export", "--format", fmt, stdout=out, stderr=err)
        assert len(Graph().parse(data=out.getvalue(), format="turtle")) > 0, fmt
        assert "Exported" in err.getvalue()


def test_the_shapes_export_has_one_shape_per_rule(onto):
    g = turtle("shacl")
    shapes = set(g.subjects(ns.RDF.type, ns.SH.NodeShape))
    assert {
        rdf.shape("pattern", "applies_to"),
        rdf.shape("acyclic", "prerequisite"),
        rdf.shape("typed"),
        rdf.shape("attribute", "setting", "default_value"),
    } <= shapes
    assert (
        rdf.shape("pattern", "applies_to"),
        ns.SH.targetSubjectsOf,
        rdf.relation("applies_to"),
    ) in g
