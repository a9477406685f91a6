"""Writers: every format parsed back with counts matching, provenance, as-of, hostile text."""

from __future__ import annotations

import json
import re
import zipfile
from datetime import UTC, datetime, timedelta
from io import BytesIO
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone
from rdflib import Literal, Namespace, URIRef

from kgreview.core.errors import ValidationFailed
from kgreview.exports import vocabulary, writers
from kgreview.exports.selectors import export_counts, parse_as_of
from kgreview.exports.writers import graphml, neo4j_csv, records
from kgreview.graph import services
from kgreview.graph.models import Concept, Edge
from tests.exports.support import (
    HOSTILE,
    backdate,
    csv_rows,
    graphml_of,
    jsonld_doc,
    rdf_of,
    text_of,
    zip_of,
)

pytestmark = pytest.mark.django_db

# Plain namespaces: rdflib's closed ones warn when pytest inspects them.
NS = {prefix: Namespace(iri) for prefix, iri in vocabulary.PREFIXES.items()}
RDF, SKOS, PROV, OWL, XSD = NS["rdf"], NS["skos"], NS["prov"], NS["owl"], NS["xsd"]
KG, REL, CONCEPT, EDGE = NS["kg"], NS["rel"], NS["concepts"], NS["edges"]


def by_type(doc: dict, type_: str) -> list[dict]:
    def types(item):
        t = item.get("@type", [])
        return t if isinstance(t, list) else [t]

    return [item for item in doc["@graph"] if type_ in types(item)]


# --- JSON-LD -----------------------------------------------------------------------------


def test_jsonld_parses_with_rdflib_and_counts_match_the_graph(graph):
    """rdflib reads the document; it holds 5 concepts and the 4 edges active now."""
    g = rdf_of(text_of("jsonld"))
    concepts = set(g.subjects(RDF.type, SKOS.Concept))
    statements = set(g.subjects(RDF.type, RDF.Statement))
    assert concepts == {
        CONCEPT[str(c.pk)] for c in (graph.emb, graph.vs, graph.rag, graph.kw, graph.dense)
    }
    expected = {graph.accepted, graph.builds_on, graph.contrasts, graph.related}
    assert statements == {EDGE[str(e.pk)] for e in expected}
    assert EDGE[str(graph.invalidated.pk)] not in statements
    (export,) = g.subjects(RDF.type, KG.Export)
    assert g.value(export, KG.conceptCount).toPython() == 5
    assert g.value(export, KG.edgeCount).toPython() == 4


def test_jsonld_is_plain_json_with_one_graph_item_per_thing(graph):
    """json.loads reads it: one export node, the vocabulary, 5 concepts, 4 statements."""
    doc = jsonld_doc()
    assert set(doc) == {"@context", "@graph"}
    assert len(by_type(doc, "kg:Export")) == 1
    assert len(by_type(doc, "skos:Concept")) == 5
    assert len(by_type(doc, "rdf:Statement")) == 4
    assert {r["key"] for r in by_type(doc, "kg:RelationType")} >= {
        "prerequisite",
        "builds_on",
        "contrasts_with",
        "related",
        "applies_to",
    }
    emb = next(c for c in by_type(doc, "skos:Concept") if c["prefLabel"] == "Embeddings")
    assert emb["altLabel"] == ["Vector embeddings"]
    assert emb["definition"] == "Dense vectors." and emb["status"] == "active"


