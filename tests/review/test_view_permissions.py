"""Roles on every URL of the review workspace: who may read, who may decide, which
methods and tokens a decision needs."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from kgreview.review.models import Decision, Proposal
from kgreview.review.services import proposal_create
from tests.review.workspace import client_for

pytestmark = pytest.mark.django_db

# --- the permission matrix --------------------------------------------------------------

ROLES = ["anonymous", None, "viewer", "reviewer", "curator"]


def read_urls(world) -> list[str]:
    p = world["p_edge"]
    return [
        reverse("home"),
        reverse("source-detail", args=["vs"]),
        reverse("worker-status"),
        reverse("review:queue"),
        reverse("review:focus"),
        reverse("review:focus") + f"?id={p.pk}",
        reverse("review:proposal", args=[p.pk]),
        reverse("review:decisions"),
        reverse("review:edge", args=[world["edge"].pk]),
        reverse("review:concept-search") + "?q=emb",
    ]


EXPECT_READ = {"anonymous": 302, None: 403, "viewer": 200, "reviewer": 200, "curator": 200}


@pytest.mark.parametrize("role", ROLES, ids=lambda r: str(r))
def test_every_page_is_closed_to_anonymous_and_roleless_users_and_open_to_roles(f, world, role):
    """Login everywhere; a role to read, the worker badge too."""
    client = client_for(f, role)
    for url in read_urls(world):
        response = client.get(url)
        expected = EXPECT_READ[role]
        if (
            url.startswith(reverse("review:proposal", args=[world["p_edge"].pk]))
            and expected == 200
        ):
            expected = 302  # the proposal URL redirects to its card in focus mode
        assert response.status_code == expected, (role, url, response.status_code)
        if role == "anonymous":
            assert response["Location"].startswith(reverse("login"))


def write_requests(world) -> list[tuple[str, dict]]:
    p, c = world["p_edge"], world["p_concept"]
    return [
        (reverse("review:accept", args=[c.pk]), {"version": c.version}),
        (reverse("review:reject", args=[p.pk]), {"reason_code": "too_vague"}),
        (reverse("review:edit", args=[world["held"].pk]), {"relation": "applies_to"}),
        (reverse("review:undo"), {}),
        (
            reverse("review:bulk"),
            {
                "action": "reject",
                "reason_code": "too_vague",
                "ids": [world["held"].pk],
                "step": "preview",
            },
        ),
    ]


@pytest.mark.parametrize(
    "role,allowed",
    [("anonymous", False), (None, False), ("viewer", False), ("reviewer", True), ("curator", True)],
    ids=lambda v: str(v),
)
def test_only_reviewers_and_curators_can_decide(f, world, role, allowed):
    """Every write endpoint: login, then the reviewer or curator role."""
    client = client_for(f, role)
    for url, data in write_requests(world):
        response = client.post(url, data)
        if role == "anonymous":
            assert response.status_code == 302 and "login" in response["Location"], url
        elif not allowed:
            assert response.status_code == 403, (role, url)
        else:
            assert response.status_code in (200, 302, 303), (role, url, response.status_code)
    if not allowed:
        assert not Decision.objects.exists()


def test_get_is_not_allowed_on_decision_endpoints(f, world):
    """Deciding is a POST; a link cannot accept or reject."""
    client = client_for(f, "reviewer")
    assert client.get(reverse("review:accept", args=[world["p_edge"].pk])).status_code == 405
    assert client.get(reverse("review:reject", args=[world["p_edge"].pk])).status_code == 405


def test_decisions_need_a_csrf_token(f, world):
    """A cross-site form cannot decide on a reviewer's behalf."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(f.user("csrf", role="reviewer"))
    response = client.post(reverse("review:accept", args=[world["p_edge"].pk]))
    assert response.status_code == 403
    assert Proposal.objects.get(pk=world["p_edge"].pk).status == "pending"


def test_reviewers_cannot_decide_curator_kinds(f, world):
    """A relation-type proposal is for curators: a reviewer gets 403 and no buttons."""

    p = proposal_create(
        kind="add_relation_type",
        payload={
            "key": "alternative_to",
            "label": "Alternative to",
            "verb": "is an alternative to",
            "directed": False,
            "symmetric": True,
        },
        confidence=0.8,
    )
    reviewer = client_for(f, "reviewer")
    page = reviewer.get(reverse("review:focus") + f"?id={p.pk}").content.decode()
    assert 'id="accept-button"' not in page
    assert reviewer.post(reverse("review:accept", args=[p.pk])).status_code == 403
    curator = client_for(f, "curator")
    page = curator.get(reverse("review:focus") + f"?id={p.pk}").content.decode()
    assert 'id="accept-button"' in page
