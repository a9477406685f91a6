"""Curator pages over HTTP in the graph app: who may read and write, the concepts list.

Every write is checked against the database afterwards, and every refusal both in the
words shown to the curator and in the rows that did not change.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from kgreview.graph import services
from tests.pages import HOSTILE, client_for, listed, page, reload

pytestmark = pytest.mark.django_db


@pytest.fixture
def curator(f) -> Client:
    return client_for(f, "curator")


@pytest.fixture
def viewer(f) -> Client:
    return client_for(f, "viewer")


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
