"""The review card names where its quote sits (page, section) and the other places of
the document that state the same edge."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from kgreview.graph.importing import read_upload, store_document
from kgreview.review.models import Proposal

pytestmark = pytest.mark.django_db

TEXT = (
    "# Networks\n\n"
    "## Routing\n\n"
    "The routing table is part of every IP router. Routers forward packets hop by hop across the "
    "network, one link at a time, and each hop looks the destination up again.\n\n"
    "## Forwarding\n\n"
    "Forwarding is fast. As said before, the routing table is part of every IP router, whatever "
    "the router model, and a table without them cannot forward anything at all.\n"
)


def construct() -> None:
    call_command("construct", "--all", "--json", stdout=io.StringIO())


@pytest.fixture
def stated_twice(settings):
    settings.KG_CHUNK_TOKENS = 60  # each section is a chunk of its own
    raw = TEXT.encode()
    slug, document = read_upload(raw, filename="networks.md", max_bytes=10**6)
    store_document(
        slug=slug, document=document, raw=raw, filename="networks.md", origin="t", acting_user=None
    )
    construct()
    return Proposal.objects.get(kind="add_edge")


def test_the_same_edge_in_two_chunks_is_one_proposal_with_further_support(stated_twice):
    """Both sections state it: one proposal; the second place is its support."""
    (support,) = stated_twice.payload["support"]
    assert "the routing table is part of every ip router" in support["quote"].lower()
    assert support["start"] > stated_twice.evidence_end


@pytest.mark.parametrize("htmx", [False, True])
def test_the_card_shows_the_section_of_the_quote_and_links_the_other_place(
    stated_twice, client, f, htmx
):
    """With and without htmx: the heading path of the quote, the other place with its
    own heading path, each linking into the source page."""
    client.force_login(f.user("rv", role="reviewer"))
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    page = client.get(reverse("review:focus") + f"?id={stated_twice.pk}", **headers)
    html = page.content.decode()
    assert page.status_code == 200
    assert "Networks › Routing" in html
    assert "Also stated in 1 more place of this document" in html
    assert "Networks › Forwarding" in html
    assert f"#q-{stated_twice.evidence_start}" in html
    assert f"at={stated_twice.payload['support'][0]['start']}" in html
