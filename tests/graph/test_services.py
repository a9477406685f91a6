"""Graph services: every write checked, one transaction each, nothing deleted."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from kgreview.core.errors import (
    ConceptNotActive,
    CycleDetected,
    DuplicateEdge,
    EvidenceMismatch,
    InactiveRelation,
    NameTaken,
    SelfLoop,
    StateConflict,
    ValidationFailed,
)
from kgreview.graph import selectors, services
from kgreview.graph.models import Concept, ConceptAlias, Edge

pytestmark = pytest.mark.django_db

LESSON = (
    "Before learning vector search you should understand embeddings.\n"
    "Unlike keyword search, dense retrieval compares meanings.\n"
)


# --- concepts ---------------------------------------------------------------------------


def test_concept_create_registers_canonical_name_and_aliases(f):
    """The canonical name and each alias become rows of the name index."""
    c = f.concept("Retrieval-augmented  generation ", aliases=["RAG", "rag", " RAG pipeline"])
    assert c.name == "Retrieval-augmented generation"
    kinds = dict(c.aliases.values_list("name", "kind"))
    assert kinds == {
        "Retrieval-augmented generation": "canonical",
        "RAG": "alias",
        "RAG pipeline": "alias",
    }


def test_concept_create_refuses_a_name_taken_by_an_alias(f):
    """A new concept cannot reuse another concept's alias, whatever the case."""
    f.concept("Retrieval-augmented generation", aliases=["RAG"])
    with pytest.raises(NameTaken, match="Retrieval-augmented generation"):
        services.concept_create(name="rag", acting_user=None)
    assert not Concept.objects.filter(name="rag").exists()


def test_concept_create_refuses_empty_and_overlong_names(f):
    """Names are trimmed; nothing left, or more than 200 characters, is an error."""
    with pytest.raises(ValidationFailed, match="empty"):
        services.concept_create(name="   ", acting_user=None)
    with pytest.raises(ValidationFailed, match="200"):
        services.concept_create(name="x" * 201, acting_user=None)


def test_concept_create_with_a_taken_alias_rolls_back_the_concept(f):
    """An alias clash leaves no half-created concept behind."""
    f.concept("Fine-tuning", aliases=["FT"])
    with pytest.raises(NameTaken):
        services.concept_create(name="Full training", aliases=["FT"], acting_user=None)
    assert not Concept.objects.filter(name="Full training").exists()


def test_concept_add_alias_and_lookup_by_any_name(f):
    """A concept resolves from its canonical name or any alias, case-insensitively."""
    c = f.concept("Approximate nearest neighbour search")
    services.concept_add_alias(concept=c, name="ANN", acting_user=None)
    assert selectors.concept_by_name(name="ann") == c
    assert selectors.concept_by_name(name="APPROXIMATE  nearest neighbour search") == c
    assert selectors.concept_by_name(name="HNSW") is None


def test_concept_add_alias_refuses_another_concepts_name(f):
    """Adding an alias that another concept owns names that concept."""
    f.concept("Transformer")
    c = f.concept("Attention mechanism")
    with pytest.raises(NameTaken, match='"Transformer"'):
        services.concept_add_alias(concept=c, name="transformer", acting_user=None)


# --- edges ------------------------------------------------------------------------------


def test_edge_create_records_provenance(f):
    """An edge keeps confidence, reason, evidence and bi-temporal stamps."""
    src = f.source(text=LESSON)
    rev = src.current_revision
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    ev = f.evidence(rev, "Before learning vector search you should understand embeddings.")
    e = f.edge(emb, vs, confidence=0.82, reason="The lesson says so.", evidence=ev)
    assert e.status == "active" and e.invalid_at is None
    assert e.evidence_revision == rev
    assert rev.text[e.evidence_start : e.evidence_end] == e.evidence_quote
    assert e.recorded_at == e.valid_at
    assert e.is_symmetric is False


def test_edge_create_refuses_evidence_that_does_not_match_the_revision(f):
    """Offsets must point at exactly the quoted text."""
    rev = f.source(text=LESSON).current_revision
    a, b = f.concept("A"), f.concept("B")
    bad = services.Evidence(revision=rev, start=0, end=6, quote="Unlike")
    with pytest.raises(EvidenceMismatch, match="does not match"):
        f.edge(a, b, evidence=bad)
    outside = services.Evidence(revision=rev, start=5, end=10_000, quote="x")
    with pytest.raises(EvidenceMismatch, match="outside"):
        f.edge(a, b, evidence=outside)
    assert not Edge.objects.exists()


