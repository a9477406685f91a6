"""A small graph with full provenance, and readers for every export format."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from dataclasses import dataclass
from datetime import datetime, timedelta

import networkx as nx
from django.db.models import F
from django.utils import timezone
from rdflib import Graph

from kgreview.exports import writers
from kgreview.exports.writers import neo4j_csv
from kgreview.graph import services
from kgreview.graph.models import Concept, Edge
from kgreview.review.decide import decisions

HOSTILE = "<script>alert(\"x\")</script> & 'q' </data>]]>"
LESSON = (
    "Before learning vector search you should understand embeddings.\n"
    "Retrieval-augmented generation (RAG) builds on vector search.\n"
    "Unlike keyword search, dense retrieval compares meanings.\n"
    f"Quoted: {HOSTILE}\n"
)


@dataclass
class Built:
    emb: Concept
    vs: Concept
    rag: Concept
    kw: Concept
    dense: Concept
    accepted: Edge  # from a proposal: decision, reviewer, evidence
    builds_on: Edge
    contrasts: Edge  # symmetric
    related: Edge  # a second relation between emb and vs
    invalidated: Edge  # retired before the export
    reviewer: object


def build(f) -> Built:
    """Five concepts, four edges as of now (one parallel, one symmetric), one retired."""
    reviewer = f.user("rita", role="reviewer")
    doc = f.lesson("rag-lesson", text=LESSON)
    rev = doc.current_revision
    emb = f.concept("Embeddings", aliases=["Vector embeddings"], description="Dense vectors.")
    vs = f.concept("Vector search")
    rag = f.concept("RAG", aliases=["Retrieval-augmented generation"])
    kw = f.concept("Keyword search")
    dense = f.concept("Dense retrieval")
    proposal = f.edge_proposal(emb, vs, doc=doc)
    (accepted,) = decisions.proposal_accept(proposal_id=proposal.pk, acting_user=reviewer).edges
    builds_on = f.edge(
        rag,
        vs,
        "builds_on",
        evidence=f.evidence(rev, "Retrieval-augmented generation (RAG) builds on vector search."),
    )
    contrasts = f.edge(kw, dense, "contrasts_with", confidence=0.75)
    related = f.edge(emb, vs, "related", reason="Both are about vectors.")
    gone = f.edge(dense, rag, "applies_to", reason="A mistake.")
    services.edge_invalidate(edge=gone, reason="Wrong.", acting_user=reviewer)
    return Built(emb, vs, rag, kw, dense, accepted, builds_on, contrasts, related, gone, reviewer)


def backdate(obj, *fields: str, days: float) -> None:
    """Move a row's timestamps into the past, so a test has instants between events."""
    type(obj).objects.filter(pk=obj.pk).update(
        **{name: F(name) - timedelta(days=days) for name in fields}
    )


# --- Reading exports back ----------------------------------------------------------------


def text_of(fmt: str, at: datetime | None = None) -> str:
    return "".join(writers.FORMATS[fmt].write(at=at or timezone.now()))


def zip_of(at: datetime | None = None) -> bytes:
    return b"".join(neo4j_csv.write_csv_zip(at=at or timezone.now()))


def jsonld_doc(at: datetime | None = None) -> dict:
    return json.loads(text_of("jsonld", at))


def rdf_of(text: str) -> Graph:
    return Graph().parse(data=text, format="json-ld")


def csv_rows(data: bytes, name: str) -> list[dict]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        text = archive.read(name).decode("utf-8")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def graphml_of(text: str) -> nx.MultiDiGraph:
    return nx.read_graphml(io.BytesIO(text.encode("utf-8")), force_multigraph=True)
