"""Production settings refuse to be unsafe: weak secret keys stop start-up, HTTPS turns on
HSTS, secure cookies and the redirect, and `check --deploy` is clean under the documented
production environment. Each runs the real settings in a fresh process."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STRONG_KEY = secrets.token_urlsafe(50)

# The environment the README documents for a shared deployment.
PRODUCTION = {
    "DJANGO_DEBUG": "false",
    "KG_SECURE_COOKIES": "true",
    "DJANGO_SECRET_KEY": STRONG_KEY,
    "DJANGO_ALLOWED_HOSTS": "kg.example.org",
}


def run(tmp_path, args: list[str], **env) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("KG_", "DJANGO_", "DATABASE_URL", "CELERY_"))
    }
    clean.update(
        {"DJANGO_SETTINGS_MODULE": "kgreview.settings", "KG_VAR_DIR": str(tmp_path), **env}
    )
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=clean, capture_output=True, text=True
    )


def setting_values(tmp_path, expression: str, **env) -> subprocess.CompletedProcess:
    code = "import django; django.setup(); from django.conf import settings as s; "
    code += f"print({expression})"
    return run(tmp_path, ["-c", code], **env)


@pytest.mark.parametrize(
    "key,words",
    [
        ("changeme", "is a well-known value"),
        ("kgreview-demo", "is a well-known value"),
        ("SECRET", "is a well-known value"),
        ("short-but-random-Zq81", "is 21 characters long; use at least 50"),
        ("django-insecure-" + "x7Gq2" * 12, "starts with 'django-insecure'"),
        ("abab" * 20, "has fewer than 5 distinct characters"),
    ],
)
def test_debug_off_refuses_a_default_short_or_known_secret_key(tmp_path, key, words):
    """A guessable key would let anyone forge sessions: start-up stops and says why."""
    out = setting_values(tmp_path, "s.SECRET_KEY", DJANGO_DEBUG="false", DJANGO_SECRET_KEY=key)
    assert out.returncode != 0
    assert "DJANGO_SECRET_KEY" in out.stderr and words in out.stderr
    assert "ImproperlyConfigured" in out.stderr


def test_a_strong_key_starts_and_debug_on_accepts_any_key(tmp_path):
    """A random 50+ character key is used as given; with debug on (a developer's machine)
    a weak key is no danger to anyone and is accepted."""
    given = setting_values(
        tmp_path, "s.SECRET_KEY", DJANGO_DEBUG="false", DJANGO_SECRET_KEY=STRONG_KEY
    )
    assert given.returncode == 0, given.stderr
    assert given.stdout.strip() == STRONG_KEY
    developer = setting_values(
        tmp_path, "s.SECRET_KEY", DJANGO_DEBUG="true", DJANGO_SECRET_KEY="changeme"
    )
    assert developer.returncode == 0, developer.stderr
    assert developer.stdout.strip() == "changeme"


def test_the_generated_per_checkout_key_is_accepted_with_debug_off(tmp_path):
    """No DJANGO_SECRET_KEY: the key generated into KG_VAR_DIR/secret_key is strong."""
    out = setting_values(tmp_path, "len(s.SECRET_KEY)", DJANGO_DEBUG="false")
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) >= 50
    assert (tmp_path / "secret_key").read_text().strip()


def test_secure_cookies_turn_on_hsts_the_redirect_and_cookies_for_https_only(tmp_path):
    """KG_SECURE_COOKIES=true: a year of HSTS with subdomains, HTTP redirected, cookies
    sent over TLS only. Without it (the embedded default on localhost) none of them."""
    expression = (
        "s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SECURE_SSL_REDIRECT, "
        "s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_PROXY_SSL_HEADER"
    )
    secure = setting_values(tmp_path, expression, **PRODUCTION)
    assert secure.returncode == 0, secure.stderr
    assert secure.stdout.strip() == "31536000 True True True True None"
    plain = setting_values(tmp_path, expression)
    assert plain.stdout.strip() == "0 True False False False None"


def test_a_proxy_that_terminates_tls_can_keep_the_redirect_and_name_its_header(tmp_path):
    """Behind a TLS-terminating proxy: KG_SSL_REDIRECT=false when the proxy redirects,
    KG_PROXY_SSL_HEADER so Django knows the browser spoke HTTPS."""
    out = setting_values(
        tmp_path,
        "s.SECURE_SSL_REDIRECT, s.SECURE_PROXY_SSL_HEADER, s.SECURE_HSTS_SECONDS",
        **PRODUCTION,
        KG_SSL_REDIRECT="false",
        KG_PROXY_SSL_HEADER="X-Forwarded-Proto",
        KG_HSTS_SECONDS="600",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False ('HTTP_X_FORWARDED_PROTO', 'https') 600"
    bad = setting_values(tmp_path, "1", KG_PROXY_SSL_HEADER="X Forwarded: https")
    assert bad.returncode != 0 and "KG_PROXY_SSL_HEADER" in bad.stderr
    assert "is not a header name" in bad.stderr


def test_login_throttling_is_configured_from_the_environment(tmp_path):
    """The failure limit and the cool-off come from KG_LOGIN_*; lockout is per username
    and address together."""
    out = setting_values(
        tmp_path,
        "s.AXES_FAILURE_LIMIT, s.AXES_COOLOFF_TIME.total_seconds(), s.AXES_LOCKOUT_PARAMETERS",
        KG_LOGIN_FAILURE_LIMIT="8",
        KG_LOGIN_COOLOFF_MINUTES="30",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "8 1800.0 [['username', 'ip_address']]"


def test_check_deploy_is_clean_under_the_documented_production_settings(tmp_path):
    """`manage.py check --deploy` reports nothing, warnings included."""
    out = run(tmp_path, ["manage.py", "check", "--deploy", "--fail-level", "WARNING"], **PRODUCTION)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "System check identified no issues" in out.stdout


def test_over_https_every_answer_carries_hsts_and_plain_http_is_redirected(tmp_path):
    """The real middleware stack under the production settings: HSTS on HTTPS answers,
    a redirect for HTTP, except the health check that load balancers probe over HTTP."""
    code = (
        "import django; django.setup(); from django.test import Client; c = Client(); "
        "r = c.get('/login/', secure=True, HTTP_HOST='kg.example.org'); "
        "print(r.status_code, r['Strict-Transport-Security']); "
        "print('csp', 'script-src' in r['Content-Security-Policy']); "
        "r = c.get('/login/', HTTP_HOST='kg.example.org'); print(r.status_code, r['Location']); "
        "r = Client(raise_request_exception=False).get('/healthz', HTTP_HOST='kg.example.org'); "
        "print('healthz', r.status_code != 301, r['Content-Type'])"
    )
    # The test settings only swap the manifest storage (no collectstatic here).
    out = run(tmp_path, ["-c", code], **PRODUCTION, DJANGO_SETTINGS_MODULE="kgreview.settings_test")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "200 max-age=31536000; includeSubDomains"
    assert lines[1] == "csp True"
    assert lines[2] == "301 https://kg.example.org/login/"
    assert lines[3] == "healthz True application/json"