def test_edge_create_refuses_self_loops_and_retired_relations(f):
    """No edge from a concept to itself; no edge of a retired type."""
    a, b = f.concept("A"), f.concept("B")
    with pytest.raises(SelfLoop):
        f.edge(a, a)
    services.relation_type_retire(relation=f.relation("applies_to"), acting_user=None)
    with pytest.raises(InactiveRelation, match="retired"):
        f.edge(a, b, "applies_to")


def test_edge_create_refuses_bad_confidence_weight_and_empty_reason(f):
    """Values are checked in words before the database sees them."""
    a, b = f.concept("A"), f.concept("B")
    with pytest.raises(ValidationFailed, match="between 0 and 1"):
        f.edge(a, b, confidence=1.2)
    with pytest.raises(ValidationFailed, match="negative"):
        f.edge(a, b, weight=-2)
    with pytest.raises(ValidationFailed, match="reason"):
        f.edge(a, b, reason="  ")


def test_edge_create_refuses_a_duplicate_and_names_the_existing_edge(f):
    """The same fact twice is refused with the id of the edge that holds it."""
    a, b = f.concept("A"), f.concept("B")
    first = f.edge(a, b)
    with pytest.raises(DuplicateEdge, match=f"#{first.pk}"):
        f.edge(a, b)


def test_symmetric_duplicate_in_reverse_order_is_refused(f):
    """B contrasts with A repeats A contrasts with B."""
    a, b = f.concept("A"), f.concept("B")
    f.edge(a, b, "contrasts_with")
    with pytest.raises(DuplicateEdge):
        f.edge(b, a, "contrasts_with")


def test_edge_create_refuses_a_cycle_in_an_acyclic_relation_and_shows_it(f):
    """Closing a prerequisite loop is refused with the whole cycle in words."""
    a, b, c = f.concept("Tokenization"), f.concept("Embeddings"), f.concept("Vector search")
    f.edge(a, b)
    f.edge(b, c)
    with pytest.raises(CycleDetected) as exc:
        f.edge(c, a)
    assert "Tokenization → Embeddings → Vector search → Tokenization" in str(exc.value)


def test_cycles_are_allowed_in_relations_that_are_not_acyclic(f):
    """applies_to may loop; only acyclic relations are guarded."""
    a, b = f.concept("A"), f.concept("B")
    forward = f.edge(a, b, "applies_to")
    backward = f.edge(b, a, "applies_to")
    assert (backward.source, backward.target) == (b, a)
    assert {forward.status, backward.status} == {Edge.Status.ACTIVE}


def test_cycle_check_ignores_retired_edges(f):
    """An invalidated edge no longer closes a cycle."""
    a, b = f.concept("A"), f.concept("B")
    e = f.edge(a, b)
    services.edge_invalidate(edge=e, reason="wrong", acting_user=None)
    back = f.edge(b, a)
    assert (back.source, back.target, back.status) == (b, a, Edge.Status.ACTIVE)


def test_edge_create_refuses_merged_endpoints(f):
    """Edges attach to survivors, never to merged concepts."""
    a, b, c = f.concept("A"), f.concept("B"), f.concept("C")
    services.concept_merge(loser=a, survivor=b, acting_user=None)
    with pytest.raises(ConceptNotActive, match='merged into "B"'):
        f.edge(a, c)


def test_edge_invalidate_keeps_the_row_with_who_and_why(f):
    """Invalidation retires the edge in place and records the reason and user."""
    a, b = f.concept("A"), f.concept("B")
    u = f.user()
    e = f.edge(a, b)
    services.edge_invalidate(edge=e, reason="The lesson was rewritten.", acting_user=u)
    e.refresh_from_db()
    assert e.status == "invalidated"
    assert e.invalid_at is not None
    assert e.invalidated_by == u
    assert e.invalidation_reason == "The lesson was rewritten."


def test_edge_invalidate_twice_is_a_state_conflict(f):
    """A second invalidation is told the edge is already retired."""
    e = f.edge(f.concept("A"), f.concept("B"))
    services.edge_invalidate(edge=e, reason="first", acting_user=None)
    with pytest.raises(StateConflict, match="no longer active"):
        services.edge_invalidate(edge=e, reason="second", acting_user=None)


