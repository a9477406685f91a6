"""What a curator (or a script) may send as a release's name or instant, refused in
words on the page, on the command line and in the API; never a 500, nothing kept."""

from __future__ import annotations

import html as htmllib
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from kgreview.api.services import api_token_create
from kgreview.exports.models import Release, ReleaseBuild
from kgreview.exports.releases.services import release_create
from kgreview.graph.models import Edge

pytestmark = pytest.mark.django_db

BAD_NAMES = [
    pytest.param("a\x00b", "control character", id="nul"),
    pytest.param("x" * 10_000, "at most 64 characters; this one has 10,000", id="10000-chars"),
    pytest.param("    ", "Give the release a name", id="only-spaces"),
    pytest.param("2026/12", "path separator", id="slash"),
    pytest.param("/", "path separator", id="only-slash"),
    pytest.param("..", "cannot name a release", id="dot-dot"),
    pytest.param("../etc", "path separator", id="dot-dot-slash"),
]


@pytest.fixture(autouse=True)
def release_dir(settings, tmp_path):
    settings.KG_RELEASE_DIR = tmp_path / "releases"
    return settings.KG_RELEASE_DIR


@pytest.fixture
def curator(f) -> Client:
    client = Client()
    client.force_login(f.user(role="curator"))
    return client


def _kept_nothing(release_dir) -> None:
    assert not Release.objects.exists() and not ReleaseBuild.objects.exists()
    assert not release_dir.exists() or {p.name for p in release_dir.iterdir()} <= {".staging"}


def _said(response) -> str:
    return htmllib.unescape(response.content.decode())


@pytest.mark.parametrize(("name", "words"), BAD_NAMES)
def test_a_bad_name_is_refused_in_words_on_the_page(curator, graph, release_dir, name, words):
    """The form (with htmx and without) answers 4xx with the reason; no build is made."""
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
        response = curator.post(reverse("releases:cut"), {"name": name, "notes": ""}, **headers)
        assert 400 <= response.status_code < 500, response.status_code
        said = _said(response)
        if "\x00" in name:  # refused at the edge, before the form, in the middleware's words
            assert "holds a NUL byte, which kgreview does not accept" in said
        else:
            assert words in said
    _kept_nothing(release_dir)


@pytest.mark.parametrize(("name", "words"), BAD_NAMES)
def test_a_bad_name_is_refused_in_words_by_the_command(graph, release_dir, name, words):
    with pytest.raises(CommandError, match=words):
        call_command("release", "create", name)
    _kept_nothing(release_dir)


@pytest.mark.parametrize(
    "name", ["a\x00b", "x" * 10_000, "    ", "..", "%2e%2e", "a%2Fb", "cut", "Spring"]
)
def test_the_api_answers_a_bad_release_name_in_words(f, graph, name):
    """Reading a release by a name none can have: a 4xx JSON refusal in words."""
    token = api_token_create(owner=f.user(role="viewer"), name="t", acting_user=None)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token.secret}")
    for path in (f"/api/v1/releases/{name}", f"/api/v1/releases/{name}/files/graph.jsonld"):
        response = client.get(path)
        assert 400 <= response.status_code < 500, (path[:60], response.status_code)
        assert response.json()["detail"], path[:60]


def _first_edge_at():
    return Edge.objects.order_by("recorded_at").values_list("recorded_at", flat=True).first()


def _instants():
    """(as_of text, words) for each instant a release refuses."""
    future = (timezone.now() + timedelta(days=3)).isoformat()
    early = (_first_edge_at() - timedelta(days=1)).isoformat()
    return [
        (future, "is in the future"),
        (early, "is before the graph's first edge"),
        ("yesterday", "is not a date or time"),
        ("2026-13-45T99:00", "is not a date or time"),
        ("9" * 5_000, "is not a date or time"),
    ]


def test_a_bad_instant_is_refused_in_words_on_the_page_and_by_the_command(
    curator, graph, release_dir
):
    """In the future, before the graph's first edge, or no instant at all: refused with
    the reason, on the form (4xx) and by the command (CommandError); nothing kept."""
    for text, words in _instants():
        response = curator.post(reverse("releases:cut"), {"name": "r1", "as_of": text})
        assert 400 <= response.status_code < 500, (text[:40], response.status_code)
        if len(text) < 100:  # the form's field holds at most 100 characters
            assert words in _said(response), text[:40]
        else:
            assert "at most 100 characters" in _said(response)
        with pytest.raises(CommandError, match=words):
            call_command("release", "create", "r1", "--as-of", text)
    _kept_nothing(release_dir)


def test_an_instant_before_the_first_edge_is_refused_but_the_first_edge_itself_is_not(graph):
    """The rule's boundary: the instant the first edge counts from is allowed."""
    first = _first_edge_at()
    with pytest.raises(Exception, match="is before the graph's first edge"):
        release_create(name="early", as_of=first - timedelta(microseconds=1), acting_user=None)
    release = release_create(name="first", as_of=first, acting_user=None)
    assert release.changes["edges"]["counts"]["after"] >= 1


def test_a_graph_without_edges_can_be_released_at_any_past_instant(f):
    """No edge yet: there is no first edge to be before (a vocabulary-only release)."""
    f.concept("Embeddings")
    release = release_create(
        name="concepts-only", as_of=timezone.now() - timedelta(days=30), acting_user=None
    )
    assert release.changes["edges"]["counts"]["after"] == 0
