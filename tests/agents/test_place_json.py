"""Where evidence sits, in ``construct --json``: each quote's page (PDFs) and heading path,
for the evidence and for every further place that states the same edge; and a run's
chunks per source and token use."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from kgreview.agents import selectors
from kgreview.agents.construct import construct_run_create
from kgreview.agents.models import AgentRun
from kgreview.agents.runs import run_origin
from kgreview.graph.services import Evidence
from kgreview.review.services import proposal_create
from tests.paged import page, pdf

pytestmark = pytest.mark.django_db

HANDBOOK = (
    page("Networks\n\nRouters forward packets between networks.")
    + page(
        "OSPF\n\nLink-state routing is a prerequisite for OSPF. "
        "OSPF builds on Dijkstra's algorithm."
    )
    + page(
        "BGP\n\nBGP joins networks. As said before, link-state routing is a prerequisite for OSPF."
    )
)


def handbook():
    return pdf(text=HANDBOOK)


def construct(*args) -> dict:
    out = io.StringIO()
    call_command("construct", "--provider", "offline", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_construct_json_names_the_page_and_section_of_evidence_and_support(settings):
    """A PDF read in chunks: the edge's quote is on page 2 under Routing › OSPF; the same
    statement again on page 3 (under Routing › BGP) is its support, with its own place."""
    settings.KG_CHUNK_TOKENS = 80
    settings.KG_CHUNK_OVERLAP_TOKENS = 0
    handbook()
    report = construct("--source", "handbook")
    edges = {
        (p["source"], p["relation"], p["target"]): p
        for p in report["proposals"]
        if p["kind"] == "add_edge"
    }
    edge = edges[("Link-state routing", "prerequisite", "OSPF")]
    evidence = edge["evidence"]
    assert evidence == {
        "source": "handbook",
        "revision": 1,
        "start": HANDBOOK.index("Link-state routing is"),
        "end": HANDBOOK.index("Link-state routing is") + len(evidence["quote"]),
        "quote": "Link-state routing is a prerequisite for OSPF.",
        "page": 2,
        "section": ["Routing", "OSPF"],
        "support": [
            {
                "start": HANDBOOK.index("As said before"),
                "end": HANDBOOK.index("As said before") + len(evidence["support"][0]["quote"]),
                "quote": "As said before, link-state routing is a prerequisite for OSPF.",
                "page": 3,
                "section": ["Routing", "BGP"],
            }
        ],
    }
    assert edges[("OSPF", "builds_on", "Dijkstra's algorithm")]["evidence"]["support"] == []
    # An add_concept's evidence has its place too, and no support list.
    concept = next(p for p in report["proposals"] if p["source"] == "Dijkstra's algorithm")
    assert concept["kind"] == "add_concept"
    assert concept["evidence"]["page"] == 2 and "support" not in concept["evidence"]
    (progress,) = report["run"]["source_progress"]
    assert progress == {
        "source": "handbook",
        "status": "done",
        "chunks_done": 3,
        "chunks_total": 3,
        "chunks_cached": 0,
    }
    assert report["run"]["sources"] == 1  # the run's own counter is left as it was
    assert report["run"]["tokens"] == {"used": 0, "reserved": 0, "budget": None, "stopped": False}


def test_markdown_evidence_has_no_page_and_names_its_heading_path(f):
    """Markdown has no pages: page is None, the section is the headings above the quote
    (found again from the text of a revision stored without its structure)."""
    doc = f.source(
        "md-lesson",
        text="# Retrieval\n\nIntro.\n\n## Vector search\n\n"
        "Before learning vector search you should understand embeddings.\n",
    )
    assert doc.current_revision.structure == {}
    proposal = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"), doc=doc)
    out = selectors.proposal_json(proposal, {})
    assert out["evidence"]["page"] is None
    assert out["evidence"]["section"] == ["Retrieval", "Vector search"]
    assert out["evidence"]["support"] == []


def test_evidence_outside_any_heading_has_an_empty_section(f):
    """A quote above the first heading sits in no section: [] (and no page)."""
    doc = f.lesson("plain-lesson")
    proposal = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"), doc=doc)
    evidence = selectors.proposal_json(proposal, {})["evidence"]
    assert (evidence["page"], evidence["section"]) == (None, [])


def test_a_report_reads_each_revisions_structure_once(f, django_assert_max_num_queries):
    """Many proposals quoting one revision share it: the report's queries do not grow
    with them, and each place is right."""
    revision = handbook()
    run = construct_run_create(sources=[])
    quote = "OSPF builds on Dijkstra's algorithm."
    start = HANDBOOK.index(quote)
    for i in range(12):
        proposal_create(
            kind="add_concept",
            payload={"name": f"Thing {i}", "aliases": [], "description": ""},
            confidence=0.9,
            evidence=Evidence(revision=revision, start=start, end=start + len(quote), quote=quote),
            origin=run_origin(run),
        )
    with django_assert_max_num_queries(6):
        report = selectors.run_report(run)
    assert {
        (p["evidence"]["page"], tuple(p["evidence"]["section"])) for p in report["proposals"]
    } == {(2, ("Routing", "OSPF"))}


def test_a_budget_stop_is_in_the_report_with_the_tokens(f, settings):
    """The run's token use and budget, and whether the budget stopped it."""
    settings.KG_LLM_MAX_TOKENS_PER_RUN = 5000
    run = construct_run_create(sources=[])
    AgentRun.objects.filter(pk=run.pk).update(
        tokens_reserved=4800,
        llm_usage={"total_tokens": 4500, "calls": 3},
        stats={**run.stats, "budget_stop": True},
    )
    run.refresh_from_db()
    report = selectors.run_report(run)
    assert report["run"]["tokens"] == {
        "used": 4500,
        "reserved": 4800,
        "budget": 5000,
        "stopped": True,
    }
    assert report["run"]["budget_stop"] is True