def test_edge_invalidate_needs_a_reason_and_a_sane_time(f):
    """No silent invalidation, and not before the fact held."""
    e = f.edge(f.concept("A"), f.concept("B"))
    with pytest.raises(ValidationFailed):
        services.edge_invalidate(edge=e, reason="", acting_user=None)
    with pytest.raises(ValidationFailed):
        services.edge_invalidate(
            edge=e, reason="x", at=e.valid_at - timedelta(days=1), acting_user=None
        )


def test_edge_supersede_writes_a_new_row_and_retires_the_old(f):
    """An update never edits: the new row points at the row it replaces."""
    a, b = f.concept("A"), f.concept("B")
    old = f.edge(a, b, confidence=0.7)
    new = services.edge_supersede(
        edge=old, confidence=0.95, why="Second lesson agrees.", acting_user=None
    )
    old.refresh_from_db()
    assert old.status == "superseded" and old.invalid_at == new.recorded_at
    assert new.supersedes == old and new.status == "active"
    assert new.confidence == 0.95
    assert new.valid_at == old.valid_at
    assert Edge.objects.filter(source=a, target=b).count() == 2


def test_edge_supersede_can_change_relation_and_direction(f):
    """Swapping direction or relation goes through the same checks as a new edge."""
    a, b = f.concept("A"), f.concept("B")
    old = f.edge(a, b, "prerequisite")
    new = services.edge_supersede(
        edge=old,
        source=b,
        target=a,
        relation=f.relation("builds_on"),
        why="Direction fixed.",
        acting_user=None,
    )
    assert (new.source, new.target, new.relation.key) == (b, a, "builds_on")


def test_edge_supersede_that_fails_its_checks_changes_nothing(f):
    """A refused update leaves the old edge active."""
    a, b, c = f.concept("A"), f.concept("B"), f.concept("C")
    f.edge(b, c)
    f.edge(c, a)
    old = f.edge(a, c, "related")
    with pytest.raises(CycleDetected):
        services.edge_supersede(
            edge=old, relation=f.relation("prerequisite"), source=a, target=b, acting_user=None
        )
    old.refresh_from_db()
    assert old.status == "active"
    assert Edge.objects.count() == 3


def test_edge_supersede_with_no_change_is_refused(f):
    """An update that changes nothing is an error, not a new row."""
    e = f.edge(f.concept("A"), f.concept("B"))
    with pytest.raises(ValidationFailed, match="Nothing would change"):
        services.edge_supersede(edge=e, confidence=e.confidence, acting_user=None)


def test_edge_supersede_of_a_retired_edge_is_a_state_conflict(f):
    """Only active edges can be updated."""
    e = f.edge(f.concept("A"), f.concept("B"))
    services.edge_invalidate(edge=e, reason="gone", acting_user=None)
    with pytest.raises(StateConflict):
        services.edge_supersede(edge=e, confidence=0.1, acting_user=None)


# --- merge ------------------------------------------------------------------------------


def test_merge_moves_names_and_supersedes_edges_onto_the_survivor(f):
    """The loser becomes an alias of the survivor; its edges are re-pointed by supersession."""
    rag = f.concept("Retrieval-augmented generation")
    rag2 = f.concept("RAG", aliases=["retrieval augmented gen"])
    emb = f.concept("Embeddings")
    llm = f.concept("LLM")
    e1 = f.edge(emb, rag2)
    e2 = f.edge(rag2, llm, "applies_to")
    out = services.concept_merge(loser=rag2, survivor=rag, reason="Same idea.", acting_user=None)
    rag2.refresh_from_db()
    assert rag2.status == "merged" and rag2.merged_into == rag
    assert selectors.concept_by_name(name="RAG") == rag
    assert selectors.concept_by_name(name="retrieval augmented gen") == rag
    assert set(out.moved_names) == {"RAG", "retrieval augmented gen"}
    assert set(ConceptAlias.objects.filter(merged_from=rag2).values_list("kind", flat=True)) == {
        "merged"
    }
    e1.refresh_from_db()
    e2.refresh_from_db()
    assert e1.status == e2.status == "superseded"
    active = {(e.source, e.relation.key, e.target) for e in selectors.edges_active()}
    assert active == {(emb, "prerequisite", rag), (rag, "applies_to", llm)}
    assert {new.supersedes for _, new in out.superseded} == {e1, e2}


