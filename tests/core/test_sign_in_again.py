"""A request htmx sends after its session ended goes to the sign-in page as a whole page,
coming back to the page in the address bar; nothing is decided (``HtmxSignInAgain``).

Found walking the review in Chromium: signed out in another tab, ``a`` on a card swapped
the sign-in form into the card.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from kgreview.review.models import Decision

pytestmark = pytest.mark.django_db


def test_a_decision_sent_by_htmx_without_a_session_sends_the_page_to_sign_in(f):
    proposal = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))
    client = Client(
        headers={"HX-Request": "true", "HX-Current-URL": "http://testserver/review/focus/?q=x"}
    )
    response = client.post(reverse("review:accept", args=[proposal.pk]), {"version": "1"})
    assert response.status_code == 200
    assert response["HX-Redirect"] == "/login/?next=%2Freview%2Ffocus%2F%3Fq%3Dx"
    assert response.content == b""
    assert not Decision.objects.exists()
    proposal.refresh_from_db()
    assert proposal.status == "pending"


def test_an_htmx_fragment_without_a_session_and_without_a_current_url_comes_back_home():
    response = Client(headers={"HX-Request": "true"}).get(reverse("review:queue-counts"))
    assert response["HX-Redirect"] == "/login/?next=%2F"


def test_a_plain_request_without_a_session_is_redirected_as_before():
    response = Client().get(reverse("review:focus"))
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")
    assert "HX-Redirect" not in response


def test_an_htmx_redirect_elsewhere_is_left_alone(f):
    """Only the way to the sign-in page is changed; a view's own redirect is htmx's."""
    client = Client(headers={"HX-Request": "true"})
    client.force_login(f.user("rev", role="reviewer"))
    response = client.get("/review")  # the common middleware's slash redirect
    assert response.status_code == 301
    assert "HX-Redirect" not in response
