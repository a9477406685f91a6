"""``bench keys``: the review loop timed in Chromium, keydown to the next card painted."""

from __future__ import annotations

import pytest

from benchmarks import keys

PERCENTILES = {"mean_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms", "samples"}


@pytest.mark.browser
def test_five_keypresses_on_a_small_queue_are_each_timed_to_the_next_card_painted(
    reference_data, chromium_path
):
    """Five keypresses (accepts, a reject by its reason digit) against the app served by
    gunicorn: each one painted a new card, timed with the server's share from its
    Server-Timing header, and the decisions reached the database."""
    result = keys.bench_keys(concepts=200, edges=400, proposals=40, decisions=5, pause_ms=0, warm=1)

    assert result["benchmark"] == "keys" and result["corpus"] == "bench"
    assert result["decisions"] == 5
    assert result["painted_every_one"] is True and result["unpainted"] == []
    # a a a r1 a: four accepts and a reject, minus any refused (none on this queue)
    assert result["decided"] == 5 - result["refused"]
    assert set(result["by_action"]) == {"accept", "reject"}
    for measure in ("keydown_to_painted", "server", "server_sql", "client"):
        assert set(result[measure]) == PERCENTILES
        assert result[measure]["samples"] == 5
    for phase in ("key_to_request", "request", "response_to_swap", "swap_to_paint"):
        assert result["breakdown"][phase]["samples"] == 5
    painted, server = result["keydown_to_painted"], result["server"]
    assert painted["p50_ms"] > server["p50_ms"] > 0  # the server's share is part of the whole
    assert result["max_queries"] > 0
    assert result["console_errors"] == []
    assert isinstance(result["within_budget"], bool)
    assert len(result["load_average"]["before"]) == len(result["load_average"]["after"]) == 3


@pytest.mark.django_db
def test_bench_keys_refuses_an_option_it_does_not_take_in_words():
    """``--decisions`` and ``--pause-ms`` are the keys benches'; another bench refuses
    them in words rather than ignoring them."""
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="takes no --pause-ms"):
        call_command("bench", "render", "--pause-ms", "0")


def test_the_report_splits_each_keypress_into_server_and_client_and_names_refusals():
    """From what the page's stopwatch recorded: the painted time less the server's is
    the client's; a refusal's words are counted; the budget is judged on p95."""
    seen = [
        {
            "key": key,
            "from": str(i),
            "to": str(i + 1),
            "refused": "This would close a cycle." if i == 2 else None,
            "painted_ms": 100.0 + i,
            "swapped_ms": 90.0 + i,
            "request_sent_ms": 1.0,
            "request_start_ms": 1.5,
            "response_end_ms": 80.0 + i,
            "server_ms": 60.0,
            "sql_ms": 20.0,
            "sql_queries": 9,
            "url": "/review/p/1/accept/",
        }
        for i, key in enumerate(["a", "s", "a", "3"])
    ]
    result = keys._report(seen, decided=2, info={}, console=[], profile_dir=None)
    assert result["decisions"] == 4 and result["refused"] == 1
    assert result["refused_because"] == {"This would close a cycle.": 1}
    assert set(result["by_action"]) == {"accept", "skip", "reject"}
    assert result["client"]["p50_ms"] == 42.0  # 102 painted - 60 server
    assert result["breakdown"]["swap_to_paint"]["max_ms"] == 10.0
    assert result["within_budget"] is True and result["max_queries"] == 9
