"""The review loop's ``Server-Timing`` header: the database's time and statement count,
the rest (``app``) and the total, on the card and each decision, for signed-in users."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse

from kgreview.core.server_timing import header
from kgreview.review.kinds.add_edge import AddEdgeKind

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}
SHAPE = re.compile(
    r'^db;dur=(?P<db>\d+\.\d\d);desc="(?P<n>\d+) quer(?:y|ies)", '
    r"app;dur=(?P<app>\d+\.\d\d), total;dur=(?P<total>\d+\.\d\d)$"
)


@pytest.fixture
def reviewer(f):
    client = Client()
    client.force_login(f.user("timed", role="reviewer"))
    return client


@pytest.fixture
def proposals(f):
    return [f.edge_proposal(f.concept(f"Alpha {i}"), f.concept(f"Beta {i}")) for i in range(5)]


def _timed(client, method: str, url: str, data=None) -> tuple[dict, int]:
    with CaptureQueriesContext(connection) as ctx:
        response = getattr(client, method)(url, data or {}, headers=HX)
    assert response.status_code == 200
    match = SHAPE.match(response.headers["Server-Timing"])
    assert match, response.headers["Server-Timing"]
    return match.groupdict(), len(ctx.captured_queries)


def test_the_card_and_every_decision_say_their_database_time_and_statements(reviewer, proposals):
    """The card (a skip asks for it too), accept, reject and edit each carry the header;
    its statement count is what Django ran, and app + db is the total."""
    p = proposals
    calls = [
        ("get", reverse("review:focus"), None),
        ("get", reverse("review:focus") + f"?after={p[0].pk}", None),
        ("get", reverse("review:focus") + f"?id={p[0].pk}", None),
        ("post", reverse("review:accept", args=[p[1].pk]), {"version": 1}),
        (
            "post",
            reverse("review:reject", args=[p[2].pk]),
            {"version": 1, "reason_code": "too_vague"},
        ),
        (
            "post",
            reverse("review:edit", args=[p[3].pk]),
            {"kind": AddEdgeKind.key, "version": 1, "confidence": "0.7", "weight": "2"},
        ),
    ]
    for method, url, data in calls:
        timing, statements = _timed(reviewer, method, url, data)
        assert int(timing["n"]) == statements > 0, url
        total = float(timing["total"])
        assert float(timing["db"]) + float(timing["app"]) == pytest.approx(total, abs=0.011)
        assert float(timing["db"]) <= total


def test_other_pages_and_signed_out_requests_carry_no_timing(reviewer, proposals):
    """The queue page is not the review loop; a signed-out caller learns no query count
    (the card answers it with the way to sign in)."""
    assert "Server-Timing" not in reviewer.get(reverse("review:queue")).headers
    signed_out = Client().get(reverse("review:focus"))
    assert signed_out.status_code == 302
    assert "Server-Timing" not in signed_out.headers


@override_settings(KG_SERVER_TIMING=False)
def test_the_setting_turns_the_header_off(reviewer, proposals):
    response = reviewer.get(reverse("review:focus"), headers=HX)
    assert response.status_code == 200
    assert "Server-Timing" not in response.headers


def test_the_header_value_names_one_query_in_the_singular_and_never_a_negative_app():
    assert header(20.0, 5.0, 1) == 'db;dur=5.00;desc="1 query", app;dur=15.00, total;dur=20.00'
    assert header(1.0, 1.5, 3).startswith('db;dur=1.50;desc="3 queries", app;dur=0.00')
