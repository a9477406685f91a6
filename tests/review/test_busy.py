"""A decision that deadlocks is a 409 in words, never a 500, with htmx and without.

The service is made to deadlock by patching a step inside it to raise what Django raises
for PostgreSQL's "deadlock detected" (an ``OperationalError`` whose cause has SQLSTATE
40P01). Through the retried service (a transactional test, so the service's transaction
is the outermost) the decision is tried again, then refused with ``Busy``; where the
error escapes unretried (the test's own transaction encloses the service), the
middleware still answers 409 in words.
"""

from __future__ import annotations

import pytest
from django.db import OperationalError
from django.test import RequestFactory
from django.urls import reverse

from kgreview.core import retry
from kgreview.core.refusals import RefusalMiddleware
from kgreview.review.decide import decisions
from kgreview.review.models import Proposal

HX = {"HX-Request": "true"}
WORDS = "Busy: another decision touched the same concepts at the same moment"


class _Deadlock(Exception):
    sqlstate = "40P01"


def deadlock(*args, **kwargs):
    exc = OperationalError("deadlock detected")
    exc.__cause__ = _Deadlock()
    raise exc


@pytest.fixture
def deadlocking(monkeypatch):
    """Every accept deadlocks inside the service; returns how often it was tried."""
    tried = []

    def accept_one(*args, **kwargs):
        tried.append(1)
        deadlock()

    monkeypatch.setattr(decisions, "accept_one", accept_one)
    monkeypatch.setattr(retry, "pause", lambda attempt: 0.0)
    return tried


@pytest.mark.parametrize("headers", [HX, {}], ids=["htmx", "plain"])
def test_a_deadlocked_accept_is_retried_then_refused_with_409_words(
    transactional_db, reference_data, f, client, deadlocking, headers
):
    p = f.edge_proposal(f.concept("Busy A"), f.concept("Busy B"))
    client.force_login(f.user("rb", role="reviewer"))
    response = client.post(
        reverse("review:accept", args=[p.pk]), {"version": p.version}, headers=headers
    )
    assert response.status_code == 409
    body = response.content.decode()
    assert WORDS in body and "try again" in body
    assert f'data-proposal="{p.pk}"' in body  # the same card, to try again from
    assert len(deadlocking) == retry.ATTEMPTS
    assert Proposal.objects.get(pk=p.pk).status == "pending"  # nothing was changed


@pytest.mark.parametrize("headers", [HX, {}], ids=["htmx", "plain"])
def test_a_deadlock_that_escapes_a_view_is_409_words_not_500(db, f, client, monkeypatch, headers):
    """Inside the test's transaction the service cannot retry; the error reaches Django
    and the middleware answers in words."""
    monkeypatch.setattr(decisions, "proposal_accept", deadlock)
    p = f.edge_proposal(f.concept("Busy C"), f.concept("Busy D"))
    client.force_login(f.user("rc", role="reviewer"))
    client.raise_request_exception = False
    response = client.post(
        reverse("review:accept", args=[p.pk]), {"version": p.version}, headers=headers
    )
    assert response.status_code == 409
    assert WORDS in response.content.decode()
    assert response["Retry-After"] == "1"


def test_the_api_gets_busy_as_json_and_sqlite_locked_says_the_database_was_busy():
    request = RequestFactory().get("/api/v1/concepts")
    response = RefusalMiddleware(lambda r: None).process_exception(
        request, OperationalError("database is locked")
    )
    assert response is not None and response.status_code == 409
    assert response["Content-Type"] == "application/json"
    body = response.content.decode()
    assert "the database was busy with other writes" in body
    assert "touched the same concepts" not in body  # not the cause: nobody touched them


def test_other_errors_are_left_alone():
    request = RequestFactory().get("/review/")
    middleware = RefusalMiddleware(lambda r: None)
    assert middleware.process_exception(request, OperationalError("no such table")) is None
    assert middleware.process_exception(request, ValueError("x")) is None
