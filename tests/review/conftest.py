"""People and helpers shared by the review tests."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from kgreview.graph.models import Edge
from kgreview.review.decide.blockers import open_proposal_blockers, twin_concept_proposals
from kgreview.review.models import OPEN_STATUSES, Proposal


@pytest.fixture
def reviewer(f):
    return f.user("rita", role="reviewer")


@pytest.fixture
def curator(f):
    return f.user("cora", role="curator")


def card(user, proposal, **headers) -> str:
    """A proposal's card page as ``user`` sees it (``HTTP_HX_REQUEST`` in ``headers``: the
    part htmx swaps in)."""
    client = Client()
    client.force_login(user)
    response = client.get(reverse("review:proposal", args=[proposal.pk]), follow=True, **headers)
    assert response.status_code == 200
    return response.content.decode()


def reload(obj):
    """The row as the database holds it now."""
    obj.refresh_from_db()
    return obj


def assert_queue_decidable() -> None:
    """No open proposal is stuck: each can be accepted as it stands (no blocker), and no
    open concept proposal names a concept that already exists."""
    open_ = list(Proposal.objects.filter(status__in=OPEN_STATUSES))
    stuck = open_proposal_blockers(open_)
    assert stuck == {}, stuck
    assert twin_concept_proposals() == []


@pytest.fixture
def world(f):
    """A lesson, two concepts, an edge, and a few proposals of different kinds."""
    doc = f.lesson(slug="vs")
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    edge = f.edge(f.concept("Tokenization"), emb)
    p_edge = f.edge_proposal(emb, vs, doc=doc)
    p_concept = f.concept_proposal("Retrieval-augmented generation", aliases=["RAG"], doc=doc)
    held = f.edge_proposal(
        emb,
        vs,
        "related",
        doc=doc,
        confidence=0.3,
        quote="Unlike keyword search, dense retrieval compares meanings.",
    )
    return {
        "doc": doc,
        "emb": emb,
        "vs": vs,
        "edge": edge,
        "p_edge": p_edge,
        "p_concept": p_concept,
        "held": held,
    }


# --- Team review (test_double_review, test_team_queue, test_assignments) -------------------


@pytest.fixture
def doubled(settings):
    """Every proposal goes to two reviewers."""
    settings.KG_DOUBLE_REVIEW_SHARE = 1.0
    return settings


@pytest.fixture
def team(f):
    return {
        "ann": f.user("ann", role="reviewer"),
        "bob": f.user("bob", role="reviewer"),
        "cat": f.user("cat", role="curator"),
    }


def team_edge(f, a="Embeddings", b="Vector search"):
    return f.edge_proposal(f.concept(a), f.concept(b))


def login_as(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def edges_between(p: Proposal) -> int:
    return Edge.objects.filter(
        source_id=p.source_concept_id, target_id=p.target_concept_id, status="active"
    ).count()
