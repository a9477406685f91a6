"""The name journal: naming services write it, and in-memory name indexes follow it
without rebuilding (including rows that commit out of id order)."""

from __future__ import annotations

import pytest

from construction.text import name_key
from kgreview.agents.adapters import INDEX_CACHE
from kgreview.graph import name_index, services
from kgreview.graph.models import ConceptAlias, NameChange
from kgreview.graph.name_index import QUESTION_INDEX, JournalCursor
from kgreview.graph.search import NAME_CACHE, concept_search
from kgreview.review.decide.decisions import proposal_accept

pytestmark = pytest.mark.django_db


def _journal_after(mark: int) -> list[tuple[int | None, int | None]]:
    return list(
        NameChange.objects.filter(id__gt=mark)
        .order_by("id")
        .values_list("concept_id", "proposal_id")
    )


def _mark() -> int:
    return NameChange.objects.order_by("-id").values_list("id", flat=True).first() or 0


def test_every_naming_service_writes_the_concepts_it_touched(f):
    """Create, alias added/removed/restored, rename, retire, reactivate, merge, unmerge."""
    mark = _mark()
    a = f.concept("Embeddings")
    b = f.concept("Text embeddings")
    assert _journal_after(mark) == [(a.pk, None), (b.pk, None)]
    steps = [
        (a, lambda: services.concept_add_alias(concept=a, name="Vectors", acting_user=None)),
        (a, lambda: services.concept_remove_alias(concept=a, name="Vectors", acting_user=None)),
        (
            a,
            lambda: services.concept_restore_alias(
                alias_id=ConceptAlias.all_objects.get(name="Vectors").pk, acting_user=None
            ),
        ),
        (a, lambda: services.concept_rename(concept=a, name="Embedding", acting_user=None)),
        (b, lambda: services.concept_retire(concept=b, acting_user=None)),
        (b, lambda: services.concept_reactivate(concept=b, acting_user=None)),
    ]
    for touched, step in steps:
        mark = _mark()
        step()
        assert _journal_after(mark) == [(touched.pk, None)]
    mark = _mark()
    services.concept_merge(loser=b, survivor=a, reason="Same.", acting_user=None)
    assert {c for c, _ in _journal_after(mark)} == {a.pk, b.pk}
    mark = _mark()
    services.concept_unmerge(loser=b, acting_user=None)
    assert {c for c, _ in _journal_after(mark)} == {a.pk, b.pk}


def test_a_queued_and_a_decided_concept_proposal_are_journaled(f):
    """Queuing an add_concept proposal and accepting it each name the proposal."""
    reviewer = f.user(role="reviewer")
    mark = _mark()
    proposal = f.concept_proposal("Sparse retrieval")
    assert _journal_after(mark) == [(None, proposal.pk)]
    mark = _mark()
    proposal_accept(proposal_id=proposal.pk, acting_user=reviewer)
    proposal.refresh_from_db()
    assert set(_journal_after(mark)) == {(proposal.concept_id, None), (None, proposal.pk)}


def test_a_new_alias_reaches_every_index_without_a_rebuild(f):
    """The resolver's, the ask loop's and the search's indexes apply the one change."""
    emb = f.concept("Embeddings")
    caches = (INDEX_CACHE, QUESTION_INDEX, NAME_CACHE)
    for cache in caches:
        cache.get()
    rebuilds = [cache.rebuilds for cache in caches]
    services.concept_add_alias(concept=emb, name="Vector embeddings", acting_user=None)
    assert INDEX_CACHE.get().exact(name_key("Vector embeddings")).concept_id == emb.pk
    assert QUESTION_INDEX.get().exact(name_key("Vector embeddings")).concept_id == emb.pk
    assert concept_search(q="vector embeddings")[0].match == "exact"
    assert [cache.rebuilds for cache in caches] == rebuilds
    assert all(cache.applied for cache in caches)


def test_a_decided_concept_proposal_moves_its_name_to_the_concept_without_a_rebuild(f):
    """The construction index answers with the proposal, then with the accepted concept."""
    reviewer = f.user(role="reviewer")
    proposal = f.concept_proposal("Sparse retrieval")
    assert INDEX_CACHE.get().exact(name_key("Sparse retrieval")).proposal_id == proposal.pk
    rebuilds = INDEX_CACHE.rebuilds
    proposal_accept(proposal_id=proposal.pk, acting_user=reviewer)
    entry = INDEX_CACHE.get().exact(name_key("Sparse retrieval"))
    proposal.refresh_from_db()
    assert entry.concept_id == proposal.concept_id and entry.proposal_id is None
    assert INDEX_CACHE.rebuilds == rebuilds


