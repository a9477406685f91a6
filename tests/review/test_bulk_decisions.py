"""Bulk decisions: refusals reported per item, dry runs, limits, cycles among the
concepts a batch creates, edges against the kept orders, and undo as one batch."""

from __future__ import annotations

import pytest

from kgreview.core.errors import ValidationFailed
from kgreview.graph import selectors as graph_selectors
from kgreview.review.decide import bulk, undo
from kgreview.review.decide.bulk_check import stale
from kgreview.review.models import Decision
from tests.review.conftest import reload

pytestmark = pytest.mark.django_db


def test_bulk_accept_reports_refusals_and_undoes_as_one_batch(f, reviewer):
    """Good proposals are accepted, stale ones refused with reasons, one undo reverts all."""
    a, b, c = f.concept("A13"), f.concept("B13"), f.concept("C13")
    f.edge(c, a)
    good1 = f.edge_proposal(a, b)
    good2 = f.edge_proposal(b, c, "related")
    cyclic = f.edge_proposal(a, c)
    result = bulk.proposals_bulk_decide(
        acting_user=reviewer, proposal_ids=[good1.pk, cyclic.pk, good2.pk], action="accept"
    )
    assert result.done == [good1.pk, good2.pk]
    assert result.refused[0][0] == cyclic.pk and "cycle" in result.refused[0][1]
    assert graph_selectors.edges_active().count() == 3
    undo.decisions_undo(acting_user=reviewer, batch=result.batch)
    assert graph_selectors.edges_active().count() == 1
    assert {reload(p).status for p in (good1, good2, cyclic)} == {"pending"}


def test_bulk_dry_run_shows_what_would_happen_and_writes_nothing(f, reviewer):
    """A preview applies and rolls back each decision."""
    p1 = f.edge_proposal(f.concept("A14"), f.concept("B14"))
    p2 = f.edge_proposal(f.concept("A15"), f.concept("B15"))
    result = bulk.proposals_bulk_decide(
        acting_user=reviewer,
        proposal_ids=[p1.pk, p2.pk],
        action="reject",
        reason_code="too_vague",
        dry_run=True,
    )
    assert result.done == [p1.pk, p2.pk] and result.refused == []
    assert not Decision.objects.exists()
    assert {reload(p).status for p in (p1, p2)} == {"pending"}


def test_bulk_limits_size_and_actions(reviewer):
    """Bulk decisions are accept or reject, at most BULK_LIMIT at once."""
    with pytest.raises(ValidationFailed):
        bulk.proposals_bulk_decide(acting_user=reviewer, proposal_ids=[1], action="maybe")
    with pytest.raises(ValidationFailed, match="At most"):
        bulk.proposals_bulk_decide(
            acting_user=reviewer,
            proposal_ids=list(range(bulk.BULK_LIMIT + 1)),
            action="accept",
        )


def test_bulk_accept_refuses_a_cycle_among_the_concepts_it_creates(f, reviewer):
    """Three edges around three concepts the batch itself creates: the one that closes
    the cycle is refused in words naming its chain, the other two and their concepts are
    accepted, and the order holds every edge."""
    from kgreview.graph import order

    doc = f.lesson()
    x, y, z = (f.concept_proposal(n, doc=doc) for n in ("Xenon", "Yttrium", "Zinc"))
    ps = [f.edge_proposal(x, y, doc=doc), f.edge_proposal(y, z, doc=doc)]
    ps.append(f.edge_proposal(z, x, doc=doc))
    result = bulk.proposals_bulk_decide(
        acting_user=reviewer, proposal_ids=[p.pk for p in ps], action="accept"
    )
    assert result.done == [ps[0].pk, ps[1].pk]
    ((pid, words),) = result.refused
    assert pid == ps[2].pk
    assert words == stale(
        '"Zinc" is a prerequisite for "Xenon" would close a cycle: Xenon → Yttrium → Zinc → Xenon.'
    )
    assert {reload(c).status for c in (x, y, z)} == {"accepted"}
    assert order.edges_out_of_order(f.relation("prerequisite").pk) == []


