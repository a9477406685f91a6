"""The curation log of graph writes: one row per direct change, none for a decision's.

Every state-changing graph service takes ``acting_user`` and writes one ``AuditEntry``
in its own transaction, saying who did what to which row and how it looked before and
after. A change that is part of a decision on a proposal writes none (the decision is
its record), and a refused change writes none (the row goes with the rolled-back change).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.db import transaction
from django.urls import reverse

from kgreview.core.errors import DomainError
from kgreview.core.models import AuditEntry
from kgreview.graph import services
from kgreview.graph.models import Concept, ConceptAlias, Edge, RelationType

pytestmark = pytest.mark.django_db


@dataclass
class Case:
    """One service call, and the row it should write (given what it returned)."""

    call: Callable  # call(acting_user=..., decision=...) -> result
    action: str
    expect: Callable  # expect(result) -> (subject row, before, after)


def _new_rows(since: int) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(pk__gt=since).order_by("pk"))


def _last_pk() -> int:
    return AuditEntry.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def _fact(edge: Edge, emb, vs) -> dict:
    """How the log keeps the edge Embeddings -> Vector search the cases write."""
    return {
        "source": emb.pk,
        "target": vs.pk,
        "relation": "prerequisite",
        "confidence": 0.8,
        "weight": 1.0,
        "reason": "Stated.",
        "evidence": "",
        "valid_at": edge.valid_at.isoformat(),
    }


# --- one case per audited service --------------------------------------------------------


def concept_create(f) -> Case:
    return Case(
        call=lambda **who: services.concept_create(
            name="RAG", description=" Retrieval. ", aliases=["rag pipeline"], **who
        ),
        action="concept.create",
        expect=lambda c: (
            c,
            {},
            {"name": "RAG", "description": "Retrieval.", "aliases": ["rag pipeline"]},
        ),
    )


def concept_describe(f) -> Case:
    c = f.concept("RAG", description="Old words.")
    return Case(
        call=lambda **who: services.concept_describe(concept=c, description="New words.", **who),
        action="concept.describe",
        expect=lambda c: (c, {"description": "Old words."}, {"description": "New words."}),
    )


def concept_add_alias(f) -> Case:
    c = f.concept("RAG")
    return Case(
        call=lambda **who: services.concept_add_alias(concept=c, name="rag pipeline", **who),
        action="concept.add_alias",
        expect=lambda alias: (c, {}, {"alias": "rag pipeline"}),
    )


def concept_rename(f) -> Case:
    c = f.concept("Retrieval")
    return Case(
        call=lambda **who: services.concept_rename(concept=c, name="RAG", **who),
        action="concept.rename",
        expect=lambda result: (c, {"name": "Retrieval"}, {"name": "RAG"}),
    )


def concept_remove_alias(f) -> Case:
    c = f.concept("RAG", aliases=["rag pipeline"])
    return Case(
        call=lambda **who: services.concept_remove_alias(concept=c, name="rag pipeline", **who),
        action="concept.remove_alias",
        expect=lambda alias: (c, {"alias": "rag pipeline"}, {}),
    )


def concept_restore_alias(f) -> Case:
    c = f.concept("RAG", aliases=["rag pipeline"])
    gone = services.concept_remove_alias(concept=c, name="rag pipeline", acting_user=None)
    return Case(
        call=lambda **who: services.concept_restore_alias(alias_id=gone.pk, **who),
        action="concept.restore_alias",
        expect=lambda alias: (c, {}, {"alias": "rag pipeline"}),
    )


def concept_retire(f) -> Case:
    c = f.concept("Orphan")
    return Case(
        call=lambda **who: services.concept_retire(concept=c, **who),
        action="concept.retire",
        expect=lambda c: (c, {"status": "active"}, {"status": "retired"}),
    )


def concept_reactivate(f) -> Case:
    c = services.concept_retire(concept=f.concept("Orphan"), acting_user=None)
    return Case(
        call=lambda **who: services.concept_reactivate(concept=c, **who),
        action="concept.reactivate",
        expect=lambda c: (c, {"status": "retired"}, {"status": "active"}),
    )


def concept_merge(f) -> Case:
    loser, survivor, lora = f.concept("Finetuning"), f.concept("Fine-tuning"), f.concept("LoRA")
    f.edge(lora, loser, "builds_on")
    return Case(
        call=lambda **who: services.concept_merge(loser=loser, survivor=survivor, **who),
        action="concept.merge",
        expect=lambda out: (
            loser,
            {"status": "active"},
            {
                "status": "merged",
                "merged_into": survivor.pk,
                "edges_moved": [new.pk for _, new in out.superseded],
                "edges_invalidated": [],
                "names_moved": ["Finetuning"],
            },
        ),
    )


def concept_unmerge(f) -> Case:
    loser, survivor, lora = f.concept("Finetuning"), f.concept("Fine-tuning"), f.concept("LoRA")
    f.edge(lora, loser, "builds_on")
    services.concept_merge(loser=loser, survivor=survivor, acting_user=None)
    return Case(
        call=lambda **who: services.concept_unmerge(loser=loser, **who),
        action="concept.unmerge",
        expect=lambda out: (
            loser,
            {"status": "merged", "merged_into": survivor.pk},
            {
                "status": "active",
                "edges_restored": [e.pk for e in out.restored],
                "names_back": ["Finetuning"],
            },
        ),
    )


def edge_create(f) -> Case:
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    return Case(
        call=lambda **who: services.edge_create(
            source=emb,
            target=vs,
            relation=f.relation("prerequisite"),
            confidence=0.8,
            reason="Stated.",
            **who,
        ),
        action="edge.create",
        expect=lambda edge: (edge, {}, _fact(edge, emb, vs)),
    )


def edge_add(f) -> Case:
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")

    def call(**who):
        with transaction.atomic():
            return services.edge_add(
                source_id=emb.pk,
                target_id=vs.pk,
                relation_id=f.relation("prerequisite").pk,
                confidence=0.8,
                reason="Stated.",
                **who,
            )

    return Case(
        call=call, action="edge.create", expect=lambda edge: (edge, {}, _fact(edge, emb, vs))
    )


def edge_invalidate(f) -> Case:
    edge = f.edge(f.concept("Embeddings"), f.concept("Vector search"))
    return Case(
        call=lambda **who: services.edge_invalidate(edge=edge, reason="Wrong.", **who),
        action="edge.invalidate",
        expect=lambda e: (
            edge,
            {"status": "active"},
            {"status": "invalidated", "reason": "Wrong."},
        ),
    )


def edge_supersede(f) -> Case:
    edge = f.edge(f.concept("Embeddings"), f.concept("Vector search"), confidence=0.5)
    return Case(
        call=lambda **who: services.edge_supersede(edge=edge, confidence=0.9, **who),
        action="edge.supersede",
        expect=lambda new: (edge, {"confidence": 0.5}, {"confidence": 0.9, "edge": new.pk}),
    )


def edge_restore(f) -> Case:
    edge = f.edge(f.concept("Embeddings"), f.concept("Vector search"))
    services.edge_invalidate(edge=edge, reason="Wrong.", acting_user=None)
    return Case(
        call=lambda **who: services.edge_restore(edge=edge, **who),
        action="edge.restore",
        expect=lambda new: (
            edge,
            {"status": "invalidated"},
            {"status": "active", "edge": new.pk},
        ),
    )


def relation_type_create(f) -> Case:
    return Case(
        call=lambda **who: services.relation_type_create(
            key="alternative_to",
            label="Alternative to",
            verb="is an alternative to",
            directed=False,
            symmetric=True,
            **who,
        ),
        action="relation_type.create",
        expect=lambda r: (
            r,
            {},
            {
                "key": "alternative_to",
                "label": "Alternative to",
                "verb": "is an alternative to",
                "description": "",
                "directed": False,
                "symmetric": True,
                "acyclic": False,
            },
        ),
    )


def relation_type_describe(f) -> Case:
    relation = f.relation("prerequisite")
    old = relation.label
    return Case(
        call=lambda **who: services.relation_type_describe(
            relation=relation, label="Needed before", verb=relation.verb, **who
        ),
        action="relation_type.describe",
        expect=lambda r: (r, {"label": old}, {"label": "Needed before"}),
    )


def relation_type_retire(f) -> Case:
    relation = f.relation("prerequisite")
    return Case(
        call=lambda **who: services.relation_type_retire(relation=relation, **who),
        action="relation_type.retire",
        expect=lambda r: (r, {"active": True}, {"active": False}),
    )


def relation_type_reactivate(f) -> Case:
    relation = services.relation_type_retire(relation=f.relation("prerequisite"), acting_user=None)
    return Case(
        call=lambda **who: services.relation_type_reactivate(relation=relation, **who),
        action="relation_type.reactivate",
        expect=lambda r: (r, {"active": False}, {"active": True}),
    )


DECIDABLE = [
    concept_create,
    concept_describe,
    concept_add_alias,
    concept_rename,
    concept_remove_alias,
    concept_restore_alias,
    concept_retire,
    concept_reactivate,
    concept_merge,
    concept_unmerge,
    edge_create,
    edge_add,
    edge_invalidate,
    edge_supersede,
    edge_restore,
    relation_type_create,
    relation_type_describe,
    relation_type_retire,
    relation_type_reactivate,
]


@pytest.mark.parametrize("case", DECIDABLE, ids=lambda c: c.__name__)
def test_a_direct_call_writes_one_row_with_who_what_and_the_change(case, f):
    curator = f.user("cora", role="curator")
    c = case(f)
    since = _last_pk()
    result = c.call(acting_user=curator)
    (row,) = _new_rows(since)
    subject, before, after = c.expect(result)
    assert (row.user, row.action) == (curator, c.action)
    assert (row.subject_type, row.subject_id) == (subject._meta.model_name, str(subject.pk))
    assert (row.before, row.after) == (before, after)
    assert row.summary.endswith(".") and "“" in row.summary


@pytest.mark.parametrize("case", DECIDABLE, ids=lambda c: c.__name__)
def test_the_systems_own_change_is_logged_without_a_user(case, f):
    c = case(f)
    since = _last_pk()
    c.call(acting_user=None)
    (row,) = _new_rows(since)
    assert row.user is None and row.action == c.action


@pytest.mark.parametrize("case", DECIDABLE, ids=lambda c: c.__name__)
def test_a_change_made_by_a_decision_writes_no_row(case, f):
    """The decision (given, or written just after: DECIDING) is the change's record."""
    c = case(f)
    since = _last_pk()
    c.call(acting_user=f.user(role="curator"), decision=services.DECIDING)
    assert _new_rows(since) == []


