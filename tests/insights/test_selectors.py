"""The dashboard's numbers on planted data: queue size per day and hour, decisions per
reviewer, acceptance rates, calibration bins, calibration error and the gate needed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from kgreview.insights.selectors.activity import SYSTEM, queue_history, reviewer_activity
from kgreview.insights.selectors.decided import ALL, outcomes
from kgreview.insights.selectors.rates import GateNeed, wilson
from kgreview.review.decide import bulk, decisions, undo
from kgreview.review.decide.decisions import EdgeEdits
from kgreview.review.models import Decision, Proposal

from .planting import plant, run

pytestmark = pytest.mark.django_db

NOW = datetime(2025, 3, 10, 12, 0, tzinfo=UTC)


def at(day: int, hour: int = 12, minute: int = 0, second: int = 0) -> datetime:
    """A moment in March 2025, UTC."""
    return datetime(2025, 3, day, hour, minute, second, tzinfo=UTC)


@pytest.fixture(autouse=True)
def utc(settings):
    settings.TIME_ZONE = "UTC"
    settings.KG_CONFIDENCE_GATE = 0.6


# --- queue size over time -----------------------------------------------------------------


@pytest.fixture
def queue_week():
    """Proposals created and closed around the week of 4-10 March 2025."""
    plant(confidence=0.9, created=at(1, 10))  # pending since before the window
    plant(confidence=0.3, created=at(2), status="rejected", decided=at(5, 10))  # held
    plant(confidence=0.7, created=at(4, 9), status="accepted", decided=at(4, 15))
    plant(confidence=0.2, created=at(5), status="accepted", decided=at(8))  # held
    plant(confidence=0.4, created=at(6, 8))  # held, still open
    plant(confidence=0.8, created=at(7, 8), status="superseded", decided=at(9, 8))
    plant(confidence=0.9, created=at(2), status="accepted", decided=at(3))  # before
    plant(confidence=0.95, created=at(8, 23, 59, 59))
    plant(confidence=0.65, created=at(9, 0, 0, 0))


def test_queue_history_counts_pending_and_held_open_at_the_end_of_each_day(queue_week):
    """Open at day's end = open before the window + created - closed, lane by lane."""
    history = queue_history(days=7, now=NOW)
    assert history.step == "day"
    assert [p.start for p in history.points] == [at(d, 0) for d in range(4, 11)]
    assert history.open_before == {"pending": 1, "held": 1}
    assert [p.pending for p in history.points] == [1, 1, 1, 2, 3, 3, 3]
    assert [p.held for p in history.points] == [1, 1, 2, 2, 1, 1, 1]
    assert [p.created for p in history.points] == [1, 1, 1, 1, 1, 1, 0]
    assert [p.closed for p in history.points] == [1, 1, 0, 0, 1, 1, 0]
    assert history.peak == 4


def test_queue_history_ends_at_the_queue_as_it_is_now(queue_week):
    """The last point equals the proposals open right now, pending and held."""
    history = queue_history(days=7, now=NOW)
    assert history.points[-1].pending == Proposal.objects.filter(status="pending").count() == 3
    assert history.points[-1].held == Proposal.objects.filter(status="held").count() == 1


def test_a_superseded_proposal_leaves_the_queue_on_the_day_it_was_superseded():
    """Superseded proposals record decided_at too and count as closed that day."""
    plant(confidence=0.8, created=at(7, 8), status="superseded", decided=at(9, 8))
    history = queue_history(days=7, now=NOW)
    assert [p.total for p in history.points] == [0, 0, 0, 1, 1, 0, 0]


def test_a_longer_window_starts_earlier_and_counts_what_was_open_before_it(queue_week):
    """Thirty days reach back before every planted proposal: nothing open before."""
    history = queue_history(days=30, now=NOW)
    assert len(history.points) == 30
    assert history.points[0].start == datetime(2025, 2, 9, tzinfo=UTC)
    assert history.open_before == {"pending": 0, "held": 0}
    by_day = {p.start.day: p.total for p in history.points if p.start.month == 3}
    assert by_day == {1: 1, 2: 3, 3: 2, 4: 2, 5: 2, 6: 3, 7: 4, 8: 4, 9: 4, 10: 4}