def test_jsonld_statement_carries_the_whole_provenance(graph):
    """The accepted edge names its evidence span, revision, proposal, decision and reviewer."""
    e = graph.accepted
    doc = jsonld_doc()
    item = next(s for s in by_type(doc, "rdf:Statement") if s["identifier"] == e.pk)
    assert item["relation"] == "prerequisite" and item["confidence"] == e.confidence
    assert item["reason"] == e.reason and item["status"] == "active" and item["weight"] == 1.0
    assert item["proposal"] == f"proposals:{e.provenance.proposal_id}"
    assert item["decision"] == f"decisions:{e.provenance.decision_id}"
    assert item["decidedBy"] == {"@id": "users:rita", "@type": "prov:Agent", "username": "rita"}
    evidence = item["evidence"]
    assert evidence["quote"] == e.evidence_quote
    assert (evidence["start"], evidence["end"]) == (e.evidence_start, e.evidence_end)
    assert evidence["quotedFrom"]["sourceSlug"] == "rag-lesson"
    assert evidence["quotedFrom"]["revisionNumber"] == 1

    g = rdf_of(text_of("jsonld"))
    node = EDGE[str(e.pk)]
    span = g.value(node, PROV.wasDerivedFrom)
    assert str(g.value(span, PROV.value)) == e.evidence_quote
    revision = g.value(span, PROV.wasQuotedFrom)
    assert str(revision) == vocabulary.ID + "sources/rag-lesson/revisions/1"
    assert g.value(node, PROV.wasAttributedTo) == URIRef(vocabulary.ID + "users/rita")
    assert g.value(node, PROV.wasGeneratedBy) == URIRef(
        vocabulary.ID + f"decisions/{e.provenance.decision_id}"
    )
    assert g.value(node, KG.confidence) == Literal(e.confidence, datatype=XSD.double)
    recorded = g.value(node, PROV.generatedAtTime)
    assert recorded.datatype == XSD.dateTime and recorded.toPython() == e.recorded_at


def test_jsonld_asserts_each_edge_as_a_direct_triple_too(graph):
    """Besides the reified statement, concept --rel:key--> concept is in the graph."""
    g = rdf_of(text_of("jsonld"))
    emb, vs = CONCEPT[str(graph.emb.pk)], CONCEPT[str(graph.vs.pk)]
    assert set(g.predicates(emb, vs)) == {REL.prerequisite, REL.related}
    stmt = EDGE[str(graph.builds_on.pk)]
    assert g.value(stmt, RDF.subject) == CONCEPT[str(graph.rag.pk)]
    assert g.value(stmt, RDF.predicate) == REL.builds_on
    assert g.value(stmt, RDF.object) == vs
    assert (CONCEPT[str(graph.dense.pk)], REL.applies_to, CONCEPT[str(graph.rag.pk)]) not in g


def test_jsonld_describes_the_relation_vocabulary(graph):
    """Relation types are properties with their shape; symmetric ones are owl:SymmetricProperty."""
    g = rdf_of(text_of("jsonld"))
    assert (REL.prerequisite, RDF.type, RDF.Property) in g
    assert g.value(REL.prerequisite, KG.acyclic).toPython() is True
    assert str(g.value(REL.prerequisite, KG.verb)) == "is a prerequisite for"
    assert (REL.contrasts_with, RDF.type, OWL.SymmetricProperty) in g
    assert (REL.prerequisite, RDF.type, OWL.SymmetricProperty) not in g


def test_every_context_term_and_prefix_is_documented_in_context_md():
    """CONTEXT.md names each prefix with its IRI and each term with its IRI."""
    doc = (Path(vocabulary.__file__).parent / "CONTEXT.md").read_text()
    for prefix, iri in vocabulary.PREFIXES.items():
        assert f"| `{prefix}` | `{iri}` |" in doc, prefix
    for term in vocabulary.TERMS:
        assert f"| `{term.name}` | `{term.iri}` |" in doc, term.name
    for name, _ in vocabulary.CLASSES:
        assert f"`{name}`" in doc, name


def test_no_term_shares_its_name_with_a_prefix():
    """A term named like a prefix would hide it, and compact IRIs would stop expanding."""
    names = [t.name for t in vocabulary.TERMS]
    assert len(names) == len(set(names))
    assert set(names).isdisjoint(vocabulary.PREFIXES)


def test_context_terms_expand_to_real_vocabularies():
    """The context maps names onto SKOS, PROV-O, RDF and Dublin Core, not only kgreview's own."""
    ctx = vocabulary.context()
    assert ctx["prefLabel"] == "skos:prefLabel" and ctx["quote"] == "prov:value"
    assert ctx["evidence"] == {"@id": "prov:wasDerivedFrom", "@type": "@id"}
    assert vocabulary.expand(ctx["recordedAt"]["@id"]) == str(PROV.generatedAtTime)
    assert vocabulary.expand("skos:Concept") == str(SKOS.Concept)


# --- CSV for neo4j -----------------------------------------------------------------------


