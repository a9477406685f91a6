"""Curator pages over HTTP: concepts, a concept's page, retire/reactivate/unmerge, the ontology.

Every write is checked against the database afterwards, and every refusal both in the
words shown to the curator and in the rows that did not change.
"""

from __future__ import annotations

import html as htmllib
import re

import pytest
from django.test import Client
from django.urls import reverse

from kgreview.agents.models import AgentRun, DroppedCandidate
from kgreview.agents.runs import agent_run_create
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services
from kgreview.graph.models import Concept, Edge, RelationType
from kgreview.review import decisions
from kgreview.review.models import Proposal
from kgreview.review.services import proposal_create

pytestmark = pytest.mark.django_db

HOSTILE = "<script>alert(1)</script>"


# --- helpers ----------------------------------------------------------------------------


def client_for(f, role: str | None) -> Client:
    """A client signed in with ``role`` ("anonymous": not signed in; None: no role)."""
    client = Client()
    if role != "anonymous":
        client.force_login(f.user(role=role))
    return client


@pytest.fixture
def curator(f) -> Client:
    return client_for(f, "curator")


@pytest.fixture
def viewer(f) -> Client:
    return client_for(f, "viewer")


def page(response) -> str:
    return response.content.decode()


def flashes(response) -> list[tuple[str, str]]:
    """The messages shown on a page, as (level, text) with the HTML entities decoded."""
    found = re.findall(r'<li class="msg-(\w+)">(.*?)</li>', page(response), re.S)
    return [(level, htmllib.unescape(text)) for level, text in found]


def listed(response) -> list[str]:
    """The concept names in the first column of the concepts table, in page order."""
    names = re.findall(r'<td><a href="/concepts/\d+/">(.*?)</a></td>', page(response))
    return [htmllib.unescape(n) for n in names]


def reload(obj):
    obj.refresh_from_db()
    return obj


@pytest.fixture
def kinds(f):
    """One concept of every kind the list filters by."""
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    f.edge(emb, vs)
    orphan = f.concept("Orphan topic")
    loser, survivor = f.concept("Vector searches"), f.concept("Vector index")
    services.concept_merge(loser=loser, survivor=survivor, acting_user=None)
    retired = services.concept_retire(concept=f.concept("Retired topic"), acting_user=None)
    return {
        "emb": emb,
        "vs": vs,
        "orphan": orphan,
        "loser": loser,
        "survivor": survivor,
        "retired": retired,
    }


# --- who may read and write -------------------------------------------------------------


@pytest.mark.parametrize("name", ["concepts", "concept-detail", "ontology"])
def test_curator_pages_send_anonymous_users_to_login(f, name):
    """Reading concepts or the ontology needs a signed-in user."""
    c = f.concept("Embeddings")
    args = [c.pk] if name == "concept-detail" else []
    response = client_for(f, "anonymous").get(reverse(name, args=args))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login") + "?next=")


@pytest.mark.parametrize("name", ["concepts", "concept-detail", "ontology"])
def test_curator_pages_are_closed_to_users_without_a_role(f, name):
    """A signed-in account with no role is refused (403), not shown the graph."""
    c = f.concept("Embeddings")
    args = [c.pk] if name == "concept-detail" else []
    response = client_for(f, None).get(reverse(name, args=args))
    assert response.status_code == 403
    assert "Embeddings" not in page(response)


def test_anonymous_curator_posts_go_to_login_and_change_nothing(f):
    """Retire, unmerge and relation changes from a signed-out browser write nothing."""
    orphan = f.concept("Orphan topic")
    loser, survivor = f.concept("Finetuning"), f.concept("Fine-tuning")
    services.concept_merge(loser=loser, survivor=survivor, acting_user=None)
    client = client_for(f, "anonymous")
    posts = [
        (reverse("concept-status", args=[orphan.pk]), {"action": "retire"}),
        (reverse("concept-unmerge", args=[loser.pk]), {}),
        (reverse("relation-action", args=[f.relation("related").pk]), {"action": "retire"}),
    ]
    for url, data in posts:
        response = client.post(url, data)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert reload(orphan).status == "active"
    assert reload(loser).status == "merged"
    assert f.relation("related").active is True


