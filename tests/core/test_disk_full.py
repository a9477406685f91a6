"""A full disk is a 503 in words everywhere, never a 500: decisions, uploads, Run now,
logins and the API, with htmx and without.

The disk is made full by patching a write inside each path to raise what the driver
raises: SQLite's "database or disk is full", or ``OSError(ENOSPC)`` from a file write.
"""

from __future__ import annotations

import errno
import sqlite3

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import OperationalError
from django.http import Http404
from django.test import Client
from django.urls import reverse

from kgreview.agents.models import AgentRun
from kgreview.api.services import api_token_create
from kgreview.core import disk
from kgreview.graph.models import Source
from kgreview.review.decide import decisions
from kgreview.review.models import Proposal

pytestmark = pytest.mark.django_db

WORDS = "The server's disk is full: nothing was saved."
HX = {"HX-Request": "true"}


def sqlite_full(*args, **kwargs):
    exc = OperationalError("database or disk is full")
    exc.__cause__ = sqlite3.OperationalError("database or disk is full")
    raise exc


def no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.fixture(autouse=True)
def _forget_the_disk():
    disk.forget()
    yield
    disk.forget()


def signed_in(user, **headers) -> Client:
    client = Client(raise_request_exception=False, headers=headers)
    client.force_login(user)
    return client


def assert_disk_full_page(response, *, htmx: bool) -> None:
    assert response.status_code == 503
    assert response["Retry-After"] == "60"
    body = response.content.decode()
    assert "The server’s disk is full" in body or "The server&#x27;s disk is full" in body
    assert "nothing was saved" in body
    if htmx:
        assert 'class="flash bad" role="alert"' in body and "<html" not in body
    else:
        assert "<h1>Disk full</h1>" in body


@pytest.mark.parametrize("failure", [sqlite_full, no_space], ids=["sqlite", "enospc"])
@pytest.mark.parametrize("headers", [HX, {}], ids=["htmx", "plain"])
def test_a_decision_on_a_full_disk_is_503_in_words(f, monkeypatch, failure, headers):
    monkeypatch.setattr(decisions, "accept_one", failure)
    p = f.edge_proposal(f.concept("Disk A"), f.concept("Disk B"))
    client = signed_in(f.user("rd", role="reviewer"), **headers)
    response = client.post(reverse("review:accept", args=[p.pk]), {"version": p.version})
    assert_disk_full_page(response, htmx=bool(headers))
    assert Proposal.objects.get(pk=p.pk).status == "pending"
    assert disk.seconds_since_full() is not None


@pytest.mark.parametrize("headers", [HX, {}], ids=["htmx", "plain"])
def test_an_upload_on_a_full_disk_is_503_in_words(f, monkeypatch, headers):
    monkeypatch.setattr("kgreview.graph.upload.store_in_batch", sqlite_full)
    client = signed_in(f.user("cu", role="curator"), **headers)
    lesson = SimpleUploadedFile("lesson.md", b"# Tokens\n\nText is split into tokens.\n")
    response = client.post("/sources/", {"files": lesson})
    assert_disk_full_page(response, htmx=bool(headers))
    assert not Source.objects.exists()


def test_a_script_s_upload_on_a_full_disk_gets_json(f, monkeypatch):
    monkeypatch.setattr("kgreview.graph.upload.store_in_batch", no_space)
    client = signed_in(f.user("cu", role="curator"), Accept="application/json")
    lesson = SimpleUploadedFile("lesson.md", b"# Tokens\n\nText is split into tokens.\n")
    response = client.post("/sources/", {"files": lesson})
    assert response.status_code == 503
    assert response.json() == {"detail": WORDS, "code": "disk_full"}


@pytest.mark.parametrize("headers", [HX, {}], ids=["htmx", "plain"])
def test_run_now_on_a_full_disk_is_503_in_words(f, monkeypatch, headers):
    monkeypatch.setattr("kgreview.agents.run_now.agent_run_create", sqlite_full)
    client = signed_in(f.user("cu", role="curator"), **headers)
    response = client.post(reverse("agents:run-now", args=["heal"]), {"scope": "new"})
    assert_disk_full_page(response, htmx=bool(headers))
    assert not AgentRun.objects.exists()


def test_a_login_on_a_full_disk_is_503_in_words(f, monkeypatch):
    """The new session cannot be written while the login view runs."""
    f.user("ada", password="right-password-1", role="viewer")
    monkeypatch.setattr(SessionStore, "create", sqlite_full)
    client = Client(raise_request_exception=False)
    response = client.post(reverse("login"), {"username": "ada", "password": "right-password-1"})
    assert_disk_full_page(response, htmx=False)


def test_a_session_that_cannot_be_saved_after_the_view_is_503_in_words(f, monkeypatch):
    """The session is written again as the response leaves (after every view ran):
    that failure too is said in words, not the 500 page."""
    f.user("ada", password="right-password-1", role="viewer")
    save = SessionStore.save

    def save_unless_after_the_view(self, must_create=False):
        if not must_create:
            sqlite_full()
        return save(self, must_create=must_create)

    monkeypatch.setattr(SessionStore, "save", save_unless_after_the_view)
    client = Client(raise_request_exception=False)
    response = client.post(reverse("login"), {"username": "ada", "password": "right-password-1"})
    assert_disk_full_page(response, htmx=False)


def test_the_api_on_a_full_disk_is_503_json_in_words(f, monkeypatch):
    secret = api_token_create(owner=f.user(role="viewer"), name="bot", acting_user=None).secret
    monkeypatch.setattr("kgreview.api.app.api_token_authenticate", no_space)
    client = Client(raise_request_exception=False, headers={"Authorization": f"Bearer {secret}"})
    response = client.get("/api/v1/relations")
    assert response.status_code == 503
    assert response.json() == {"detail": WORDS, "code": "disk_full"}


def test_other_failures_are_left_to_the_500_page(f, monkeypatch):
    """Only a full disk is answered so; another database error is not dressed up."""

    def broken(*args, **kwargs):
        raise OperationalError("no such table: review_decision")

    monkeypatch.setattr(decisions, "accept_one", broken)
    p = f.edge_proposal(f.concept("Disk A"), f.concept("Disk B"))
    client = signed_in(f.user("rd", role="reviewer"))
    response = client.post(reverse("review:accept", args=[p.pk]), {"version": p.version})
    assert response.status_code == 500
    assert disk.seconds_since_full() is None


@pytest.mark.parametrize(
    "exc",
    [
        OSError(errno.ENOSPC, "No space left on device"),
        sqlite3.OperationalError("database or disk is full"),
        OperationalError('could not extend file "base/1/2": No space left on device'),
    ],
)
def test_a_full_disk_is_recognised_in_each_driver_s_words(exc):
    wrapped = RuntimeError("while saving")
    wrapped.__cause__ = exc
    assert disk.is_disk_full(exc) and disk.is_disk_full(wrapped)
    assert not disk.is_disk_full(OSError(errno.EACCES, "Permission denied"))


def test_words_a_user_typed_are_not_taken_for_a_full_disk(client, f):
    """A 404 repeating "no space left on device" from the URL stays a 404."""
    client.force_login(f.user(role="viewer"))
    response = client.get("/sources/no space left on device/")
    assert response.status_code == 404
    assert not disk.is_disk_full(Http404("database or disk is full"))
    assert disk.seconds_since_full() is None
