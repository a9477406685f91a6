"""Reviewers racing decisions that lock the same rows, on PostgreSQL with real threads and
real transactions: every request is answered (a decision, or a refusal in words), never
an exception that would be a 500, and the graph ends consistent.

These are the three races of issue 13 that PostgreSQL broke with "deadlock detected":
a merge against an edge touching the merged concept, a merge against an edge whose other
end is a pending concept proposal, and two reviewers each keeping one of two proposals
that contradict each other.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter

import pytest

from kgreview.core.errors import Busy, DomainError
from kgreview.graph.models import Concept, Edge
from kgreview.review.decide import bulk, decisions
from kgreview.review.decide.outcome import AlreadyDecided, Outcome, ProposalStale
from kgreview.review.models import Decision, Proposal
from kgreview.review.services import proposal_create
from tests.races import race

pytestmark = pytest.mark.usefixtures("reference_data")

ROUNDS = int(os.environ.get("KG_RACE_ROUNDS", "12"))
# What a racing request may be told instead of having its way.
REFUSALS = (AlreadyDecided, ProposalStale, Busy)
_names = itertools.count(1)


def assert_answered_in_words(results) -> None:
    """Each request either had its way or was refused with a domain refusal in words."""
    for r in results:
        if isinstance(r, BaseException):
            assert isinstance(r, REFUSALS), f"{type(r).__name__}: {r}"
            assert str(r).strip()
        else:
            assert isinstance(r, Outcome), r


def assert_graph_consistent() -> None:
    """No fact held twice by active edges; no active edge on a concept that is not active;
    every closed proposal closed by exactly one primary decision."""
    facts = Counter(
        Edge.objects.filter(status=Edge.Status.ACTIVE).values_list(
            "source_id", "relation_id", "target_id"
        )
    )
    assert [f for f, n in facts.items() if n > 1] == []
    dead = Concept.objects.exclude(status=Concept.Status.ACTIVE).values_list("pk", flat=True)
    assert not Edge.objects.filter(status=Edge.Status.ACTIVE, source_id__in=list(dead)).exists()
    assert not Edge.objects.filter(status=Edge.Status.ACTIVE, target_id__in=list(dead)).exists()
    for p in Proposal.objects.filter(status__in=("accepted", "rejected")):
        closing = p.decisions.filter(action__in=("accept", "reject", "edit_accept"))
        assert closing.exclude(undone_by__isnull=False).count() == 1, p.pk


def _merge_proposal(loser: Concept, survivor: Concept) -> Proposal:
    return proposal_create(
        kind="merge_concepts",
        payload={"survivor_id": survivor.pk, "loser_id": loser.pk, "why": "The same idea."},
        confidence=0.9,
    )


def test_a_merge_racing_an_edge_on_the_merged_concept_never_fails_unanswered(on_postgres, f):
    """Race 1: a curator merges L into S while a reviewer accepts an edge X → L. Both may
    win (the edge then moves to S), or the edge is refused because L was merged."""
    doc = f.lesson()
    curator, reviewer = f.user("cora", role="curator"), f.user("rita", role="reviewer")
    for _ in range(ROUNDS):
        n = next(_names)
        # X before L: the edge locks X first, then waits for L while holding more.
        x, loser, survivor, y = (f.concept(f"{w} {n}") for w in ("X", "Loser", "Survivor", "Y"))
        f.edge(loser, y, "related")  # the merge moves it, in the edge's relation
        f.edge(survivor, x, "applies_to")
        edge_p = f.edge_proposal(x, loser, "related", doc=doc)
        merge_p = _merge_proposal(loser, survivor)
        merged, edged = race_merge_and_edge(merge_p, curator, edge_p, reviewer)
        assert isinstance(merged, Outcome) or isinstance(edged, Outcome)
        loser.refresh_from_db()
        if isinstance(merged, Outcome):
            assert loser.status == "merged" and loser.merged_into_id == survivor.pk
        if isinstance(edged, Outcome):
            # The accepted edge lies on the survivor once the merge is through.
            end = survivor if loser.status == "merged" else loser
            assert Edge.objects.filter(
                status="active", source=x, target=end, relation__key="related"
            ).exists()
        else:
            assert Proposal.objects.get(pk=edge_p.pk).status != "accepted"
        assert_graph_consistent()


def race_merge_and_edge(merge_p, curator, edge_p, reviewer) -> list[object]:
    """A curator accepts the merge while a reviewer accepts the edge, at the same moment;
    each is answered (an outcome or a refusal in words)."""
    results = race(
        lambda: decisions.proposal_accept(proposal_id=merge_p.pk, acting_user=curator),
        lambda: decisions.proposal_accept(proposal_id=edge_p.pk, acting_user=reviewer),
    )
    assert_answered_in_words(results)
    return results


def test_a_merge_racing_an_edge_that_brings_a_pending_concept_never_fails_unanswered(
    on_postgres, f
):
    """Race 2: the edge L → "New n" needs a pending concept proposal, accepted with it,
    while a curator merges L into S."""
    doc = f.lesson()
    curator, reviewer = f.user("cora", role="curator"), f.user("rita", role="reviewer")
    for _ in range(ROUNDS):
        n = next(_names)
        loser, survivor, y = (f.concept(f"{w} {n}") for w in ("Loser", "Survivor", "Y"))
        f.edge(loser, y, "related")
        pending = f.concept_proposal(f"Vector {n}", doc=doc)
        edge_p = f.edge_proposal(loser, pending, "applies_to", doc=doc)
        merge_p = _merge_proposal(loser, survivor)
        merged, edged = race_merge_and_edge(merge_p, curator, edge_p, reviewer)
        pending.refresh_from_db()
        if isinstance(edged, Outcome):
            assert pending.status == "accepted"
            assert Concept.objects.filter(name=f"Vector {n}").count() == 1
        else:
            # Refused as a whole: the concept it needed was not accepted either.
            assert pending.status in ("pending", "held")
            assert not Concept.objects.filter(name=f"Vector {n}").exists()
        if isinstance(merged, Outcome):
            assert Concept.objects.get(pk=loser.pk).status == "merged"
        assert_graph_consistent()


def test_two_reviewers_keeping_contradicting_proposals_apply_exactly_one(on_postgres, f):
    """Race 3: P1 (A → B) and P2 (B → A) contradict each other; one reviewer keeps P1
    while another keeps P2. Exactly one is accepted, the other rejected by it, and the
    loser of the race is told it was already decided."""
    doc = f.lesson()
    r1, r2 = f.user("rita", role="reviewer"), f.user("remy", role="reviewer")
    for _ in range(ROUNDS):
        n = next(_names)
        a, b = f.concept(f"A {n}"), f.concept(f"B {n}")
        old = f.edge(a, f.concept(f"C {n}"), "related")
        p1 = f.edge_proposal(a, b, "prerequisite", doc=doc)
        p2 = f.edge_proposal(
            b,
            a,
            "prerequisite",
            doc=doc,
            quote="Retrieval-augmented generation (RAG) builds on vector search.",
        )
        for mine, other in ((p1, p2), (p2, p1)):
            Proposal.objects.filter(pk=mine.pk).update(
                payload={
                    **mine.payload,
                    "conflicts": [
                        {"kind": "proposal", "id": other.pk},
                        {"kind": "edge", "id": old.pk},
                    ],
                },
                flags=["contradiction"],
            )
        results = race(
            lambda a=p1.pk: decisions.proposal_accept_over_conflicts(proposal_id=a, acting_user=r1),
            lambda b=p2.pk: decisions.proposal_accept_over_conflicts(proposal_id=b, acting_user=r2),
        )
        assert_answered_in_words(results)
        statuses = sorted(Proposal.objects.filter(pk__in=[p1.pk, p2.pk]).values_list("status"))
        wins = [r for r in results if isinstance(r, Outcome)]
        if wins:
            assert len(wins) == 1
            assert statuses == [("accepted",), ("rejected",)]
            (win,) = wins
            loser_id = p2.pk if win.proposal.pk == p1.pk else p1.pk
            rejected = Decision.objects.get(proposal_id=loser_id, action="reject")
            assert rejected.caused_by_id == win.decision.pk and rejected.batch == win.batch
            assert Edge.objects.get(pk=old.pk).status == "invalidated"
        else:  # both told "busy": nothing changed
            assert statuses == [("pending",), ("pending",)]
        assert all(isinstance(r, Outcome | AlreadyDecided | Busy) for r in results)
        assert_graph_consistent()


def test_a_bulk_accept_racing_a_merge_of_an_end_leaves_no_edge_on_the_merged_concept(
    on_postgres, f
):
    """Bulk accept locks the concepts at its edges' ends (in the same order as a merge):
    either the edges land first and the merge moves them, or the merge lands first and
    the bulk refuses them in words. No active edge is left on a merged concept."""
    doc = f.lesson()
    curator, reviewer = f.user("cora", role="curator"), f.user("rita", role="reviewer")
    for _ in range(ROUNDS):
        n = next(_names)
        xs = [f.concept(f"X{i} {n}") for i in range(3)]
        loser, survivor = f.concept(f"Loser {n}"), f.concept(f"Survivor {n}")
        ids = [f.edge_proposal(x, loser, "related", doc=doc).pk for x in xs]
        merge_p = _merge_proposal(loser, survivor)
        merged, bulked = race(
            lambda m=merge_p: decisions.proposal_accept(proposal_id=m.pk, acting_user=curator),
            lambda ids=ids: bulk.proposals_bulk_decide(
                acting_user=reviewer, proposal_ids=ids, action="accept"
            ),
        )
        assert_answered_in_words([merged])
        assert not isinstance(bulked, BaseException), bulked
        assert sorted(bulked.done + [pid for pid, _ in bulked.refused]) == sorted(ids)
        assert all(words.strip() for _, words in bulked.refused)
        assert_graph_consistent()


def test_refusals_are_domain_errors():
    """What a racing request may be told is a refusal the views turn into words."""
    assert all(issubclass(cls, DomainError) for cls in REFUSALS)


def test_a_single_decision_racing_a_bulk_accept_closes_no_cycle_between_them(on_postgres, f):
    """A bulk accept admits a chain of prerequisites as a set while a reviewer accepts,
    alone, the edge that closes it into a cycle (and one that runs against the order the
    bulk leaves). The relation's row serialises them: whichever comes second sees the
    other's edges, so the cycle is refused in words on one side, never written, and the
    order still holds every edge."""
    from kgreview.graph import order
    from kgreview.graph.models import RelationType

    doc = f.lesson()
    rita, rob = f.user("rita", role="reviewer"), f.user("rob", role="reviewer")
    rel = RelationType.objects.get(key="prerequisite")
    for _ in range(ROUNDS):
        n = next(_names)
        chain = [f.concept(f"Step {i} {n}") for i in range(6)]
        ids = [f.edge_proposal(a, b, doc=doc).pk for a, b in zip(chain, chain[1:], strict=False)]
        closing = f.edge_proposal(chain[-1], chain[0], doc=doc)
        bulked, single = race(
            lambda ids=ids: bulk.proposals_bulk_decide(
                acting_user=rita, proposal_ids=ids, action="accept"
            ),
            lambda p=closing: decisions.proposal_accept(proposal_id=p.pk, acting_user=rob),
        )
        assert_answered_in_words([single])
        assert not isinstance(bulked, BaseException), bulked
        if isinstance(single, Outcome):  # the closing edge came first: the bulk's last is refused
            assert bulked.done == ids[:-1]
            ((pid, words),) = bulked.refused
            assert pid == ids[-1] and "would close a cycle" in words
        else:
            assert bulked.done == ids and "would close a cycle" in str(single)
        active = Edge.objects.filter(status="active", relation=rel, source__in=chain)
        assert active.count() == 5
        assert order.edges_out_of_order(rel.pk) == []
        assert_graph_consistent()
