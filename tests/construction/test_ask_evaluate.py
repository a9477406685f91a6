"""Measuring the ask loop against labelled questions (construction/ask/evaluate.py)."""

from __future__ import annotations

import json

import pytest

from construction.ask.evaluate import LabelledQuestion, Outcome, evaluate_answers, parse_questions


def answer(status="answered", concepts=(), paths=(), yes=None, iterations=0, family="parts"):
    return {
        "question": "q",
        "status": status,
        "yes": yes,
        "message": "m",
        "as_of": None,
        "answer": {
            "concepts": list(concepts),
            "concept_ids": [],
            "paths": [list(p) for p in paths],
        },
        "plan": {"family": family},
        "critique": [],
        "iterations": iterations,
    }


def hop(frm: str, to: str) -> dict:
    return {"from": frm, "to": to, "source": frm, "target": to, "relation": "related"}


def outcome(label: LabelledQuestion, got: dict, again: dict | None = None, ms=(1.0, 3.0)):
    return Outcome(label=label, answer=got, again=again or got, ms=ms)


def test_rows_parse_with_their_labels_and_bad_rows_name_their_line():
    rows = parse_questions(
        [
            json.dumps({"question": "What is part of X?", "concepts": ["A"], "family": "parts"}),
            "",
            json.dumps({"question": "How is A connected to B?", "path": ["A", "B"]}),
            json.dumps({"question": "Is A part of B?", "yes": False}),
        ]
    )
    assert [r.concepts for r in rows] == [("A",), None, None]
    assert rows[1].path == ("A", "B") and rows[2].yes is False
    for bad, words in [
        ('{"question": "x"}', "label the question"),
        ('{"question": "x", "path": ["A"]}', "two names"),
        ('{"question": "x", "yes": "no"}', "true or false"),
        ('{"question": "x", "status": "maybe"}', "status must be"),
        ("[1]", "JSON object"),
        ("{", "line 1"),
    ]:
        with pytest.raises(ValueError, match=words):
            parse_questions([bad])


def test_set_recall_and_precision_are_counted_over_every_set_question():
    report = evaluate_answers(
        [
            outcome(LabelledQuestion("a", concepts=("A", "B")), answer(concepts=["A", "C"])),
            outcome(LabelledQuestion("b", concepts=("D",)), answer(concepts=["D"])),
        ]
    )
    assert report["set_recall"] == round(2 / 3, 4) and report["set_precision"] == round(2 / 3, 4)
    assert report["passed"] == 1
    assert report["misses"][0]["misses"] == ["missing b", "not expected c"]


def test_a_path_counts_when_it_joins_the_expected_ends_either_way():
    joined = answer(paths=[[hop("B", "X"), hop("X", "A")]], family="connection")
    apart = answer(status="no_path", family="connection")
    report = evaluate_answers(
        [
            outcome(LabelledQuestion("a", path=("A", "B")), joined),
            outcome(LabelledQuestion("b", path=("A", "C")), apart),
        ]
    )
    assert report["path_recall"] == 0.5


def test_yes_no_and_status_accuracy_hops_determinism_and_latency():
    report = evaluate_answers(
        [
            outcome(LabelledQuestion("a", yes=True), answer(yes=True, iterations=2)),
            outcome(LabelledQuestion("b", yes=True), answer(yes=False), again=answer(yes=True)),
            outcome(LabelledQuestion("c", status="not_understood"), answer("not_understood")),
        ]
    )
    assert report["yes_no_accuracy"] == 0.5 and report["status_accuracy"] == 1.0
    assert report["hop_efficiency"] == {"iterations_mean": 0.667, "iterations_max": 2, "refined": 1}
    assert report["deterministic"] == round(2 / 3, 4)
    assert report["latency_ms"]["p50"] == 3.0 and report["latency_ms"]["max"] == 3.0


def test_names_are_compared_through_the_canonical_mapping():
    canonical = {"RAG": "retrieval augmented generation"}.get
    report = evaluate_answers(
        [
            outcome(
                LabelledQuestion("a", concepts=("RAG",)),
                answer(concepts=["Retrieval-augmented generation"]),
            )
        ],
        canonical=lambda n: canonical(n) or n.lower().replace("-", " "),
    )
    assert report["set_recall"] == 1.0
