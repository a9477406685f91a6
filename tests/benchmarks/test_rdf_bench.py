"""The rdf benchmark on a small graph: what it plants is what validate finds."""

from __future__ import annotations

import pytest

from benchmarks.rdf import PLANTED, bench_rdf


@pytest.mark.django_db
def test_the_rdf_bench_finds_every_planted_breaker_and_exports_the_whole_graph():
    """Ten untyped concepts and ten bad years are found one by one; the people's edges of
    applies_to and builds_on break the patterns; the export holds every concept."""
    result = bench_rdf(concepts=600, edges=2_400)
    found = result["validate"]["violations"]
    assert found["typed"] == PLANTED and found["datatype"] == PLANTED
    assert found.get("pattern", 0) > 0 and "acyclic" not in found
    assert result["export"]["turtle"]["concepts"] == 600
    assert result["export"]["turtle"]["megabytes"] > 0
