"""Double review: which proposals two reviewers decide, their blind votes, adjudication, undo."""

from __future__ import annotations

import pytest
from django.urls import reverse

from kgreview.core.errors import NotFound, StateConflict, ValidationFailed
from kgreview.graph.models import Edge, RelationType
from kgreview.review.decide import bulk, decisions, undo
from kgreview.review.decide.outcome import AlreadyDecided, NotAllowed
from kgreview.review.kinds.add_edge import EdgeEdits
from kgreview.review.models import Decision, Proposal, Vote
from kgreview.review.team import doubling, votes
from tests.review.conftest import edges_between as _edges_between
from tests.review.conftest import login_as as _login
from tests.review.conftest import team_edge as _edge

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


# --- Which proposals are doubled ---------------------------------------------------------


def test_no_proposal_is_doubled_by_default(f, team):
    p = _edge(f)
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"])
    assert out.decision is not None and out.vote is None
    assert Proposal.objects.get(pk=p.pk).status == "accepted"


def test_the_share_draws_the_same_proposals_every_time_and_about_the_share():
    picked = [pk for pk in range(1, 2001) if doubling.drawn(pk, 0.25)]
    assert picked == [pk for pk in range(1, 2001) if doubling.drawn(pk, 0.25)]
    assert 400 <= len(picked) <= 600
    assert not any(doubling.drawn(pk, 0.0) for pk in range(1, 200))
    assert all(doubling.drawn(pk, 1.0) for pk in range(1, 200))


def test_a_relations_own_share_overrides_the_default_and_is_audited(f, team, settings):
    settings.KG_DOUBLE_REVIEW_SHARE = 0.0
    relation = RelationType.objects.get(key="prerequisite")
    assert doubling.set_share(relation=relation, share=1.0, acting_user=team["cat"]) == 1.0
    p = _edge(f)
    assert doubling.doubled(p)
    other = f.edge_proposal(f.concept("X"), f.concept("Y"), rel="related")
    assert not doubling.doubled(other)
    assert doubling.doubled_ids([p.pk, other.pk]) == {p.pk}
    from kgreview.core.models import AuditEntry

    assert AuditEntry.objects.filter(action="relation_type.double_review").exists()
    assert doubling.set_share(relation=relation, share=None, acting_user=team["cat"]) == 0.0
    assert not doubling.doubled(Proposal.objects.get(pk=p.pk))


def test_a_relation_people_cannot_agree_on_has_every_proposal_doubled(f, team, settings):
    from kgreview.review.models import DoubleReview

    settings.KG_DOUBLE_REVIEW_SHARE = 0.0
    relation = RelationType.objects.get(key="related")
    doubling.set_share(relation=relation, share=1.0, acting_user=team["cat"])
    for i in range(10):  # ten proposals, ann and bob disagreeing on each
        p = f.edge_proposal(f.concept(f"L{i}"), f.concept(f"M{i}"), rel="related")
        decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"])
        decisions.proposal_reject(
            proposal_id=p.pk, acting_user=team["bob"], reason_code="too_vague"
        )
    assert DoubleReview.objects.get(relation=relation).low_agreement
    doubling.set_share(relation=relation, share=0.0, acting_user=team["cat"])
    fresh = f.edge_proposal(f.concept("N1"), f.concept("N2"), rel="related")
    assert doubling.doubled(Proposal.objects.select_related("relation").get(pk=fresh.pk))
    assert not doubling.doubled(_edge(f))  # other relations follow their own share


def test_a_share_outside_zero_to_one_is_refused_in_words(team):
    relation = RelationType.objects.get(key="prerequisite")
    with pytest.raises(ValidationFailed, match="between 0 and 1"):
        doubling.set_share(relation=relation, share=1.5, acting_user=team["cat"])


