"""The API's bounds: per-token rate limits (429 with Retry-After), learning paths in
pages, a backwards diff refused, and every refusal JSON in words."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.core.cache import caches
from django.test import Client

from kgreview.api.services import api_token_create

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_counts():
    caches["shared"].clear()
    yield
    caches["shared"].clear()


def client_for(f, name: str) -> Client:
    secret = api_token_create(user=f.user(role="viewer"), name=name, acting_user=None).secret
    return Client(headers={"Authorization": f"Bearer {secret}"})


@pytest.fixture
def chain(f):
    """c0 → c1 → … → c7 by prerequisite: c7's learning path has eight steps."""
    concepts = [f.concept(f"Step {i}") for i in range(8)]
    for a, b in zip(concepts, concepts[1:], strict=False):
        f.edge(a, b)
    return concepts


# --- Rate limits ---------------------------------------------------------------------------


def test_a_token_over_its_rate_gets_429_with_retry_after_and_words(f, settings):
    settings.KG_API_RATE = "3/min"
    agent = client_for(f, "bot")
    codes = [agent.get("/api/v1/relations").status_code for _ in range(3)]
    refused = agent.get("/api/v1/relations")
    assert codes == [200, 200, 200]
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert refused["Content-Type"].startswith("application/json")
    assert "Too many requests from this token" in refused.json()["detail"]
    assert f"Try again in {refused['Retry-After']} seconds" in refused.json()["detail"]


def test_one_token_spending_its_rate_does_not_limit_another(f, settings):
    settings.KG_API_RATE = "2/min"
    greedy, other = client_for(f, "greedy"), client_for(f, "other")
    for _ in range(3):
        greedy.get("/api/v1/relations")
    assert greedy.get("/api/v1/relations").status_code == 429
    assert other.get("/api/v1/relations").status_code == 200


def test_walks_have_their_own_lower_rate_and_cheap_reads_go_on(f, settings, chain):
    """Learning paths spend the heavy rate; listing relations still answers."""
    settings.KG_API_RATE = "100/min"
    settings.KG_API_HEAVY_RATE = "2/min"
    agent = client_for(f, "walker")
    url = f"/api/v1/concepts/{chain[-1].pk}/learning-path"
    assert [agent.get(url).status_code for _ in range(2)] == [200, 200]
    assert agent.get(url).status_code == 429
    assert agent.get(f"/api/v1/path?from_id={chain[0].pk}&to_id={chain[1].pk}").status_code == 429
    assert agent.get("/api/v1/relations").status_code == 200


def test_a_browser_session_is_limited_per_user(f, settings):
    settings.KG_API_RATE = "1/min"
    browser = Client()
    browser.force_login(f.user(role="viewer"))
    assert browser.get("/api/v1/relations").status_code == 200
    assert browser.get("/api/v1/relations").status_code == 429


def test_no_credentials_is_401_not_a_spent_rate(f, settings):
    settings.KG_API_RATE = "1/min"
    anonymous = Client()
    assert [anonymous.get("/api/v1/relations").status_code for _ in range(3)] == [401] * 3


def test_off_lifts_the_limit(f, settings):
    settings.KG_API_RATE = "off"
    agent = client_for(f, "free")
    assert {agent.get("/api/v1/relations").status_code for _ in range(20)} == {200}


@pytest.mark.parametrize("rate", ["0/min", "ten/min", "5/fortnight", "5"])
def test_a_bad_rate_setting_refuses_to_start(rate):
    code = (
        "import os, django; os.environ['DJANGO_SETTINGS_MODULE']='kgreview.settings'; "
        "django.setup()"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "KG_API_RATE": rate},
        capture_output=True,
        text=True,
    )
    assert run.returncode != 0
    assert "is not a rate" in run.stderr


# --- Learning paths in pages ------------------------------------------------------------------


def test_a_learning_path_comes_in_pages_that_join_into_the_whole_order(f, chain):
    agent = client_for(f, "pager")
    url = f"/api/v1/concepts/{chain[-1].pk}/learning-path"
    whole = agent.get(url).json()
    assert whole["total_steps"] == 8 and whole["next_offset"] is None
    first = agent.get(url, {"limit": 3}).json()
    assert [s["position"] for s in first["steps"]] == [1, 2, 3]
    assert first["next_offset"] == 3 and first["total_steps"] == 8
    seen, offset = [], 0
    while offset is not None:
        page = agent.get(url, {"limit": 3, "offset": offset}).json()
        seen += page["steps"]
        offset = page["next_offset"]
    assert seen == whole["steps"]
    assert [s["concept"]["id"] for s in seen] == [c.pk for c in chain]