def test_csv_zip_holds_neo4j_files_with_counts_matching(graph):
    """nodes.csv has 5 concepts, edges.csv 4 edges, every end among the nodes."""
    data = zip_of()
    with zipfile.ZipFile(BytesIO(data)) as archive:
        assert archive.namelist() == ["nodes.csv", "edges.csv", "relation_types.csv"]
        assert archive.testzip() is None
        header = archive.read("nodes.csv").decode().split("\r\n", 1)[0]
    assert header == ",".join(neo4j_csv.NODE_HEADER)
    assert header.startswith(":ID(Concept),conceptId:long,name,aliases:string[]")
    nodes = csv_rows(data, "nodes.csv")
    edges = csv_rows(data, "edges.csv")
    assert len(nodes) == 5 and {n[":LABEL"] for n in nodes} == {"Concept"}
    assert len(edges) == 4
    ids = {n[":ID(Concept)"] for n in nodes}
    assert all(e[":START_ID(Concept)"] in ids and e[":END_ID(Concept)"] in ids for e in edges)
    assert str(graph.invalidated.pk) not in {e["edgeId:long"] for e in edges}


def test_csv_edges_use_upper_snake_types_and_keep_provenance(graph):
    """:TYPE is UPPER_SNAKE, the key stays a property, the accepted edge keeps its provenance."""
    edges = {int(e["edgeId:long"]): e for e in csv_rows(zip_of(), "edges.csv")}
    assert {e[":TYPE"] for e in edges.values()} == {
        "PREREQUISITE",
        "BUILDS_ON",
        "CONTRASTS_WITH",
        "RELATED",
    }
    row = edges[graph.accepted.pk]
    e = graph.accepted
    assert row["relation"] == "prerequisite" and row["symmetric:boolean"] == "false"
    assert float(row["confidence:double"]) == e.confidence
    assert row["evidenceQuote"] == e.evidence_quote and row["evidenceSource"] == "rag-lesson"
    assert (row["evidenceStart:long"], row["evidenceEnd:long"]) == (
        str(e.evidence_start),
        str(e.evidence_end),
    )
    assert row["proposalId:long"] == str(e.provenance.proposal_id)
    assert row["decisionId:long"] == str(e.provenance.decision_id) and row["decidedBy"] == "rita"
    assert datetime.fromisoformat(row["recordedAt:datetime"]) == e.recorded_at
    assert row["invalidAt:datetime"] == ""
    assert edges[graph.contrasts.pk]["symmetric:boolean"] == "true"


def test_csv_relation_types_file_lists_the_vocabulary(graph):
    """relation_types.csv has one RelationType node per key with its shape."""
    rows = {r["relationKey:ID(RelationType)"]: r for r in csv_rows(zip_of(), "relation_types.csv")}
    assert rows["prerequisite"]["acyclic:boolean"] == "true"
    assert rows["contrasts_with"]["symmetric:boolean"] == "true"
    assert {r[":LABEL"] for r in rows.values()} == {"RelationType"}


def test_csv_aliases_are_a_semicolon_array_and_a_semicolon_in_a_name_cannot_split_it(f):
    """Aliases join with ';'; a ';' inside one alias becomes U+FF1B so the array keeps its size."""
    c = f.concept("LoRA", aliases=["Low-rank adaptation", "A; B"])
    (row,) = [r for r in csv_rows(zip_of(), "nodes.csv") if r["conceptId:long"] == str(c.pk)]
    assert row["aliases:string[]"].split(";") == ["A\uff1b B", "Low-rank adaptation"]


def test_csv_quotes_line_breaks_and_quotes_per_rfc_4180(f):
    """A reason with CRLF, commas and quotes comes back whole through the csv module."""
    reason = 'Line one, "quoted"\r\nline two\nline three'
    e = f.edge(f.concept(), f.concept(), reason=reason)
    data = zip_of()
    with zipfile.ZipFile(BytesIO(data)) as archive:
        raw = archive.read("edges.csv").decode()
    assert '"Line one, ""quoted""\r\nline two\nline three"' in raw
    (row,) = csv_rows(data, "edges.csv")
    assert row["reason"] == reason and row["edgeId:long"] == str(e.pk)


def test_neo4j_type_is_upper_snake():
    """Keys become relationship types in neo4j's convention."""
    assert neo4j_csv.neo4j_type("builds_on") == "BUILDS_ON"
    assert neo4j_csv.neo4j_type("part-of") == "PART_OF"
    assert neo4j_csv.neo4j_type("is a") == "IS_A"