def test_bulk_accept_of_edges_against_the_order_reorders_and_refuses_what_closes_a_cycle(
    f, reviewer
):
    """C → D and A → B stand (in that order); the batch turns the order round with D → A,
    then B → C would close B → C → D → A → B and is refused, the rest accepted, in the
    batch's order, as deciding them one by one would."""
    from kgreview.graph import order

    c, d, a, b = (f.concept(n) for n in ("C", "D", "A", "B"))
    f.edge(c, d)
    f.edge(a, b)
    f.edge(f.concept("Before A"), a)
    f.edge(d, f.concept("After D"))
    ps = [f.edge_proposal(d, a), f.edge_proposal(b, c), f.edge_proposal(c, b)]
    result = bulk.proposals_bulk_decide(
        acting_user=reviewer, proposal_ids=[p.pk for p in ps], action="accept"
    )
    assert result.done == [ps[0].pk, ps[2].pk]
    ((pid, words),) = result.refused
    assert pid == ps[1].pk and '"B" is a prerequisite for "C" would close a cycle' in words
    assert order.edges_out_of_order(f.relation("prerequisite").pk) == []


def test_bulk_accept_places_new_concepts_once_and_keeps_every_order(
    f, reviewer, django_assert_max_num_queries
):
    """Edges into concepts the batch creates are admitted against an order that already
    has the new concepts in it (one write per relation, not one per edge); the orders
    hold every edge afterwards, and a cycle within the batch is still refused."""
    from kgreview.graph import order

    known = [f.concept(f"Known {i}") for i in range(6)]
    needs = [f.concept_proposal(f"Brand new {i}") for i in range(3)]
    ps = [f.edge_proposal(known[i], needs[i % 3]) for i in range(6)]
    ps += [f.edge_proposal(known[i], needs[i % 3], "part_of") for i in range(3)]
    ps.append(f.edge_proposal(known[0], known[1]))
    ps.append(f.edge_proposal(known[1], known[0]))
    with django_assert_max_num_queries(60):
        result = bulk.proposals_bulk_decide(
            acting_user=reviewer, proposal_ids=[p.pk for p in ps], action="accept"
        )
    assert result.done == [p.pk for p in ps[:-1]]
    assert "cycle" in result.refused[0][1]
    for n in needs:  # each accepted with its edges, closed and linked in one statement
        accepted = reload(n)
        assert accepted.status == "accepted" and accepted.concept.name == n.payload["name"]
    for key in ("prerequisite", "part_of"):
        rel = f.relation(key)
        assert rel.ordered and order.edges_out_of_order(rel.pk) == []


def test_a_bulk_accept_settles_from_the_rows_in_hand_when_no_twin_is_open(f, reviewer):
    """The edges a set accepts are settled from the rows it wrote, and when every
    proposal's lock said no inverse twin is open, no query looks for twins or for the same
    fact (a thousand edges built a 330-way OR; the rows were read back). With a twin open,
    it is still found and superseded."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from kgreview.review.models import Proposal

    cs = [f.concept(f"Settled {i}") for i in range(8)]
    ps = [f.edge_proposal(cs[i], cs[i + 1]) for i in range(0, 8, 2)]
    with CaptureQueriesContext(connection) as ctx:
        result = bulk.proposals_bulk_decide(
            acting_user=reviewer, proposal_ids=[p.pk for p in ps], action="accept"
        )
    assert result.done == [p.pk for p in ps]
    reads = [q["sql"] for q in ctx.captured_queries if q["sql"].startswith("SELECT")]
    assert not [sql for sql in reads if '"graph_edge"."id" IN' in sql]  # no row read back
    assert not [sql for sql in reads if '"review_proposal"."source_key" =' in sql]

    from kgreview.graph import services as graph
    from kgreview.graph.models import RelationType

    a, b = f.concept("Twin A"), f.concept("Twin B")
    RelationType.objects.filter(key__in=["prerequisite", "builds_on"]).update(inverse=None)
    forward = f.edge_proposal(a, b, "prerequisite")
    backward = f.edge_proposal(b, a, "builds_on")  # queued before the pair was declared
    graph.relation_type_pair(
        relation=RelationType.objects.get(key="prerequisite"),
        inverse=RelationType.objects.get(key="builds_on"),
        acting_user=None,
    )
    result = bulk.proposals_bulk_decide(
        acting_user=reviewer, proposal_ids=[forward.pk], action="accept"
    )
    assert result.done == [forward.pk]
    assert Proposal.objects.get(pk=backward.pk).status == "superseded"
