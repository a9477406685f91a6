"""The benchmarks' shared parts: fast inserts, the curriculum shape, scales, calibration."""

from __future__ import annotations

import random

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from benchmarks.common import SCALES, calibration, insert_rows, scaled, seed_concepts
from benchmarks.curriculum import LOCAL, ancestors, seed_curriculum
from kgreview.graph.models import Concept, ConceptAlias, Edge


@pytest.mark.django_db
def test_seed_concepts_returns_ids_in_name_order_with_canonical_and_alias_rows():
    """Every name becomes a concept with its canonical row; every third gets an alias."""
    ids = seed_concepts(["Alpha search", "Beta ranking", "Gamma routing", "Delta tuning"])
    assert [Concept.objects.get(pk=i).name for i in ids] == [
        "Alpha search",
        "Beta ranking",
        "Gamma routing",
        "Delta tuning",
    ]
    assert ConceptAlias.objects.filter(kind="canonical").count() == 4
    assert ConceptAlias.objects.filter(kind="alias").count() == 2
    assert ConceptAlias.objects.get(concept_id=ids[0], kind="canonical").key == "alpha search"


@pytest.mark.django_db
def test_insert_rows_writes_every_row_with_defaults_and_auto_timestamps():
    """Rows inserted in bulk get their field defaults and auto_now_add stamps."""
    count = insert_rows(Concept, (Concept(name=f"Concept {i}") for i in range(1234)))
    assert count == 1234
    assert Concept.objects.filter(status="active", created_at__isnull=False).count() == 1234


@pytest.mark.django_db
def test_curriculum_keeps_study_order_for_ordered_relations_and_has_history():
    """Acyclic relations follow the hidden order, so the seeded graph has no cycle; half
    the edges are a week old and a tenth of all are retired since."""
    graph = seed_curriculum(rng=random.Random(1), concepts=400, edges=2_000)
    assert Edge.objects.count() == 2_000 == graph.edges
    position = graph.position()
    for source, target, key in Edge.objects.values_list("source_id", "target_id", "relation__key"):
        if key in LOCAL:
            earlier, later = (target, source) if key == "builds_on" else (source, target)
            assert position[earlier] < position[later]
    assert Edge.objects.exclude(status="active").count() == 200
    assert Edge.objects.filter(invalid_at__isnull=False).count() == 200
    deep = max(ancestors(c, graph.preds) for c in graph.ids[-20:])
    assert deep > 20  # chains run deep, as a syllabus's do


@pytest.mark.django_db
def test_curriculum_edges_can_carry_evidence():
    """An evidence function's fields land on each edge."""
    from tests import factories

    revision = factories.source(text="Alpha comes before beta.\n").current_revision
    graph = seed_curriculum(
        rng=random.Random(2),
        concepts=50,
        edges=40,
        evidence=lambda i: {
            "evidence_revision_id": revision.pk,
            "evidence_start": 0,
            "evidence_end": 5,
            "evidence_quote": "Alpha",
        },
    )
    assert graph.edges == 40
    assert Edge.objects.filter(evidence_revision=revision, evidence_quote="Alpha").count() == 40


def test_scaled_accepts_only_the_published_scales():
    """1, 5 and 10 multiply the base; anything else is refused in words."""
    assert [scaled(50_000, s) for s in SCALES] == [50_000, 250_000, 500_000]
    with pytest.raises(ValueError, match="scale must be one of 1, 5, 10"):
        scaled(10, 3)


@pytest.mark.django_db
def test_calibration_times_a_python_and_a_database_workload():
    """Both figures are real times of this machine, and the temporary table is gone."""
    figures = calibration()
    assert figures["python_ms"] > 0 and figures["database_ms"] > 0
    from django.db import connection

    assert "kg_calibration" not in connection.introspection.table_names()


def test_bench_refuses_a_scale_for_fixed_documents_in_words():
    """``--scale`` does not apply to a benchmark of fixed documents."""
    with pytest.raises(CommandError, match="measures fixed documents"):
        call_command("bench", "render", "--scale", "5")