def test_a_one_day_window_counts_the_queue_hour_by_hour():
    """Twenty-four hourly buckets ending with the current hour."""
    plant(confidence=0.9, created=at(9, 10))
    plant(confidence=0.9, created=at(9, 13))
    plant(confidence=0.9, created=at(10, 9), status="accepted", decided=at(10, 11, 59))
    plant(confidence=0.5, created=at(10, 12, 15))
    history = queue_history(days=1, now=at(10, 12, 30))
    assert history.step == "hour"
    assert len(history.points) == 24
    assert history.points[0].start == at(9, 13) and history.points[-1].start == at(10, 12)
    assert history.open_before == {"pending": 1, "held": 0}
    totals = [p.total for p in history.points]
    assert totals == [2] * 20 + [3, 3, 2, 3]
    assert (history.points[-1].pending, history.points[-1].held) == (2, 1)


def test_days_are_counted_in_the_current_time_zone(settings):
    """Half past eleven at night in UTC is the next day in Berlin, and counts there."""
    settings.TIME_ZONE = "Europe/Berlin"
    plant(confidence=0.9, created=datetime(2025, 3, 8, 23, 30, tzinfo=UTC))
    plant(confidence=0.9, created=datetime(2025, 3, 3, 23, 30, tzinfo=UTC))
    history = queue_history(days=7, now=NOW)
    assert [p.start.date().day for p in history.points] == [4, 5, 6, 7, 8, 9, 10]
    assert [p.created for p in history.points] == [1, 0, 0, 0, 0, 1, 0]
    assert history.open_before == {"pending": 0, "held": 0}


def test_an_empty_queue_says_so():
    """No proposals at all: every point is zero and the history is empty."""
    history = queue_history(days=7, now=NOW)
    assert history.is_empty
    assert [p.total for p in history.points] == [0] * 7


# --- decisions per reviewer ---------------------------------------------------------------


def decide(clock, when, proposal, user, action, times=1):
    clock.set(when)
    for _ in range(times):
        Decision.objects.create(proposal=proposal, user=user, action=action, proposal_version=1)


def test_reviewer_activity_counts_decisions_per_reviewer_day_and_action(f, clock):
    """Each decision row counts once, on its day, under its reviewer and action."""
    alice, bob = f.user("alice", role="reviewer"), f.user("bob", role="reviewer")
    p = plant(confidence=0.9)
    decide(clock, at(5, 10), p, alice, "accept", times=2)
    decide(clock, at(5, 11), p, alice, "edit_accept")
    decide(clock, at(6, 9), p, alice, "reject")
    decide(clock, at(6, 9, 5), p, alice, "undo")
    decide(clock, at(10, 9), p, bob, "reject", times=3)
    decide(clock, at(7), p, None, "supersede")
    decide(clock, at(3, 23, 59), p, alice, "accept")  # the day before the window
    activity = reviewer_activity(days=7, now=NOW)
    assert activity.step == "day"
    assert [r.reviewer for r in activity.rows] == ["alice", "bob", SYSTEM]
    assert [r.total for r in activity.rows] == [5, 3, 1]
    assert activity.total == 9
    alice_row, bob_row, system = activity.rows
    assert alice_row.bucket_totals == [0, 3, 2, 0, 0, 0, 0]
    assert {a: n for a, n in alice_row.per_bucket[1].items() if n} == {
        "accept": 2,
        "edit_accept": 1,
    }
    assert {a: n for a, n in alice_row.per_bucket[2].items() if n} == {"reject": 1, "undo": 1}
    assert alice_row.totals["undo"] == 1
    assert bob_row.bucket_totals == [0, 0, 0, 0, 0, 0, 3]
    assert system.per_bucket[3]["supersede"] == 1


def test_reviewer_activity_counts_an_undo_as_a_decision_of_its_own(f):
    """A reject undone through the real services is two decisions: reject and undo."""
    rita = f.user("rita", role="reviewer")
    p = plant(confidence=0.9)
    out = decisions.proposal_reject(proposal_id=p.pk, acting_user=rita, reason_code="too_vague")
    undo.decisions_undo(acting_user=rita, batch=out.decision.batch)
    (row,) = reviewer_activity(days=1).rows
    assert row.reviewer == "rita"
    assert {a: n for a, n in row.totals.items() if n} == {"reject": 1, "undo": 1}
    assert sum(row.bucket_totals) == 2


