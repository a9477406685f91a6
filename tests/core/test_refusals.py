"""A service's refusal (a ``DomainError``) is said one way wherever it comes from
(``core.refusals``): words on the page, a fragment and a toast for htmx, JSON with its
status under ``/api/``; a view that goes back where it came from says it as a message, and
a view that shows its form again says it above the form.
"""

from __future__ import annotations

import importlib
import json
import pkgutil

import pytest
from django.test import Client, RequestFactory
from django.urls import reverse

import kgreview
from kgreview.api.models import ApiToken
from kgreview.api.services import api_token_create, api_token_revoke
from kgreview.core.errors import (
    Busy,
    DomainError,
    NameTaken,
    NotFound,
    StateConflict,
    ValidationFailed,
)
from kgreview.core.refusals import RefusalMiddleware
from kgreview.graph.asking import ModelUnavailable
from kgreview.graph.models import RelationType
from tests.pages import flashes

HX = {"HX-Request": "true"}


def _every_domain_error() -> list[type[DomainError]]:
    for module in pkgutil.walk_packages(kgreview.__path__, "kgreview."):
        if ".migrations" not in module.name and ".management" not in module.name:
            importlib.import_module(module.name)
    found, todo = [], [DomainError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return found


def test_every_domain_error_says_what_it_means_and_its_status():
    """Each class has a docstring of its own and an HTTP status of its own (issue 26)."""
    classes = _every_domain_error()
    assert len(classes) > 20  # the scan found the kinds' and the apps' errors too
    unsaid = [c.__qualname__ for c in classes if not (c.__dict__.get("__doc__") or "").strip()]
    unset = [c.__qualname__ for c in classes if "status" not in c.__dict__]
    wrong = [c.__qualname__ for c in classes if not 400 <= c.status < 600]
    assert (unsaid, unset, wrong) == ([], [], [])


def _answered(path: str, exc: Exception, **headers):
    request = RequestFactory(headers=headers).get(path)
    request.htmx = headers.get("HX-Request") == "true"
    return RefusalMiddleware(lambda r: None).process_exception(request, exc)


@pytest.mark.parametrize(
    ("exc", "status"),
    [(NameTaken("“Tokens” is taken."), 400), (StateConflict("Already revoked."), 409)],
)
def test_the_api_gets_json_with_the_words_code_and_status(exc, status):
    response = _answered("/api/v1/concepts", exc)
    assert response.status_code == status
    assert json.loads(response.content) == {"detail": exc.message, "code": exc.code}


def test_htmx_gets_the_words_a_toast_and_no_swap(db):
    response = _answered("/review/", StateConflict("It changed since."), **HX)
    assert response.status_code == 409
    assert response["HX-Reswap"] == "none"
    assert json.loads(response["HX-Trigger"]) == {"kgRefused": {"message": "It changed since."}}
    assert response.content.decode() == '<p class="refusal" role="alert">It changed since.</p>'


@pytest.mark.parametrize(
    ("exc", "status", "heading"),
    [
        (NameTaken("“Tokens” is taken."), 400, "Not accepted"),
        (NotFound("There is no question #9."), 404, "Not found"),
        (Busy("Busy: try again."), 409, "Busy"),
    ],
)
def test_a_page_gets_the_words_on_the_page_of_its_status(db, exc, status, heading):
    response = _answered("/questions/9/", exc)
    assert response.status_code == status
    body = response.content.decode()
    assert f"<h1>{heading}</h1>" in body and exc.message.replace("“", "") in body.replace("“", "")
    assert ("Retry-After" in response) == isinstance(exc, Busy)


def test_other_exceptions_are_not_refusals():
    assert _answered("/review/", ValueError("a bug")) is None


def test_a_view_that_says_refusals_as_messages_passes_a_404_on_in_words(db, f):
    client = Client()
    client.force_login(f.user("cur", role="curator"))
    response = client.post(reverse("questions:retire", args=[987654]))
    assert response.status_code == 404
    assert "987654" in response.content.decode()


@pytest.fixture
def viewer(f):
    return f.user("vic", role="viewer")


@pytest.mark.parametrize("headers", [{}, HX], ids=["plain", "htmx"])
def test_revoking_twice_is_said_the_same_words_with_and_without_htmx(db, viewer, headers):
    token = api_token_create(owner=viewer, name="bot", acting_user=viewer).token
    api_token_revoke(token=token, acting_user=viewer)
    client = Client(headers=headers)
    client.force_login(viewer)
    response = client.post(reverse("api-token-revoke", args=[token.pk]))
    assert response.status_code == 302  # back to the page, with htmx too
    assert flashes(client.get(response.url)) == [("error", "The token bot was already revoked.")]
    assert ApiToken.objects.get(pk=token.pk).revoked_at is not None


@pytest.mark.parametrize("headers", [{}, HX], ids=["plain", "htmx"])
def test_a_relation_action_refused_by_its_service_is_said_with_and_without_htmx(db, f, headers):
    relation = RelationType.objects.filter(active=True).order_by("pk").first()
    client = Client(headers=headers)
    client.force_login(f.user("cur", role="curator"))
    url = reverse("relation-action", args=[relation.pk])
    response = client.post(url, {"action": "reactivate"})
    assert response.status_code == 302
    words = f'The relation "{relation.key}" is already active.'
    assert flashes(client.get(response.url)) == [("error", words)]


@pytest.mark.parametrize(
    ("exc", "status"),
    [
        (ModelUnavailable("The model endpoint did not answer; nothing was asked."), 503),
        (ValidationFailed("Ask in at most 500 characters."), 400),
        (Busy("Busy: try again."), 409),
    ],
)
def test_an_api_operation_s_refusal_is_its_status_and_words_through_ninja(
    db, f, monkeypatch, exc, status
):
    """django-ninja's handler for ``DomainError`` answers with the same translation."""

    def refuse(*args, **kwargs):
        raise exc

    monkeypatch.setattr("kgreview.api.endpoints.ask.ask_graph", refuse)
    token = api_token_create(owner=f.user(role="viewer"), name="bot", acting_user=None).secret
    agent = Client(headers={"Authorization": f"Bearer {token}"})
    response = agent.get("/api/v1/ask", {"q": "What is RAG?"})
    assert response.status_code == status
    assert response.json() == {"detail": exc.message, "code": exc.code}
    assert ("Retry-After" in response) == isinstance(exc, Busy)