def test_bench_refuses_an_unknown_scale():
    """Only 1, 5 and 10 are scales."""
    with pytest.raises(CommandError):
        call_command("bench", "graph", "--scale", "3")


@pytest.mark.django_db
def test_insert_rows_takes_a_generator_that_queries_the_database_on_the_way():
    """Rows are drawn before each COPY starts, so a query inside the generator is safe."""

    def rows():
        for i in range(5):
            yield Concept(name=f"Queried {i} {Concept.objects.count()}")

    assert insert_rows(Concept, rows(), batch=2) == 5
    assert Concept.objects.filter(name__startswith="Queried").count() == 5


@pytest.mark.django_db
def test_the_seeded_curriculum_has_its_orders_built_as_the_migration_builds_them():
    """Edges copied in past the services get the acyclic relations' orders right after,
    so the review benchmark measures decisions against an order, not a rebuild."""
    from kgreview.graph import order
    from kgreview.graph.models import RelationType

    seed_curriculum(rng=random.Random(2), concepts=300, edges=1_500)
    for relation in RelationType.objects.filter(acyclic=True):
        assert relation.ordered
        assert order.edges_out_of_order(relation.pk) == []
    assert not Edge.objects.filter(status="active", in_order=False).exists()


def test_a_refusal_is_counted_by_the_words_on_its_card():
    """The review benchmark reads why a decision was refused from the card's alert."""
    from benchmarks.review import refusal_reason

    page = '<div class="flash bad" role="alert">Cannot apply it as it stands: &quot;A&quot; '
    cycle = page + "is a prerequisite for &quot;B&quot; would close a cycle: B → A → B.</div>"
    other = page + "something new.</div>"
    assert refusal_reason(cycle) == "cycle"
    assert refusal_reason(other) == 'Cannot apply it as it stands: "A" something new.'
    assert refusal_reason("<p>no alert</p>") == "no words on the page"
    # The card's own alert carries its id (and the field it names) before the words.
    card = (
        '<div class="flash bad" role="alert" id="card-error" data-field="relation">Cannot'
        " apply it as it stands: &quot;B&quot; builds on &quot;A&quot; already states this"
        " (edge #7).</div>"
    )
    assert refusal_reason(card) == "its twin is in the graph"


@pytest.mark.django_db
def test_the_review_benchmark_counts_refusals_and_what_the_cycle_check_visited():
    """Decisions through the real views on a small curriculum: every one is timed and
    counted, a refusal (a 200 with words) is counted by its reason, and the accepts of
    acyclic relations report how many concepts their check searched."""
    from benchmarks.common import plain_static
    from benchmarks.curriculum import seed_proposals
    from benchmarks.review import _decide, reviewer_client
    from kgreview.review.models import Proposal

    rng = random.Random(4)
    graph = seed_curriculum(rng=rng, concepts=200, edges=1_000)
    seed_proposals(graph, 150, rng)
    with plain_static():
        client, _ = reviewer_client("bench-test")
        run = _decide(client, rng, 20, graph)
    # Posted as the page posts them: nine in ten holding the next card, one in ten none.
    actions = ("accept", "reject", "edit_accept")
    assert [len(run.timings[a]) + len(run.bare.timings[a]) for a in actions] == [20, 20, 20]
    assert sum(len(run.bare.timings[a]) for a in actions) == 6
    # SQLite writes a moved end's place in the order and the edge in two statements
    # (PostgreSQL in one), and the edge's provenance is review's own row, one insert more;
    # with no card held the next card is found and leased to the reviewer (team review).
    # Savepoints are not counted: they only nest the decision's transaction in the test's.
    every = [q for series in (run, run.bare) for qs in series.queries.values() for q in qs]
    assert max(every) <= 15 + (connection.vendor == "sqlite")
    still_open = Proposal.objects.filter(status__in=("pending", "held")).count()
    refused = sum(sum(c.values()) for c in run.refused.values())
    assert refused == still_open - (150 - 60)
    assert run.visits()["accepts_checked"] > 0