def test_a_bulk_batch_and_its_undo_count_one_decision_per_proposal_decided(f):
    """Bulk-accepting edges with the concepts they need, then undoing it, counts each edge
    once as accepted and once as undone; what came with them (concepts, settled twins,
    re-pointed ends) is not counted again."""
    rita = f.user("rita", role="reviewer")
    doc = f.lesson()
    needed = [f.concept_proposal(f"Topic {i}", doc=doc) for i in range(3)]
    ids = [
        f.edge_proposal(f.concept(f"Known {i}"), needed[i % 3], "related", doc=doc).pk
        for i in range(6)
    ]
    result = bulk.proposals_bulk_decide(acting_user=rita, proposal_ids=ids, action="accept")
    assert len(result.done) == 6 and result.also_count == 3
    undo.decisions_undo(acting_user=rita, batch=result.batch)
    (row,) = reviewer_activity(days=1).rows
    assert {a: n for a, n in row.totals.items() if n} == {"accept": 6, "undo": 6}


def test_reviewer_activity_with_one_day_is_hourly(f, clock):
    """A one-day window puts decisions in their hour."""
    rita = f.user("rita", role="reviewer")
    p = plant(confidence=0.9)
    decide(clock, at(10, 11, 20), p, rita, "accept")
    decide(clock, at(9, 12, 59), p, rita, "accept")  # before the first hour of the window
    (row,) = reviewer_activity(days=1, now=at(10, 12, 30)).rows
    assert row.bucket_totals == [0] * 22 + [1, 0]


# --- acceptance, calibration, gates -------------------------------------------------------

PREREQUISITE = [
    (0.95, "accepted"),
    (0.92, "accepted"),
    (0.91, "rejected"),
    (0.85, "accepted"),
    (0.81, "accepted"),
    (0.72, "rejected"),
    (0.65, "accepted"),
    (0.55, "rejected"),
    (0.45, "rejected"),
    (0.05, "rejected"),
]
CONTRASTS = [(0.99, "rejected"), (0.6, "accepted"), (0.3, "accepted")]


@pytest.fixture
def decided(f):
    """Sixteen decided proposals (ten accepted) and some that must not count.

    One ``builds_on`` proposal at 0.2 was edited into ``prerequisite`` at 0.9 and
    accepted through the real service: it counts as the agent proposed it.
    """
    construct = run("construct", "openai", "gpt-4o-mini")
    heal = run("heal", "offline", "")
    for confidence, status in PREREQUISITE:
        plant(confidence=confidence, rel="prerequisite", status=status, run=construct)
    for confidence, status in CONTRASTS:
        plant(confidence=confidence, rel="contrasts_with", status=status, run=heal)
    plant(confidence=1.0, rel="builds_on", status="accepted")
    plant(confidence=0.5, kind="add_concept", status="accepted")
    edited = f.edge_proposal(
        f.concept("Tokenizers"), f.concept("Transformers"), "builds_on", confidence=0.2
    )
    decisions.proposal_edit_accept(
        proposal_id=edited.pk,
        acting_user=f.user("rita", role="reviewer"),
        edits=EdgeEdits(relation="prerequisite", confidence=0.9),
    )
    edited.refresh_from_db()
    assert (edited.relation_key, edited.confidence, edited.status) == (
        "prerequisite",
        0.9,
        "accepted",
    )
    # Not decisions on the proposal as such: superseded, or still open.
    plant(confidence=0.9, rel="prerequisite", status="superseded", run=construct)
    plant(confidence=0.88, rel="prerequisite", run=construct)
    plant(confidence=0.1, rel="prerequisite", run=construct)
    return construct, heal


def rates(group) -> dict[str, tuple[int, int, int]]:
    return {r.label: (r.accepted, r.rejected, r.edited) for r in group}


def test_acceptance_rates_by_relation_type_agent_and_model(decided):
    """Accepted (edited included) against rejected; superseded and open left out."""
    out = outcomes()
    assert (out.overall.accepted, out.overall.rejected, out.overall.edited) == (10, 6, 1)
    assert out.overall.rate == pytest.approx(10 / 16)
    assert list(rates(out.by_relation).items()) == [
        ("prerequisite", (5, 5, 0)),
        ("contrasts_with", (2, 1, 0)),
        ("builds_on", (2, 0, 1)),
    ]
    assert list(rates(out.by_agent).items()) == [
        ("Construction", (5, 5, 0)),
        ("By hand (no agent run)", (3, 0, 1)),
        ("Self-healing", (2, 1, 0)),
    ]
    assert list(rates(out.by_model).items()) == [
        ("openai · gpt-4o-mini", (5, 5, 0)),
        ("By hand (no agent run)", (3, 0, 1)),
        ("offline", (2, 1, 0)),
    ]
    assert out.relations == ("builds_on", "contrasts_with", "prerequisite")


