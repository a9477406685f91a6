"""The Content-Security-Policy: scripts and styles only from our static files, nothing
inline; the templates keep to it, and the original-file download keeps its sandbox."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from kgreview.graph.sources import source_import

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_DIRS = [ROOT / "templates", *sorted((ROOT / "kgreview").glob("*/templates"))]


def policy(response) -> dict[str, list[str]]:
    directives = {}
    for part in response["Content-Security-Policy"].split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


@pytest.fixture
def curator(client, f):
    client.force_login(f.user("cora", role="curator"))
    return client


@pytest.mark.parametrize("name", ["home", "login", "review:queue", "ontology", "api-tokens"])
def test_pages_allow_scripts_and_styles_from_our_own_files_only(curator, name):
    csp = policy(curator.get(reverse(name)))
    assert csp["script-src"] == ["'self'"]
    assert csp["style-src"][0] == "'self'"
    assert csp["object-src"] == ["'none'"] and csp["frame-ancestors"] == ["'none'"]
    assert csp["base-uri"] == ["'self'"] and csp["form-action"] == ["'self'"]
    joined = " ".join(v for values in csp.values() for v in values)
    assert "'unsafe-inline'" not in joined and "'unsafe-eval'" not in joined
    assert "*" not in joined and "data:" not in joined


def test_json_answers_carry_the_policy_too(client):
    assert "script-src 'self'" in client.get(reverse("healthz"))["Content-Security-Policy"]


def test_the_original_file_download_keeps_its_sandbox(f):
    """The site's policy does not replace the stricter one an original file is sent with."""
    source_import(
        slug="page",
        title="Page",
        text="Words.\n",
        media_type="text/html",
        original=b"<script>alert(1)</script><p>Words.</p>",
        filename="page.html",
        acting_user=None,
    )
    client = Client()
    client.force_login(f.user(role="viewer"))
    response = client.get(reverse("source-original", args=["page"]))
    assert response["Content-Security-Policy"] == "sandbox; default-src 'none'"


def test_the_server_error_page_style_is_the_one_inline_style_allowed():
    """500.html must not depend on static files, so it carries its own <style>; the policy
    allows exactly that block by its hash (change one, change the other)."""
    html = (ROOT / "templates" / "500.html").read_text()
    (style,) = re.findall(r"<style>(.*?)</style>", html, re.S)
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert f"'sha256-{digest}'" == settings.ERROR_PAGE_STYLE_HASH
    assert (
        settings.ERROR_PAGE_STYLE_HASH
        in settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]["style-src"]
    )


INLINE_SCRIPT = re.compile(r"<script\b(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>")
HANDLER = re.compile(r"<[^>]*\son[a-z]+\s*=", re.I)
STYLE_ATTRIBUTE = re.compile(r"<[^>]*\sstyle\s*=", re.I)


def test_no_template_has_inline_script_handlers_or_style_attributes():
    """Behaviour lives in static/js and looks in static/css: the policy refuses inline
    script and inline style, so anything inline would silently stop working."""
    found = []
    for folder in TEMPLATE_DIRS:
        for path in sorted(folder.rglob("*.html")):
            text = path.read_text()
            for pattern in (INLINE_SCRIPT, HANDLER, STYLE_ATTRIBUTE):
                found += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in pattern.finditer(text)]
            if path.name != "500.html" and "<style" in text:
                found.append(f"{path.relative_to(ROOT)}: <style>")
    assert found == []


def test_a_refused_form_token_is_explained_on_a_page_without_inline_style():
    """Django's own CSRF page styles itself inline, which the policy refuses: ours says
    what happened in words, in the site's look."""
    client = Client(enforce_csrf_checks=True)
    response = client.post(reverse("login"), {"username": "a", "password": "b"})
    assert response.status_code == 403
    html = response.content.decode()
    assert "The form could not be accepted" in html and "Nothing was saved." in html
    assert "<style" not in html
