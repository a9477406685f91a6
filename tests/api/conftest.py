import pytest
from django.test import Client

from kgreview.api.services import api_token_create


@pytest.fixture
def token(db, f):
    """A live read-only token of a viewer."""
    return api_token_create(owner=f.user(role="viewer"), name="tutor-bot", acting_user=None).secret


@pytest.fixture
def agent(token):
    """A client that sends the token as a bearer, like a downstream agent."""
    return Client(headers={"Authorization": f"Bearer {token}"})


# --- The writing door's submitters (proposals over HTTP and MCP) --------------------------


@pytest.fixture
def fresh_counts():
    """Rate-limit counts start and end empty (the writing door's tests post many)."""
    from kgreview.api import throttle

    throttle.reset()
    yield
    throttle.reset()


@pytest.fixture
def submitter(f):
    """The account behind the submitting agent's token."""
    return f.user("ada", role="viewer")


@pytest.fixture
def issued(submitter):
    """A ``propose`` token of ``submitter``, named like the agent that holds it."""
    from kgreview.api.models import ApiToken

    return api_token_create(
        owner=submitter, name="tutor-bot", acting_user=None, scope=ApiToken.Scope.PROPOSE
    )


@pytest.fixture
def proposer(issued):
    """A client that sends the ``propose`` token as a bearer."""
    return Client(headers={"Authorization": f"Bearer {issued.secret}"})


@pytest.fixture
def lesson(f):
    return f.lesson("vectors")
