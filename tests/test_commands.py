"""Command-line helpers around the app: demo accounts."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from django.test import RequestFactory

pytestmark = pytest.mark.django_db


def test_demo_accounts_creates_one_user_per_role_and_prints_how_to_log_in():
    """reviewer, curator and viewer exist in their groups; only the curator is staff."""
    out = io.StringIO()
    call_command("demo_accounts", "--password", "demo-pass-123", stdout=out)
    call_command("demo_accounts", "--password", "demo-pass-123", stdout=io.StringIO())
    users = {u.username: u for u in get_user_model().objects.all()}
    assert set(users) == {"reviewer", "curator", "viewer"}
    for name, user in users.items():
        assert list(user.groups.values_list("name", flat=True)) == [name]
        # The login throttle (django-axes) needs the request a login comes with.
        login = RequestFactory().post("/login/")
        assert authenticate(login, username=name, password="demo-pass-123") == user
    assert users["curator"].is_staff and not users["reviewer"].is_staff
    assert "demo-pass-123" in out.getvalue() and "reviewer" in out.getvalue()


def test_groups_carry_the_permissions_of_their_role():
    """viewer reads, reviewer also decides, curator also edits the ontology and schedules."""
    call_command("demo_accounts", stdout=io.StringIO())
    User = get_user_model()
    viewer, reviewer, curator = (
        User.objects.get(username=n) for n in ("viewer", "reviewer", "curator")
    )
    assert viewer.has_perm("graph.view_edge") and not viewer.has_perm("review.change_proposal")
    assert reviewer.has_perm("review.change_proposal")
    assert not reviewer.has_perm("graph.change_relationtype")
    assert curator.has_perm("graph.change_relationtype")
    assert curator.has_perm("django_celery_beat.change_periodictask")
    assert not curator.has_perm("graph.delete_edge")
