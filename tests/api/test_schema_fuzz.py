"""schemathesis against the published OpenAPI schema: generated requests, bounded
examples, never a server error, every answer shaped as the schema says."""

from __future__ import annotations

import pytest
import schemathesis
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from kgreview.api.services import api_token_create

pytestmark = pytest.mark.django_db

EXAMPLES = 25


@pytest.fixture
def graph(f):
    """A small real graph, with hostile text, for the generated requests to find."""
    doc = f.lesson("fuzz")
    a, b, c = f.concept("Embeddings"), f.concept("Vector search"), f.concept("<b>RAG</b>")
    quote = "Before learning vector search you should understand embeddings."
    f.edge(a, b, evidence=f.evidence(doc.current_revision, quote))
    f.edge(b, c, "builds_on")
    f.edge(a, c, "related")


@pytest.fixture
def wsgi_keeps_the_test_connection():
    """Calling the WSGI app directly would close the test's database connection at the
    end of each request; Django's own test client disconnects the same handlers."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def _operations():
    from django.core.wsgi import get_wsgi_application

    with override_settings(KG_API_DOCS_PUBLIC=True):  # the schema as published
        schema = schemathesis.openapi.from_wsgi("/api/openapi.json", get_wsgi_application())
    return [result.ok() for result in schema.get_all_operations()]


def test_the_schema_has_every_read_operation_and_the_one_that_proposes(db):
    """Fourteen GET operations are published (three of them the releases, one a proposal
    followed to its decision), and one POST: proposals for review (nothing writes the
    graph)."""
    ops = _operations()
    assert len(ops) == 15
    writes = [(op.method.upper(), op.path) for op in ops if op.method.upper() != "GET"]
    assert writes == [("POST", "/api/v1/proposals")]


def beyond_the_schema(case) -> list:
    """Checks a rule the schema cannot state would fail: a diff's ``since`` must not come
    after its ``until`` (each is a valid instant alone), so a generated backwards window
    is refused with a documented 400, as the Changes page refuses it. Likewise a question
    of spaces only, or longer than ``KG_ASK_QUESTION_MAX``, is refused in words with a
    documented 400 (the limit is a setting, so the schema cannot carry it). A concept
    search's ``type`` that names no concept type is refused in words too: the types are
    the graph's own data, which the schema cannot list. A batch of proposals whose
    evidence names none or two of its places, or an Idempotency-Key used before for
    another batch, is refused in words (422, 409)."""
    refused_in_words = {"/api/v1/diff", "/api/v1/ask", "/api/v1/concepts", "/api/v1/proposals"}
    return [positive_data_acceptance] if case.operation.path in refused_in_words else []


def test_generated_requests_never_cause_a_server_error(graph, f, wsgi_keeps_the_test_connection):
    """For every operation, generated requests (bounded) get a documented answer that
    conforms to the schema, and never a 500."""
    token = api_token_create(
        owner=f.user(role="viewer"), name="fuzz", acting_user=None, scope="propose"
    ).secret
    headers = {"Authorization": f"Bearer {token}"}
    for op in _operations():

        @given(case=op.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )
        def run(case):
            case.call_and_validate(headers=headers, excluded_checks=beyond_the_schema(case))

        run()
