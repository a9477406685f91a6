"""The review card shows both ends' concept types under the claim: the type each concept
has, or the type the concept proposal an end waits for would give it. Read with the card's
own query, so a typed card costs what an untyped one does."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from kgreview.graph import services as graph
from kgreview.review.models import Proposal
from kgreview.review.workspace import selectors
from kgreview.review.workspace.card import proposal_card
from tests.review.workspace import client_for

pytestmark = pytest.mark.django_db


def typed(f, name: str, key: str):
    concept = f.concept(name)
    return graph.concept_set_type(concept=concept, type_key=key, acting_user=None)


@pytest.fixture
def vocabulary():
    graph.concept_type_create(key="process", label="Process", acting_user=None)
    graph.concept_type_create(key="setting", label="Setting", acting_user=None)


def end_types_line(page: str) -> str:
    found = re.search(r'<p class="end-types[^"]*"[^>]*>(.*?)</p>', page, re.S)
    assert found is not None, "the card shows no end types"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", found.group(1))).strip()


def test_the_card_names_the_type_of_each_end(f, vocabulary):
    p = f.edge_proposal(typed(f, "Checkpoint", "process"), typed(f, "max_wal_size", "setting"))
    page = client_for(f, "reviewer").get(reverse("review:focus") + f"?id={p.pk}")
    line = end_types_line(page.content.decode())
    assert "Checkpoint" in line and "Process" in line
    assert "max_wal_size" in line and "Setting" in line
    assert line.index("Process") < line.index("max_wal_size")  # each type after its own end


def test_an_untyped_end_beside_a_typed_one_says_untyped(f, vocabulary):
    p = f.edge_proposal(typed(f, "Checkpoint", "process"), f.concept("WAL"))
    page = client_for(f, "reviewer").get(reverse("review:focus") + f"?id={p.pk}")
    line = end_types_line(page.content.decode())
    assert line.endswith("WAL untyped"), line


def test_an_untyped_graph_shows_no_types_line(f):
    p = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))
    page = client_for(f, "reviewer").get(reverse("review:focus") + f"?id={p.pk}")
    assert 'class="end-types' not in page.content.decode()


def test_an_end_waiting_for_a_concept_proposal_shows_the_type_it_would_get(f, vocabulary):
    """The add_concept proposal's ``type_key`` is the end's type, marked as proposed; a key
    the vocabulary does not hold yet is shown as it is."""
    new_end = f.concept_proposal("Background writer")
    Proposal.objects.filter(pk=new_end.pk).update(
        payload={**new_end.payload, "type_key": "process"}
    )
    other = f.concept_proposal("bgwriter_delay")
    Proposal.objects.filter(pk=other.pk).update(payload={**other.payload, "type_key": "knob"})
    p = f.edge_proposal(new_end, other)
    card = proposal_card(selectors.card_proposals().get(pk=p.pk))
    assert [(t.name, t.key, t.label, t.proposed) for t in card.end_types] == [
        ("Background writer", "process", "Process", True),
        ("bgwriter_delay", "knob", "knob", True),
    ]
    page = client_for(f, "reviewer").get(reverse("review:focus") + f"?id={p.pk}")
    assert "(proposed)" in end_types_line(page.content.decode())


def test_a_merge_card_shows_both_concepts_types(f, vocabulary):
    loser, survivor = typed(f, "ckpt", "process"), typed(f, "Checkpoint", "process")
    from kgreview.review.services import proposal_create

    p = proposal_create(
        kind="merge_concepts",
        payload={"loser_id": loser.pk, "survivor_id": survivor.pk, "why": "Same thing."},
        confidence=0.9,
    )
    card = proposal_card(selectors.card_proposals().get(pk=p.pk))
    assert [(t.name, t.key) for t in card.end_types] == [
        ("ckpt", "process"),
        ("Checkpoint", "process"),
    ]


def _card_queries(pk: int) -> int:
    with CaptureQueriesContext(connection) as ctx:
        proposal_card(selectors.card_proposals().get(pk=pk))
    return len(ctx.captured_queries)


def test_the_types_cost_the_card_no_query_of_their_own(f, vocabulary):
    """Typed ends are read in the query that loads the card: the same count as untyped."""
    doc = f.lesson(slug="budget")
    plain = f.edge_proposal(f.concept("A"), f.concept("B"), doc=doc)
    typed_edge = f.edge_proposal(typed(f, "C", "process"), typed(f, "D", "setting"), doc=doc)
    assert proposal_card(selectors.card_proposals().get(pk=typed_edge.pk)).end_types
    assert _card_queries(typed_edge.pk) == _card_queries(plain.pk)


def test_a_concept_proposal_made_with_a_type_key_gives_its_end_that_type(f, vocabulary):
    """The add_concept payload's own ``type_key`` (no row edited by hand)."""
    from kgreview.review.services import proposal_create

    doc = f.lesson()
    new_end = proposal_create(
        kind="add_concept",
        payload={"name": "Background writer", "type_key": "process"},
        confidence=0.9,
        document=doc,
    )
    p = f.edge_proposal(new_end, typed(f, "bgwriter_delay", "setting"), doc=doc)
    card = proposal_card(selectors.card_proposals().get(pk=p.pk))
    assert [(t.name, t.label, t.proposed) for t in card.end_types] == [
        ("Background writer", "Process", True),
        ("bgwriter_delay", "Setting", False),
    ]
