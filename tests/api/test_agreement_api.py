"""GET /api/v1/agreement: who may call it, its shape, who sees whose figures, and a bad
``since`` refused in words."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client

from kgreview.api.schemas import AgreementOut
from kgreview.api.services import api_token_create
from tests.review.agreement_world import session

pytestmark = pytest.mark.django_db

URL = "/api/v1/agreement"


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def people(f, monkeypatch):
    ana, ben = f.user("ana", role="reviewer"), f.user("ben", role="reviewer")
    cora = f.user("cora", role="curator")
    session(monkeypatch, ana, ben, cora)
    return ana, ben, cora


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_without_credentials_it_is_a_401_in_words(people):
    r = Client().get(URL)
    assert r.status_code == 401 and "Bearer" in r.json()["detail"]


def test_a_token_reads_the_group_figures_and_only_its_owners_row(people):
    ana = people[0]
    secret = api_token_create(owner=ana, name="ana-bot", acting_user=None).secret
    r = Client(headers={"Authorization": f"Bearer {secret}"}).get(URL)
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"overall", "relations", "kinds", "reviewers", "pairs"}
    assert body["overall"]["items"] == 20
    assert round(body["relations"]["prerequisite"]["alpha"], 3) == 0.418
    assert set(body["relations"]["prerequisite"]["interval"]) >= {"low", "high", "level"}
    assert [row["username"] for row in body["reviewers"]] == ["ana"]
    assert [p["reviewers"] for p in body["pairs"]] == [["ana", "ben"]]


def test_a_viewer_with_no_votes_sees_no_ones_row(people, f):
    r = signed_in(f.user("vera", role="viewer")).get(URL)
    assert r.status_code == 200
    assert r.json()["reviewers"] == [] and r.json()["pairs"] == []
    assert r.json()["overall"]["items"] == 20


def test_a_curator_reads_every_reviewers_figures(people):
    r = signed_in(people[2]).get(URL)
    assert [row["username"] for row in r.json()["reviewers"]] == ["ana", "ben", "cora"]
    ana = r.json()["reviewers"][0]
    AgreementOut.model_validate(r.json())  # the published schema holds the full answer
    assert ana["median_seconds"] == 30 and ana["with_adjudication"] == round(5 / 6, 4)


def test_since_narrows_the_votes(people):
    client = signed_in(people[2])
    assert client.get(URL, {"since": "2030-01-01T00:00:00Z"}).json()["overall"]["items"] == 0
    assert client.get(URL, {"since": "2026-03-01"}).json()["overall"]["items"] == 20


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01"])
def test_a_malformed_since_is_refused_not_a_500(people, bad):
    r = signed_in(people[0]).get(URL, {"since": bad})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"][-1] == "since"


def test_the_answer_is_kept_a_minute(people, f, monkeypatch):
    """A vote cast meanwhile counts once the cached answer expires (or the cache is
    cleared), not on every call."""
    client = signed_in(people[2])
    assert client.get(URL).json()["overall"]["votes"] == 40
    session(monkeypatch, *people, rel="part_of")
    assert client.get(URL).json()["overall"]["votes"] == 40
    cache.clear()
    assert client.get(URL).json()["overall"]["votes"] == 80