def test_merge_invalidates_edges_that_would_become_self_loops_or_duplicates(f):
    """An edge between the pair, or one the survivor already has, is retired with the reason."""
    a, b, c = f.concept("A"), f.concept("A prime"), f.concept("C")
    between = f.edge(b, a, "related")
    dup_old = f.edge(b, c)
    keep = f.edge(a, c)
    out = services.concept_merge(loser=b, survivor=a, acting_user=None)
    between.refresh_from_db()
    dup_old.refresh_from_db()
    assert between.status == "invalidated" and "itself" in between.invalidation_reason
    assert dup_old.status == "invalidated" and f"#{keep.pk}" in dup_old.invalidation_reason
    assert set(out.invalidated) == {between, dup_old}
    assert list(selectors.edges_active()) == [keep]


def test_merge_that_would_close_a_cycle_is_refused_and_changes_nothing(f):
    """A prerequisite B, B prerequisite L; merging L into A is refused atomically."""
    a, b, loser = f.concept("A"), f.concept("B"), f.concept("L")
    f.edge(a, b)
    f.edge(b, loser)
    with pytest.raises(CycleDetected, match="cycle"):
        services.concept_merge(loser=loser, survivor=a, acting_user=None)
    loser.refresh_from_db()
    assert loser.status == "active"
    assert selectors.concept_by_name(name="L") == loser
    assert selectors.edges_active().count() == 2
    assert Edge.objects.count() == 2


def test_merge_refuses_merged_concepts_and_self_merge(f):
    """A concept cannot be merged twice or into itself."""
    a, b, c = f.concept("A"), f.concept("B"), f.concept("C")
    with pytest.raises(ValidationFailed):
        services.concept_merge(loser=a, survivor=a, acting_user=None)
    services.concept_merge(loser=a, survivor=b, acting_user=None)
    with pytest.raises(ConceptNotActive):
        services.concept_merge(loser=a, survivor=c, acting_user=None)
    with pytest.raises(ConceptNotActive):
        services.concept_merge(loser=c, survivor=a, acting_user=None)


def test_chained_merges_keep_every_name_resolving_to_the_last_survivor(f):
    """A into B, then B into C: all names resolve to C."""
    a, b, c = f.concept("A"), f.concept("B"), f.concept("C")
    services.concept_merge(loser=a, survivor=b, acting_user=None)
    services.concept_merge(loser=b, survivor=c, acting_user=None)
    assert {selectors.concept_by_name(name=n) for n in "ABC"} == {c}


# --- relation types ---------------------------------------------------------------------


def test_relation_type_create_retire_and_reactivate(f):
    """Curators grow the vocabulary and retire terms; retired terms stay for history."""
    rel = services.relation_type_create(
        key="alternative_to",
        label="Alternative to",
        verb="is an alternative to",
        directed=False,
        symmetric=True,
        acting_user=None,
    )
    services.relation_type_retire(relation=rel, acting_user=None)
    rel.refresh_from_db()
    assert not rel.active and rel.retired_at is not None
    with pytest.raises(StateConflict):
        services.relation_type_retire(relation=rel, acting_user=None)
    services.relation_type_reactivate(relation=rel, acting_user=None)
    rel.refresh_from_db()
    assert rel.active and rel.retired_at is None


def test_relation_type_create_refuses_bad_shapes_and_duplicates(f):
    """Symmetric-and-directed, acyclic-and-undirected, and existing keys are refused."""
    with pytest.raises(NameTaken):
        services.relation_type_create(key="related", label="x", verb="x", acting_user=None)
    with pytest.raises(ValidationFailed):
        services.relation_type_create(
            key="weird", label="Weird", verb="w", directed=True, symmetric=True, acting_user=None
        )


# --- sources ----------------------------------------------------------------------------


def test_source_import_adds_a_revision_only_when_the_text_changes(f):
    """Same text adds nothing; new text adds revision 2 and keeps revision 1 intact."""
    first = services.source_import(slug="rag", title="RAG", text="One.\n", acting_user=None)
    again = services.source_import(slug="rag", title="RAG", text="One.\n", acting_user=None)
    changed = services.source_import(slug="rag", title="RAG", text="Two.\n", acting_user=None)
    assert (first.outcome, again.outcome, changed.outcome) == ("created", "unchanged", "revised")
    assert again.revision == first.revision
    assert changed.revision.number == 2
    src = changed.source
    src.refresh_from_db()
    assert src.current_revision == changed.revision
    assert [r.text for r in src.revisions.order_by("number")] == ["One.\n", "Two.\n"]


