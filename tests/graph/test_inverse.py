"""A relation type's inverse: the one rule of which edges state the same fact
(``construction.keys.fact_forms``, ``graph.rules.fact_keys``), the rule of which pairs
make sense (``rules.inverse_refusal``), the service that declares a pair and the
Ontology page's field for it, with and without htmx."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from construction.keys import edge_dedup_keys, fact_forms
from kgreview.core.errors import InactiveRelation, StateConflict, ValidationFailed
from kgreview.core.models import AuditEntry
from kgreview.graph import rules, services
from kgreview.graph.models import RelationType
from tests.pages import client_for, flashes, page, reload

HX = {"HX-Request": "true"}


# --- The rule, pure ------------------------------------------------------------------------


def test_a_directed_relation_without_an_inverse_states_its_fact_one_way():
    assert fact_forms("a", "applies_to", "b", inverse=None, symmetric=False) == (
        ("a", "applies_to", "b"),
    )
    assert fact_forms("a", "applies_to", "b", inverse="", symmetric=False) == (
        ("a", "applies_to", "b"),
    )


def test_an_inverse_pair_states_one_fact_with_the_ends_swapped():
    forms = fact_forms("rag", "prerequisite", "graphrag", inverse="builds_on", symmetric=False)
    assert forms == (("rag", "prerequisite", "graphrag"), ("graphrag", "builds_on", "rag"))
    back = fact_forms("graphrag", "builds_on", "rag", inverse="prerequisite", symmetric=False)
    assert set(back) == set(forms)  # the rule is the same read from either side


def test_a_symmetric_relation_is_its_own_inverse():
    assert fact_forms(1, 7, 2, inverse=None, symmetric=True) == ((1, 7, 2), (2, 7, 1))
    # Declared or not, the symmetric relation itself is the inverse.
    assert fact_forms(1, 7, 2, inverse=9, symmetric=True) == ((1, 7, 2), (2, 7, 1))


def test_the_same_end_twice_has_one_form():
    assert fact_forms(1, 7, 1, inverse=8, symmetric=False) == ((1, 7, 1),)
    assert fact_forms(1, 7, 1, inverse=None, symmetric=True) == ((1, 7, 1),)


@pytest.mark.parametrize(
    ("relation", "inverse", "symmetric", "expected"),
    [
        ("applies_to", "", False, ("add_edge:c1|applies_to|c2",)),
        (
            "prerequisite",
            "builds_on",
            False,
            ("add_edge:c1|prerequisite|c2", "add_edge:c2|builds_on|c1"),
        ),
        ("related", "", True, ("add_edge:c1|related|c2",)),
    ],
)
def test_the_dedup_keys_of_a_fact(relation, inverse, symmetric, expected):
    """A symmetric relation orders its ends, so its twin has the same key."""
    assert edge_dedup_keys("c1", relation, "c2", symmetric=symmetric, inverse=inverse) == expected
    if symmetric:
        assert edge_dedup_keys("c2", relation, "c1", symmetric=True) == expected


@pytest.mark.django_db
def test_fact_keys_reads_the_declared_pair():
    pre, builds, related, applies = (
        RelationType.objects.get(key=k)
        for k in ("prerequisite", "builds_on", "related", "applies_to")
    )
    assert rules.fact_keys(1, pre, 2) == ((1, pre.pk, 2), (2, builds.pk, 1))
    assert rules.fact_keys(1, builds, 2) == ((1, builds.pk, 2), (2, pre.pk, 1))
    assert rules.fact_keys(1, related, 2) == ((1, related.pk, 2), (2, related.pk, 1))
    assert rules.fact_keys(1, applies, 2) == ((1, applies.pk, 2),)
    assert rules.same_fact((1, pre, 2), (2, builds.pk, 1))
    assert not rules.same_fact((1, pre, 2), (1, builds.pk, 2))


# --- Which pairs make sense --------------------------------------------------------------


@pytest.fixture
def vocabulary(db):
    """Two directed relations free to pair, an acyclic one, a retired one."""
    uses = services.relation_type_create(key="uses", label="Uses", verb="uses", acting_user=None)
    used = services.relation_type_create(
        key="used_by", label="Used by", verb="is used by", acting_user=None
    )
    before = services.relation_type_create(
        key="comes_before",
        label="Comes before",
        verb="comes before",
        acyclic=True,
        acting_user=None,
    )
    old = services.relation_type_create(key="old", label="Old", verb="old", acting_user=None)
    services.relation_type_retire(relation=old, acting_user=None)
    return {"uses": uses, "used_by": used, "comes_before": before, "old": reload(old)}


def _get(key: str) -> RelationType:
    return RelationType.objects.select_related("inverse").get(key=key)


def test_pairing_declares_both_sides_and_is_logged(vocabulary):
    services.relation_type_pair(
        relation=vocabulary["uses"], inverse=vocabulary["used_by"], acting_user=None
    )
    assert _get("uses").inverse.key == "used_by" and _get("used_by").inverse.key == "uses"
    entry = AuditEntry.objects.filter(action="relation_type.pair").get()
    assert entry.after == {"inverse": "used_by"} and "inverse" in entry.summary


def test_declaring_none_releases_both_sides(vocabulary):
    services.relation_type_pair(
        relation=vocabulary["uses"], inverse=vocabulary["used_by"], acting_user=None
    )
    services.relation_type_pair(relation=_get("used_by"), inverse=None, acting_user=None)
    assert _get("uses").inverse is None and _get("used_by").inverse is None


def test_re_pairing_releases_the_old_partner(vocabulary):
    """prerequisite <-> builds_on, then prerequisite <-> comes_before: builds_on is free."""
    services.relation_type_pair(
        relation=_get("prerequisite"), inverse=vocabulary["comes_before"], acting_user=None
    )
    assert _get("prerequisite").inverse.key == "comes_before"
    assert _get("comes_before").inverse.key == "prerequisite"
    assert _get("builds_on").inverse is None


def test_declaring_the_pair_it_has_changes_nothing(vocabulary):
    logged = AuditEntry.objects.count()
    services.relation_type_pair(
        relation=_get("prerequisite"), inverse=_get("builds_on"), acting_user=None
    )
    assert AuditEntry.objects.count() == logged


@pytest.mark.parametrize(
    ("relation", "inverse", "error", "words"),
    [
        ("uses", "uses", ValidationFailed, '"uses" cannot be its own inverse'),
        ("uses", "related", ValidationFailed, '"related" is symmetric, so it is its own inverse'),
        ("related", "uses", ValidationFailed, '"related" is symmetric'),
        ("uses", "old", InactiveRelation, 'The relation "old" was retired'),
        ("old", "uses", InactiveRelation, 'The relation "old" was retired'),
        ("uses", "comes_before", ValidationFailed, '"comes_before" is acyclic and "uses" is not'),
        ("uses", "builds_on", ValidationFailed, '"builds_on" is acyclic and "uses" is not'),
        (
            "comes_before",
            "builds_on",
            StateConflict,
            '"builds_on" is already the inverse of "prerequisite"',
        ),
    ],
)
def test_a_pair_that_makes_no_sense_is_refused_in_words(
    vocabulary, relation, inverse, error, words
):
    logged = AuditEntry.objects.count()
    with pytest.raises(error, match=re.escape(words)):
        services.relation_type_pair(
            relation=_get(relation), inverse=_get(inverse), acting_user=None
        )
    assert AuditEntry.objects.count() == logged
    assert _get("prerequisite").inverse.key == "builds_on"


def test_a_retired_relation_keeps_its_pair(vocabulary):
    """Its edges still state the facts they stated: the pair stays for them."""
    services.relation_type_retire(relation=_get("builds_on"), acting_user=None)
    assert _get("prerequisite").inverse.key == "builds_on"


def test_the_database_refuses_a_symmetric_relation_naming_an_inverse(vocabulary):
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        RelationType.objects.filter(key="related").update(inverse=vocabulary["uses"].pk)


# --- The Ontology page ----------------------------------------------------------------------


@pytest.fixture
def curator(f, db) -> Client:
    return client_for(f, "curator")


def _describe(relation: RelationType, **data) -> dict:
    return {
        "action": "describe",
        "label": relation.label,
        "verb": relation.verb,
        "description": relation.description,
        **data,
    }


def test_the_ontology_page_shows_each_pair_and_offers_the_field(curator, vocabulary):
    body = page(curator.get(reverse("ontology")))
    assert "inverse: <code>builds_on</code>" in body
    assert "“A is a prerequisite for B” is “B builds on A”" in body
    assert 'name="inverse_key"' in body and "symmetric (its own inverse)" in body


@pytest.mark.parametrize("headers", [{}, HX])
def test_a_curator_declares_an_inverse_on_the_ontology_page(curator, vocabulary, headers):
    uses = vocabulary["uses"]
    url = reverse("relation-action", args=[uses.pk])
    response = curator.post(
        url, _describe(uses, inverse_key="used_by"), headers=headers, follow=True
    )
    assert ("success", '"uses" described.') in flashes(response)
    assert _get("used_by").inverse.key == "uses"
    response = curator.post(url, _describe(uses, inverse_key=""), headers=headers, follow=True)
    assert _get("uses").inverse is None and _get("used_by").inverse is None


@pytest.mark.parametrize("headers", [{}, HX])
def test_a_refused_inverse_is_said_in_words_and_nothing_changes(curator, vocabulary, headers):
    uses = vocabulary["uses"]
    url = reverse("relation-action", args=[uses.pk])
    response = curator.post(
        url,
        _describe(uses, label="Employs", inverse_key="comes_before"),
        headers=headers,
        follow=True,
    )
    assert flashes(response) == [
        (
            "error",
            '"comes_before" is acyclic and "uses" is not: an inverse pair states one fact '
            "both ways round, so both keep out cycles or neither does.",
        )
    ]
    assert _get("uses").label == "Uses" and _get("uses").inverse is None
    response = curator.post(
        url, _describe(uses, inverse_key="nothing_here"), headers=headers, follow=True
    )
    assert flashes(response) == [("error", 'The relation "nothing_here" does not exist.')]


def test_a_describe_form_without_the_field_leaves_the_pair(curator, vocabulary):
    pre = _get("prerequisite")
    curator.post(reverse("relation-action", args=[pre.pk]), _describe(pre, label="Prereq"))
    assert (
        _get("prerequisite").label == "Prereq" and _get("prerequisite").inverse.key == "builds_on"
    )


# --- Merges ---------------------------------------------------------------------------------


def test_a_merge_invalidates_a_moved_edge_whose_twin_the_survivor_has(f, db):
    """ "Graph-RAG builds on RAG", moved onto GraphRAG by a merge, would state "RAG is a
    prerequisite for GraphRAG" again: it is invalidated, naming the edge that holds it."""
    rag, graphrag, dup = f.concept("RAG"), f.concept("GraphRAG"), f.concept("Graph-RAG")
    held = f.edge(rag, graphrag, "prerequisite")
    moved = f.edge(dup, rag, "builds_on")
    outcome = services.concept_merge(loser=dup, survivor=graphrag, acting_user=None)
    assert [e.pk for e in outcome.invalidated] == [moved.pk]
    assert f"the same fact is already held by edge #{held.pk}" in reload(moved).invalidation_reason