@pytest.mark.parametrize("role", ["viewer", "reviewer"])
def test_non_curators_cannot_retire_reactivate_or_unmerge_concepts(f, role):
    """Viewers and reviewers get 403 on every concept write, and nothing changes."""
    orphan = f.concept("Orphan topic")
    retired = services.concept_retire(concept=f.concept("Retired topic"), acting_user=None)
    loser, survivor = f.concept("Finetuning"), f.concept("Fine-tuning")
    services.concept_merge(loser=loser, survivor=survivor, acting_user=None)
    client = client_for(f, role)
    assert (
        client.post(reverse("concept-status", args=[orphan.pk]), {"action": "retire"}).status_code
        == 403
    )
    assert (
        client.post(
            reverse("concept-status", args=[retired.pk]), {"action": "reactivate"}
        ).status_code
        == 403
    )
    response = client.post(reverse("concept-unmerge", args=[loser.pk]))
    assert response.status_code == 403
    assert reload(orphan).status == "active"
    assert reload(retired).status == "retired"
    assert reload(loser).status == "merged" and loser.merged_into == survivor


@pytest.mark.parametrize("role", ["viewer", "reviewer"])
def test_non_curators_cannot_change_relation_types(f, role):
    """Retire, reactivate and describe are refused with 403 and leave the type as it was."""
    rel = f.relation("related")
    old = services.relation_type_retire(relation=f.relation("applies_to"), acting_user=None)
    client = client_for(f, role)
    url = reverse("relation-action", args=[rel.pk])
    assert client.post(url, {"action": "retire"}).status_code == 403
    assert (
        client.post(url, {"action": "describe", "label": "X", "verb": "x", "description": "x"})
    ).status_code == 403
    back = client.post(reverse("relation-action", args=[old.pk]), {"action": "reactivate"})
    assert back.status_code == 403
    rel = reload(rel)
    assert rel.active and rel.label == "Related" and rel.verb != "x"
    assert reload(old).active is False


def test_curator_writes_need_a_post(curator, f):
    """GET on a write URL is 405, so a link or a prefetch cannot retire anything."""
    orphan = f.concept("Orphan topic")
    rel = f.relation("related")
    assert curator.get(reverse("concept-status", args=[orphan.pk])).status_code == 405
    assert curator.get(reverse("concept-unmerge", args=[orphan.pk])).status_code == 405
    assert curator.get(reverse("relation-action", args=[rel.pk])).status_code == 405
    assert reload(orphan).status == "active" and reload(rel).active


# --- the concepts list ------------------------------------------------------------------


def test_concepts_lists_active_concepts_by_name_with_edge_counts_and_orphan_badges(viewer, kinds):
    """The default list is active concepts in name order; an edgeless one is marked orphan."""
    response = viewer.get(reverse("concepts"))
    assert response.status_code == 200
    assert listed(response) == ["Embeddings", "Orphan topic", "Vector index", "Vector search"]
    html = page(response)
    row = re.search(
        rf'<tr>\s*<td><a href="/concepts/{kinds["emb"].pk}/">Embeddings</a>.*?</tr>', html, re.S
    )
    assert row and 'class="badge ok">active' in row.group(0)
    assert '<td class="num">1</td>' in row.group(0)
    orphan = re.search(r"Orphan topic</a></td>.*?</tr>", html, re.S).group(0)
    assert 'class="badge warn">orphan' in orphan and '<td class="num">0</td>' in orphan


@pytest.mark.parametrize(
    "show,expected",
    [
        ("active", ["Embeddings", "Orphan topic", "Vector index", "Vector search"]),
        ("orphans", ["Orphan topic", "Vector index"]),
        ("merged", ["Vector searches"]),
        ("retired", ["Retired topic"]),
        (
            "all",
            [
                "Embeddings",
                "Orphan topic",
                "Retired topic",
                "Vector index",
                "Vector search",
                "Vector searches",
            ],
        ),
    ],
)
def test_concepts_show_filter_selects_concepts_by_status(viewer, kinds, show, expected):
    """show=active|orphans|merged|retired|all lists exactly the concepts in that state."""
    response = viewer.get(reverse("concepts"), {"show": show})
    assert listed(response) == expected
    assert f'<option value="{show}" selected>' in page(response)


def test_concepts_merged_rows_link_to_their_survivor(viewer, kinds):
    """A merged concept's row says which concept it was merged into, with a link."""
    html = page(viewer.get(reverse("concepts"), {"show": "merged"}))
    survivor = kinds["survivor"]
    assert re.search(
        rf'merged into</span> <a href="/concepts/{survivor.pk}/">Vector index</a>', html
    )