def test_the_summaries_say_the_change_in_words(f):
    curator = f.user(role="curator")
    relation = f.relation("prerequisite")
    services.relation_type_retire(relation=relation, acting_user=curator)
    services.relation_type_reactivate(relation=relation, acting_user=curator)
    services.relation_type_describe(relation=relation, label="Needed before", acting_user=curator)
    c = f.concept("Retrieval")
    services.concept_rename(concept=c, name="RAG", acting_user=curator)
    summaries = list(
        AuditEntry.objects.filter(user=curator).order_by("pk").values_list("summary", flat=True)
    )
    assert summaries == [
        "Retired the relation type “Prerequisite”.",
        "Reactivated the relation type “Prerequisite”.",
        "Renamed the relation type “Prerequisite” to “Needed before”.",
        "Renamed the concept “Retrieval” to “RAG”.",
    ]


def test_an_edge_is_named_in_words_in_its_rows(f):
    curator = f.user(role="curator")
    edge = f.edge(f.concept("Embeddings"), f.concept("Vector search"), acting_user=curator)
    services.edge_invalidate(edge=edge, reason="Wrong.", acting_user=curator)
    relation = f.relation("prerequisite")
    summaries = list(
        AuditEntry.objects.filter(user=curator).order_by("pk").values_list("summary", flat=True)
    )
    fact = f"“Embeddings” {relation.verb} “Vector search”"
    assert summaries == [f"Added the edge {fact}.", f"Invalidated the edge {fact}."]


