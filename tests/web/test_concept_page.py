"""A concept's page over HTTP: what it shows, retiring and reactivating, undoing a merge.

Every write is checked against the database afterwards, and every refusal both in the
words shown to the curator and in the rows that did not change.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services
from kgreview.graph.models import Concept
from kgreview.review.decide import decisions
from kgreview.review.services import proposal_create
from tests.pages import HOSTILE, client_for, flashes, page, reload

pytestmark = pytest.mark.django_db


@pytest.fixture
def curator(f) -> Client:
    return client_for(f, "curator")


@pytest.fixture
def viewer(f) -> Client:
    return client_for(f, "viewer")


# --- a concept's page -------------------------------------------------------------------


def test_concept_detail_shows_names_edges_both_ways_and_open_proposals(viewer, f):
    """Canonical name first, then aliases; edges in and out read as sentences."""
    emb = f.concept("Embeddings", aliases=["Vector embeddings", "Dense vectors"])
    vs, tok = f.concept("Vector search"), f.concept("Tokenization")
    out_edge = f.edge(emb, vs)
    in_edge = f.edge(tok, emb)
    f.edge_proposal(emb, f.concept("Reranking"), "related")
    html = page(viewer.get(reverse("concept-detail", args=[emb.pk])))
    names = re.search(r'<ul class="proposal-list" id="concept-names">(.*?)</ul>', html, re.S)
    order = re.findall(r"<li>([^<]+?) <span", names.group(1))
    assert order == ["Embeddings", "Dense vectors", "Vector embeddings"]
    assert (
        f'<strong><bdi>Embeddings</bdi></strong> <span class="verb">is a prerequisite for</span> '
        f'<a href="/concepts/{vs.pk}/"><bdi>Vector search</bdi></a>'
    ) in html
    assert (
        f'<a href="/concepts/{tok.pk}/"><bdi>Tokenization</bdi></a> <span class="verb">is a '
        "prerequisite for</span> <strong><bdi>Embeddings</bdi></strong>"
    ) in html
    assert f"#{out_edge.pk}</a>" in html and f"#{in_edge.pk}</a>" in html
    assert "Waiting for review" in html and "Reranking" in html


def test_concept_detail_does_not_read_lesson_texts(viewer, f):
    """Edges and sources are listed without loading the text of any revision."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from kgreview.graph.models import SourceConcept, SourceRevision

    doc = f.lesson(slug="texts")
    revision = doc.current_revision
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    quote = "Before learning vector search you should understand embeddings."
    f.edge(emb, vs, evidence=f.evidence(revision, quote))
    SourceConcept.objects.create(source=doc, concept=emb, revision=revision)
    text_column = connection.ops.quote_name(SourceRevision._meta.db_table) + '."text"'
    with CaptureQueriesContext(connection) as ctx:
        html = page(viewer.get(reverse("concept-detail", args=[emb.pk])))
    assert "Texts" in html and "Vector search" in html
    assert not [q["sql"] for q in ctx.captured_queries if text_column in q["sql"]]


def test_concept_detail_offers_retire_to_curators_only_for_orphans(f, curator, viewer):
    """The retire button is a curator's, and only on a concept without active edges."""
    orphan = f.concept("Orphan topic")
    emb = f.concept("Embeddings")
    f.edge(emb, f.concept("Vector search"))
    mine = page(curator.get(reverse("concept-detail", args=[orphan.pk])))
    assert 'id="retire"' in mine and f'action="/concepts/{orphan.pk}/status/"' in mine
    assert "No active edges: an orphan." in mine
    assert 'id="retire"' not in page(curator.get(reverse("concept-detail", args=[emb.pk])))
    theirs = page(viewer.get(reverse("concept-detail", args=[orphan.pk])))
    assert "No active edges: an orphan." in theirs
    assert 'id="retire"' not in theirs and f"/concepts/{orphan.pk}/status/" not in theirs


def test_concept_detail_of_a_retired_concept_offers_reactivation_to_curators(f, curator, viewer):
    """A retired concept says so; curators see a reactivate button, viewers do not."""
    retired = services.concept_retire(concept=f.concept("Retired topic"), acting_user=None)
    mine = page(curator.get(reverse("concept-detail", args=[retired.pk])))
    assert 'class="badge warn">retired' in mine and 'id="reactivate"' in mine
    assert 'id="retire"' not in mine
    assert 'id="reactivate"' not in page(viewer.get(reverse("concept-detail", args=[retired.pk])))