def test_source_import_back_to_an_old_text_is_a_new_revision(f):
    """Reverting a lesson is a change too: revision 3 repeats revision 1's text."""
    for text in ("One.\n", "Two.\n", "One.\n"):
        result = services.source_import(slug="rag", title="RAG", text=text, acting_user=None)
    assert result.revision.number == 3
    assert result.revision.sha256 == services.text_sha256("One.\n")


def test_source_import_updates_a_changed_title_without_a_revision(f):
    """A new title alone is metadata, not a new text."""
    services.source_import(slug="rag", title="RAG", text="One.\n", acting_user=None)
    result = services.source_import(
        slug="rag", title="RAG, explained", text="One.\n", acting_user=None
    )
    assert result.outcome == "unchanged"
    result.source.refresh_from_db()
    assert result.source.title == "RAG, explained"


def test_source_import_refuses_bad_slugs_and_empty_text(f):
    """Slugs are URL-safe; a source needs text."""
    with pytest.raises(ValidationFailed, match="slug"):
        services.source_import(slug="no spaces", title="x", text="x", acting_user=None)
    with pytest.raises(ValidationFailed, match="no text"):
        services.source_import(slug="ok", title="x", text=" \n ", acting_user=None)


def test_evidence_keeps_pointing_at_its_revision_after_a_rewrite(f):
    """An edge's quote still matches the revision it came from after the lesson changes."""
    src = f.source(slug="vs", text=LESSON)
    rev1 = src.current_revision
    ev = f.evidence(rev1, "you should understand embeddings")
    e = f.edge(f.concept("Embeddings"), f.concept("Vector search"), evidence=ev)
    services.source_import(slug="vs", title="VS", text="Completely new text.\n", acting_user=None)
    e.refresh_from_db()
    assert e.evidence_revision.text[e.evidence_start : e.evidence_end] == e.evidence_quote


# --- as-of ------------------------------------------------------------------------------


def test_edges_as_of_answers_for_any_moment_of_the_history(f):
    """Before creation: nothing; after update: the new row; after invalidation: nothing."""
    a, b = f.concept("A"), f.concept("B")
    t0 = timezone.now()
    e1 = f.edge(a, b, confidence=0.7)
    t1 = timezone.now()
    e2 = services.edge_supersede(edge=e1, confidence=0.9, why="more evidence", acting_user=None)
    t2 = timezone.now()
    services.edge_invalidate(edge=e2, reason="retracted", acting_user=None)
    t3 = timezone.now()
    assert list(selectors.edges_as_of(at=t0)) == []
    assert list(selectors.edges_as_of(at=t1)) == [e1]
    assert list(selectors.edges_as_of(at=t2)) == [e2]
    assert list(selectors.edges_as_of(at=t3)) == []


def test_edges_as_of_respects_valid_time(f):
    """A fact recorded now but holding only from next week is not asserted for today."""
    a, b = f.concept("A"), f.concept("B")
    e = f.edge(a, b, valid_at=timezone.now() + timedelta(days=7))
    assert list(selectors.edges_as_of(at=timezone.now())) == []
    assert list(selectors.edges_as_of(at=timezone.now() + timedelta(days=8))) == [e]


def test_relation_path_finds_the_shortest_chain_among_the_concepts_given(f):
    """The chain is rebuilt from the edges among the concepts a search found, never
    beyond them: a chain through a concept left out is not found."""
    a, b, c, d, e = (f.concept(n) for n in "ABCDE")
    rel = f.relation("prerequisite")
    f.edge(a, b)
    f.edge(b, c)
    f.edge(c, d)
    f.edge(a, e)
    f.edge(e, d)
    f.edge(a, d, "applies_to")
    everyone = [a.pk, b.pk, c.pk, d.pk, e.pk]
    assert selectors.relation_path(relation=rel, start_id=a.pk, goal_id=d.pk, within=everyone) == [
        a.pk,
        e.pk,
        d.pk,
    ]
    assert selectors.relation_path(
        relation=rel, start_id=a.pk, goal_id=d.pk, within=[b.pk, c.pk]
    ) == [a.pk, b.pk, c.pk, d.pk]
    path = selectors.relation_path
    assert path(relation=rel, start_id=a.pk, goal_id=d.pk, within=[b.pk]) is None
    assert path(relation=rel, start_id=d.pk, goal_id=a.pk, within=everyone) is None