def test_curator_kinds_and_contradictions_are_never_doubled(f, doubled):
    p = f.edge_proposal(f.concept("A"), f.concept("B"))
    p.payload = {**p.payload, "conflicts": [{"kind": "edge", "id": 1}]}
    assert not doubling.doubled(p)


# --- Two blind votes ---------------------------------------------------------------------


def test_a_first_vote_changes_nothing_in_the_graph_and_waits_for_a_second(f, team, doubled):
    p = _edge(f)
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"], version=1)
    assert out.decision is None and out.vote is not None and out.vote.label == "accept"
    p.refresh_from_db()
    assert p.status == "pending" and p.stage == "second"
    assert _edges_between(p) == 0
    assert not Decision.objects.filter(proposal=p).exists()


def test_the_second_reviewer_holding_the_card_before_the_first_vote_decides_it_as_seen(
    f, team, doubled
):
    """Blind: the first vote changes nothing the card says, so bob, who opened the card
    before ann voted, decides it with the version he saw; he is not told it "changed"
    (that would say a colleague had voted), and both votes apply it once."""
    p = _edge(f)
    seen = Proposal.objects.get(pk=p.pk).version
    ann, bob = _login(team["ann"]), _login(team["bob"])
    first = ann.post(reverse("review:accept", args=[p.pk]), {"version": seen}, headers=HX)
    assert first.status_code == 200
    assert Proposal.objects.get(pk=p.pk).version == seen
    answer = bob.post(reverse("review:accept", args=[p.pk]), {"version": seen}, headers=HX)
    html = answer.content.decode()
    assert answer.status_code == 200 and "changed while you were looking" not in html
    assert Proposal.objects.get(pk=p.pk).status == "accepted" and _edges_between(p) == 1
    assert Vote.objects.filter(proposal=p).count() == 2


def test_the_same_reviewer_cannot_vote_twice(f, team, doubled):
    p = _edge(f)
    decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"])
    with pytest.raises(AlreadyDecided, match="waits for another reviewer"):
        decisions.proposal_reject(
            proposal_id=p.pk, acting_user=team["ann"], reason_code="too_vague"
        )


def test_two_agreeing_accepts_apply_the_proposal_once_and_keep_both_votes(f, team, doubled):
    p = _edge(f)
    decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"], note="fine")
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=team["bob"])
    p.refresh_from_db()
    assert p.status == "accepted" and _edges_between(p) == 1
    assert out.decision is not None and out.decision.user == team["bob"]
    assert "ann and bob" in out.decision.note and "fine" in out.decision.note
    assert set(Vote.objects.filter(proposal=p).values_list("decision_id", flat=True)) == {
        out.decision.pk
    }
    assert Decision.objects.filter(proposal=p, action="accept").count() == 1


def test_two_agreeing_rejections_with_the_same_reason_reject_it(f, team, doubled):
    p = _edge(f)
    decisions.proposal_reject(proposal_id=p.pk, acting_user=team["ann"], reason_code="too_vague")
    out = decisions.proposal_reject(
        proposal_id=p.pk, acting_user=team["bob"], reason_code="too_vague"
    )
    p.refresh_from_db()
    assert p.status == "rejected" and out.decision.reason_code == "too_vague"


@pytest.mark.parametrize(
    ("second", "detail"),
    [
        (decisions.proposal_reject, {"reason_code": "too_vague"}),
        (decisions.proposal_reject, {"reason_code": "wrong_direction"}),
    ],
)
def test_votes_that_differ_go_to_adjudication_and_change_nothing(f, team, doubled, second, detail):
    p = _edge(f)
    decisions.proposal_reject(
        proposal_id=p.pk, acting_user=team["ann"], reason_code="not_supported_by_evidence"
    )
    out = second(proposal_id=p.pk, acting_user=team["bob"], **detail)
    assert out.decision is None
    p.refresh_from_db()
    assert p.status == "pending" and p.stage == "adjudicate" and _edges_between(p) == 0