def test_a_merge_moves_the_losers_names_in_the_search_without_a_rebuild(f):
    """After a merge the loser's name finds the survivor, exactly."""
    emb, twin = f.concept("Embeddings"), f.concept("Text embeddings")
    concept_search(q="embeddings")
    rebuilds = NAME_CACHE.rebuilds
    services.concept_merge(loser=twin, survivor=emb, reason="Same.", acting_user=None)
    hit = concept_search(q="text embeddings")[0]
    assert (hit.concept.pk, hit.match) == (emb.pk, "exact")
    assert NAME_CACHE.rebuilds == rebuilds


def test_a_row_committed_after_a_later_one_is_still_applied(f):
    """A journal id skipped over (its transaction still open) is read once it commits."""
    late, early = f.concept("Late concept"), f.concept("Early concept")
    QUESTION_INDEX.get()
    rebuilds, base = QUESTION_INDEX.rebuilds, _mark()
    # What two transactions leave when the one that drew the lower id commits last.
    ConceptAlias.objects.create(concept=late, name="Tardy", key=name_key("Tardy"))
    ConceptAlias.objects.create(concept=early, name="Prompt", key=name_key("Prompt"))
    NameChange.objects.create(id=base + 5, concept_id=early.pk)
    index = QUESTION_INDEX.get()
    assert index.exact(name_key("Prompt")) is not None
    assert index.exact(name_key("Tardy")) is None
    NameChange.objects.create(id=base + 3, concept_id=late.pk)
    assert QUESTION_INDEX.get().exact(name_key("Tardy")).concept_id == late.pk
    assert QUESTION_INDEX.rebuilds == rebuilds


def test_a_row_naming_nothing_rebuilds_every_index(f):
    """``name_index_changed()`` with no endpoints is the last resort: a full rebuild."""
    f.concept("Embeddings")
    INDEX_CACHE.get()
    rebuilds = INDEX_CACHE.rebuilds
    services.name_index_changed()
    INDEX_CACHE.get()
    assert INDEX_CACHE.rebuilds == rebuilds + 1


def test_empty_lists_write_nothing(f):
    """Asking for no concepts and no proposals is not asking for a rebuild."""
    mark = _mark()
    services.name_index_changed(concepts=[], proposals=[])
    assert _journal_after(mark) == []


def test_a_gap_is_forgotten_after_a_while():
    """A skipped id is read again until it shows up or ``GAP_SECONDS`` pass."""
    cursor = JournalCursor()
    cursor.start(10, recent=[8, 10], now=0.0)
    assert set(cursor.gaps) >= {9}
    cursor.take([12], now=1.0)
    assert cursor.upto == 12 and {9, 11} <= set(cursor.gaps)
    cursor.take([11], now=2.0)
    assert 11 not in cursor.gaps
    cursor.take([], now=2.0 + name_index.GAP_SECONDS + 1)
    assert not cursor.gaps


def test_warming_builds_the_indexes_and_is_off_by_default(f, settings):
    """``warm`` builds what it is given; without KG_NAME_INDEX_WARM nothing starts."""
    f.concept("Embeddings")
    name_index.warm(QUESTION_INDEX, NAME_CACHE)
    assert QUESTION_INDEX.version and NAME_CACHE.version
    assert QUESTION_INDEX.get().exact(name_key("Embeddings")) is not None
    settings.KG_NAME_INDEX_WARM = False
    assert name_index.warm_in_background(QUESTION_INDEX) is None


def test_a_long_backlog_is_rebuilt_rather_than_applied(f, monkeypatch):
    """More rows waiting than ``REBUILD_BACKLOG``: one rebuild, and every name is there."""
    emb = f.concept("Embeddings")
    QUESTION_INDEX.get()
    rebuilds = QUESTION_INDEX.rebuilds
    monkeypatch.setattr(name_index, "REBUILD_BACKLOG", 2)
    for name in ("Vectors", "Dense vectors", "Vector codes"):
        services.concept_add_alias(concept=emb, name=name, acting_user=None)
    index = QUESTION_INDEX.get()
    assert QUESTION_INDEX.rebuilds == rebuilds + 1
    assert all(index.exact(name_key(n)) is not None for n in ("Vectors", "Vector codes"))


def test_search_with_only_punctuation_or_unknown_words_finds_nothing(f):
    """Input that names nothing answers an empty list, never an error."""
    f.concept("Embeddings")
    assert concept_search(q="!!! ???") == []
    assert concept_search(q="zqxv wobble") == []