# --- GraphML -----------------------------------------------------------------------------


def test_graphml_reads_into_networkx_with_counts_and_typed_attributes(graph):
    """networkx reads 5 nodes and 4 edges; longs, doubles and booleans come back typed."""
    text = text_of("graphml")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    assert 'xmlns="http://graphml.graphdrawing.org/xmlns"' in text
    assert 'edgedefault="directed"' in text
    g = graphml_of(text)
    assert g.is_directed() and g.number_of_nodes() == 5 and g.number_of_edges() == 4
    node = g.nodes[f"c{graph.emb.pk}"]
    assert node["label"] == node["name"] == "Embeddings"
    assert node["conceptId"] == graph.emb.pk and isinstance(node["conceptId"], int)
    assert json.loads(node["aliases"]) == ["Vector embeddings"]
    e = graph.accepted
    data = g.edges[f"c{graph.emb.pk}", f"c{graph.vs.pk}", f"e{e.pk}"]
    assert data["edgeId"] == e.pk and data["confidence"] == e.confidence
    assert isinstance(data["confidence"], float) and data["symmetric"] is False
    assert data["acyclic"] is True and data["relation"] == "prerequisite"
    assert data["evidenceQuote"] == e.evidence_quote and data["evidenceRevision"] == 1
    made = e.provenance
    assert data["proposalId"] == made.proposal_id and data["decisionId"] == made.decision_id
    assert data["decidedBy"] == "rita" and data["status"] == "active"
    assert "invalidAt" not in data
    assert g.graph["generator"] == "kgreview"


def test_graphml_keeps_two_relations_between_the_same_pair(graph):
    """prerequisite and related both join Embeddings to Vector search, and both survive."""
    import networkx as nx

    g = nx.read_graphml(BytesIO(text_of("graphml").encode()))
    assert g.is_multigraph()
    pair = g.get_edge_data(f"c{graph.emb.pk}", f"c{graph.vs.pk}")
    assert {d["relation"] for d in pair.values()} == {"prerequisite", "related"}


def test_graphml_marks_symmetric_relations(graph):
    """The contrasts_with edge says symmetric=true; directed relations say false."""
    g = graphml_of(text_of("graphml"))
    flags = {d["relation"]: d["symmetric"] for _, _, d in g.edges(data=True)}
    assert flags == {
        "prerequisite": False,
        "builds_on": False,
        "contrasts_with": True,
        "related": True,
    }


def test_graphml_replaces_characters_xml_forbids(f):
    """A control character in a name cannot break the file: it reads back as U+FFFD.
    (Names are stored without them now; a row written before could still hold one.)"""
    from kgreview.graph.models import Concept

    c = f.concept("Bell and escape")
    Concept.objects.filter(pk=c.pk).update(name="Bell\x07 and\x1b escape")
    g = graphml_of(text_of("graphml"))
    assert g.nodes[f"c{c.pk}"]["name"] == "Bell\ufffd and\ufffd escape"


def test_xml_text_escapes_markup_and_keeps_carriage_returns():
    """Markup is escaped, CR survives as a reference, forbidden characters are replaced."""
    assert graphml.xml_text('<a href="x">&</a>\r\n\x00\ufffe') == (
        "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;&#13;\n\ufffd\ufffd"
    )


# --- Hostile text, empty graphs, streaming ------------------------------------------------


def test_hostile_text_survives_every_format_intact_and_inert(f):
    """Markup, ampersands, quotes and line breaks in names, reasons and quotes come back as text."""
    from tests.exports.support import LESSON

    doc = f.lesson("evil", text=LESSON)
    name = f"{HOSTILE} concept"
    reason = f"{HOSTILE}\r\nsecond line"
    a, b = f.concept(name, description=HOSTILE), f.concept("Plain")
    e = f.edge(a, b, reason=reason, evidence=f.evidence(doc.current_revision, HOSTILE))

    item = next(s for s in by_type(jsonld_doc(), "rdf:Statement") if s["identifier"] == e.pk)
    assert item["reason"] == reason and item["evidence"]["quote"] == HOSTILE
    g = rdf_of(text_of("jsonld"))
    assert str(g.value(CONCEPT[str(a.pk)], SKOS.prefLabel)) == name

    data = zip_of()
    (node,) = [r for r in csv_rows(data, "nodes.csv") if r["name"] == name]
    assert node["description"] == HOSTILE
    (row,) = csv_rows(data, "edges.csv")
    assert row["reason"] == reason and row["evidenceQuote"] == HOSTILE

    text = text_of("graphml")
    assert "<script>" not in text and "]]>" not in text
    gm = graphml_of(text)
    assert gm.nodes[f"c{a.pk}"]["name"] == name
    assert gm.nodes[f"c{a.pk}"]["description"] == HOSTILE
    (edge,) = [d for _, _, d in gm.edges(data=True)]
    assert edge["reason"] == reason and edge["evidenceQuote"] == HOSTILE


