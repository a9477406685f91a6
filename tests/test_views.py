"""Pages: login required, the curriculum listed, lesson text escaped, htmx partials."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from django.utils import timezone

from kgreview.agents.models import WorkerHeartbeat
from kgreview.graph import services

pytestmark = pytest.mark.django_db

HOSTILE = '# Evil\n\n<script>alert("x")</script> <img src=x onerror="alert(1)">\n'


@pytest.fixture
def viewer_client(client, f):
    client.force_login(f.user(role="viewer"))
    return client


@pytest.mark.parametrize(
    "name,args", [("home", []), ("source-detail", ["rag"]), ("worker-status", [])]
)
def test_pages_redirect_anonymous_users_to_login(client, name, args):
    """Every page but login and the health check needs a signed-in user."""
    response = client.get(reverse(name, args=args))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_home_lists_the_imported_curriculum(viewer_client, f):
    """The curriculum page lists sources with their current revision and size."""
    services.source_import(
        slug="rag", title="Retrieval-augmented generation", text="One two.\n", acting_user=None
    )
    services.source_import(
        slug="rag", title="Retrieval-augmented generation", text="Three.\n", acting_user=None
    )
    services.source_import(slug="lora", title="LoRA", text="Low rank.\n", acting_user=None)
    response = viewer_client.get(reverse("home"))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Retrieval-augmented generation" in html and "LoRA" in html
    assert 'href="/sources/rag/"' in html
    assert "of 2" in html


def test_home_explains_what_to_do_when_empty(viewer_client):
    """No sources yet: the page says how to import them."""
    html = viewer_client.get(reverse("home")).content.decode()
    assert "No sources yet" in html and "import_sources" in html


def test_source_detail_escapes_lesson_html(viewer_client):
    """Script and event handlers in a lesson are shown as text, never as markup."""
    services.source_import(slug="evil", title="<b>Evil</b>", text=HOSTILE, acting_user=None)
    html = viewer_client.get(reverse("source-detail", args=["evil"])).content.decode()
    assert "<script>alert" not in html
    # The lesson is Markdown: its heading renders, its HTML is text (the sanitiser writes
    # quotes in text as they are).
    assert "<h2>Evil</h2>" in html  # under the page's own <h1>
    assert '&lt;script&gt;alert("x")&lt;/script&gt;' in html
    assert "<img src=x" not in html and "<b>Evil</b>" not in html


def test_source_detail_shows_an_older_revision_on_request(viewer_client):
    """?rev=N shows that revision's text and says it is not the current one."""
    services.source_import(slug="rag", title="RAG", text="Old words.\n", acting_user=None)
    services.source_import(slug="rag", title="RAG", text="New words.\n", acting_user=None)
    url = reverse("source-detail", args=["rag"])
    assert "New words." in viewer_client.get(url).content.decode()
    old = viewer_client.get(url + "?rev=1").content.decode()
    assert "Old words." in old and "not the current one" in old
    assert viewer_client.get(url + "?rev=9").status_code == 404
    assert viewer_client.get(url + "?rev=abc").status_code == 404
    assert viewer_client.get(reverse("source-detail", args=["nope"])).status_code == 404


def test_worker_badge_partial_with_and_without_htmx(viewer_client):
    """The badge endpoint returns just the fragment, and reflects the heartbeat."""
    url = reverse("worker-status")
    plain = viewer_client.get(url).content.decode()
    assert "no worker yet" in plain and "<html" not in plain
    WorkerHeartbeat.objects.create(hostname="w1", last_seen=timezone.now())
    htmx = viewer_client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert 'id="worker-status"' in htmx and "worker online" in htmx


def test_full_page_loads_the_worker_badge_through_htmx(viewer_client):
    """The page header asks for the badge on load instead of blocking on it."""
    html = viewer_client.get(reverse("home")).content.decode()
    assert 'hx-get="/status/worker/"' in html and "htmx" in html
    assert 'hx-headers=\'{"X-CSRFToken": "' in html


def test_healthz_reports_database_and_worker_without_login(client):
    """Load balancers get JSON without a session; with no worker yet it says so (503),
    and a balancer that needs only the database keeps the server in rotation."""
    response = client.get(reverse("healthz"))
    assert response.status_code == 503
    body = json.loads(response.content)
    assert body["database"] == "ok" and body["worker"]["alive"] is False
    assert "worker" in body["down"]
    assert client.get(reverse("healthz") + "?need=database").status_code == 200


def test_login_page_reports_bad_credentials_in_words(client, f):
    """A wrong password gets a sentence, not a blank form."""
    f.user("ada", password="right-password-1")
    response = client.post(reverse("login"), {"username": "ada", "password": "wrong"})
    assert "do not match" in response.content.decode()
    ok = client.post(reverse("login"), {"username": "ada", "password": "right-password-1"})
    assert ok.status_code == 302 and ok["Location"] == reverse("home")


def test_logout_needs_a_post(viewer_client):
    """Logging out is a POST with CSRF, so a link cannot log people out."""
    assert viewer_client.get(reverse("logout")).status_code == 405
    assert viewer_client.post(reverse("logout")).status_code == 302
