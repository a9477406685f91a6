"""The API's schema and docs page are for its callers: a signed-in user with a role, or a
token (the schema); anonymous users and accounts without a role are refused in words,
unless KG_API_DOCS_PUBLIC opens them."""

from __future__ import annotations

import pytest
from django.test import Client

from kgreview.api.services import api_token_create

pytestmark = pytest.mark.django_db

SCHEMA, DOCS = "/api/openapi.json", "/api/docs"


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_anonymous_users_get_no_schema_and_are_sent_to_log_in_for_the_docs(client):
    schema = client.get(SCHEMA)
    assert schema.status_code == 401
    assert "Authorization: Bearer" in schema.json()["detail"]
    assert "paths" not in schema.json()
    docs = client.get(DOCS)
    assert docs.status_code == 302 and docs["Location"].startswith("/login/?next=/api/docs")


@pytest.mark.parametrize("headers", [{}, {"HX-Request": "true"}], ids=["plain", "htmx"])
def test_an_account_without_a_role_is_refused_in_words(f, headers):
    client = signed_in(f.user("norole"))
    schema = client.get(SCHEMA, headers=headers)
    assert schema.status_code == 403
    assert schema.json()["detail"] == "Your account has no role yet; ask a curator for one."
    docs = client.get(DOCS, headers=headers)
    assert docs.status_code == 403
    assert "no role yet" in docs.content.decode()


def test_a_viewer_reads_the_schema_and_the_docs(f):
    client = signed_in(f.user(role="viewer"))
    assert "/api/v1/relations" in client.get(SCHEMA).json()["paths"]
    docs = client.get(DOCS)
    assert docs.status_code == 200 and "swagger" in docs.content.decode().lower()


def test_a_token_reads_the_schema_a_revoked_one_does_not(f):
    issued = api_token_create(owner=f.user(role="viewer"), name="gen", acting_user=None)
    agent = Client(headers={"Authorization": f"Bearer {issued.secret}"})
    assert agent.get(SCHEMA).status_code == 200
    wrong = Client(headers={"Authorization": "Bearer kgr_nothing_here"})
    assert wrong.get(SCHEMA).status_code == 401


def test_the_setting_opens_the_docs_to_anyone(client, settings):
    settings.KG_API_DOCS_PUBLIC = True
    assert "paths" in client.get(SCHEMA).json()
    assert client.get(DOCS).status_code == 200