@pytest.mark.django_db
def test_empty_graph_gives_valid_files_in_every_format():
    """No concepts: JSON-LD, the zip and GraphML are still valid and say zero."""
    doc = jsonld_doc()
    assert by_type(doc, "skos:Concept") == [] and by_type(doc, "rdf:Statement") == []
    assert by_type(doc, "kg:Export")[0]["conceptCount"] == 0
    assert len(rdf_of(text_of("jsonld"))) > 0  # the export node and the vocabulary
    data = zip_of()
    assert csv_rows(data, "nodes.csv") == [] and csv_rows(data, "edges.csv") == []
    g = graphml_of(text_of("graphml"))
    assert g.number_of_nodes() == 0 and g.number_of_edges() == 0


def test_writers_stream_in_chunks_with_a_constant_number_of_queries(
    f, django_assert_max_num_queries
):
    """A bigger graph comes out in several chunks, and the query count does not grow with it."""
    reviewer = f.user(role="reviewer")
    hub = f.concept("Hub")
    long_reason = "Because. " * 400
    for i in range(40):
        f.edge(hub, f.concept(f"Leaf {i}"), "related", reason=long_reason, acting_user=reviewer)
    for fmt in ("jsonld", "graphml"):
        with django_assert_max_num_queries(7):
            chunks = list(writers.FORMATS[fmt].write(at=timezone.now()))
        assert len(chunks) > 1, fmt
    with django_assert_max_num_queries(8):
        data = zip_of()
    assert len(csv_rows(data, "edges.csv")) == 40


def test_stats_count_what_was_written(graph):
    """The counters filled while streaming match the rows written."""
    stats = records.ExportStats()
    b"".join(neo4j_csv.write_csv_zip(at=timezone.now(), stats=stats))
    assert (stats.concepts, stats.edges) == (5, 4)
    assert stats.relation_types >= 6


# --- As of ---------------------------------------------------------------------------------


def test_as_of_excludes_edges_and_concepts_that_came_later(f):
    """Before an edge was recorded it is not in the export, nor are concepts created after."""
    old_a, old_b = f.concept("Old A"), f.concept("Old B")
    old = f.edge(old_a, old_b)
    for c in (old_a, old_b):
        backdate(c, "created_at", days=10)
    backdate(old, "recorded_at", "valid_at", days=10)
    new = f.edge(old_a, f.concept("New C"), "related")
    then = timezone.now() - timedelta(days=5)

    past = jsonld_doc(then)
    assert [s["identifier"] for s in by_type(past, "rdf:Statement")] == [old.pk]
    assert {c["prefLabel"] for c in by_type(past, "skos:Concept")} == {"Old A", "Old B"}
    now = jsonld_doc()
    assert {s["identifier"] for s in by_type(now, "rdf:Statement")} == {old.pk, new.pk}
    assert export_counts(at=then) == {"concepts": 2, "edges": 1}


def test_as_of_includes_edges_invalidated_since_that_were_active_then(f):
    """An edge retired today was part of last week's graph, and a past export says so."""
    a, b = f.concept("A"), f.concept("B")
    for c in (a, b):
        backdate(c, "created_at", days=10)
    e = f.edge(a, b)
    backdate(e, "recorded_at", "valid_at", days=10)
    services.edge_invalidate(edge=e, reason="Wrong after all.", acting_user=None)
    then = timezone.now() - timedelta(days=5)

    (item,) = by_type(jsonld_doc(then), "rdf:Statement")
    assert item["identifier"] == e.pk and item["status"] == "invalidated"
    assert datetime.fromisoformat(item["invalidAt"]) > then
    assert by_type(jsonld_doc(), "rdf:Statement") == []
    g = graphml_of(text_of("graphml", then))
    assert g.number_of_edges() == 1
    assert len(csv_rows(zip_of(then), "edges.csv")) == 1