# --- refused changes write nothing ------------------------------------------------------


def _retired_relation(f):
    relation = services.relation_type_retire(relation=f.relation("prerequisite"), acting_user=None)
    return lambda who: services.relation_type_retire(relation=relation, acting_user=who)


def _active_relation(f):
    return lambda who: services.relation_type_reactivate(
        relation=f.relation("prerequisite"), acting_user=who
    )


def _existing_relation_key(f):
    return lambda who: services.relation_type_create(
        key="prerequisite", label="Again", verb="again", acting_user=who
    )


def _concept_with_edges(f):
    c = f.concept("Embeddings")
    f.edge(c, f.concept("Vector search"))
    return lambda who: services.concept_retire(concept=c, acting_user=who)


def _active_concept(f):
    c = f.concept("Embeddings")
    return lambda who: services.concept_reactivate(concept=c, acting_user=who)


def _taken_alias(f):
    c = f.concept("Embeddings")
    f.concept("Vectors")
    return lambda who: services.concept_add_alias(concept=c, name="vectors", acting_user=who)


def _taken_alias_on_create(f):
    """The alias is refused after the concept and its own name were written."""
    f.concept("Embeddings", aliases=["emb"])
    return lambda who: services.concept_create(
        name="Dense vectors", aliases=["emb"], acting_user=who
    )


