"""Every export format says where each edge's quote sits: the page of a PDF (none for
unpaged formats) and the heading path; read per batch of edges, never per edge, and
without the revisions' texts."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rdflib import Literal, Namespace
from rdflib.collection import Collection

from kgreview.exports import selectors, vocabulary
from kgreview.exports.writers import graphml, neo4j_csv
from kgreview.graph.models import Edge
from kgreview.graph.sources import NO_PLACE, RevisionPlaces
from tests.exports.support import csv_rows, graphml_of, jsonld_doc, rdf_of, text_of, zip_of
from tests.paged import HANDBOOK, MARKDOWN, MD_QUOTE, OSPF_QUOTE, pdf

pytestmark = pytest.mark.django_db

KG = Namespace(vocabulary.KG)
EDGES = Namespace(vocabulary.PREFIXES["edges"])
PROV = Namespace(vocabulary.PREFIXES["prov"])
XSD = Namespace(vocabulary.PREFIXES["xsd"])
INTRO_QUOTE = "Intro."


@dataclass
class Placed:
    pdf: Edge  # page 2, Routing › OSPF
    md: Edge  # no page, Retrieval › Vector search
    top: Edge  # no page, Retrieval
    bare: Edge  # no evidence


@pytest.fixture
def placed(f) -> Placed:
    lesson = f.source("md-lesson", text=MARKDOWN).current_revision
    assert lesson.structure == {}  # stored before revisions kept their structure
    ls, ospf, emb, vs = (f.concept(n) for n in ("Link-state", "OSPF", "Embeddings", "VS"))
    return Placed(
        pdf=f.edge(ls, ospf, evidence=f.evidence(pdf(), OSPF_QUOTE)),
        md=f.edge(emb, vs, evidence=f.evidence(lesson, MD_QUOTE)),
        top=f.edge(vs, ospf, "related", evidence=f.evidence(lesson, INTRO_QUOTE)),
        bare=f.edge(emb, ospf, "related"),
    )


def statements(doc: dict) -> dict[int, dict]:
    return {s["identifier"]: s for s in doc["@graph"] if s.get("@type") == "rdf:Statement"}


def test_jsonld_evidence_has_page_and_section(placed):
    """The PDF quote's evidence node says page 2 and Routing › OSPF; a Markdown quote has
    no page (left out, like every empty value) and its headings."""
    found = statements(jsonld_doc())
    evidence = found[placed.pdf.pk]["evidence"]
    assert evidence["page"] == 2 and evidence["section"] == ["Routing", "OSPF"]
    assert evidence["quote"] == OSPF_QUOTE
    md = found[placed.md.pk]["evidence"]
    assert "page" not in md and md["section"] == ["Retrieval", "Vector search"]
    assert found[placed.top.pk]["evidence"]["section"] == ["Retrieval"]
    assert "evidence" not in found[placed.bare.pk]


def test_jsonld_page_and_section_read_back_as_rdf(placed):
    """kg:page is an xsd:long, kg:sectionPath an ordered RDF list of the headings."""
    g = rdf_of(text_of("jsonld"))
    evidence = g.value(EDGES[str(placed.pdf.pk)], PROV.wasDerivedFrom)
    assert g.value(evidence, KG.page) == Literal(2, datatype=XSD.long)
    path = g.value(evidence, KG.sectionPath)
    assert [str(x) for x in Collection(g, path)] == ["Routing", "OSPF"]
    md = g.value(EDGES[str(placed.md.pk)], PROV.wasDerivedFrom)
    assert g.value(md, KG.page) is None
    assert [str(x) for x in Collection(g, g.value(md, KG.sectionPath))] == [
        "Retrieval",
        "Vector search",
    ]


def test_csv_edges_carry_page_and_section_joined(placed):
    """edges.csv: evidencePage:long and evidenceSection ("Routing › OSPF"), empty when
    there is none."""
    assert neo4j_csv.EDGE_HEADER.index("evidencePage:long") == (
        neo4j_csv.EDGE_HEADER.index("evidenceQuote") + 1
    )
    rows = {int(r["edgeId:long"]): r for r in csv_rows(zip_of(), "edges.csv")}
    assert rows[placed.pdf.pk]["evidencePage:long"] == "2"
    assert rows[placed.pdf.pk]["evidenceSection"] == "Routing › OSPF"
    assert rows[placed.md.pk]["evidencePage:long"] == ""
    assert rows[placed.md.pk]["evidenceSection"] == "Retrieval › Vector search"
    assert (rows[placed.bare.pk]["evidencePage:long"], rows[placed.bare.pk]["evidenceSection"]) == (
        "",
        "",
    )


def test_graphml_edges_carry_page_and_section(placed):
    """GraphML: evidencePage a long, evidenceSection a JSON array of the headings."""
    g = graphml_of(text_of("graphml"))
    edges = {data["edgeId"]: data for _, _, data in g.edges(data=True)}
    assert edges[placed.pdf.pk]["evidencePage"] == 2
    assert json.loads(edges[placed.pdf.pk]["evidenceSection"]) == ["Routing", "OSPF"]
    assert "evidencePage" not in edges[placed.md.pk]
    assert json.loads(edges[placed.md.pk]["evidenceSection"]) == ["Retrieval", "Vector search"]
    assert "evidenceSection" not in edges[placed.bare.pk]


def test_place_survives_batches_with_revisions_seen_again(f, monkeypatch):
    """Edges come in batches; a revision quoted in one batch and again two batches later
    (after being let go) still gives the right place."""
    monkeypatch.setattr(selectors, "CHUNK", 2)
    first = pdf("first")
    lesson = f.source("md-lesson", text=MARKDOWN).current_revision
    quotes = [(first, OSPF_QUOTE), (lesson, MD_QUOTE)] * 4
    made = [
        f.edge(f.concept(), f.concept(), "related", evidence=f.evidence(rev, q))
        for rev, q in quotes
    ]
    rows = {int(r["edgeId:long"]): r for r in csv_rows(zip_of(), "edges.csv")}
    for edge, (rev, _) in zip(made, quotes, strict=True):
        expected = "Routing › OSPF" if rev == first else "Retrieval › Vector search"
        assert rows[edge.pk]["evidenceSection"] == expected


def test_query_count_does_not_grow_with_quoted_revisions(f):
    """Twelve revisions (PDFs and old Markdown) cost the export the same queries as two:
    their structures are read in one query per batch of edges."""

    def export_queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            list(graphml.write_graphml(at=timezone.now()))
        return len(ctx.captured_queries)

    def quote_in(revision, quote):
        f.edge(f.concept(), f.concept(), "related", evidence=f.evidence(revision, quote))

    quote_in(pdf("pdf-0"), OSPF_QUOTE)
    quote_in(f.source("md-0", text=MARKDOWN).current_revision, MD_QUOTE)
    few = export_queries()
    for i in range(1, 6):
        quote_in(pdf(f"pdf-{i}"), OSPF_QUOTE)
        quote_in(f.source(f"md-{i}", text=MARKDOWN).current_revision, MD_QUOTE)
    assert export_queries() == few


def test_structures_are_read_without_the_texts_of_structured_revisions(f):
    """RevisionPlaces reads a PDF's structure without its text, and lets an old Markdown
    revision's text go once its headings are found."""
    structured = pdf()
    legacy = f.source("md-lesson", text=MARKDOWN).current_revision
    places = RevisionPlaces()
    with CaptureQueriesContext(connection) as ctx:
        places.load([structured.pk, legacy.pk, None])
    assert len(ctx.captured_queries) == 1
    with CaptureQueriesContext(connection) as ctx:
        at_pdf = places.place(structured.pk, HANDBOOK.index(OSPF_QUOTE))
        at_md = places.place(legacy.pk, MARKDOWN.index(MD_QUOTE))
    assert ctx.captured_queries == []
    assert at_pdf.as_json() == {"page": 2, "section": ["Routing", "OSPF"]}
    assert at_md.as_json() == {"page": None, "section": ["Retrieval", "Vector search"]}
    for revision in places._revisions.values():
        assert "text" not in revision.__dict__ and not revision.legacy_text
    assert places.place(None, 3) == NO_PLACE
    assert places.place(structured.pk, None) == NO_PLACE


def test_context_md_documents_the_new_columns():
    """CONTEXT.md names the CSV columns and GraphML attributes for page and section."""
    doc = (Path(vocabulary.__file__).parent / "CONTEXT.md").read_text()
    assert ",".join(neo4j_csv.EDGE_HEADER) in doc
    assert "`evidencePage`" in doc and "`evidenceSection`" in doc
