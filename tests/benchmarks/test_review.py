"""The review benchmark's own measures."""

from __future__ import annotations

from benchmarks.review import card_planning


def test_card_planning_reports_the_next_cards_query_now_and_as_joined_before(on_postgres, f):
    """PostgreSQL's planning time of the next card's query, as loaded now and with the
    eight-table join it had, both in milliseconds."""
    f.edge_proposal(f.concept("Alpha"), f.concept("Beta"))
    planned = card_planning(rounds=3)
    assert set(planned) == {"now_ms", "joined_before_ms"}
    assert all(ms >= 0 for ms in planned.values())
