"""The API's bounds: per-token rate limits (429 with Retry-After), learning paths in
pages, a backwards diff refused, and every refusal JSON in words."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from io import StringIO
from types import SimpleNamespace
from unittest import mock

import pytest
from django.core.management import CommandError, call_command
from django.db import OperationalError as DjangoOperationalError
from django.test import Client
from django.urls import reverse

from kgreview.api import throttle
from kgreview.api.models import ApiToken
from kgreview.api.services import api_token_create, api_token_revoke
from kgreview.core.errors import ValidationFailed
from kgreview.core.models import AuditEntry
from tests.agents import helpers
from tests.conftest import require

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_counts():
    throttle.reset()
    yield
    throttle.reset()


def client_for(f, name: str) -> Client:
    secret = api_token_create(owner=f.user(role="viewer"), name=name, acting_user=None).secret
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
    assert "Too many requests from this account" in refused.json()["detail"]
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


# --- The counter's store failing, counting exactly, per account -----------------------------


@pytest.fixture
def fresh_warning():
    throttle._last_warning[0] = 0.0
    yield
    throttle._last_warning[0] = 0.0


def test_with_the_shared_cache_down_the_api_answers_and_the_log_says_why(
    f, settings, caplog, fresh_warning
):
    """Redis stopped (nothing listens on port 1): requests are let through, not a 500, and
    a warning names the shared cache (the documented choice: the limit fails open)."""
    settings.KG_API_RATE = "1/min"
    settings.KG_CACHE_URL = "redis://127.0.0.1:1/0"
    settings.CACHES = {
        **settings.CACHES,
        "shared": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
        },
    }
    agent = client_for(f, "bot")
    agent.raise_request_exception = False
    with caplog.at_level("WARNING", logger="kgreview.api.throttle"):
        codes = [agent.get("/api/v1/relations").status_code for _ in range(3)]
    assert codes == [200, 200, 200]
    warnings = [r.getMessage() for r in caplog.records if r.name == "kgreview.api.throttle"]
    assert len(warnings) == 1  # once a minute, not once a request
    assert "the shared cache (KG_CACHE_URL) failed" in warnings[0]
    assert "requests are let through" in warnings[0]


@pytest.mark.parametrize(
    "failure",
    [OSError(28, "No space left on device"), sqlite3.OperationalError("database or disk is full")],
)
def test_with_the_disk_full_api_reads_answer(f, settings, failure, fresh_warning):
    """The embedded counter cannot write its count: the read still answers."""
    settings.KG_API_RATE = "1/min"
    agent = client_for(f, "bot")
    agent.raise_request_exception = False
    with mock.patch.object(throttle.EMBEDDED, "incr", side_effect=failure):
        assert agent.get("/api/v1/relations").status_code == 200


def test_with_the_disk_full_a_token_still_reads_when_its_last_use_cannot_be_written(f):
    agent = client_for(f, "bot")
    agent.raise_request_exception = False
    full = DjangoOperationalError("database or disk is full")
    with mock.patch("django.db.models.QuerySet.update", side_effect=full) as update:
        assert agent.get("/api/v1/relations").status_code == 200
    assert update.called
    assert ApiToken.objects.get().last_used_at is None


REDIS_URL = os.environ.get("KG_TEST_REDIS_URL", "redis://127.0.0.1:6379/14")


def use_redis(settings) -> None:
    require(helpers.redis_reachable(REDIS_URL), f"Redis is not reachable at {REDIS_URL}")
    settings.KG_CACHE_URL = REDIS_URL
    settings.CACHES = {
        **settings.CACHES,
        "shared": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL},
    }
    throttle.reset()


@pytest.mark.parametrize("store", ["embedded", "redis"])
def test_the_rate_limit_is_exact_under_concurrency(f, settings, store):
    """150 heavy requests of one account, 16 at once, each thread with its own connection
    to the store as separate processes have: exactly 60 pass a limit of 60 (the file
    cache let 88 through), and the next count is the 151st."""
    if store == "redis":
        use_redis(settings)
    settings.KG_API_HEAVY_RATE = "60/min"
    user = f.user(role="viewer")
    request = SimpleNamespace(api_token=None, user=user)
    start = threading.Barrier(16)
    results: list[bool] = []
    lock = threading.Lock()

    def hammer(times: int) -> None:
        start.wait()
        for _ in range(times):
            allowed = throttle.HEAVY.allow_request(request)
            with lock:
                results.append(allowed)
        throttle.EMBEDDED.forget()

    shares = [10] * 6 + [9] * 10  # 150 in all
    frozen = 1_800_000_030.0  # mid-window: every request falls in the same minute
    with mock.patch("kgreview.api.throttle.clock", return_value=frozen):
        threads = [threading.Thread(target=hammer, args=(n,)) for n in shares]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        key = f"kg-api-rate:heavy:user-{user.pk}:60:{int(frozen // 60)}"
        following = throttle.count(key, 60, frozen)
    assert len(results) == 150
    assert results.count(True) == 60
    assert following == 151


def test_the_counter_counts_one_statement_per_request_across_connections(tmp_path, settings):
    """Two connections (two processes) counting the same key alternate without loss."""
    settings.VAR_DIR = tmp_path
    other = throttle.SqliteCounter()
    seen = [(throttle.EMBEDDED if i % 2 else other).incr("k", 60, 1000.0) for i in range(10)]
    other.forget()
    throttle.EMBEDDED.forget()
    assert seen == list(range(1, 11))


def test_an_account_s_tokens_share_one_rate(f, settings):
    """Five tokens of one viewer do not buy five limits: the account is counted."""
    settings.KG_API_RATE = "3/min"
    settings.KG_API_MAX_TOKENS_PER_USER = 5
    viewer = f.user(role="viewer")
    agents = [
        Client(
            headers={
                "Authorization": "Bearer "
                + api_token_create(owner=viewer, name=f"bot {i}", acting_user=None).secret
            }
        )
        for i in range(5)
    ]
    codes = [agent.get("/api/v1/relations").status_code for agent in agents]
    assert codes == [200, 200, 200, 429, 429]
    browser = Client()
    browser.force_login(viewer)
    assert browser.get("/api/v1/relations").status_code == 429


# --- A cap on tokens per account ----------------------------------------------------------------


def test_an_account_past_its_token_cap_is_refused_in_words(f, settings):
    settings.KG_API_MAX_TOKENS_PER_USER = 2
    viewer = f.user("vera", role="viewer")
    first = api_token_create(owner=viewer, name="one", acting_user=viewer)
    api_token_create(owner=viewer, name="two", acting_user=viewer)
    with pytest.raises(ValidationFailed) as refused:
        api_token_create(owner=viewer, name="three", acting_user=viewer)
    assert "vera already has 2 live API tokens" in refused.value.message
    assert "KG_API_MAX_TOKENS_PER_USER=2" in refused.value.message
    assert "nothing was made" in refused.value.message
    assert ApiToken.objects.filter(user=viewer).count() == 2
    assert not AuditEntry.objects.filter(summary__contains="three").exists()
    api_token_revoke(token=first.token, acting_user=viewer)
    assert api_token_create(owner=viewer, name="three", acting_user=viewer).token.name == "three"


@pytest.mark.parametrize("htmx", [False, True])
def test_the_tokens_page_past_the_cap_says_so(f, settings, htmx):
    settings.KG_API_MAX_TOKENS_PER_USER = 1
    viewer = f.user("vera", role="viewer")
    api_token_create(owner=viewer, name="one", acting_user=viewer)
    browser = Client(headers={"HX-Request": "true"} if htmx else {})
    browser.force_login(viewer)
    response = browser.post(reverse("api-tokens"), {"name": "two"})
    assert response.status_code == 400
    assert "vera already has 1 live API tokens" in response.content.decode()
    assert ApiToken.objects.filter(user=viewer).count() == 1


def test_the_token_command_past_the_cap_says_so(f, settings):
    settings.KG_API_MAX_TOKENS_PER_USER = 1
    viewer = f.user("vera", role="viewer")
    call_command("api_token", "create", "--user", "vera", "--name", "one", stdout=StringIO())
    with pytest.raises(CommandError, match="vera already has 1 live API tokens"):
        call_command("api_token", "create", "--user", "vera", "--name", "two", stdout=StringIO())
    assert ApiToken.objects.filter(user=viewer).count() == 1