def _duplicate_edge(f):
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    f.edge(emb, vs)
    return lambda who: f.edge(emb, vs, acting_user=who)


def _invalidated_edge(f):
    edge = f.edge(f.concept("Embeddings"), f.concept("Vector search"))
    services.edge_invalidate(edge=edge, reason="Wrong.", acting_user=None)
    return lambda who: services.edge_invalidate(edge=edge, reason="Again.", acting_user=who)


def _self_merge(f):
    c = f.concept("Embeddings")
    return lambda who: services.concept_merge(loser=c, survivor=c, acting_user=who)


def _unmerged(f):
    c = f.concept("Embeddings")
    return lambda who: services.concept_unmerge(loser=c, acting_user=who)


def _bad_slug(f):
    return lambda who: services.source_import(
        slug="no spaces", title="x", text="x", acting_user=who
    )


REFUSED = [
    _retired_relation,
    _active_relation,
    _existing_relation_key,
    _concept_with_edges,
    _active_concept,
    _taken_alias,
    _taken_alias_on_create,
    _duplicate_edge,
    _invalidated_edge,
    _self_merge,
    _unmerged,
    _bad_slug,
]


@pytest.mark.parametrize("refused", REFUSED, ids=lambda r: r.__name__.strip("_"))
def test_a_refused_change_writes_no_row(refused, f):
    call = refused(f)
    since = _last_pk()
    with pytest.raises(DomainError):
        call(f.user(role="curator"))
    assert _new_rows(since) == []


def test_retiring_a_retired_relation_type_changes_nothing_and_logs_nothing(f):
    relation = services.relation_type_retire(relation=f.relation("prerequisite"), acting_user=None)
    since = _last_pk()
    with pytest.raises(DomainError, match="already retired"):
        services.relation_type_retire(relation=relation, acting_user=f.user(role="curator"))
    assert _new_rows(since) == []
    assert RelationType.objects.get(pk=relation.pk).retired_at == relation.retired_at


def test_a_concept_created_with_a_taken_alias_leaves_neither_concept_nor_row(f):
    f.concept("Vectors")
    since = _last_pk()
    with pytest.raises(DomainError):
        services.concept_create(name="Embeddings", aliases=["vectors"], acting_user=None)
    assert _new_rows(since) == []
    assert not Concept.objects.filter(name="Embeddings").exists()


def test_the_row_rolls_back_with_the_transaction_it_was_written_in(f):
    relation = f.relation("prerequisite")
    since = _last_pk()
    with pytest.raises(RuntimeError), transaction.atomic():
        services.relation_type_retire(relation=relation, acting_user=f.user(role="curator"))
        raise RuntimeError("the caller fails after the change")
    assert _new_rows(since) == []
    assert RelationType.objects.get(pk=relation.pk).active


# --- sources -----------------------------------------------------------------------------


def test_importing_a_source_logs_each_new_revision_and_a_new_title(f):
    curator = f.user(role="curator")
    first = services.source_import(slug="rag", title="RAG", text="One.\n", acting_user=curator)
    services.source_import(slug="rag", title="RAG", text="One.\n", acting_user=curator)
    second = services.source_import(slug="rag", title="RAG", text="Two.\n", acting_user=curator)
    services.source_import(slug="rag", title="RAG, explained", text="Two.\n", acting_user=None)
    rows = list(AuditEntry.objects.filter(subject_type="source").order_by("pk"))
    assert [(r.action, r.user, r.summary) for r in rows] == [
        ("source.import", curator, "Imported the source “RAG”."),
        ("source.import", curator, "Imported revision 2 of the source “RAG”."),
        (
            "source.retitle",
            None,
            "Renamed the source “rag” to “RAG, explained” (its text is unchanged).",
        ),
    ]
    assert {r.subject_id for r in rows} == {str(first.source.pk)}
    assert rows[1].before == {"revision": 1, "sha256": first.revision.sha256}
    assert rows[1].after == {"revision": 2, "sha256": second.revision.sha256, "title": "RAG"}
    assert rows[2].before == {"title": "RAG", "origin": ""}
    assert second.revision.imported_by == curator