def test_concept_detail_of_a_merged_concept_points_to_the_survivor(f, curator, viewer):
    """A merged concept links its survivor; only curators get the undo button."""
    loser, survivor = f.concept("Finetuning"), f.concept("Fine-tuning")
    services.concept_merge(loser=loser, survivor=survivor, acting_user=None)
    mine = page(curator.get(reverse("concept-detail", args=[loser.pk])))
    assert f'Merged into <a href="/concepts/{survivor.pk}/"><bdi>Fine-tuning</bdi></a>' in mine
    assert 'id="unmerge"' in mine and f'action="/concepts/{loser.pk}/unmerge/"' in mine
    assert 'id="retire"' not in mine and 'id="reactivate"' not in mine
    theirs = page(viewer.get(reverse("concept-detail", args=[loser.pk])))
    assert "Merged into" in theirs and 'id="unmerge"' not in theirs
    # The survivor lists the merged name, marked with where it came from.
    kept = page(viewer.get(reverse("concept-detail", args=[survivor.pk])))
    assert re.search(
        rf"<li>Finetuning <span[^>]*>[^<]*\(from <a href=\"/concepts/{loser.pk}/\">", kept
    )


def test_concept_detail_of_a_missing_concept_is_404(viewer):
    """An id that names no concept is a 404, not an error page."""
    assert viewer.get(reverse("concept-detail", args=[999999])).status_code == 404


def test_concept_detail_escapes_hostile_names_and_descriptions(viewer, f):
    """Script tags in a concept's name, alias or description are shown as text."""
    c = f.concept(HOSTILE, description="<b onmouseover=alert(2)>hi</b>", aliases=["<i>x</i>"])
    f.edge(c, f.concept("Vector search"))
    html = page(viewer.get(reverse("concept-detail", args=[c.pk])))
    assert HOSTILE not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b onmouseover" not in html and "<i>x</i>" not in html


# --- retire and reactivate --------------------------------------------------------------


def test_curator_retires_an_orphan_concept(curator, f):
    """Retiring an orphan marks it retired with a time and says its names stay reserved."""
    orphan = f.concept("Orphan topic", aliases=["Lonely topic"])
    response = curator.post(
        reverse("concept-status", args=[orphan.pk]), {"action": "retire"}, follow=True
    )
    assert response.redirect_chain == [(reverse("concept-detail", args=[orphan.pk]), 302)]
    assert ("success", '"Orphan topic" retired; its names stay reserved for it.') in flashes(
        response
    )
    orphan = reload(orphan)
    assert orphan.status == "retired" and orphan.retired_at is not None
    assert orphan.aliases.count() == 2
    assert 'id="reactivate"' in page(response)
    assert graph_selectors.concept_by_name(name="Lonely topic") == orphan  # still reserved
    assert 'class="badge warn">retired' in page(response)


def test_retiring_a_concept_with_active_edges_is_refused_in_words(curator, f):
    """A concept still at an end of an edge stays active; the message counts the edges."""
    emb = f.concept("Embeddings")
    f.edge(emb, f.concept("Vector search"))
    f.edge(f.concept("Tokenization"), emb)
    response = curator.post(
        reverse("concept-status", args=[emb.pk]), {"action": "retire"}, follow=True
    )
    assert response.status_code == 200
    assert flashes(response) == [
        ("error", '"Embeddings" is an end of 2 active edge(s); undo or invalidate them first.')
    ]
    emb = reload(emb)
    assert emb.status == "active" and emb.retired_at is None
    assert graph_selectors.edges_active().count() == 2


def test_retiring_a_merged_concept_is_refused_in_words(curator, f):
    """A merged concept cannot be retired; it stays merged into its survivor."""
    loser, survivor = f.concept("Finetuning"), f.concept("Fine-tuning")
    services.concept_merge(loser=loser, survivor=survivor, acting_user=None)
    response = curator.post(
        reverse("concept-status", args=[loser.pk]), {"action": "retire"}, follow=True
    )
    assert flashes(response) == [("error", '"Finetuning" is merged, not active.')]
    assert reload(loser).status == "merged" and loser.merged_into == survivor


def test_curator_reactivates_a_retired_concept(curator, f):
    """Reactivating brings the concept back as active and clears its retirement time."""
    retired = services.concept_retire(concept=f.concept("Retired topic"), acting_user=None)
    response = curator.post(
        reverse("concept-status", args=[retired.pk]), {"action": "reactivate"}, follow=True
    )
    assert ("success", '"Retired topic" is active again.') in flashes(response)
    retired = reload(retired)
    assert retired.status == "active" and retired.retired_at is None
    assert graph_selectors.concept_by_name(name="Retired topic") == retired


def test_reactivating_an_active_concept_is_refused_in_words(curator, f):
    """Only a retired concept can be reactivated; an active one is left alone."""
    c = f.concept("Embeddings")
    before = c.updated_at
    response = curator.post(
        reverse("concept-status", args=[c.pk]), {"action": "reactivate"}, follow=True
    )
    assert flashes(response) == [("error", '"Embeddings" is active, not retired.')]
    c = reload(c)
    assert c.status == "active" and c.updated_at == before


@pytest.mark.parametrize("data", [{}, {"action": ""}, {"action": "delete"}, {"action": "RETIRE"}])
def test_unknown_concept_status_action_is_refused_and_changes_nothing(curator, f, data):
    """Anything but retire or reactivate is answered with the choices, and writes nothing."""
    orphan = f.concept("Orphan topic")
    response = curator.post(reverse("concept-status", args=[orphan.pk]), data, follow=True)
    assert flashes(response) == [("error", "Choose retire or reactivate.")]
    assert reload(orphan).status == "active"