def test_different_edits_differ_and_the_same_edit_agrees(f, team, doubled):
    p = _edge(f)
    decisions.proposal_edit_accept(
        proposal_id=p.pk, acting_user=team["ann"], edits=EdgeEdits(relation="builds_on")
    )
    decisions.proposal_edit_accept(
        proposal_id=p.pk, acting_user=team["bob"], edits=EdgeEdits(relation="related")
    )
    assert Proposal.objects.get(pk=p.pk).stage == "adjudicate"
    q = _edge(f, "Alpha", "Beta")
    decisions.proposal_edit_accept(
        proposal_id=q.pk, acting_user=team["ann"], edits=EdgeEdits(relation="builds_on")
    )
    assert Proposal.objects.get(pk=q.pk).payload["relation"] == "prerequisite"  # blind
    out = decisions.proposal_edit_accept(
        proposal_id=q.pk, acting_user=team["bob"], edits=EdgeEdits(relation="builds_on")
    )
    q.refresh_from_db()
    assert q.status == "accepted" and out.decision.action == "edit_accept"
    assert Edge.objects.get(pk=out.edges[0].pk).relation.key == "builds_on"


def test_only_a_curator_adjudicates_and_their_decision_is_final(f, team, doubled):
    p = _edge(f)
    decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"])
    decisions.proposal_reject(proposal_id=p.pk, acting_user=team["bob"], reason_code="too_vague")
    other = f.user("dan", role="reviewer")
    with pytest.raises(NotAllowed, match="waits for a curator"):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=other)
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=team["cat"], note="it holds")
    p.refresh_from_db()
    assert p.status == "accepted" and _edges_between(p) == 1
    assert out.decision.note.startswith("Adjudicated (ann: accepted; bob: rejected, too vague).")
    assert "it holds" in out.decision.note
    assert set(Vote.objects.filter(proposal=p).values_list("decision_id", flat=True)) == {
        out.decision.pk
    }


def test_the_adjudication_card_shows_both_votes_and_their_edits(f, team, doubled):
    p = _edge(f)
    decisions.proposal_edit_accept(
        proposal_id=p.pk,
        acting_user=team["ann"],
        edits=EdgeEdits(relation="builds_on"),
        note="reads as builds on",
    )
    decisions.proposal_accept(proposal_id=p.pk, acting_user=team["bob"])
    shown = votes.ballots(Proposal.objects.get(pk=p.pk))
    assert [b.username for b in shown] == ["ann", "bob"]
    assert shown[0].words == "edited and accepted" and ("relation", "builds_on") in shown[0].changes
    assert shown[0].note == "reads as builds on" and shown[1].changes == []


# --- Undo and reconcile ------------------------------------------------------------------


def test_undo_withdraws_an_unsettled_vote_and_the_card_returns(f, team, doubled):
    p = _edge(f)
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"])
    latest = undo.undoable_batches(user=team["ann"], limit=1)
    assert latest and latest[0].batch == out.vote.batch and latest[0].words == f"accept #{p.pk}"
    result = undo.decisions_undo(acting_user=team["ann"], batch=out.vote.batch)
    assert result.first_proposal_id == p.pk
    p.refresh_from_db()
    assert p.stage == "" and Vote.objects.get(pk=out.vote.pk).withdrawn_at is not None
    # ann may decide it again, as a first vote
    again = decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"])
    assert again.vote is not None and again.vote.pk != out.vote.pk


def test_a_settled_vote_cannot_be_withdrawn(f, team, doubled):
    p = _edge(f)
    first = decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"])
    decisions.proposal_accept(proposal_id=p.pk, acting_user=team["bob"])
    assert undo.undoable_batches(user=team["ann"], limit=1) == []
    with pytest.raises(StateConflict):
        undo.decisions_undo(acting_user=team["ann"], batch=first.vote.batch)