def test_a_rate_carries_its_count_and_a_wilson_interval(decided):
    """A rate from three decisions has a wide interval; from ten, a narrower one."""
    by = {r.label: r for r in outcomes().by_relation}
    few, more = by["contrasts_with"], by["prerequisite"]
    assert (few.n, more.n) == (3, 10)
    assert few.interval == pytest.approx((0.2077, 0.9385), abs=1e-4)
    assert more.interval == pytest.approx((0.2366, 0.7634), abs=1e-4)


@pytest.mark.parametrize(
    "successes,n,expected",
    [(0, 0, (0.0, 1.0)), (0, 5, (0.0, 0.4345)), (5, 5, (0.5655, 1.0)), (8, 10, (0.4902, 0.9433))],
)
def test_wilson_interval_matches_published_values(successes, n, expected):
    """95% Wilson score intervals as tabulated; no data means anything from 0 to 1."""
    assert wilson(successes, n) == pytest.approx(expected, abs=1e-4)


def bins(calibration) -> list[tuple[int, int]]:
    return [(b.n, b.accepted) for b in calibration.bins]


def test_calibration_bins_count_decided_proposals_and_their_accepted_share(decided):
    """Ten bins of 0.1 per relation type and overall, with n and accepted per bin."""
    cal = outcomes().calibration
    assert bins(cal["prerequisite"]) == [
        (1, 0), (0, 0), (0, 0), (0, 0), (1, 0), (1, 0), (1, 1), (1, 0), (2, 2), (3, 2)
    ]  # fmt: skip
    assert bins(cal["contrasts_with"]) == [
        (0, 0), (0, 0), (0, 0), (1, 1), (0, 0), (0, 0), (1, 1), (0, 0), (0, 0), (1, 0)
    ]  # fmt: skip
    assert bins(cal["builds_on"]) == [
        (0, 0), (0, 0), (1, 1), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0), (1, 1)
    ]  # fmt: skip
    assert bins(cal[ALL]) == [
        (1, 0), (0, 0), (1, 1), (1, 1), (1, 0), (2, 1), (2, 2), (1, 0), (2, 2), (5, 3)
    ]  # fmt: skip
    top = cal["prerequisite"].bins[9]
    assert top.share == pytest.approx(2 / 3)
    assert top.mean_confidence == pytest.approx((0.95 + 0.92 + 0.91) / 3)
    assert top.gap == pytest.approx(2 / 3 - (0.95 + 0.92 + 0.91) / 3)
    assert cal["prerequisite"].bins[1].share is None


def test_bin_edges_belong_to_the_upper_bin_and_one_to_the_last():
    """0.1 is in 0.1-0.2, 0.6 in 0.6-0.7, 0.0 in the first bin and 1.0 in the last."""
    for confidence in (0.0, 0.1, 0.6, 0.7, 0.3, 1.0):
        plant(confidence=confidence, status="accepted")
    cal = outcomes().calibration["prerequisite"]
    assert [b.n for b in cal.bins] == [1, 1, 0, 1, 0, 0, 1, 1, 0, 1]


def test_expected_calibration_error_per_relation_type(decided):
    """ECE = sum over bins of n/N * |share accepted - mean confidence|."""
    cal = outcomes().calibration
    assert cal["prerequisite"].ece == pytest.approx(0.324)
    assert cal["contrasts_with"].ece == pytest.approx((0.99 + 0.4 + 0.7) / 3)
    assert cal["builds_on"].ece == pytest.approx(0.4)
    overall = (
        0.05 + 0.8 + 0.7 + 0.45 + abs(0.5 - 0.525) * 2 + abs(1 - 0.625) * 2 + 0.72
        + abs(1 - 0.83) * 2 + abs(0.6 - (0.95 + 0.92 + 0.91 + 0.99 + 1.0) / 5) * 5
    ) / 16  # fmt: skip
    assert cal[ALL].ece == pytest.approx(overall)


def test_a_perfectly_calibrated_type_has_no_calibration_error():
    """Accepted shares equal to the confidence claimed give an ECE of zero."""
    for status in ("accepted", "accepted", "accepted", "rejected"):
        plant(confidence=0.75, rel="part_of", status=status)
    assert outcomes().calibration["part_of"].ece == pytest.approx(0.0)


def gates(target: float) -> dict[str, GateNeed]:
    return {g.label: g for g in outcomes(target=target).gates}


