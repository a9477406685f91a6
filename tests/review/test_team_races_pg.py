"""Team review racing on PostgreSQL, with real threads and real transactions: two
reviewers reaching for one card get it once; three reviewers voting on one doubled
proposal at once end with it decided exactly once, every vote answered in words."""

from __future__ import annotations

import os

import pytest

from kgreview.review.decide import decisions
from kgreview.review.decide.outcome import AlreadyDecided, Outcome
from kgreview.review.models import Decision, Lease, Proposal, Vote
from kgreview.review.team import leases
from tests.races import race

pytestmark = pytest.mark.usefixtures("reference_data")

ROUNDS = int(os.environ.get("KG_RACE_ROUNDS", "12"))


def test_two_reviewers_reaching_for_one_card_get_it_once(on_postgres, f):
    ann, ben = f.user("ann", role="reviewer"), f.user("ben", role="reviewer")
    for i in range(ROUNDS):
        p = f.edge_proposal(f.concept(f"A{i}"), f.concept(f"B{i}"))
        got = race(lambda p=p: leases.take(ann, [p.pk]), lambda p=p: leases.take(ben, [p.pk]))
        assert sorted(len(g) for g in got) == [0, 1], got
        holder = Lease.objects.get(pk=p.pk).user_id
        assert holder == (ann.pk if got[0] else ben.pk)


def test_votes_racing_on_a_doubled_proposal_decide_it_exactly_once(on_postgres, f, settings):
    settings.KG_DOUBLE_REVIEW_SHARE = 1.0
    people = [f.user(name, role="reviewer") for name in ("ann", "ben", "cal")]
    for i in range(ROUNDS):
        p = f.edge_proposal(f.concept(f"C{i}"), f.concept(f"D{i}"))
        results = race(
            *(
                lambda who=who, p=p: decisions.proposal_accept(proposal_id=p.pk, acting_user=who)
                for who in people
            )
        )
        for r in results:
            if isinstance(r, BaseException):
                assert isinstance(r, AlreadyDecided) and str(r).strip(), repr(r)
            else:
                assert isinstance(r, Outcome)
        p.refresh_from_db()
        assert p.status == "accepted"
        assert Decision.objects.filter(proposal=p, action="accept").count() == 1
        assert Vote.objects.filter(proposal=p, decision__isnull=False).count() == 2
        assert Proposal.objects.filter(pk=p.pk, stage="second").exists()
