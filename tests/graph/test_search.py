"""Concept search: exact, then prefix, then fuzzy; one hit per concept; fresh names."""

from __future__ import annotations

import pytest

from kgreview.graph import services
from kgreview.graph.search import concept_search

pytestmark = pytest.mark.django_db


def test_an_exact_name_comes_before_prefixes_and_fuzzy_matches(f):
    """ "vector search" finds itself first, then names that start with it."""
    f.concept("Vector search engines")
    f.concept("Vector search")
    f.concept("Vectro serch")
    hits = concept_search(q="vector search", limit=5)
    assert [(h.concept.name, h.match) for h in hits[:2]] == [
        ("Vector search", "exact"),
        ("Vector search engines", "prefix"),
    ]
    assert hits[2].concept.name == "Vectro serch" and hits[2].match == "fuzzy"


def test_a_concept_is_listed_once_under_its_best_name(f):
    """An alias that matches exactly wins over the canonical name's fuzzy match."""
    f.concept("Retrieval-augmented generation", aliases=["RAG", "RAG pipeline"])
    hits = concept_search(q="rag", limit=5)
    assert len(hits) == 1
    assert (hits[0].matched_name, hits[0].match) == ("RAG", "exact")


def test_names_added_after_a_search_are_found_by_the_next(f):
    """The cached name list follows new aliases and merges."""
    emb = f.concept("Embeddings")
    assert all(h.match != "exact" for h in concept_search(q="vector embeddings"))
    services.concept_add_alias(concept=emb, name="Vector embeddings", acting_user=None)
    assert concept_search(q="vector embeddings")[0].match == "exact"
    twin = f.concept("Text embeddings")
    services.concept_merge(loser=twin, survivor=emb, reason="Same.", acting_user=None)
    hit = concept_search(q="text embeddings")[0]
    assert hit.concept.pk == emb.pk and hit.match == "exact"