# --- unmerge ----------------------------------------------------------------------------


def test_unmerge_brings_back_the_concept_its_names_and_its_edges(f):
    """Every edge the merge moved or retired is back on the loser, as new rows."""
    rag, rag2 = f.concept("Retrieval-augmented generation"), f.concept("RAG", aliases=["R-A-G"])
    emb, llm = f.concept("Embeddings"), f.concept("LLM")
    moved = f.edge(emb, rag2)
    looped = f.edge(rag2, rag, "related")
    dup_src = f.edge(rag2, llm, "applies_to")
    f.edge(rag, llm, "applies_to")
    services.concept_merge(loser=rag2, survivor=rag, acting_user=None)
    out = services.concept_unmerge(loser=rag2, acting_user=None)
    rag2.refresh_from_db()
    assert rag2.status == "active" and rag2.merged_into is None
    assert selectors.concept_by_name(name="RAG") == rag2
    assert selectors.concept_by_name(name="R-A-G") == rag2
    assert rag2.aliases.get(kind="canonical").name == "RAG"
    active = {(e.source_id, e.relation.key, e.target_id) for e in selectors.edges_active()}
    assert (emb.pk, "prerequisite", rag2.pk) in active
    assert (rag2.pk, "related", rag.pk) in active
    assert (rag2.pk, "applies_to", llm.pk) in active and (rag.pk, "applies_to", llm.pk) in active
    assert len(out.restored) == 3
    for old in (moved, looped, dup_src):
        old.refresh_from_db()
        assert old.status != "active"  # history stays; the fact lives on in a new row


def test_unmerge_is_refused_when_a_moved_edge_changed_since(f):
    """If someone retired an edge the merge moved, the merge cannot be undone whole."""
    a, b, c = f.concept("A"), f.concept("B"), f.concept("C")
    f.edge(b, c)
    out = services.concept_merge(loser=b, survivor=a, acting_user=None)
    (_, moved) = out.superseded[0]
    services.edge_invalidate(edge=moved, reason="Wrong after all.", acting_user=None)
    with pytest.raises(StateConflict, match="can no longer be undone"):
        services.concept_unmerge(loser=b, acting_user=None)
    b.refresh_from_db()
    assert b.status == "merged"


def test_unmerge_of_an_active_concept_is_refused(f):
    """There is nothing to undo on a concept that was never merged."""
    with pytest.raises(StateConflict, match="no merge to undo"):
        services.concept_unmerge(loser=f.concept("A"), acting_user=None)


def test_active_edge_counts_count_both_ends_and_only_active_edges(f, django_assert_num_queries):
    """In and out edges are counted per concept; retired ones and other concepts' are not."""
    a, b, c, lone = f.concept(), f.concept(), f.concept(), f.concept()
    f.edge(a, b)
    f.edge(c, a, "related")
    retired = f.edge(b, c)
    services.edge_invalidate(edge=retired, reason="Wrong.", acting_user=None)
    with django_assert_num_queries(2):
        counts = selectors.active_edge_counts([a.pk, b.pk, lone.pk])
    assert counts == {a.pk: 2, b.pk: 1, lone.pk: 0}
    assert selectors.active_edge_counts([]) == {}


def test_evidence_round_trips_through_row_columns(f):
    """Evidence.columns fills a row's evidence_* columns; Evidence.of reads them back."""
    rev = f.source(text=LESSON).current_revision
    ev = f.evidence(rev, "Before learning vector search you should understand embeddings.")
    e = f.edge(f.concept(), f.concept(), evidence=ev)
    assert services.Evidence.of(Edge.objects.get(pk=e.pk)) == ev
    assert services.Evidence.of(f.edge(f.concept(), f.concept())) is None
    assert services.Evidence.columns(None) == {
        "evidence_revision": None,
        "evidence_start": None,
        "evidence_end": None,
        "evidence_quote": "",
    }
    assert services.Evidence.columns(ev)["evidence_quote"] == ev.quote
