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