def test_withdrawing_the_second_vote_takes_it_out_of_adjudication(f, team, doubled):
    p = _edge(f)
    decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"])
    second = decisions.proposal_reject(
        proposal_id=p.pk, acting_user=team["bob"], reason_code="too_vague"
    )
    undo.decisions_undo(acting_user=team["bob"], batch=second.vote.batch)
    assert Proposal.objects.get(pk=p.pk).stage == "second"


def test_undoing_an_agreed_decision_reopens_it_for_two_new_votes(f, team, doubled):
    p = _edge(f)
    decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"])
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=team["bob"])
    undo.decisions_undo(acting_user=team["bob"], batch=out.batch)
    p.refresh_from_db()
    assert p.status == "pending" and _edges_between(p) == 0
    again = decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"])
    assert again.vote is not None  # the old votes are settled: a new round


def test_nothing_to_undo_in_an_unknown_batch(team):
    import uuid

    with pytest.raises(NotFound):
        undo.decisions_undo(acting_user=team["ann"], batch=uuid.uuid4())


def test_a_bulk_decision_votes_on_doubled_proposals_and_undoes_them_together(f, team, settings):
    settings.KG_DOUBLE_REVIEW_SHARE = 0.0
    relation = RelationType.objects.get(key="related")
    doubling.set_share(relation=relation, share=1.0, acting_user=team["cat"])
    plain = _edge(f)
    twice = f.edge_proposal(f.concept("P"), f.concept("Q"), rel="related")
    result = bulk.proposals_bulk_decide(
        acting_user=team["ann"], proposal_ids=[plain.pk, twice.pk], action="accept"
    )
    assert sorted(result.done) == sorted([plain.pk, twice.pk])
    assert Proposal.objects.get(pk=plain.pk).status == "accepted"
    assert Proposal.objects.get(pk=twice.pk).stage == "second"
    assert Vote.objects.filter(proposal=twice, user=team["ann"], batch=result.batch).exists()
    undo.decisions_undo(acting_user=team["ann"], batch=result.batch)
    assert Proposal.objects.get(pk=plain.pk).status == "pending"
    twice.refresh_from_db()
    assert (
        twice.stage == ""
        and not Vote.objects.filter(proposal=twice, withdrawn_at__isnull=True).exists()
    )


def test_a_doubled_proposal_settled_meanwhile_leaves_every_queue(f, team, doubled):
    from kgreview.review.decide import mend
    from kgreview.review.decide.ends import EndChoice

    a, b = f.concept("Embeddings"), f.concept("Vector search")
    p = f.edge_proposal(a, b)
    decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"])
    mend.edge_add_by_hand(
        acting_user=team["cat"],
        source=EndChoice(concept_id=a.pk),
        target=EndChoice(concept_id=b.pk),
        relation="prerequisite",
        note="The lesson says so plainly.",
    )
    p.refresh_from_db()
    assert p.status == "superseded"
    page = _login(team["bob"]).get(reverse("review:focus")).content.decode()
    assert f'data-proposal="{p.pk}"' not in page
    assert undo.undoable_batches(user=team["ann"], limit=1) == []


def test_undoing_an_adjudication_puts_it_back_before_a_curator_with_both_votes(f, team, doubled):
    p = _edge(f)
    decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"])
    decisions.proposal_reject(proposal_id=p.pk, acting_user=team["bob"], reason_code="too_vague")
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=team["cat"])
    undo.decisions_undo(acting_user=team["cat"], batch=out.batch)
    p = Proposal.objects.get(pk=p.pk)
    assert p.status == "pending" and p.stage == "adjudicate"
    assert [b.username for b in votes.ballots(p)] == ["ann", "bob"]
    again = decisions.proposal_reject(
        proposal_id=p.pk, acting_user=team["cat"], reason_code="too_vague"
    )
    assert "ann: accepted; bob: rejected, too vague" in again.decision.note
    assert set(Vote.objects.filter(proposal=p).values_list("decision_id", flat=True)) == {
        again.decision.pk
    }
