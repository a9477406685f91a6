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


def test_decisions_are_posted_as_the_page_posts_them_with_the_card_ahead_timed_apart(
    reference_data, db
):
    """The bench's decisions say which card the page holds (answered with the words
    only), one in ten holds none (answered with the next card), and the page's fetch of
    the card ahead is timed after each decision that held one."""
    import random

    from benchmarks.curriculum import seed_curriculum, seed_proposals
    from benchmarks.review import _decide, reviewer_client

    graph = seed_curriculum(concepts=120, edges=240, history=False)
    seed_proposals(graph, 90)
    client, _ = reviewer_client("bench-test")
    run = _decide(client, random.Random(3), 10, graph)
    held = sum(len(t) for t in run.timings.values())
    bare = sum(len(t) for t in run.bare.timings.values())
    assert (held, bare) == (27, 3)
    assert len(run.ahead) == held and min(run.ahead_queries) > 0
    # With a card held, a reject's answer is its words: no next card found on the way.
    assert not any("review_lease" in s for s in run.most["reject"])
    assert any("review_lease" in s for s in run.bare.most["reject"])
    assert max(run.queries["reject"]) < max(run.bare.queries["reject"])