def test_as_of_keeps_a_concept_merged_since_and_drops_it_after(f):
    """A concept merged today is a node of last week's graph but not of today's."""
    keep, lose = f.concept("Keep"), f.concept("Lose")
    for c in (keep, lose):
        backdate(c, "created_at", days=10)
    services.concept_merge(loser=lose, survivor=keep, acting_user=None)
    then = timezone.now() - timedelta(days=5)

    past = {c["prefLabel"]: c for c in by_type(jsonld_doc(then), "skos:Concept")}
    assert set(past) == {"Keep", "Lose"}
    assert past["Lose"]["mergedInto"] == f"concepts:{keep.pk}"
    assert "altLabel" not in past["Keep"]  # the name "Lose" moved to Keep only today
    now = {c["prefLabel"]: c for c in by_type(jsonld_doc(), "skos:Concept")}
    assert set(now) == {"Keep"} and now["Keep"]["altLabel"] == ["Lose"]
    assert Concept.objects.get(pk=lose.pk).status == "merged"


def test_as_of_includes_every_end_of_an_edge_even_when_its_concept_row_is_younger(f):
    """An edge recorded with older times than its concepts (an import) still has both ends."""
    a, b = f.concept("Young A"), f.concept("Young B")
    e = f.edge(a, b)
    backdate(e, "recorded_at", "valid_at", days=10)
    then = timezone.now() - timedelta(days=5)
    past = jsonld_doc(then)
    assert {c["prefLabel"] for c in by_type(past, "skos:Concept")} == {"Young A", "Young B"}
    g = graphml_of(text_of("graphml", then))
    assert set(g.nodes) == {f"c{a.pk}", f"c{b.pk}"} and g.number_of_edges() == 1
    assert export_counts(at=then) == {"concepts": 2, "edges": 1}


def test_as_of_before_anything_existed_is_empty(graph):
    """An instant before the graph began exports no concepts and no edges."""
    then = timezone.now() - timedelta(days=365)
    assert export_counts(at=then) == {"concepts": 0, "edges": 0}
    g = graphml_of(text_of("graphml", then))
    assert g.number_of_nodes() == 0
    assert Edge.objects.count() == 5


def test_as_of_in_the_future_is_the_graph_as_it_stands(graph):
    """A future instant sees exactly what now sees."""
    later = timezone.now() + timedelta(days=30)
    assert export_counts(at=later) == {"concepts": 5, "edges": 4}


# --- Parsing instants ----------------------------------------------------------------------


def test_parse_as_of_reads_dates_naive_times_offsets_and_z(settings):
    """Dates are midnight, naive times are in TIME_ZONE, offsets and Z are honoured."""
    settings.TIME_ZONE = "Europe/Paris"
    paris = ZoneInfo("Europe/Paris")
    assert parse_as_of("2024-05-01") == datetime(2024, 5, 1, tzinfo=paris)
    assert parse_as_of("2024-05-01T14:30") == datetime(2024, 5, 1, 14, 30, tzinfo=paris)
    assert parse_as_of("2024-05-01T14:30:00+02:00") == datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
    assert parse_as_of(" 2024-05-01T12:30:00Z ") == datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
    assert parse_as_of("2024-05-01T12:30:00Z").tzinfo is UTC


@pytest.mark.parametrize(
    "bad", ["", "yesterday", "2024-13-01", "2024-05-01T25:00", "0001-01-01T00:00+05:00"]
)
def test_parse_as_of_refuses_what_is_not_an_instant_in_words(bad):
    """Garbage, impossible dates and instants past the calendar's start are refused with help."""
    with pytest.raises(ValidationFailed, match=re.escape("ISO 8601 date or date-time")):
        parse_as_of(bad)


def test_filename_carries_the_format_and_the_instant():
    """kgreview-graph-<UTC instant>.<extension>"""
    at = datetime(2024, 5, 1, 14, 30, 5, tzinfo=ZoneInfo("Europe/Paris"))
    assert writers.filename(writers.FORMATS["csv"], at) == "kgreview-graph-20240501T123005Z.zip"
    assert writers.filename(writers.FORMATS["graphml"], at).endswith(".graphml")
