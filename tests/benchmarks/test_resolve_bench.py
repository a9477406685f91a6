"""The resolve benchmark's probes: each class built so its right answer is known."""

from __future__ import annotations

import pytest

from benchmarks.agents import _memory_index, _resolve_probes, bench_resolve
from benchmarks.probes import KNOWN, MIX, UNKNOWN, resolution_probes
from benchmarks.synthetic import concept_names
from construction.resolve import spelling_form
from construction.text import name_key

NAMES = concept_names(3_000)


def test_probes_come_in_every_class_in_the_mix_shares():
    probes = resolution_probes(NAMES, 1_000)
    assert len(probes) == 1_000
    for kind, share in MIX:
        assert sum(p.kind == kind for p in probes) == round(1_000 * share)


def test_unknown_probes_never_have_the_words_of_a_known_name():
    forms = {spelling_form(name_key(n)) for n in NAMES}
    for probe in resolution_probes(NAMES, 1_000):
        if probe.kind in UNKNOWN:
            assert probe.answer is None
            assert spelling_form(name_key(probe.name)) not in forms, probe


def test_known_probes_point_at_the_name_they_were_made_from_and_no_other_key():
    keys = {name_key(n): i for i, n in enumerate(NAMES)}
    for probe in resolution_probes(NAMES, 1_000):
        if probe.kind in KNOWN:
            assert probe.answer is not None
            assert keys.get(name_key(probe.name), probe.answer) == probe.answer
            if probe.kind != "exact":
                assert probe.name != NAMES[probe.answer]


def test_accuracy_is_counted_per_class_and_for_known_and_unknown_names():
    probes = resolution_probes(NAMES, 400)
    measured = _resolve_probes(probes, _memory_index(NAMES), list(range(len(NAMES))))
    assert set(measured["accuracy"]) == {kind for kind, _ in MIX} | {"known", "unknown"}
    assert measured["accuracy"]["exact"] == 1.0
    assert measured["accuracy"]["unknown"] >= 0.95
    assert measured["all"]["samples"] == 400


@pytest.mark.django_db
def test_the_resolve_bench_reports_build_memory_accuracy_and_its_budgets(monkeypatch):
    monkeypatch.setattr("benchmarks.agents.BASE_CONCEPTS", 600)
    result = bench_resolve(scale=5, lookups=200)
    assert result["concepts"] == 3_000 and result["lookups"] == 200
    assert result["index_build_s"] > 0 and "index_memory_mb" in result
    assert set(result["budget"]) == {"mean_ms", "p95_ms", "unknown_accuracy_min"}
    assert result["budget"]["unknown_accuracy_min"] == result["unknown_accuracy_at_1x"]
    assert result["accuracy"]["known"] >= 0.95
