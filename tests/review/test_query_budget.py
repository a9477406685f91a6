"""The decision budget: a decision by htmx, card of the next proposal included, is at most
15 SQL queries (session and user included), whatever it settles in the queue, and
whatever the graph makes of it: an edge that runs forwards, one that reorders its
relation, one refused as a cycle, an edit, a rejection. Checked as a count of statements,
never by a timer; the tests below count the savepoints too, as a request counts its
BEGIN and COMMIT."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from kgreview.graph.models import Concept, ConceptOrder, Edge, SourceConcept
from kgreview.review.models import Proposal
from tests.review.workspace import client_for

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


def measured(client, url, data) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.post(url, data, headers=HX)
    assert response.status_code == 200
    return len([q for q in ctx.captured_queries if "SAVEPOINT" not in q["sql"]])


@pytest.fixture
def reviewer_client(f, client):
    client.force_login(f.user("rv", role="reviewer"))
    return client


def test_accept_reject_and_edit_stay_within_fifteen_queries(f, reviewer_client):
    ps = [f.edge_proposal(f.concept(f"A{i}"), f.concept(f"B{i}")) for i in range(4)]
    accept = measured(reviewer_client, reverse("review:accept", args=[ps[3].pk]), {"version": 1})
    reject = measured(
        reviewer_client,
        reverse("review:reject", args=[ps[2].pk]),
        {"version": 1, "reason_code": "too_vague"},
    )
    edit = measured(
        reviewer_client,
        reverse("review:edit", args=[ps[1].pk]),
        {"kind": "add_edge", "version": 1, "confidence": "0.7", "weight": "2"},
    )
    assert max(accept, reject, edit) <= 15, (accept, reject, edit)


BUDGET = 15


@pytest.fixture
def queue(f):
    """A prerequisite chain, a pair placed against the way a proposal joins them, and a
    few proposals left in the queue so that every decision renders a next card."""
    doc = f.lesson(slug="budget")
    a, b, c = (f.concept(n) for n in ("Alpha", "Beta", "Gamma"))
    f.edge(a, b)
    f.edge(b, c)
    early, late = f.concept("Early"), f.concept("Late")
    f.edge(early, f.concept("After early"))
    f.edge(f.concept("Before late"), late)
    others = [f.concept(f"Other {i}") for i in range(6)]
    for x, y in zip(others, others[1:], strict=False):
        f.edge_proposal(x, y, doc=doc, confidence=0.5)
    return {"doc": doc, "a": a, "b": b, "c": c, "early": early, "late": late}


def _decide(client, url: str, data: dict) -> tuple[int, int, str]:
    with CaptureQueriesContext(connection) as ctx:
        response = client.post(url, data, headers=HX)
    return response.status_code, len(ctx.captured_queries), response.content.decode()


def test_accepting_an_edge_that_runs_forwards_is_within_the_budget(f, queue):
    """The common case: the order already has the source first."""
    p = f.edge_proposal(queue["a"], queue["c"], doc=queue["doc"])
    status, queries, _ = _decide(
        client_for(f, "reviewer"), reverse("review:accept", args=[p.pk]), {"version": 1}
    )
    assert status == 200 and Proposal.objects.get(pk=p.pk).status == "accepted"
    assert queries <= BUDGET, queries


def test_accepting_an_edge_that_reorders_its_relation_is_within_the_budget(f, queue):
    """Late before early: the concepts between them trade places, in one more statement."""
    early, late = queue["early"], queue["late"]
    at = dict(ConceptOrder.objects.values_list("concept_id", "position"))
    assert at[late.pk] > at[early.pk]
    p = f.edge_proposal(late, early, doc=queue["doc"])
    status, queries, _ = _decide(
        client_for(f, "reviewer"), reverse("review:accept", args=[p.pk]), {"version": 1}
    )
    at = dict(ConceptOrder.objects.values_list("concept_id", "position"))
    assert status == 200 and at[late.pk] < at[early.pk]
    assert queries <= BUDGET, queries


def test_a_cycle_refused_is_within_the_budget_and_names_the_chain(f, queue):
    """Gamma before Alpha would close Alpha -> Beta -> Gamma: refused in words, and the
    same card shown again, within the budget."""
    p = f.edge_proposal(queue["c"], queue["a"], doc=queue["doc"])
    status, queries, page = _decide(
        client_for(f, "reviewer"), reverse("review:accept", args=[p.pk]), {"version": 1}
    )
    assert status == 200 and "would close a cycle" in page and "Alpha → Beta → Gamma" in page
    assert Proposal.objects.get(pk=p.pk).status == "pending"
    assert not Edge.objects.filter(source=queue["c"], target=queue["a"]).exists()
    assert queries <= BUDGET, queries


def test_edit_then_accept_is_within_the_budget(f, queue):
    """A changed weight and confidence, then the edge added."""
    p = f.edge_proposal(queue["a"], queue["c"], doc=queue["doc"])
    status, queries, _ = _decide(
        client_for(f, "reviewer"),
        reverse("review:edit", args=[p.pk]),
        {"kind": "add_edge", "version": 1, "confidence": "0.7", "weight": "2"},
    )
    assert status == 200
    assert Edge.objects.get(source=queue["a"], target=queue["c"], status="active").weight == 2
    assert queries <= BUDGET, queries


def test_a_rejection_is_within_the_budget(f, queue):
    """Rejecting writes the decision and shows the next card."""
    p = f.edge_proposal(queue["a"], queue["c"], doc=queue["doc"])
    status, queries, _ = _decide(
        client_for(f, "reviewer"),
        reverse("review:reject", args=[p.pk]),
        {"version": 1, "reason_code": "too_vague"},
    )
    assert status == 200 and Proposal.objects.get(pk=p.pk).status == "rejected"
    assert queries <= BUDGET, queries


def test_edit_turning_an_edge_round_onto_a_new_concept_is_within_the_budget(f, queue):
    """The heaviest edit: turned round, a new fact (its twins looked for), and an end new
    to the relation placed in its order with the edge, in the same statement."""
    fresh = f.concept("Fresh")
    p = f.edge_proposal(queue["c"], fresh, doc=queue["doc"])
    status, queries, _ = _decide(
        client_for(f, "reviewer"),
        reverse("review:edit", args=[p.pk]),
        {"kind": "add_edge", "version": 1, "confidence": "0.7", "weight": "2", "swap": "on"},
    )
    assert status == 200
    assert Edge.objects.filter(source=fresh, target=queue["c"], status="active").exists()
    assert ConceptOrder.objects.filter(concept=fresh).exists()
    grounded = SourceConcept.objects.filter(source=queue["doc"], concept__in=[fresh, queue["c"]])
    assert grounded.count() == 2  # written with the edge and the moves on PostgreSQL
    # SQLite writes the end's place in the order, the edge and its ends' grounds in three
    # statements (PostgreSQL in one); the edge's provenance is review's own row, one more.
    assert queries <= BUDGET + (connection.vendor == "sqlite"), queries


def test_a_concept_renamed_and_typed_then_accepted_costs_no_more_than_accepting_one(f, queue):
    """A new concept corrected on its card (name and type), then created: no query more
    than a concept accepted as drafted."""
    from kgreview.graph import services as graph

    graph.concept_type_create(key="setting", label="Setting", acting_user=None)
    plain = f.concept_proposal("the Echo", doc=queue["doc"])
    p = f.concept_proposal("the Delta", doc=queue["doc"])
    client = client_for(f, "reviewer")
    _, accepted, _ = _decide(client, reverse("review:accept", args=[plain.pk]), {"version": 1})
    status, queries, page = _decide(
        client,
        reverse("review:edit", args=[p.pk]),
        {"kind": "add_concept", "version": 1, "name": "Delta", "type_key": "setting"},
    )
    assert status == 200 and "Edited and accepted" in page
    assert Concept.objects.get(name="Delta").type.key == "setting"
    assert queries <= accepted, (queries, accepted)
