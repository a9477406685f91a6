"""Relation patterns: the rule (``rules.pattern_refusal``), the services that allow,
retire and bring back a pattern, and every graph path that writes an edge or changes
what one joins refusing, in the rule's words, an edge that breaks one, writing nothing."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.utils import timezone

from kgreview.core.errors import (
    DomainError,
    InactiveRelation,
    InactiveType,
    NameTaken,
    PatternViolation,
    StateConflict,
    ValidationFailed,
)
from kgreview.core.models import AuditEntry
from kgreview.graph import bulk, pattern_book, rules
from kgreview.graph import services as graph
from kgreview.graph.models import (
    Concept,
    ConceptType,
    ConceptTypeChange,
    Edge,
    RelationPattern,
    RelationType,
)

pytestmark = pytest.mark.django_db

AFFECTS_WORDS = (
    'The relation "affects" joins a setting to a process; "checkpoint" is a process '
    'and "WAL" is a file.'
)


def new_type(key: str, parent: str = "") -> ConceptType:
    return graph.concept_type_create(key=key, label=key, parent_key=parent, acting_user=None)


@pytest.fixture
def onto(f):
    """Types setting, process (with its subtype background_process) and file; a relation
    "affects" that joins a setting to a process; "related" (symmetric) that joins a
    setting and a file."""
    for key in ("setting", "process", "file"):
        new_type(key)
    new_type("background_process", "process")
    affects = graph.relation_type_create(
        key="affects", label="affects", verb="affects", acting_user=None
    )
    graph.pattern_create(
        relation_key="affects", domain_key="setting", range_key="process", acting_user=None
    )
    graph.pattern_create(
        relation_key="related", domain_key="setting", range_key="file", acting_user=None
    )
    return {
        "affects": affects,
        "related": RelationType.objects.get(key="related"),
        "setting": f.concept("shared_buffers", type_key="setting"),
        "process": f.concept("checkpoint", type_key="process"),
        "file": f.concept("WAL", type_key="file"),
        "background": f.concept("autovacuum", type_key="background_process"),
        "untyped": f.concept("Something"),
    }


def _add(source, target, relation, **extra) -> Edge:
    return graph.edge_create(
        source=source,
        target=target,
        relation=relation,
        confidence=0.9,
        reason="The manual says so.",
        acting_user=None,
        **extra,
    )


def written() -> tuple[int, int, int, int]:
    return (
        Edge.objects.count(),
        AuditEntry.objects.count(),
        RelationPattern.objects.count(),
        ConceptTypeChange.objects.count(),
    )


def refused(call, error: type[DomainError], words: str) -> DomainError:
    """``call`` raises ``error`` saying ``words`` and writes nothing."""
    before = written()
    with pytest.raises(error) as caught, transaction.atomic():
        call()
    assert words in str(caught.value), str(caught.value)
    assert written() == before
    return caught.value


# --- the rule ---------------------------------------------------------------------------


def test_the_rule_names_the_relation_the_pattern_and_both_ends_types(onto):
    book = pattern_book.load()
    refusal = book.concepts_refusal(onto["affects"], onto["process"], onto["file"])
    assert isinstance(refusal, PatternViolation)
    assert str(refusal) == AFFECTS_WORDS
    assert refusal.details["patterns"] == [["setting", "process"]]


def test_a_subtype_satisfies_its_parent_and_an_open_relation_takes_anything(onto):
    book = pattern_book.load()
    assert book.concepts_refusal(onto["affects"], onto["setting"], onto["background"]) is None
    assert book.concepts_refusal(onto["affects"], onto["setting"], onto["process"]) is None
    prerequisite = RelationType.objects.get(key="prerequisite")
    assert book.of(prerequisite.pk) == []
    assert book.concepts_refusal(prerequisite, onto["file"], onto["untyped"]) is None


def test_an_untyped_end_breaks_a_patterned_relation_and_the_words_say_so(onto):
    refusal = pattern_book.load().concepts_refusal(
        onto["affects"], onto["setting"], onto["untyped"]
    )
    assert str(refusal) == (
        'The relation "affects" joins a setting to a process; "shared_buffers" is a '
        'setting and "Something" has no type (give it a type first).'
    )


def test_a_symmetric_relations_pattern_holds_both_ways_round(onto):
    book = pattern_book.load()
    related = onto["related"]
    assert book.concepts_refusal(related, onto["setting"], onto["file"]) is None
    assert book.concepts_refusal(related, onto["file"], onto["setting"]) is None
    refusal = book.concepts_refusal(related, onto["file"], onto["process"])
    assert str(refusal).startswith('The relation "related" joins a setting and a file;')


def test_the_rule_is_pure_over_rows_it_is_given():
    relation = RelationType(pk=1, key="affects", verb="affects")
    setting, process = (
        ConceptType(pk=1, key="setting", label="Setting"),
        ConceptType(pk=2, key="process", label="process"),
    )
    pattern = RelationPattern(relation=relation, domain=setting, range=process)
    words = rules.pattern_refusal(
        relation=relation,
        source_name="A",
        source_type=process,
        target_name="B",
        target_type=setting,
        patterns=[pattern],
        ancestors={1: {1}, 2: {2}},
    )
    assert str(words) == (
        'The relation "affects" joins a setting to a process; "A" is a process and "B" '
        "is a setting."
    )
    assert (
        rules.pattern_refusal(
            relation=relation,
            source_name="A",
            source_type=None,
            target_name="B",
            target_type=None,
            patterns=[],
            ancestors={},
        )
        is None
    )


# --- the services -----------------------------------------------------------------------


def test_allowing_retiring_and_reactivating_a_pattern_is_logged(onto):
    pattern = graph.pattern_create(
        relation_key="affects",
        domain_key="file",
        range_key="process",
        description="Files feed processes.",
        acting_user=None,
    )
    assert pattern.active and pattern.description == "Files feed processes."
    graph.pattern_retire(pattern=pattern, acting_user=None)
    pattern.refresh_from_db()
    assert not pattern.active and pattern.retired_at is not None
    graph.pattern_reactivate(pattern=pattern, acting_user=None)
    pattern.refresh_from_db()
    assert pattern.active and pattern.retired_at is None
    actions = list(
        AuditEntry.objects.filter(subject_type="relationpattern", subject_id=str(pattern.pk))
        .order_by("pk")
        .values_list("action", flat=True)
    )
    assert actions == [
        "relation_pattern.create",
        "relation_pattern.retire",
        "relation_pattern.reactivate",
    ]


def test_a_pattern_is_refused_in_words_when_it_cannot_be(onto):
    def make(relation="affects", domain="setting", range_="process"):
        return lambda: graph.pattern_create(
            relation_key=relation, domain_key=domain, range_key=range_, acting_user=None
        )

    refused(make(), NameTaken, 'The relation "affects" already allows a setting to a process.')
    refused(make(domain="gadget"), ValidationFailed, 'There is no concept type "gadget".')
    refused(make(relation="causes"), ValidationFailed, 'The relation "causes" does not exist.')
    # a symmetric relation's pattern is its own mirror
    refused(
        make(relation="related", domain="file", range_="setting"),
        NameTaken,
        "already allows a setting and a file",
    )
    graph.concept_type_create(key="lock", label="lock", acting_user=None)
    graph.concept_type_retire(concept_type=ConceptType.objects.get(key="lock"), acting_user=None)
    refused(make(range_="lock"), InactiveType, 'The concept type "lock" was retired')
    graph.relation_type_retire(relation=onto["affects"], acting_user=None)
    refused(make(domain="file"), InactiveRelation, 'The relation "affects" was retired')


def test_a_pattern_retired_twice_or_brought_back_over_its_twin_is_refused(onto):
    pattern = RelationPattern.objects.get(relation=onto["affects"])
    graph.pattern_retire(pattern=pattern, acting_user=None)
    refused(
        lambda: graph.pattern_retire(pattern=pattern, acting_user=None),
        StateConflict,
        "is already retired",
    )
    graph.pattern_create(
        relation_key="affects", domain_key="setting", range_key="process", acting_user=None
    )
    refused(
        lambda: graph.pattern_reactivate(pattern=pattern, acting_user=None),
        NameTaken,
        "already allows a setting to a process",
    )


# --- every path that writes an edge ---------------------------------------------------


def test_adding_an_edge_that_breaks_a_pattern_is_refused_and_one_that_fits_is_added(onto):
    refused(
        lambda: _add(onto["process"], onto["file"], onto["affects"]),
        PatternViolation,
        AFFECTS_WORDS,
    )
    assert _add(onto["setting"], onto["background"], onto["affects"]).is_active


def test_retiring_the_last_pattern_opens_the_relation_again(onto):
    graph.pattern_retire(
        pattern=RelationPattern.objects.get(relation=onto["affects"]), acting_user=None
    )
    assert _add(onto["process"], onto["file"], onto["affects"]).is_active


def test_updating_an_edge_onto_an_end_that_breaks_the_pattern_is_refused(onto):
    edge = _add(onto["setting"], onto["process"], onto["affects"])
    refused(
        lambda: graph.edge_supersede(edge=edge, source=onto["file"], acting_user=None),
        PatternViolation,
        '"WAL" is a file and "checkpoint" is a process.',
    )
    edge.refresh_from_db()
    assert edge.is_active


def test_restoring_an_edge_the_pattern_no_longer_allows_is_refused(onto):
    edge = _add(onto["file"], onto["process"], RelationType.objects.get(key="prerequisite"))
    graph.edge_invalidate(edge=edge, reason="Wrong.", acting_user=None)
    graph.pattern_create(
        relation_key="prerequisite", domain_key="setting", range_key="process", acting_user=None
    )
    refused(
        lambda: graph.edge_restore(edge=edge, acting_user=None),
        PatternViolation,
        'The relation "prerequisite" joins a setting to a process; "WAL" is a file',
    )


def _row(source, target, relation) -> tuple[Edge, Concept, Concept]:
    now = timezone.now()
    row = graph.edge_row(
        source_id=source.pk,
        target_id=target.pk,
        relation=relation,
        weight=1.0,
        confidence=0.9,
        reason="The manual says so.",
        evidence=None,
        valid_at=now,
        recorded_at=now,
    )
    return row, source, target


def test_the_bulk_path_refuses_a_pattern_breaker_in_the_single_paths_words(onto):
    """One batch: an acyclic relation's row and a plain one's breaking their patterns,
    one that fits; the breakers are refused with the words of one by one."""
    graph.pattern_create(
        relation_key="prerequisite", domain_key="setting", range_key="setting", acting_user=None
    )
    prerequisite = RelationType.objects.get(key="prerequisite")
    other = Concept.objects.get(
        pk=graph.concept_create(name="work_mem", type_key="setting", acting_user=None).pk
    )
    items = [
        _row(onto["process"], onto["file"], onto["affects"]),
        _row(onto["setting"], onto["process"], prerequisite),
        _row(onto["setting"], onto["process"], onto["affects"]),
        _row(onto["setting"], other, prerequisite),
    ]
    singles = []
    for row, s, t in items[:2]:
        with pytest.raises(PatternViolation) as caught, transaction.atomic():
            _add(s, t, row.relation)
        singles.append(str(caught.value))
    before = Edge.objects.count()
    refusals = bulk.edges_add_checked(items)
    assert [type(r) for r in refusals[:2]] == [PatternViolation, PatternViolation]
    assert [str(r) for r in refusals[:2]] == singles
    assert refusals[2:] == [None, None]
    assert Edge.objects.count() == before + 2


def test_a_merge_that_would_break_a_pattern_is_refused_as_a_whole(onto):
    _add(onto["setting"], onto["process"], onto["affects"])
    refused(
        lambda: graph.concept_merge(loser=onto["process"], survivor=onto["file"], acting_user=None),
        PatternViolation,
        'Merging "checkpoint" into "WAL" would break a relation\'s pattern: '
        'The relation "affects" joins a setting to a process; "shared_buffers" is a setting '
        'and "WAL" is a file.',
    )
    assert Concept.objects.get(pk=onto["process"].pk).status == "active"


def test_a_merge_into_a_concept_of_a_fitting_type_moves_the_edges(onto):
    _add(onto["setting"], onto["process"], onto["affects"])
    graph.concept_merge(loser=onto["process"], survivor=onto["background"], acting_user=None)
    assert Edge.objects.filter(target=onto["background"], status="active").count() == 1


def test_a_type_change_that_would_break_the_concepts_edges_is_refused_naming_them(onto):
    _add(onto["setting"], onto["process"], onto["affects"])
    words = refused(
        lambda: graph.concept_set_type(concept=onto["process"], type_key="file", acting_user=None),
        PatternViolation,
        '"checkpoint" cannot be given the type file: 1 of its active edges would break '
        "their relation's pattern.",
    )
    assert '"checkpoint" is a file.' in str(words)
    refused(
        lambda: graph.concept_set_type(concept=onto["process"], type_key="", acting_user=None),
        PatternViolation,
        '"checkpoint" has no type',
    )
    graph.concept_set_type(concept=onto["process"], type_key="background_process", acting_user=None)
    assert Concept.objects.get(pk=onto["process"].pk).type.key == "background_process"


def test_a_concept_created_with_a_type_has_it_and_its_history_from_its_creation(onto):
    concept = Concept.objects.get(pk=onto["setting"].pk)
    assert concept.type.key == "setting"
    (change,) = ConceptTypeChange.objects.filter(concept=concept)
    assert change.type.key == "setting" and change.changed_at == concept.created_at
    refused(
        lambda: graph.concept_create(name="Gizmo", type_key="gadget", acting_user=None),
        ValidationFailed,
        'There is no concept type "gadget".',
    )
