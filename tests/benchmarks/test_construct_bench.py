"""``bench construct`` counts the name index's rebuilds from its own start."""

from __future__ import annotations

import pytest

# Transactional (the bench commits); an earlier transactional test's flush took the seeded
# relations with it, so they are seeded again.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("reference_data")]


def test_an_index_built_before_the_bench_is_not_counted_as_a_rebuild_of_its_run(monkeypatch):
    """In a multi-bench run an earlier bench has built the loop's index already: the
    construct bench's own first build is not a rebuild, and nothing in its run rebuilds."""
    from benchmarks import agents
    from kgreview.agents.adapters import INDEX_CACHE
    from tests import factories

    monkeypatch.setattr(agents, "PROFILED", 1)
    monkeypatch.setattr(agents, "scaled", lambda base, scale: 300)
    # A name in the journal first: an earlier test's flush emptied it while its ids went on,
    # and an index built on an empty journal takes the next row for thousands after it.
    factories.concept("Journal start")
    INDEX_CACHE.clear()
    INDEX_CACHE.get()  # what an earlier bench of the same process left
    result = agents.bench_construct(sources=12, change_every=4)
    assert result["index_builds_before_run"] >= 2
    assert result["index_rebuilds_during_run"] == 0
    assert sum(result["name_changes"].values()) == 3
    assert result["failed_sources"] == 0
    # The reader's pipeline is loaded before the run, as a worker's is, and said apart.
    assert result["pipeline_load_s"] >= 0
