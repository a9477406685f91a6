"""Login throttling (django-axes): a username that keeps failing from one address is
locked out there for the cool-off, with the reason on the login page."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.db.models import F
from django.test import Client
from django.urls import reverse

HERE = "203.0.113.7"
ELSEWHERE = "198.51.100.9"

pytestmark = pytest.mark.django_db


def log_in(client: Client, username: str, password: str, address: str = HERE):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


@pytest.fixture
def ada(f):
    return f.user("ada", role="viewer", password="right-password-1")


def test_forty_wrong_passwords_then_the_right_one_is_refused_in_words(client, ada):
    """The published demo password cannot be guessed at: after the failure limit even the
    right password is refused, on the login page, with how long it lasts."""
    for _ in range(40):
        assert log_in(client, "ada", "wrong-password").status_code in {200, 429}
    refused = log_in(client, "ada", "right-password-1")
    assert refused.status_code == 429
    html = refused.content.decode()
    assert "Too many failed logins for this username from your address" in html
    assert "paused for 15 minutes" in html and 'role="alert"' in html
    assert 'value="ada"' in html and "<form" in html  # the page, not bare text
    assert "_auth_user_id" not in client.session
    assert client.get(reverse("home")).status_code == 302  # still not logged in


def test_the_lockout_starts_at_the_failure_limit(client, ada, settings):
    """Below the limit a wrong password is the usual sentence; at it, the lockout."""
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        response = log_in(client, "ada", "wrong-password")
        assert response.status_code == 200 and "do not match" in response.content.decode()
    assert log_in(client, "ada", "wrong-password").status_code == 429


def test_a_lockout_does_not_lock_out_another_user_from_the_same_address(client, ada, f):
    f.user("bob", password="bob-password-1")
    for _ in range(40):
        log_in(client, "ada", "wrong-password")
    other = log_in(Client(), "bob", "bob-password-1")
    assert other.status_code == 302 and other["Location"] == reverse("home")


def test_an_unknown_username_is_locked_out_the_same_way(client):
    """The lockout says nothing about whether the account exists."""
    for _ in range(10):
        log_in(client, "nobody", "wrong-password")
    refused = log_in(client, "nobody", "anything")
    assert refused.status_code == 429
    assert "Too many failed logins" in refused.content.decode()


def test_after_the_cool_off_the_right_password_works_again(client, ada, settings):
    for _ in range(40):
        log_in(client, "ada", "wrong-password")
    assert log_in(client, "ada", "right-password-1").status_code == 429
    # The failures happened longer ago than the cool-off.
    AccessAttempt.objects.update(
        attempt_time=F("attempt_time") - settings.AXES_COOLOFF_TIME - timedelta(minutes=1)
    )
    ok = log_in(client, "ada", "right-password-1")
    assert ok.status_code == 302 and ok["Location"] == reverse("home")
    assert client.get(reverse("home")).status_code == 200


def test_a_successful_login_forgets_earlier_failures(client, ada, settings):
    """A few typos then the right password: the next typos start counting from zero."""
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        log_in(client, "ada", "wrong-password")
    assert log_in(client, "ada", "right-password-1").status_code == 302
    fresh = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert log_in(fresh, "ada", "wrong-password").status_code == 200
    assert log_in(fresh, "ada", "right-password-1").status_code == 302


def test_the_admin_login_is_throttled_too(client, f):
    f.user("root", password="root-password-1")
    for _ in range(40):
        client.post(
            reverse("admin:login"),
            {"username": "root", "password": "wrong-password"},
            REMOTE_ADDR=HERE,
        )
    refused = client.post(
        reverse("admin:login"),
        {"username": "root", "password": "root-password-1"},
        REMOTE_ADDR=HERE,
    )
    assert refused.status_code == 429
    assert "Too many failed logins" in refused.content.decode()


def test_behind_a_proxy_the_address_comes_from_the_named_header(client, ada, settings):
    """With KG_CLIENT_IP_HEADER the proxy's own address is not what gets locked out."""
    settings.KG_CLIENT_IP_HEADER = "X-Forwarded-For"
    proxy = "10.0.0.2"
    for _ in range(40):
        client.post(
            reverse("login"),
            {"username": "ada", "password": "wrong-password"},
            REMOTE_ADDR=proxy,
            HTTP_X_FORWARDED_FOR=f"10.9.9.9, {HERE}",
        )
    assert AccessAttempt.objects.get().ip_address == HERE
    other_client = client.post(
        reverse("login"),
        {"username": "ada", "password": "right-password-1"},
        REMOTE_ADDR=proxy,
        HTTP_X_FORWARDED_FOR=ELSEWHERE,
    )
    assert other_client.status_code == 302
