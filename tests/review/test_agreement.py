"""Agreement read from double review's votes: units, groups, pairs, each reviewer's
figures, the scripted session's hand-computed values, and the cached low-agreement set."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from kgreview.graph import services
from kgreview.review import agreement
from kgreview.review.agreement import low_agreement_relations, ratings, seen_by
from kgreview.review.models import EdgeProvenance
from tests.insights.planting import plant

from .agreement_world import EDIT_A, at, decide, session, vote

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def people(f):
    return (
        f.user("ana", role="reviewer"),
        f.user("ben", role="reviewer"),
        f.user("cora", role="curator"),
    )


def reviewer(report: dict, name: str) -> dict:
    return next(r for r in report["reviewers"] if r["username"] == name)


# --- The scripted session: values computed by hand ------------------------------------
#
# ana x ben over 20 proposals: 10 accept/accept, 4 reject/reject, 3 accept/reject,
# 2 reject/accept, 1 edit/edit (different edits). Observed 14/20 = 0.7.
# Cohen (ana rows, ben columns): ana accept 13, reject 6, edit:aaa 1; ben accept 12,
# reject 7, edit:bbb 1: p_e = (13*12 + 6*7)/400 = 0.495, kappa = 0.205/0.505 = 0.4059.
# Coincidences (n = 40): accept 25, reject 13, edit:aaa 1, edit:bbb 1; disagreeing
# coincidences 12: alpha = 1 - 39 * 12 / (1600 - 796) = 1 - 468/804 = 0.4179.
# Fleiss: P-bar 0.7, p_e = .625^2 + .325^2 + 2 * .025^2 = 0.4975, kappa = 0.2025/0.5025.


def test_a_scripted_session_of_two_reviewers_matches_the_hand_computed_values(people, monkeypatch):
    ana, ben, cora = people
    session(monkeypatch, ana, ben, cora)
    report = ratings()
    overall = report["overall"]
    assert overall["items"] == 20 and overall["votes"] == 40
    assert round(overall["observed"], 3) == 0.700
    assert round(overall["alpha"], 3) == round(1 - 468 / 804, 3) == 0.418
    assert round(overall["kappa"], 3) == round(0.2025 / 0.5025, 3) == 0.403
    assert overall["interval"]["low"] <= overall["alpha"] <= overall["interval"]["high"]
    assert overall["interval"]["resamples"] == 1000 and overall["interval"]["level"] == 0.95
    assert report["relations"]["prerequisite"]["items"] == 20
    assert report["relations"]["prerequisite"]["alpha"] == overall["alpha"]
    assert report["kinds"] == {}
    [pair] = report["pairs"]
    assert pair["reviewers"] == ["ana", "ben"] and pair["items"] == 20
    assert round(pair["kappa"], 3) == round(0.205 / 0.505, 3) == 0.406
    assert pair["observed"] == 0.7
    a = reviewer(report, "ana")
    assert a["items"] == 20 and a["observed"] == 0.7
    assert round(a["kappa"], 3) == 0.406


def test_agreement_with_the_adjudicator_is_the_share_of_adjudicated_votes_they_matched(
    people, monkeypatch
):
    """Six disagreements adjudicated: ana matched five (two accepts, both rejections,
    her edit, which cora accepted as she wrote it), ben one (a rejection)."""
    session(monkeypatch, *people)
    report = ratings()
    ana, ben = reviewer(report, "ana"), reviewer(report, "ben")
    assert ana["adjudicated"] == ben["adjudicated"] == 6
    assert ana["with_adjudication"] == round(5 / 6, 4)
    assert ben["with_adjudication"] == round(1 / 6, 4)
    assert reviewer(report, "cora")["with_adjudication"] is None


def test_speed_leaves_out_pauses_and_counts_the_decision_that_applies_votes_once(
    people, monkeypatch
):
    """ana: 20 votes 30 s apart with one 20-minute pause: median 30 s, 18 active gaps
    (540 s), 20 decisions per 0.15 h. ben's decisions that applied agreeing votes are the
    same cards as his votes. cora: six adjudications a minute apart."""
    session(monkeypatch, *people)
    report = ratings()
    ana, ben, cora = (reviewer(report, n) for n in ("ana", "ben", "cora"))
    assert ana["median_seconds"] == 30 and ana["active_hours"] == 0.15
    assert ana["decisions"] == 20 and ana["per_hour"] == round(20 / 0.15, 4)
    assert ben["decisions"] == 20 and ben["median_seconds"] == 30
    assert cora["decisions"] == 6 and cora["median_seconds"] == 60
    assert cora["per_hour"] == 72.0


def test_reversed_share_counts_acceptances_others_undid_or_invalidated(f, people, monkeypatch):
    """ben's ten accepts: cora undid two, ben one himself (not a reversal); cora's own
    accepted edge someone else invalidated later counts against her."""
    ana, ben, cora = people
    accepts = session(monkeypatch, ana, ben, cora)
    for d in accepts[:2]:
        decide(monkeypatch, d.proposal, cora, "undo", at(9000), undoes=d)
    decide(monkeypatch, accepts[2].proposal, ben, "undo", at(9100), undoes=accepts[2])
    p = plant(confidence=0.9)
    mine = decide(monkeypatch, p, cora, "accept", at(9200))
    edge = f.edge(f.concept("Tokens"), f.concept("Embeddings"))
    services.edge_invalidate(edge=edge, reason="Wrong.", acting_user=ana)
    retired_by = decide(monkeypatch, plant(confidence=0.9), ana, "accept", at(9300))
    EdgeProvenance.objects.create(
        edge=edge, proposal=p, decision=mine, invalidation_decision=retired_by
    )
    report = ratings()
    assert reviewer(report, "ben")["accepted"] == 10
    assert reviewer(report, "ben")["reversed"] == 2
    assert reviewer(report, "ben")["reversed_share"] == 0.2
    # cora: two adjudicated accepts, one adjudicated edit, one plain accept.
    assert reviewer(report, "cora")["accepted"] == 4
    assert reviewer(report, "cora")["reversed"] == 1
    assert any("not counted" in n for n in report["overall"]["notes"])


# --- Units --------------------------------------------------------------------------


def test_withdrawn_votes_are_ignored_and_single_vote_units_are_dropped(people):
    ana, ben, cora = people
    p1, p2, p3 = (plant(confidence=0.8) for _ in range(3))
    vote(p1, ana, "accept", at(0))
    vote(p1, ben, "reject:vague", at(10), withdrawn=True)  # taken back: p1 has one vote
    vote(p2, ana, "accept", at(20))  # still waiting for a second reviewer
    vote(p3, ana, "accept", at(30))
    vote(p3, ben, "reject:vague", at(40))
    report = ratings()
    assert report["overall"]["items"] == 1
    assert report["overall"]["votes"] == 4
    assert report["overall"]["observed"] == 0.0
    assert reviewer(report, "ben")["items"] == 1


def test_differing_edits_disagree_and_equal_edits_agree(people):
    ana, ben, _ = people
    p1, p2 = plant(confidence=0.8), plant(confidence=0.8)
    vote(p1, ana, "edit:1111", at(0))
    vote(p1, ben, "edit:2222", at(10))
    vote(p2, ana, "edit:3333", at(20))
    vote(p2, ben, "edit:3333", at(30))
    report = ratings()
    assert report["overall"]["items"] == 2 and report["overall"]["observed"] == 0.5


def test_open_votes_waiting_for_a_curator_count_as_a_disagreement(people):
    """Two differing votes not yet adjudicated are a unit already."""
    ana, ben, _ = people
    p = plant(confidence=0.8)
    vote(p, ana, "accept", at(0))
    vote(p, ben, "reject:vague", at(10))
    report = ratings()
    assert report["overall"]["items"] == 1
    assert reviewer(report, "ana")["adjudicated"] == 0


def test_a_second_round_after_an_undo_is_a_unit_of_its_own(people, monkeypatch):
    """Votes settled by one decision and votes cast when the proposal came back are two
    units, not one with repeated raters."""
    ana, ben, _ = people
    p = plant(confidence=0.8)
    first = decide(monkeypatch, p, ben, "accept", at(10))
    vote(p, ana, "accept", at(0), decision=first)
    vote(p, ben, "accept", at(10), decision=first)
    vote(p, ana, "reject:vague", at(100))
    vote(p, ben, "accept", at(110))
    report = ratings()
    assert report["overall"]["items"] == 2 and report["overall"]["observed"] == 0.5


def test_since_reads_only_later_votes(people):
    ana, ben, _ = people
    early, late = plant(confidence=0.8), plant(confidence=0.8)
    vote(early, ana, "accept", at(0))
    vote(early, ben, "reject:vague", at(10))
    vote(late, ana, "accept", at(1000))
    vote(late, ben, "accept", at(1010))
    assert ratings()["overall"]["items"] == 2
    later = ratings(since=at(500))
    assert later["overall"]["items"] == 1 and later["overall"]["observed"] == 1.0
    assert later["overall"]["since"] == at(500).isoformat()


def test_relations_hold_relation_keys_and_other_kinds_group_by_kind(people):
    ana, ben, _ = people
    edge_p = plant(confidence=0.8, rel="part_of")
    concept_p = plant(confidence=0.8, kind=type(edge_p).KindChoice.ADD_CONCEPT.value)
    for p in (edge_p, concept_p):
        vote(p, ana, "accept", at(0))
        vote(p, ben, "accept", at(10))
    report = ratings()
    assert set(report["relations"]) == {"part_of"}
    assert set(report["kinds"]) == {concept_p.kind}
    row = report["relations"]["part_of"]
    assert set(row) >= {"items", "kappa", "alpha", "observed", "interval", "below_threshold"}


def test_one_answer_only_is_undefined_with_a_note_not_an_error(people):
    ana, ben, _ = people
    for i in range(3):
        p = plant(confidence=0.8)
        vote(p, ana, "accept", at(i))
        vote(p, ben, "accept", at(i + 1))
    overall = ratings()["overall"]
    assert overall["alpha"] is None and overall["kappa"] is None
    assert "Every rating was accept" in overall["note"]
    assert overall["observed"] == 1.0
    assert overall["interval"]["low"] is None and overall["interval"]["note"]


def test_no_votes_at_all_is_an_empty_report(db):
    report = ratings()
    assert report["overall"]["items"] == 0 and report["overall"]["alpha"] is None
    assert report["relations"] == {} and report["reviewers"] == [] and report["pairs"] == []


def test_three_raters_make_three_pairs(f, people):
    ana, ben, cora = people
    dan = f.user("dan", role="reviewer")
    for i in range(4):
        p = plant(confidence=0.8)
        vote(p, ana, "accept", at(i * 10))
        vote(p, ben, "accept" if i % 2 else "reject:vague", at(i * 10 + 1))
        vote(p, dan, "accept", at(i * 10 + 2))
    report = ratings()
    assert {tuple(p["reviewers"]) for p in report["pairs"]} == {
        ("ana", "ben"),
        ("ana", "dan"),
        ("ben", "dan"),
    }
    assert next(p for p in report["pairs"] if p["reviewers"] == ["ana", "dan"])["observed"] == 1
    assert reviewer(report, "ben")["observed"] == 0.5


def test_the_report_reads_a_bounded_number_of_queries(people, monkeypatch):
    """Votes once, decisions once, invalidated edges once, names once, adjudicated edits
    once: the same count for twenty proposals as for forty."""
    ana, ben, cora = people
    session(monkeypatch, ana, ben, cora)
    with CaptureQueriesContext(connection) as small:
        ratings()
    session(monkeypatch, ana, ben, cora, rel="part_of")
    with CaptureQueriesContext(connection) as large:
        ratings()
    assert len(small) == len(large) <= 5


# --- Who sees what, and the cached set ------------------------------------------------


def test_a_reviewer_sees_their_own_row_a_curator_everyones(people, monkeypatch):
    ana, ben, cora = people
    session(monkeypatch, ana, ben, cora)
    report = ratings()
    assert [r["username"] for r in seen_by(report, ana)["reviewers"]] == ["ana"]
    assert seen_by(report, ana)["overall"] == report["overall"]
    assert [r["username"] for r in seen_by(report, cora)["reviewers"]] == ["ana", "ben", "cora"]


def test_low_agreement_relations_flags_relations_under_the_threshold_with_enough_units(
    people, monkeypatch
):
    ana, ben, cora = people
    session(monkeypatch, ana, ben, cora, rel="part_of")  # alpha 0.418 over 20 units
    for i in range(12):  # builds_on: agreement but for one proposal
        p = plant(confidence=0.8, rel="builds_on")
        vote(p, ana, "accept" if i else "reject:vague", at(i))
        vote(p, ben, "accept" if i else "reject:vague", at(i + 1))
    for i in range(3):  # related: too few units to judge
        p = plant(confidence=0.8, rel="related")
        vote(p, ana, "accept", at(i))
        vote(p, ben, "reject:vague", at(i + 1))
    assert low_agreement_relations(0.667) == {"part_of"}
    assert low_agreement_relations(0.667, min_items=2) == {"part_of", "related"}
    assert low_agreement_relations(0.3) == set()
    report = ratings(threshold=0.667)
    assert report["relations"]["part_of"]["below_threshold"] is True
    assert report["relations"]["builds_on"]["below_threshold"] is False


def test_low_agreement_relations_is_cached_for_a_minute(people):
    ana, ben, _ = people
    assert low_agreement_relations(0.667, min_items=1) == set()
    p = plant(confidence=0.8, rel="part_of")
    vote(p, ana, "accept", at(0))
    vote(p, ben, "reject:vague", at(10))
    q = plant(confidence=0.8, rel="part_of")
    vote(q, ana, "accept", at(20))
    vote(q, ben, "accept", at(30))
    with CaptureQueriesContext(connection) as queries:
        assert low_agreement_relations(0.667, min_items=1) == set()  # the cached answer
    assert len(queries) == 0
    cache.clear()
    assert low_agreement_relations(0.667, min_items=1) == {"part_of"}


def test_cached_ratings_reads_once_a_minute(people, monkeypatch):
    session(monkeypatch, *people)
    first = agreement.cached_ratings()
    with CaptureQueriesContext(connection) as queries:
        assert agreement.cached_ratings() == first
    assert len(queries) == 0


def test_an_adjudicators_edit_is_matched_by_payload_and_confidence(people, monkeypatch):
    """The vote that accepted the same payload matches; one with another confidence not."""
    ana, ben, cora = people
    p = plant(confidence=0.8)
    after = {"payload": EDIT_A, "confidence": 0.9}
    d = decide(monkeypatch, p, cora, "edit_accept", at(100), after=after)
    vote(p, ana, "edit:x", at(0), decision=d, payload=EDIT_A, confidence=0.9)
    vote(p, ben, "edit:y", at(10), decision=d, payload=EDIT_A, confidence=0.5)
    report = ratings()
    assert reviewer(report, "ana")["with_adjudication"] == 1.0
    assert reviewer(report, "ben")["with_adjudication"] == 0.0


def test_a_reviewers_later_vote_in_a_round_replaces_their_earlier_one(people, monkeypatch):
    ana, ben, _ = people
    p = plant(confidence=0.8)
    d = decide(monkeypatch, p, ben, "accept", at(20))
    vote(p, ana, "reject:vague", at(0), decision=d)
    vote(p, ana, "accept", at(5), decision=d)
    vote(p, ben, "accept", at(20), decision=d)
    report = ratings()
    assert report["overall"]["items"] == 1 and report["overall"]["observed"] == 1.0
    assert reviewer(report, "ana")["items"] == 1