# --- pages: the ontology and the admin ----------------------------------------------------


@pytest.fixture
def cora(f):
    return f.user("cora", role="curator")


@pytest.fixture
def curator(client, cora):
    client.force_login(cora)
    return client


def _rows(action: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(action=action).order_by("pk"))


def test_ontology_actions_are_logged_with_the_curator(curator, cora, f):
    relation = f.relation("prerequisite")
    url = reverse("relation-action", args=[relation.pk])
    curator.post(url, {"action": "retire"})
    curator.post(url, {"action": "reactivate"})
    curator.post(
        url,
        {
            "action": "describe",
            "label": "Needed before",
            "verb": relation.verb,
            "description": relation.description,
        },
    )
    for action in ("relation_type.retire", "relation_type.reactivate", "relation_type.describe"):
        (row,) = _rows(action)
        assert (row.user, row.subject_type, row.subject_id) == (
            cora,
            "relationtype",
            str(relation.pk),
        )
    assert _rows("relation_type.describe")[0].after == {"label": "Needed before"}


def test_a_refused_ontology_action_logs_nothing(curator, f):
    relation = f.relation("prerequisite")
    since = _last_pk()
    curator.post(reverse("relation-action", args=[relation.pk]), {"action": "reactivate"})
    assert _new_rows(since) == []


def test_admin_relation_type_actions_and_edits_are_logged_with_the_curator(curator, cora, f):
    relation = f.relation("applies_to")
    changelist = reverse("admin:graph_relationtype_changelist")
    curator.post(changelist, {"action": "retire", "_selected_action": [relation.pk]})
    curator.post(changelist, {"action": "reactivate", "_selected_action": [relation.pk]})
    response = curator.post(
        reverse("admin:graph_relationtype_change", args=[relation.pk]),
        {"label": "Applies to", "verb": "is applied to", "description": "Used on."},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    response = curator.post(
        reverse("admin:graph_relationtype_add"),
        {
            "key": "alternative_to",
            "label": "Alternative to",
            "verb": "is an alternative to",
            "symmetric": "on",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    logged = [
        (r.action, r.user, r.subject_id)
        for r in AuditEntry.objects.filter(subject_type="relationtype").order_by("pk")
    ]
    created = RelationType.objects.get(key="alternative_to")
    assert logged == [
        ("relation_type.retire", cora, str(relation.pk)),
        ("relation_type.reactivate", cora, str(relation.pk)),
        ("relation_type.describe", cora, str(relation.pk)),
        ("relation_type.create", cora, str(created.pk)),
    ]


def test_admin_concept_add_and_description_edit_are_logged_with_the_curator(curator, cora):
    inline = {"aliases-TOTAL_FORMS": "0", "aliases-INITIAL_FORMS": "0"}
    response = curator.post(
        reverse("admin:graph_concept_add"),
        {"name": "Mixture of experts", "description": "Sparse routing.", **inline},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    concept = Concept.objects.get(name="Mixture of experts")
    response = curator.post(
        reverse("admin:graph_concept_change", args=[concept.pk]),
        {"description": "Sparse expert routing.", **inline, "aliases-INITIAL_FORMS": "1"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Concept.objects.get(pk=concept.pk).description == "Sparse expert routing."
    (made,) = _rows("concept.create")
    (described,) = _rows("concept.describe")
    assert (made.user, made.subject_id) == (cora, str(concept.pk))
    assert (described.user, described.before, described.after) == (
        cora,
        {"description": "Sparse routing."},
        {"description": "Sparse expert routing."},
    )


def test_undoing_a_direct_merge_from_the_concept_page_is_logged_with_the_curator(curator, cora, f):
    loser, survivor = f.concept("Finetuning"), f.concept("Fine-tuning")
    services.concept_merge(loser=loser, survivor=survivor, acting_user=None)
    curator.post(reverse("concept-unmerge", args=[loser.pk]))
    (merged,) = _rows("concept.merge")
    (split,) = _rows("concept.unmerge")
    assert merged.user is None and split.user == cora
    assert split.subject_id == str(loser.pk)
    assert ConceptAlias.objects.get(name="Finetuning").concept_id == loser.pk
