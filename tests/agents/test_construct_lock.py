"""Reading a source holds no write lock: on the embedded default (SQLite, one writer at a
time) reviewers keep logging in and deciding while the agents read a long document
(issue 25: a 46 MB source locked everyone out for 17 minutes)."""

from __future__ import annotations

import threading

import pytest
from django.db import connections
from django.test import Client

from construction.linguistic import LinguisticExtractor
from kgreview.agents.construct import construct_item_run, construct_run_create
from kgreview.agents.models import AgentRunItem
from kgreview.review.decide.decisions import proposal_accept
from kgreview.review.models import Proposal
from tests import factories as f

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("reference_data")]


class HeldReader(LinguisticExtractor):
    """The offline reader, held in the middle of its first chunk until released: the
    moment a long source would be being read."""

    def __init__(self) -> None:
        super().__init__()
        self.reading = threading.Event()
        self.release = threading.Event()

    def extract(self, doc, **kwargs):
        self.reading.set()
        assert self.release.wait(60), "the test never released the reader"
        return super().extract(doc, **kwargs)


def log_in(client: Client) -> None:
    answer = client.post("/login/", {"username": "rev", "password": "pw-12345"})
    assert answer.status_code == 302, answer.content.decode()[:300]


def test_reviewers_log_in_and_decide_while_a_source_is_being_read():
    reviewer = f.user("rev", role="reviewer")
    waiting = [f.concept_proposal(name) for name in ("Embeddings", "Vector search")]
    source = f.lesson("long-manual")
    run = construct_run_create(sources=[source], provider="offline")
    item = AgentRunItem.objects.get(run=run, source=source)
    reader = HeldReader()
    finished: list[object] = []

    def read():
        try:
            finished.append(construct_item_run(item_id=item.pk, claim="task:1", extractor=reader))
        except BaseException as exc:  # reported by the assertions below
            finished.append(exc)
        finally:
            connections.close_all()

    worker = threading.Thread(target=read)
    worker.start()
    try:
        assert reader.reading.wait(60), "the reader never started"
        # The reader is mid-source. Before the fix it held SQLite's write lock here, and
        # each of these waited 30 s and was refused as busy.
        client = Client()
        log_in(client)
        for proposal in waiting:
            proposal_accept(proposal_id=proposal.pk, acting_user=reviewer)
        assert client.post("/logout/").status_code == 302
        log_in(client)
    finally:
        reader.release.set()
        worker.join(120)
    assert not worker.is_alive()
    assert [type(x).__name__ for x in finished] == ["AgentRunItem"]
    item.refresh_from_db()
    assert item.status == AgentRunItem.Status.DONE, item.error
    statuses = set(
        Proposal.objects.filter(pk__in=[p.pk for p in waiting]).values_list("status", flat=True)
    )
    assert statuses == {Proposal.Status.ACCEPTED}
