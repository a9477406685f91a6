"""The writing API's idempotency under real concurrency, on PostgreSQL: the same batch
sent twice at the same moment under one key is queued once, and both are answered."""

from __future__ import annotations

import pytest

from kgreview.api.models import ApiToken, ProposalBatch
from kgreview.api.proposing import SubmitAnswer, proposals_submit
from kgreview.api.services import api_token_create
from kgreview.core.errors import StateConflict
from kgreview.review.models import Proposal
from tests.races import race

pytestmark = pytest.mark.usefixtures("reference_data")

QUOTE = "Before learning vector search you should understand embeddings."


def _items(reason: str = "The lesson says so.") -> list[dict]:
    return [
        {
            "kind": "add_edge",
            "source": "Embeddings",
            "relation": "prerequisite",
            "target": "Vector search",
            "confidence": 0.9,
            "reason": reason,
            "evidence": {"source": "vectors", "quote": QUOTE},
        }
    ]


def test_one_batch_sent_twice_at_once_under_one_key_is_queued_once(on_postgres, f):
    """The second request waits on the first's key, then answers the first's answer."""
    f.lesson("vectors")
    issued = api_token_create(
        owner=f.user("ada", role="viewer"), name="bot", acting_user=None, scope="propose"
    )
    token = ApiToken.objects.select_related("user").get(pk=issued.token.pk)

    def send():
        return proposals_submit(
            acting_user=token.user, token=token, items=_items(), idempotency_key="same"
        )

    one, two = race(send, send)
    assert isinstance(one, SubmitAnswer) and isinstance(two, SubmitAnswer), (one, two)
    assert one.results == two.results
    assert sorted([one.replayed, two.replayed]) == [False, True]
    assert ProposalBatch.objects.count() == 1
    assert Proposal.objects.filter(kind="add_edge").count() == 1


def test_two_batches_racing_for_one_key_queue_one_and_refuse_the_other(on_postgres, f):
    f.lesson("vectors")
    issued = api_token_create(
        owner=f.user("ada", role="viewer"), name="bot", acting_user=None, scope="propose"
    )
    token = ApiToken.objects.select_related("user").get(pk=issued.token.pk)

    def send(reason):
        return lambda: proposals_submit(
            acting_user=token.user, token=token, items=_items(reason), idempotency_key="k"
        )

    results = race(send("one"), send("two"))
    answers = [r for r in results if isinstance(r, SubmitAnswer)]
    refused = [r for r in results if isinstance(r, StateConflict)]
    assert len(answers) == 1 and len(refused) == 1, results
    assert "different batch" in str(refused[0])
    assert Proposal.objects.filter(kind="add_edge").count() == 1


def test_one_key_posted_twice_at_once_over_http_is_queued_once_and_answered_twice(on_postgres, f):
    """Through the whole stack (authentication, rate limits, the endpoint): both requests
    are answered 200 with the same results, one of them marked replayed; one batch, one
    proposal, one link of the proposal to its batch."""
    import json

    from django.test import Client

    from kgreview.api import throttle
    from kgreview.api.models import SubmittedProposal

    throttle.reset()
    f.lesson("vectors")
    issued = api_token_create(
        owner=f.user("ada", role="viewer"), name="bot", acting_user=None, scope="propose"
    )
    body = json.dumps({"proposals": _items()})

    def send():
        client = Client(headers={"Authorization": f"Bearer {issued.secret}"})
        return client.post(
            "/api/v1/proposals",
            body,
            content_type="application/json",
            headers={"Idempotency-Key": "same-moment"},
        )

    one, two = race(send, send)
    assert one.status_code == two.status_code == 200, (one.content, two.content)
    assert one.json()["results"] == two.json()["results"]
    assert sorted([one.json()["replayed"], two.json()["replayed"]]) == [False, True]
    assert ProposalBatch.objects.count() == 1
    edge = Proposal.objects.get(kind="add_edge")
    assert SubmittedProposal.objects.get(proposal=edge).batch == ProposalBatch.objects.get()
