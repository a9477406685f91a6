"""The decision budget: a decision by htmx, card of the next proposal included, is at most
15 SQL queries (session and user included), whatever it settles in the queue."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


def measured(client, url, data) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.post(url, data, headers=HX)
    assert response.status_code == 200
    return len([q for q in ctx.captured_queries if "SAVEPOINT" not in q["sql"]])


@pytest.fixture
def reviewer_client(f, client):
    client.force_login(f.user("rv", role="reviewer"))
    return client


def test_accept_reject_and_edit_stay_within_fifteen_queries(f, reviewer_client):
    ps = [f.edge_proposal(f.concept(f"A{i}"), f.concept(f"B{i}")) for i in range(4)]
    accept = measured(reviewer_client, reverse("review:accept", args=[ps[3].pk]), {"version": 1})
    reject = measured(
        reviewer_client,
        reverse("review:reject", args=[ps[2].pk]),
        {"version": 1, "reason_code": "too_vague"},
    )
    edit = measured(
        reviewer_client,
        reverse("review:edit", args=[ps[1].pk]),
        {"version": 1, "confidence": "0.7", "weight": "2"},
    )
    assert max(accept, reject, edit) <= 15, (accept, reject, edit)