def test_concept_status_of_a_missing_concept_is_404(curator):
    """Retiring a concept id that does not exist is a 404."""
    response = curator.post(reverse("concept-status", args=[999999]), {"action": "retire"})
    assert response.status_code == 404


def test_retire_message_escapes_a_hostile_concept_name(curator, f):
    """The success message quoting the name is escaped like the rest of the page."""
    c = f.concept(HOSTILE)
    response = curator.post(
        reverse("concept-status", args=[c.pk]), {"action": "retire"}, follow=True
    )
    assert ("success", f'"{HOSTILE}" retired; its names stay reserved for it.') in flashes(response)
    assert HOSTILE not in page(response)
    assert reload(c).status == "retired"


# --- undoing a merge from the concept's page --------------------------------------------


def test_curator_undoes_a_direct_merge_and_gets_the_edges_back(curator, f):
    """Unmerge makes the loser active again with its own names and edges."""
    loser, survivor = f.concept("Finetuning", aliases=["Fine tuning"]), f.concept("Fine-tuning")
    lora = f.concept("LoRA")
    f.edge(lora, loser, "builds_on")
    services.concept_merge(loser=loser, survivor=survivor, acting_user=None)
    (moved,) = graph_selectors.edges_active()
    assert moved.target == survivor
    response = curator.post(reverse("concept-unmerge", args=[loser.pk]), follow=True)
    assert response.redirect_chain == [(reverse("concept-detail", args=[loser.pk]), 302)]
    assert ("success", '"Finetuning" is a concept of its own again.') in flashes(response)
    loser = reload(loser)
    assert loser.status == "active" and loser.merged_into is None
    assert set(loser.aliases.values_list("name", flat=True)) == {"Finetuning", "Fine tuning"}
    (edge,) = graph_selectors.edges_active()
    assert (edge.source, edge.target, edge.relation.key) == (lora, loser, "builds_on")
    assert 'id="unmerge"' not in page(response)


def test_undoing_an_accepted_merge_proposal_sends_it_back_to_the_queue(curator, f):
    """A merge that came from a proposal is undone as that decision: the proposal is open."""
    a, b = f.concept("Fine-tuning"), f.concept("Finetuning")
    p = proposal_create(
        kind="merge_concepts",
        payload={"survivor_id": a.pk, "loser_id": b.pk, "score": 95.0, "why": "Spelling."},
        confidence=0.9,
    )
    decisions.proposal_accept(proposal_id=p.pk, acting_user=f.user(role="curator"))
    assert reload(b).status == "merged"
    response = curator.post(reverse("concept-unmerge", args=[b.pk]), follow=True)
    assert ("success", '"Finetuning" is a concept of its own again.') in flashes(response)
    assert reload(b).status == "active"
    assert reload(p).status == "pending"


def test_undoing_the_merge_of_an_unmerged_concept_is_refused_in_words(curator, f):
    """Unmerge on an active concept says it is not merged and changes nothing."""
    c = f.concept("Embeddings")
    response = curator.post(reverse("concept-unmerge", args=[c.pk]), follow=True)
    assert flashes(response) == [("error", '"Embeddings" is not merged.')]
    assert reload(c).status == "active"


def test_undoing_a_merge_whose_survivor_was_merged_again_is_refused(curator, f):
    """If the survivor was itself merged since, the message says which merge to undo first."""
    a, b, c = f.concept("Finetuning"), f.concept("Fine-tuning"), f.concept("Fine tuning (FT)")
    services.concept_merge(loser=a, survivor=b, acting_user=None)
    services.concept_merge(loser=b, survivor=c, acting_user=None)
    response = curator.post(reverse("concept-unmerge", args=[a.pk]), follow=True)
    assert flashes(response) == [
        ("error", '"Fine-tuning" was merged again since; undo that merge first.')
    ]
    assert reload(a).status == "merged" and a.merged_into == b


def test_undoing_the_merge_of_a_missing_concept_ends_at_a_404(curator):
    """An unknown concept id writes nothing and leads to a 404 page."""
    count = Concept.objects.count()
    response = curator.post(reverse("concept-unmerge", args=[999999]))
    assert response.status_code == 404 and "Nothing lives at" in response.content.decode()
    assert Concept.objects.count() == count
    # No error left behind in the session to surprise the curator on the next page.
    assert "There is no concept" not in curator.get(reverse("concepts")).content.decode()


def test_a_forbidden_page_says_why_in_words(client, f):
    """A viewer posting a curator action reads the reason, not a bare 403."""
    client.force_login(f.user("vera", role="viewer"))
    response = client.post(
        reverse("concept-status", args=[f.concept("RAG").pk]), {"action": "retire"}
    )
    assert response.status_code == 403
    assert "Only curators can do this." in response.content.decode()