@pytest.mark.parametrize("bad", ["deleted", "ALL", "", "<b>x</b>"])
def test_concepts_unknown_show_value_falls_back_to_active(viewer, kinds, bad):
    """An unknown show value lists active concepts and selects "active" in the form."""
    response = viewer.get(reverse("concepts"), {"show": bad})
    assert response.status_code == 200
    assert listed(response) == ["Embeddings", "Orphan topic", "Vector index", "Vector search"]
    assert '<option value="active" selected>' in page(response)
    assert "<b>x</b>" not in page(response)


def test_concepts_search_matches_names_and_aliases_case_insensitively(viewer, f):
    """q finds a concept by part of its name or of an alias, ignoring case, once each."""
    f.concept("Retrieval-augmented generation", aliases=["RAG", "RAG pipeline"])
    f.concept("Vector search")
    f.concept("Storage tiers")
    assert listed(viewer.get(reverse("concepts"), {"q": "rag"})) == [
        "Retrieval-augmented generation",
        "Storage tiers",
    ]
    assert listed(viewer.get(reverse("concepts"), {"q": "VECTOR"})) == ["Vector search"]
    assert listed(viewer.get(reverse("concepts"), {"q": "pipeline"})) == [
        "Retrieval-augmented generation"
    ]


def test_concepts_search_combines_with_the_show_filter(viewer, kinds):
    """q narrows within the chosen status, e.g. merged concepts whose name matches."""
    assert listed(viewer.get(reverse("concepts"), {"q": "vector", "show": "merged"})) == [
        "Vector searches"
    ]
    assert listed(viewer.get(reverse("concepts"), {"q": "vector", "show": "orphans"})) == [
        "Vector index"
    ]


def test_concepts_search_collapses_spaces_and_echoes_the_query(viewer, f):
    """Runs of spaces in q count as one and the cleaned query is shown back in the box."""
    f.concept("Vector search")
    response = viewer.get(reverse("concepts"), {"q": "  vector    search  "})
    assert listed(response) == ["Vector search"]
    assert 'name="q" value="vector search"' in page(response)


def test_concepts_search_query_is_cut_to_100_characters(viewer, f):
    """An overlong q is truncated, not an error; the box shows the first 100 characters."""
    f.concept("Vector search")
    response = viewer.get(reverse("concepts"), {"q": "v" * 500})
    assert response.status_code == 200
    assert f'name="q" value="{"v" * 100}"' in page(response)
    assert "v" * 101 not in page(response)


def test_concepts_without_matches_say_nothing_matches_the_query(viewer, f):
    """An empty result explains itself and repeats what was searched for."""
    f.concept("Vector search")
    html = page(viewer.get(reverse("concepts"), {"q": "quantum"}))
    assert "No concepts here" in html and "Nothing matches “quantum”" in html
    assert 'id="concept-list"' not in html


def test_concepts_page_by_name_with_a_next_link(viewer, f):
    """Past 100 concepts the list pages by name; the link carries q and show along."""
    for i in range(101):
        f.concept(f"Topic {i:03d}")
    first = viewer.get(reverse("concepts"), {"q": "topic", "show": "orphans"})
    names = listed(first)
    assert len(names) == 100 and names[0] == "Topic 000" and names[-1] == "Topic 099"
    assert "?q=topic&amp;show=orphans&amp;after=Topic%20099" in page(first)
    second = viewer.get(
        reverse("concepts"), {"q": "topic", "show": "orphans", "after": "Topic 099"}
    )
    assert listed(second) == ["Topic 100"]
    assert "Next page" not in page(second)


