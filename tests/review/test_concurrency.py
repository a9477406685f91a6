"""Several reviewers deciding overlapping proposals at once, on PostgreSQL."""

from __future__ import annotations

import random
import threading

import pytest
from django.db import connections

from kgreview.core.errors import DomainError
from kgreview.graph import selectors as graph_selectors
from kgreview.graph.models import Concept
from kgreview.review.decide import decisions
from kgreview.review.models import Decision, Proposal

pytestmark = pytest.mark.usefixtures("reference_data")


def run_threads(workers):
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(workers))

    def wrap(fn):
        try:
            barrier.wait()
            fn()
        except BaseException as exc:  # collected: the test asserts there are none
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=wrap, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return errors


def test_overlapping_reviewers_decide_each_proposal_exactly_once(on_postgres, f):
    """Four reviewers race over the same proposals: one decision each, nothing lost."""
    doc = f.lesson()
    concepts = [f.concept_proposal(f"Concept {i}", doc=doc) for i in range(6)]
    known = [f.concept(f"Known {i}") for i in range(4)]
    proposals = []
    for i, src in enumerate(concepts):
        for j, dst in enumerate(known):
            rel = ("related", "applies_to", "contrasts_with")[(i + j) % 3]
            ends = (src, dst) if (i + j) % 2 else (dst, src)
            proposals.append(f.edge_proposal(*ends, rel, doc=doc))
    ids = [p.pk for p in proposals]
    reviewers = [f.user(f"r{i}", role="reviewer") for i in range(4)]
    outcomes: list[tuple[str, int, str]] = []
    lock = threading.Lock()

    def reviewer_loop(user, seed):
        order = ids[:]
        random.Random(seed).shuffle(order)
        for pid in order:
            try:
                if (pid + seed) % 3:
                    decisions.proposal_accept(proposal_id=pid, acting_user=user)
                    verdict = "accept"
                else:
                    decisions.proposal_reject(
                        proposal_id=pid, acting_user=user, reason_code="too_vague"
                    )
                    verdict = "reject"
            except DomainError as exc:
                verdict = exc.__class__.__name__
            with lock:
                outcomes.append((user.username, pid, verdict))

    errors = run_threads([lambda u=u, s=s: reviewer_loop(u, s) for s, u in enumerate(reviewers)])
    assert errors == []
    wins = [o for o in outcomes if o[2] in ("accept", "reject")]
    decided_ids = sorted(o[1] for o in wins)
    assert sorted(set(decided_ids)) == decided_ids, "a proposal was decided twice"
    assert set(decided_ids) == set(ids), "a proposal was lost"
    assert {o[2] for o in outcomes if o not in wins} <= {"AlreadyDecided", "ProposalStale"}
    for pid in ids:
        p = Proposal.objects.get(pk=pid)
        # One decision closed it; re-pointing its end at a new concept is not a decision.
        edge_decisions = Decision.objects.filter(proposal=p).exclude(
            action__in=("undo", "reresolve")
        )
        assert edge_decisions.count() == 1
        assert p.status in ("accepted", "rejected")
        assert (p.edge_provenance.count() == 1) == (p.status == "accepted")
    accepted = Proposal.objects.filter(kind="add_edge", status="accepted").count()
    assert graph_selectors.edges_active().count() == accepted
    names = list(Concept.objects.values_list("name", flat=True))
    assert len(names) == len(set(names))


def test_two_reviewers_accepting_edges_that_share_a_new_concept_create_it_once(on_postgres, f):
    """Both edges need the same pending concept: it is accepted once, used by both."""
    doc = f.lesson()
    shared = f.concept_proposal("Shared concept", doc=doc)
    a, b = f.concept("Left"), f.concept("Right")
    p1 = f.edge_proposal(a, shared, "related", doc=doc)
    p2 = f.edge_proposal(shared, b, "applies_to", doc=doc)
    u1, u2 = f.user("u1", role="reviewer"), f.user("u2", role="reviewer")
    errors = run_threads(
        [
            lambda: decisions.proposal_accept(proposal_id=p1.pk, acting_user=u1),
            lambda: decisions.proposal_accept(proposal_id=p2.pk, acting_user=u2),
        ]
    )
    assert errors == []
    assert Concept.objects.filter(name="Shared concept").count() == 1
    assert Proposal.objects.get(pk=shared.pk).status == "accepted"
    assert graph_selectors.edges_active().count() == 2
