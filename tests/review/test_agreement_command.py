"""manage.py agreement: its JSON's shape, its tables, and a bad --since said in words."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from .agreement_world import session

pytestmark = pytest.mark.django_db

GROUP_KEYS = {"items", "kappa", "alpha", "observed", "interval", "note"}
INTERVAL_KEYS = {"low", "high", "level", "resamples", "used", "seed", "method", "note"}
REVIEWER_KEYS = {
    "username",
    "items",
    "observed",
    "kappa",
    "with_adjudication",
    "per_hour",
    "median_seconds",
    "reversed_share",
}


def run(*args: str) -> str:
    out = StringIO()
    call_command("agreement", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def voted(f, monkeypatch):
    ana, ben = f.user("ana", role="reviewer"), f.user("ben", role="reviewer")
    session(monkeypatch, ana, ben, f.user("cora", role="curator"))


def test_json_has_the_documented_shape(voted):
    report = json.loads(run("--json"))
    assert set(report) == {"overall", "relations", "kinds", "reviewers", "pairs"}
    assert set(report["overall"]) >= GROUP_KEYS
    assert set(report["overall"]["interval"]) == INTERVAL_KEYS
    assert report["overall"]["items"] == 20
    prerequisite = report["relations"]["prerequisite"]
    assert GROUP_KEYS | {"below_threshold"} <= set(prerequisite)
    assert round(prerequisite["alpha"], 3) == 0.418
    assert report["kinds"] == {}
    assert [r["username"] for r in report["reviewers"]] == ["ana", "ben", "cora"]
    for row in report["reviewers"]:
        assert set(row) >= REVIEWER_KEYS
    assert report["pairs"][0]["reviewers"] == ["ana", "ben"]


def test_json_is_reproducible(voted):
    assert run("--json") == run("--json")


def test_since_narrows_the_votes(voted):
    assert json.loads(run("--json", "--since", "2030-01-01"))["overall"]["items"] == 0
    assert json.loads(run("--json", "--since", "2026-03-02"))["overall"]["items"] == 20


def test_without_json_it_prints_readable_tables(voted):
    text = run()
    assert text.startswith("Agreement over 20 proposals decided twice (40 votes).")
    assert "prerequisite (people cannot agree)" in text
    assert "ana & ben" in text
    assert "Reviewers:" in text and "cora" in text


def test_an_empty_database_says_so(db):
    text = run()
    assert "Agreement over 0 proposals" in text
    assert "No unit was rated by two people" in text
    assert json.loads(run("--json"))["reviewers"] == []


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-40", ""])
def test_a_bad_since_is_refused_in_words(db, bad):
    with pytest.raises(CommandError, match="^--since: .*ISO 8601|^--since: Give the instant"):
        run("--since", bad)
