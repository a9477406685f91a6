"""A refused edit names the field it is about (the card puts the focus there, issue 28),
and the queue shows a quote's words, not its Markdown, at a query cost that does not grow
with the page."""

from __future__ import annotations

from html import unescape

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from kgreview.core.errors import DomainError, InactiveRelation, PatternViolation, SelfLoop
from kgreview.graph import services as graph
from kgreview.graph.models import RelationType
from kgreview.review.kinds import KINDS
from kgreview.review.models import Proposal
from kgreview.review.workspace import selectors
from tests.review.workspace import HX, client_for

pytestmark = pytest.mark.django_db

EDGE = "add_edge"


def refused_edit(f, world, **fields):
    return client_for(f, "reviewer").post(
        reverse("review:edit", args=[world["p_edge"].pk]),
        {"version": 1, "kind": EDGE, **fields},
        headers=HX,
    )


def test_a_target_name_no_concept_has_is_refused_naming_the_target_field(f, world):
    """The refusal's words, and data-field="target" for the card's script."""
    response = refused_edit(f, world, target_name="Nothing like it")
    html = unescape(response.content.decode())
    assert response.status_code == 200
    assert 'No concept is called "Nothing like it"' in html
    assert 'id="card-error" data-field="target"' in html
    assert 'class="edit-form"' in html  # the form stays, with what was typed
    assert Proposal.objects.get(pk=world["p_edge"].pk).status == "pending"


def test_a_source_name_no_concept_has_names_the_source_field(f, world):
    html = refused_edit(f, world, source_name="Nothing like it").content.decode()
    assert 'id="card-error" data-field="source"' in html


def test_a_retired_relation_is_refused_naming_the_relation_field(f, world):
    RelationType.objects.filter(key="builds_on").update(active=False, retired_at=timezone.now())
    html = unescape(refused_edit(f, world, relation="builds_on").content.decode())
    assert '"builds_on" is not an active relation.' in html
    assert 'id="card-error" data-field="relation"' in html


def test_a_number_it_cannot_read_names_its_field(f, world):
    html = refused_edit(f, world, confidence="high").content.decode()
    assert "must be numbers" in html
    assert 'id="card-error" data-field="confidence"' in html


def test_a_refusal_without_htmx_goes_back_to_the_card_with_the_words(f, world):
    """A plain form gets a redirect and a message; nothing is decided."""
    response = client_for(f, "reviewer").post(
        reverse("review:edit", args=[world["p_edge"].pk]),
        {"version": 1, "kind": EDGE, "target_name": "Nothing like it"},
        follow=True,
    )
    assert 'No concept is called "Nothing like it"' in unescape(response.content.decode())
    assert Proposal.objects.get(pk=world["p_edge"].pk).status == "pending"


def test_a_refusal_of_a_decision_that_is_not_an_edit_names_no_field(f, world):
    """Accepting (not editing) a card that cannot be accepted: the words, no field."""
    RelationType.objects.filter(key="prerequisite").update(active=False, retired_at=timezone.now())
    html = (
        client_for(f, "reviewer")
        .post(reverse("review:accept", args=[world["p_edge"].pk]), {"version": 1}, headers=HX)
        .content.decode()
    )
    assert 'id="card-error"' in html and "data-field" not in html


@pytest.mark.parametrize(
    ("exc", "field"),
    [
        (PatternViolation("does not fit"), "relation"),
        (InactiveRelation("retired"), "relation"),
        (SelfLoop("loops"), "target"),
        (DomainError("named", field="source"), "source"),
        (DomainError("says nothing of a field"), ""),
    ],
)
def test_the_edge_kind_maps_its_refusals_to_its_fields(exc, field):
    assert KINDS[EDGE].refused_field(exc) == field


def test_a_kind_without_its_own_mapping_reads_the_field_detail():
    concept = KINDS["add_concept"]
    assert concept.refused_field(DomainError("x", field="name")) == "name"
    assert concept.refused_field(DomainError("x")) == ""


def test_the_queue_shows_a_quote_as_its_words_at_the_same_query_cost_per_page(
    f, world, monkeypatch
):
    """Emphasis, links and code read as words; raw HTML stays text; and 3 or 12 rows of
    such quotes cost the same queries."""
    quote = "**RAG** builds on [vector search](https://example.org/vs) and `ANN` <b>x</b>."
    doc = graph.source_import(
        slug="md", title="Markdown", text=f"Intro.\n\n{quote}\n", acting_user=None
    ).source
    nodes = [f.concept(f"Node {i}") for i in range(13)]
    for i in range(12):
        f.edge_proposal(nodes[i], nodes[i + 1], "related", doc=doc, quote=quote)
    client = client_for(f, "reviewer")
    html = client.get(reverse("review:queue")).content.decode()
    assert "RAG builds on vector search and ANN &lt;b&gt;x&lt;/b&gt;." in html
    assert "**RAG**" not in html and "](https://example.org/vs)" not in html

    def queries(size):
        monkeypatch.setattr(selectors, "PAGE_SIZE", size)
        with CaptureQueriesContext(connection) as ctx:
            client.get(reverse("review:queue"))
        return len(ctx.captured_queries)

    assert queries(3) == queries(12)