def test_concepts_list_escapes_hostile_names_and_queries(viewer, f):
    """A concept named like a script tag, and a hostile query, are shown as text."""
    f.concept(HOSTILE, description='<img src=x onerror="alert(2)">')
    response = viewer.get(reverse("concepts"), {"q": '"><script>alert(3)</script>'})
    assert "<script>alert(3)" not in page(response)
    html = page(viewer.get(reverse("concepts"), {"q": "script"}))
    assert listed(viewer.get(reverse("concepts"), {"q": "script"})) == [HOSTILE]
    assert HOSTILE not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html


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
        f'<strong>Embeddings</strong> <span class="verb">is a prerequisite for</span> '
        f'<a href="/concepts/{vs.pk}/">Vector search</a>'
    ) in html
    assert (
        f'<a href="/concepts/{tok.pk}/">Tokenization</a> <span class="verb">is a prerequisite '
        "for</span> <strong>Embeddings</strong>"
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
    assert f'Merged into <a href="/concepts/{survivor.pk}/">Fine-tuning</a>' in mine
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
    decisions.proposal_accept(proposal_id=p.pk, reviewer=f.user(role="curator"))
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
    f.user("vera", role="viewer")
    client.login(username="vera", password="pw-12345")
    response = client.post(
        reverse("concept-status", args=[f.concept("RAG").pk]), {"action": "retire"}
    )
    assert response.status_code == 403
    assert "Only curators can do this." in response.content.decode()


# --- the ontology -----------------------------------------------------------------------


def relation_rows(response) -> dict[str, tuple[int, int, str]]:
    """key -> (active edges, open proposals, status text) from the relation table."""
    rows = re.findall(
        r'<td><code>([\w-]+)</code>.*?<td class="num edges">(\d+)</td>\s*'
        r'<td class="num"><a [^>]*>(\d+)</a></td>\s*<td><span class="badge \w+">([^<]+)</span>',
        page(response),
        re.S,
    )
    return {key: (int(e), int(p), status.strip()) for key, e, p, status in rows}


def unknown_rows(response) -> list[tuple[str, int, int, str]]:
    """(label, candidates, sources, example) from the unknown-relations panel, in order."""
    panel = re.search(
        r'<section class="card" id="unknown-relations">(.*?)</section>', page(response), re.S
    ).group(1)
    rows = re.findall(
        r'<tr><td><code>(.*?)</code></td><td class="num">(\d+)</td><td class="num">(\d+)</td>'
        r'<td class="quote-snippet">(.*?)</td></tr>',
        panel,
        re.S,
    )
    return [(htmllib.unescape(a), int(b), int(c), htmllib.unescape(d)) for a, b, c, d in rows]


def test_ontology_lists_every_relation_type_with_edges_and_open_proposals(viewer, f):
    """Each type shows its active edge count and open proposals; retired types say so."""
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    f.edge(emb, vs)
    f.edge(f.concept("Tokenization"), emb)
    f.edge_proposal(vs, f.concept("Reranking"))
    services.relation_type_retire(relation=f.relation("applies_to"), acting_user=None)
    rows = relation_rows(viewer.get(reverse("ontology")))
    assert set(rows) == set(RelationType.objects.values_list("key", flat=True))
    assert rows["prerequisite"] == (2, 1, "active")
    assert rows["related"] == (0, 0, "active")
    assert rows["applies_to"][2].startswith("retired ")


def test_ontology_gives_curators_change_forms_and_viewers_none(f, curator, viewer):
    """Describe/retire forms and the admin link are for curators only."""
    rel = f.relation("related")
    mine = page(curator.get(reverse("ontology")))
    assert f'action="/ontology/{rel.pk}/"' in mine and 'class="describe-form"' in mine
    assert 'value="retire"' in mine and "run it now" in mine
    theirs = page(viewer.get(reverse("ontology")))
    assert "/ontology/" + str(rel.pk) not in theirs and "describe-form" not in theirs
    assert "run it now" not in theirs and "/admin/" not in theirs


def dropped(run, doc, label, *, reason="unknown_relation", evidence="", requeued=False):
    from django.utils import timezone

    return DroppedCandidate.objects.create(
        run=run,
        revision=doc.current_revision,
        reason=reason,
        relation_label=label,
        candidate={"source": "A", "target": "B", "relation": label, "evidence": evidence},
        requeued_at=timezone.now() if requeued else None,
    )


def test_ontology_groups_unknown_relations_by_label_with_candidate_and_source_counts(viewer, f):
    """Waiting unknown_relation rows are grouped by label, most candidates first."""
    run = agent_run_create(agent=AgentRun.Agent.CONSTRUCT)
    d1, d2, d3 = f.lesson(), f.lesson(), f.lesson()
    dropped(run, d1, "alternative_to", evidence="DPO is an alternative to RLHF.")
    dropped(run, d1, "alternative_to", evidence="Another sentence.")
    dropped(run, d2, "alternative_to", evidence="A third sentence.")
    dropped(run, d3, "mitigates", evidence="Caching mitigates latency.")
    dropped(run, d3, "mitigates", evidence="Batching mitigates cost.")
    dropped(run, d1, "complements", evidence="Sparse complements dense.")
    # Not waiting for discovery: requeued, another reason, or no label.
    dropped(run, d3, "alternative_to", requeued=True)
    dropped(run, d2, "requeued_only", requeued=True)
    dropped(run, d2, "self_ref", reason="self_loop")
    dropped(run, d2, "")
    rows = unknown_rows(viewer.get(reverse("ontology")))
    assert rows == [
        ("alternative_to", 3, 2, "DPO is an alternative to RLHF."),
        ("mitigates", 2, 1, "Caching mitigates latency."),
        ("complements", 1, 1, "Sparse complements dense."),
    ]


def test_ontology_says_when_no_unknown_relations_are_waiting(viewer, f):
    """With only requeued candidates, the panel says none are waiting."""
    run = agent_run_create(agent=AgentRun.Agent.CONSTRUCT)
    dropped(run, f.lesson(), "alternative_to", requeued=True)
    response = viewer.get(reverse("ontology"))
    assert unknown_rows(response) == []
    assert "None waiting." in page(response)


def test_ontology_states_the_discovery_thresholds(viewer, settings):
    """The panel says how often a label must be seen before discovery proposes it."""
    settings.KG_DISCOVERY_MIN_SUPPORT = 7
    settings.KG_DISCOVERY_MIN_SOURCES = 4
    html = page(viewer.get(reverse("ontology")))
    assert "seen 7 or more times in 4 or more sources" in html


def test_ontology_escapes_hostile_unknown_labels_and_quotes(viewer, f):
    """Labels and quotes found in lessons are shown as text, never as markup."""
    run = agent_run_create(agent=AgentRun.Agent.CONSTRUCT)
    dropped(run, f.lesson(), "<img src=x onerror=alert(1)>", evidence=HOSTILE)
    response = viewer.get(reverse("ontology"))
    assert unknown_rows(response) == [("<img src=x onerror=alert(1)>", 1, 1, HOSTILE)]
    html = page(response)
    assert "<img src=x" not in html and HOSTILE not in html


# --- changing a relation type -----------------------------------------------------------


def test_curator_retires_a_relation_type_and_its_edges_stay(curator, f):
    """A retired type is inactive with a time; its edges stay active and counted."""
    rel = f.relation("prerequisite")
    edge = f.edge(f.concept("Embeddings"), f.concept("Vector search"))
    response = curator.post(
        reverse("relation-action", args=[rel.pk]), {"action": "retire"}, follow=True
    )
    assert response.redirect_chain == [(reverse("ontology"), 302)]
    assert ("success", '"prerequisite" retired; its edges and history stay.') in flashes(response)
    rel = reload(rel)
    assert rel.active is False and rel.retired_at is not None
    assert reload(edge).status == Edge.Status.ACTIVE
    assert relation_rows(response)["prerequisite"][0] == 1
    assert relation_rows(response)["prerequisite"][2].startswith("retired")


def test_retiring_a_retired_relation_type_is_refused_in_words(curator, f):
    """A second retire says the type is already retired and keeps its first retirement time."""
    rel = services.relation_type_retire(relation=f.relation("related"), acting_user=None)
    first = rel.retired_at
    response = curator.post(
        reverse("relation-action", args=[rel.pk]), {"action": "retire"}, follow=True
    )
    assert flashes(response) == [("error", 'The relation "related" is already retired.')]
    assert reload(rel).retired_at == first


def test_curator_reactivates_a_retired_relation_type(curator, f):
    """Reactivation makes the type active again and clears its retirement time."""
    rel = services.relation_type_retire(relation=f.relation("related"), acting_user=None)
    response = curator.post(
        reverse("relation-action", args=[rel.pk]), {"action": "reactivate"}, follow=True
    )
    assert ("success", '"related" is active again.') in flashes(response)
    rel = reload(rel)
    assert rel.active is True and rel.retired_at is None


def test_reactivating_an_active_relation_type_is_refused_in_words(curator, f):
    """Reactivate on an active type says so and changes nothing."""
    rel = f.relation("related")
    response = curator.post(
        reverse("relation-action", args=[rel.pk]), {"action": "reactivate"}, follow=True
    )
    assert flashes(response) == [("error", 'The relation "related" is already active.')]
    assert reload(rel).active is True


def test_curator_describes_a_relation_type(curator, f):
    """Label, verb and description are saved trimmed; the key and shape do not change."""
    rel = f.relation("related")
    shape = (rel.key, rel.directed, rel.symmetric, rel.acyclic)
    response = curator.post(
        reverse("relation-action", args=[rel.pk]),
        {
            "action": "describe",
            "label": "  Is related  ",
            "verb": " is related to ",
            "description": "  Loosely connected topics.  ",
        },
        follow=True,
    )
    assert ("success", '"related" described.') in flashes(response)
    rel = reload(rel)
    assert (rel.label, rel.verb, rel.description) == (
        "Is related",
        "is related to",
        "Loosely connected topics.",
    )
    assert (rel.key, rel.directed, rel.symmetric, rel.acyclic) == shape
    assert "Loosely connected topics." in page(response)


def test_describing_a_relation_cuts_overlong_fields(curator, f):
    """Label and verb are cut to 100 characters and the description to 5,000."""
    rel = f.relation("related")
    curator.post(
        reverse("relation-action", args=[rel.pk]),
        {"action": "describe", "label": "L" * 300, "verb": "v" * 300, "description": "d" * 9000},
    )
    rel = reload(rel)
    assert (len(rel.label), len(rel.verb), len(rel.description)) == (100, 100, 5000)


@pytest.mark.parametrize(
    "data",
    [
        {"label": "", "verb": "is near"},
        {"label": "Near", "verb": "   "},
        {"verb": "is near"},
        {"label": "Near"},
    ],
)
def test_describing_a_relation_without_label_or_verb_is_refused(curator, f, data):
    """A describe without a label or a verb says what is missing and writes nothing."""
    rel = f.relation("related")
    before = (rel.label, rel.verb, rel.description)
    response = curator.post(
        reverse("relation-action", args=[rel.pk]),
        {"action": "describe", "description": "New text.", **data},
        follow=True,
    )
    assert flashes(response) == [("error", "A relation needs a label and a verb.")]
    rel = reload(rel)
    assert (rel.label, rel.verb, rel.description) == before


@pytest.mark.parametrize("data", [{}, {"action": "delete"}, {"action": "rename"}])
def test_unknown_relation_action_is_refused_and_changes_nothing(curator, f, data):
    """Anything but retire, reactivate or describe is answered with the choices."""
    rel = f.relation("related")
    response = curator.post(reverse("relation-action", args=[rel.pk]), data, follow=True)
    assert flashes(response) == [("error", "Choose retire, reactivate or describe.")]
    assert reload(rel).active is True


def test_relation_action_on_a_missing_type_is_404(curator):
    """An id that names no relation type is a 404."""
    response = curator.post(reverse("relation-action", args=[999999]), {"action": "retire"})
    assert response.status_code == 404


def test_a_hostile_relation_description_is_saved_as_is_and_shown_as_text(curator, f):
    """What a curator types is stored verbatim and escaped on the ontology page."""
    rel = f.relation("related")
    response = curator.post(
        reverse("relation-action", args=[rel.pk]),
        {"action": "describe", "label": "<b>Rel</b>", "verb": "relates", "description": HOSTILE},
        follow=True,
    )
    assert reload(rel).description == HOSTILE and rel.label == "<b>Rel</b>"
    html = page(response)
    assert HOSTILE not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>Rel</b>" not in html


def test_retired_relation_types_are_listed_after_active_ones(viewer, f):
    """Active types come first, so the vocabulary in use reads at the top."""
    services.relation_type_retire(relation=f.relation("applies_to"), acting_user=None)
    keys = list(relation_rows(viewer.get(reverse("ontology"))))
    assert keys[-1] == "applies_to"
    assert keys[:-1] == sorted(keys[:-1])


def test_open_proposal_counts_ignore_decided_proposals(viewer, f):
    """Only pending and held proposals count as open on the ontology page."""
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    p = f.edge_proposal(emb, vs)
    f.edge_proposal(
        emb,
        vs,
        "related",
        confidence=0.3,
        quote="Unlike keyword search, dense retrieval compares meanings.",
    )
    decisions.proposal_reject(
        proposal_id=p.pk, reviewer=f.user(role="reviewer"), reason_code="too_vague"
    )
    rows = relation_rows(viewer.get(reverse("ontology")))
    assert Proposal.objects.get(pk=p.pk).status == "rejected"
    assert rows["prerequisite"][1] == 0 and rows["related"][1] == 1