def test_gate_needed_is_the_lowest_observed_confidence_that_meets_the_target(decided):
    """prerequisite: from 0.81 up, 4 of 5 were accepted, exactly 80%."""
    need = gates(0.8)["prerequisite"]
    assert need.threshold == pytest.approx(0.81)
    assert (need.decided, need.passing, need.passing_accepted) == (10, 5, 4)
    assert need.share_passing == pytest.approx(0.5)
    assert need.accepted_share == pytest.approx(0.8)


def test_gate_needed_searches_below_a_dip_in_the_accepted_share(decided):
    """Over all proposals the share dips and recovers; the lowest passing gate wins."""
    assert gates(0.8)["All proposals"].threshold == pytest.approx(1.0)
    assert gates(0.8)["All proposals"].passing == 1
    seventy = gates(0.7)["All proposals"]
    assert seventy.threshold == pytest.approx(0.6)
    assert (seventy.passing, seventy.passing_accepted) == (10, 7)
    sixty = gates(0.6)["All proposals"]
    assert sixty.threshold == pytest.approx(0.05)
    assert sixty.share_passing == pytest.approx(1.0)


def test_gate_needed_keeps_confidences_that_floating_point_puts_just_below_a_step():
    """0.57 times 100 is 56.99999999999999, yet 0.57 is a gate of its own above 0.56."""
    plant(confidence=0.57, rel="part_of", status="accepted")
    plant(confidence=0.56, rel="part_of", status="rejected")
    need = gates(0.8)["part_of"]
    assert need.threshold == 0.57
    assert (need.passing, need.passing_accepted) == (1, 1)


def test_gate_is_not_reachable_when_no_threshold_meets_the_target(decided):
    """contrasts_with never gets 80% accepted at any gate."""
    need = gates(0.8)["contrasts_with"]
    assert not need.reachable
    assert need.threshold is None and need.share_passing is None
    assert need.decided == 3


def test_gate_rows_compare_with_the_configured_gate(decided, settings):
    """At the configured gate: how many decided proposals pass, and how many of them
    were accepted; changing the setting changes the comparison."""
    need = gates(0.8)
    assert [g.label for g in need.values()] == [
        "All proposals",
        "builds_on",
        "contrasts_with",
        "prerequisite",
    ]
    assert (need["prerequisite"].at_gate, need["prerequisite"].at_gate_accepted) == (7, 5)
    assert (need["contrasts_with"].at_gate, need["contrasts_with"].at_gate_accepted) == (2, 1)
    assert (need["builds_on"].at_gate, need["builds_on"].at_gate_accepted) == (1, 1)
    assert need["prerequisite"].gate == 0.6
    settings.KG_CONFIDENCE_GATE = 0.9
    strict = gates(0.8)["prerequisite"]
    assert (strict.gate, strict.at_gate, strict.at_gate_accepted) == (0.9, 3, 2)


def test_an_edited_proposal_counts_with_the_confidence_and_relation_first_proposed(decided):
    """The edit to prerequisite at 0.9 does not reach prerequisite's 0.9-1.0 bin."""
    out = outcomes()
    assert out.calibration["prerequisite"].bins[9].n == 3
    assert out.calibration["builds_on"].bins[2].n == 1
    assert rates(out.by_relation)["builds_on"] == (2, 0, 1)


def test_no_decisions_means_empty_outcomes():
    """Open proposals alone: nothing to measure, every gate unreachable."""
    plant(confidence=0.9)
    out = outcomes()
    assert out.is_empty
    assert out.overall.n == 0 and out.overall.rate is None
    assert out.calibration[ALL].ece is None
    assert [g.reachable for g in out.gates] == [False]


def test_query_counts_do_not_grow_with_the_number_of_proposals(f, decided):
    """Every selector is a fixed number of GROUP BY queries, however many rows."""

    def counts() -> list[int]:
        out = []
        for call in (
            lambda: queue_history(days=30),
            lambda: reviewer_activity(days=30),
            lambda: outcomes(),
        ):
            with CaptureQueriesContext(connection) as ctx:
                call()
            out.append(len(ctx.captured_queries))
        return out

    before = counts()
    agent = run("discover", "openai", "gpt-4.1")
    for i in range(40):
        plant(
            confidence=i / 40,
            rel=("part_of", "related", "applies_to")[i % 3],
            status=("accepted", "rejected", None)[i % 3],
            run=agent,
        )
    assert before == counts() == [3, 1, 3]