def test_an_offset_past_the_last_step_is_refused_in_words(f, chain):
    agent = client_for(f, "pager")
    r = agent.get(f"/api/v1/concepts/{chain[-1].pk}/learning-path", {"offset": 8})
    assert r.status_code == 400
    assert r.json()["detail"] == "offset 8 is past the last step: this learning path has 8 steps."


@pytest.mark.parametrize("params", [{"limit": 0}, {"limit": 2001}, {"offset": -1}])
def test_a_page_size_out_of_bounds_is_a_422(f, chain, params):
    agent = client_for(f, "pager")
    r = agent.get(f"/api/v1/concepts/{chain[-1].pk}/learning-path", params)
    assert r.status_code == 422 and r["Content-Type"].startswith("application/json")


# --- The diff window -------------------------------------------------------------------------


def test_a_backwards_diff_window_is_refused_like_the_changes_page(f):
    agent = client_for(f, "differ")
    r = agent.get(
        "/api/v1/diff", {"since": "2024-05-02T00:00:00Z", "until": "2024-05-01T00:00:00Z"}
    )
    assert r.status_code == 400
    assert "the window runs backwards. Swap the two instants." in r.json()["detail"]
    fine = agent.get(
        "/api/v1/diff", {"since": "2024-05-01T00:00:00Z", "until": "2024-05-02T00:00:00Z"}
    )
    assert fine.status_code == 200


# --- Every refusal is JSON ------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/v1/nothing-here", "/api/v2/relations", "/api/nope"])
def test_a_path_with_no_operation_is_a_json_404_in_words(f, path):
    r = client_for(f, "lost").get(path)
    assert r.status_code == 404 and r["Content-Type"] == "application/json"
    assert r.json()["detail"].startswith(f"There is no API operation at {path}.")


def test_a_wrong_method_is_a_json_405_naming_the_allowed_one(f):
    r = client_for(f, "poster").post("/api/v1/relations")
    assert r.status_code == 405 and r["Content-Type"] == "application/json"
    assert r["Allow"] == "GET"
    assert r.json()["detail"] == "POST is not allowed on /api/v1/relations; use GET."


def test_an_unknown_concept_stays_the_operations_own_json_404(f):
    r = client_for(f, "reader").get("/api/v1/concepts/999999999")
    assert r.status_code == 404
    assert r.json()["detail"] == "There is no concept with id 999999999."


def test_the_token_pages_under_api_stay_html(f):
    curator = Client()
    curator.force_login(f.user(role="viewer"))
    r = curator.get("/api/tokens/999999/revoke/")
    assert r.status_code in {404, 405}
    assert r["Content-Type"].startswith("text/html")


# --- Learning paths bounded by concepts -----------------------------------------------------


def test_a_learning_path_over_the_limit_is_refused_in_words_with_the_way_out(f, settings, chain):
    """More concepts than KG_LEARNING_PATH_LIMIT: a 400 naming the limit and depth."""
    settings.KG_LEARNING_PATH_LIMIT = 5
    agent = client_for(f, "deep")
    r = agent.get(f"/api/v1/concepts/{chain[-1].pk}/learning-path")
    assert r.status_code == 400
    detail = r.json()["detail"]
    assert detail.startswith("“Step 7” needs more than 4 concepts")
    assert "KG_LEARNING_PATH_LIMIT is 5 concepts" in detail
    assert detail.endswith("Ask for fewer levels: depth=1 to 6.")


def test_a_learning_path_with_a_depth_fits_under_the_limit(f, settings, chain):
    """depth=3 keeps the last three levels of needs: four steps, in order."""
    settings.KG_LEARNING_PATH_LIMIT = 5
    agent = client_for(f, "shallow")
    body = agent.get(f"/api/v1/concepts/{chain[-1].pk}/learning-path", {"depth": 3}).json()
    assert [s["concept"]["name"] for s in body["steps"]] == [
        "Step 4",
        "Step 5",
        "Step 6",
        "Step 7",
    ]
    assert body["total_steps"] == 4


def test_a_learning_path_depth_outside_one_to_six_is_refused_in_words(f, chain):
    """depth=0 and depth=7 are 4xx answers in JSON, never a 500."""
    agent = client_for(f, "odd")
    for depth in ("0", "7", "x"):
        r = agent.get(f"/api/v1/concepts/{chain[-1].pk}/learning-path", {"depth": depth})
        assert 400 <= r.status_code < 500
        assert r["Content-Type"].startswith("application/json")
