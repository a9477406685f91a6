"""Every evidence object of the API says where its quote sits: the page of a PDF (null for
unpaged formats) and the heading path, in edge lists and in explain, without a query
per edge."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.paged import HANDBOOK, MARKDOWN, MD_QUOTE, OSPF_QUOTE, pdf

pytestmark = pytest.mark.django_db


@pytest.fixture
def placed(f):
    """An edge quoting page 2 of a PDF under Routing › OSPF, one quoting a Markdown lesson
    under Retrieval › Vector search (stored before revisions kept their structure), and
    one without evidence."""
    ls, ospf = f.concept("Link-state routing"), f.concept("OSPF")
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    lesson = f.source("md-lesson", text=MARKDOWN).current_revision
    assert lesson.structure == {} and lesson.text_format == "markdown"
    return {
        "pdf": f.edge(ls, ospf, evidence=f.evidence(pdf(), OSPF_QUOTE)),
        "md": f.edge(emb, vs, evidence=f.evidence(lesson, MD_QUOTE)),
        "bare": f.edge(ospf, vs, "related"),
        "ospf": ospf,
        "vs": vs,
    }


def test_edge_lists_carry_page_and_section(agent, placed):
    """A concept's edges: the PDF quote is on page 2 in Routing › OSPF, the Markdown one
    has no page and its heading path, an edge without evidence has none."""
    body = agent.get(f"/api/v1/concepts/{placed['ospf'].pk}").json()
    (incoming,) = body["incoming"]
    start = HANDBOOK.index(OSPF_QUOTE)
    assert incoming["evidence"] == {
        "source": "handbook",
        "revision": 1,
        "start": start,
        "end": start + len(OSPF_QUOTE),
        "quote": OSPF_QUOTE,
        "page": 2,
        "section": ["Routing", "OSPF"],
    }
    assert body["outgoing"][0]["evidence"] is None
    body = agent.get(f"/api/v1/concepts/{placed['vs'].pk}").json()
    md = next(e for e in body["incoming"] if e["id"] == placed["md"].pk)
    assert md["evidence"]["page"] is None
    assert md["evidence"]["section"] == ["Retrieval", "Vector search"]


def test_neighbours_path_and_diff_carry_the_place_too(agent, placed):
    """Every operation that returns edges returns their evidence's place."""
    ospf, vs = placed["ospf"].pk, placed["vs"].pk
    edges = agent.get(f"/api/v1/concepts/{ospf}/neighbours").json()["edges"]
    by_id = {e["id"]: e for e in edges}
    assert by_id[placed["pdf"].pk]["evidence"]["page"] == 2
    hops = agent.get(f"/api/v1/path?from_id={ospf}&to_id={vs}").json()["hops"]
    assert hops[0]["edge"]["evidence"] is None
    added = agent.get("/api/v1/diff?since=2000-01-01T00:00:00Z").json()["added"]
    places = {e["id"]: (e["evidence"] or {}).get("section") for e in added}
    assert places[placed["pdf"].pk] == ["Routing", "OSPF"]
    assert places[placed["md"].pk] == ["Retrieval", "Vector search"]


def test_explain_gives_the_place_of_the_evidence_in_context(agent, placed):
    """Explain's evidence (with the text around it) and its edge both say page 2,
    Routing › OSPF; a Markdown quote has page null and its headings."""
    body = agent.get(f"/api/v1/edges/{placed['pdf'].pk}").json()
    assert body["evidence"]["page"] == 2
    assert body["evidence"]["section"] == ["Routing", "OSPF"]
    assert body["evidence"]["quote"] == OSPF_QUOTE and body["evidence"]["in_current_revision"]
    assert body["edge"]["evidence"]["page"] == 2
    assert body["edge"]["evidence"]["section"] == ["Routing", "OSPF"]
    body = agent.get(f"/api/v1/edges/{placed['md'].pk}").json()
    assert body["evidence"]["page"] is None
    assert body["evidence"]["section"] == ["Retrieval", "Vector search"]
    assert agent.get(f"/api/v1/edges/{placed['bare'].pk}").json()["evidence"] is None


def queries(agent, url: str) -> int:
    agent.get(url)  # warm the per-process caches (names, vocabulary)
    with CaptureQueriesContext(connection) as ctx:
        assert agent.get(url).status_code == 200
    return len(ctx.captured_queries)


def test_places_cost_no_query_per_edge_or_revision(agent, f):
    """Edges quoting one revision or ten, PDF or old Markdown, cost the same queries."""
    hub = f.concept("Hub")

    def quote_in(revision, quote):
        f.edge(f.concept(), hub, "related", evidence=f.evidence(revision, quote))

    quote_in(pdf("pdf-0"), OSPF_QUOTE)
    quote_in(f.source("md-0", text=MARKDOWN).current_revision, MD_QUOTE)
    url = f"/api/v1/concepts/{hub.pk}"
    few = queries(agent, url)
    for i in range(1, 6):
        quote_in(pdf(f"pdf-{i}"), OSPF_QUOTE)
        quote_in(f.source(f"md-{i}", text=MARKDOWN).current_revision, MD_QUOTE)
    assert queries(agent, url) == few
    evidence = [e["evidence"] for e in agent.get(url).json()["incoming"]]
    assert len(evidence) == 12
    assert {(e["page"], tuple(e["section"])) for e in evidence} == {
        (2, ("Routing", "OSPF")),
        (None, ("Retrieval", "Vector search")),
    }


def test_explain_costs_no_query_for_the_place(agent, placed):
    """Explain's revision comes with the edge: an edge with evidence costs what one
    without does."""
    assert queries(agent, f"/api/v1/edges/{placed['pdf'].pk}") == queries(
        agent, f"/api/v1/edges/{placed['bare'].pk}"
    )
    assert queries(agent, f"/api/v1/edges/{placed['md'].pk}") == queries(
        agent, f"/api/v1/edges/{placed['bare'].pk}"
    )


def test_the_schema_documents_page_and_section(agent):
    """The published schema has page (integer or null) and section (strings) on evidence."""
    schemas = agent.get("/api/openapi.json").json()["components"]["schemas"]
    for name in ("EvidenceOut", "EvidenceContextOut"):
        props = schemas[name]["properties"]
        assert {"page", "section"} <= set(schemas[name]["required"]), name
        assert {t.get("type") for t in props["page"]["anyOf"]} == {"integer", "null"}
        assert props["section"]["type"] == "array"
        assert props["section"]["items"]["type"] == "string"
