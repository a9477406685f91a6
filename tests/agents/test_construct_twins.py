"""A construct run reads the vocabulary's inverse pairs: a statement whose inverse twin
is queued already, or in the graph, is dropped (``duplicate``, ``existing_edge``)."""

from __future__ import annotations

import pytest

from kgreview.agents.models import DroppedCandidate
from kgreview.graph import services as graph_services
from kgreview.review.models import Proposal
from tests.agents.test_construct import EMB, RAG, RAG_CONCEPT, answer, construct, edge

pytestmark = pytest.mark.django_db

BUILDS = "Retrieval-augmented generation requires embeddings."


@pytest.fixture
def lessons(db):
    graph_services.source_import(slug="rag", title="RAG", text=RAG, acting_user=None)
    graph_services.source_import(slug="emb", title="Embeddings", text=EMB, acting_user=None)


def test_a_twin_of_a_proposal_queued_by_an_earlier_source_is_a_duplicate(openai_settings, lessons):
    openai_settings.push(
        answer(edge("embeddings", "RAG"), concepts=[RAG_CONCEPT]),
        answer(edge("RAG", "embeddings", "builds_on", BUILDS)),
    )
    report = construct("--source", "rag", "--source", "emb")
    (queued,) = Proposal.objects.filter(kind="add_edge")
    assert queued.relation_key == "prerequisite"
    assert [d["reason"] for d in report["dropped"]] == ["duplicate"]


def test_a_twin_of_an_edge_in_the_graph_is_an_existing_edge(openai_settings, lessons, f):
    emb = f.concept("Embeddings")
    rag = f.concept("Retrieval-augmented generation", aliases=["RAG"])
    held = f.edge(emb, rag, "prerequisite")
    openai_settings.push(answer(edge("RAG", "embeddings", "builds_on", BUILDS)))
    report = construct("--source", "emb")
    assert not Proposal.objects.filter(kind="add_edge").exists()
    assert [d["reason"] for d in report["dropped"]] == ["existing_edge"]
    assert DroppedCandidate.objects.get().detail == f"edge #{held.pk}"
