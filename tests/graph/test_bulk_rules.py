"""The graph guards its edge rules on the set-based path too (``graph.bulk``): a row no
caller checked is refused by the rule book (``graph.rules``) with the very words the
single service (``edge_create``) refuses the same fact with, and nothing is written."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.utils import timezone

from kgreview.core.errors import DomainError, DuplicateEdge
from kgreview.graph import bulk, rules
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, Edge, RelationType

pytestmark = pytest.mark.django_db


def _fresh(concept: Concept) -> Concept:
    return Concept.objects.get(pk=concept.pk)


def _fact(f, case: str) -> dict:
    """A bad fact, as the keywords of ``edge_create``: one per rule of the rule book."""
    a, b = f.concept("Alpha"), f.concept("Beta")
    revision = f.lesson(text="Alpha comes before Beta.\n").current_revision
    fact = {
        "source": a,
        "target": b,
        "relation": f.relation("prerequisite"),
        "confidence": 0.9,
        "weight": 1.0,
        "reason": "Stated in the lesson.",
        "evidence": f.evidence(revision, "Alpha comes before Beta."),
    }
    if case == "self_loop":
        fact["target"] = a
    elif case == "retired_relation":
        fact["relation"] = graph.relation_type_retire(relation=fact["relation"], acting_user=None)
    elif case == "retired_end":
        graph.concept_retire(concept=b, acting_user=None)
    elif case == "merged_end":
        graph.concept_merge(loser=a, survivor=f.concept("Gamma"), acting_user=None)
    elif case == "offsets_outside":
        fact["evidence"] = graph.Evidence(revision=revision, start=6, end=500, quote="comes")
    elif case == "quote_elsewhere":
        fact["evidence"] = graph.Evidence(revision=revision, start=0, end=5, quote="Gamma")
    elif case == "confidence":
        fact["confidence"] = 1.5
    elif case == "weight":
        fact["weight"] = -0.5
    elif case == "no_reason":
        fact["reason"] = "   "
    elif case == "held":
        f.edge(a, b)
    elif case == "inverse_twin":
        fact["relation"] = f.relation("related")
        f.edge(b, a, "related")
    elif case == "cycle":
        f.edge(b, a)
    elif case == "pattern":
        for key in ("setting", "process"):
            graph.concept_type_create(key=key, label=key, acting_user=None)
        graph.pattern_create(
            relation_key="prerequisite", domain_key="setting", range_key="process", acting_user=None
        )
        graph.concept_set_type(concept=a, type_key="process", acting_user=None)
    fact["source"], fact["target"] = _fresh(fact["source"]), _fresh(fact["target"])
    return fact


def _single(fact: dict) -> DomainError | None:
    """What the single service says of the fact (rolled back)."""
    try:
        with transaction.atomic():
            graph.edge_create(**fact, acting_user=None)
            transaction.set_rollback(True)
    except DomainError as exc:
        return exc
    return None


def _row(fact: dict) -> tuple[Edge, Concept, Concept]:
    now = timezone.now()
    row = graph.edge_row(
        source_id=fact["source"].pk,
        target_id=fact["target"].pk,
        relation=fact["relation"],
        weight=fact["weight"],
        confidence=fact["confidence"],
        reason=fact["reason"],
        evidence=fact["evidence"],
        valid_at=now,
        recorded_at=now,
    )
    return row, fact["source"], fact["target"]


CASES = [
    "self_loop",
    "retired_relation",
    "retired_end",
    "merged_end",
    "offsets_outside",
    "quote_elsewhere",
    "confidence",
    "weight",
    "no_reason",
    "held",
    "inverse_twin",
    "cycle",
    "pattern",
]


@pytest.mark.parametrize("case", CASES)
def test_the_bulk_path_refuses_what_the_single_service_refuses_in_its_words(f, case):
    fact = _fact(f, case)
    single = _single(fact)
    assert single is not None, case
    before = Edge.objects.count()
    (refusal,) = bulk.edges_add_checked([_row(fact)])
    assert type(refusal) is type(single)
    assert str(refusal) == str(single)
    assert Edge.objects.count() == before


def test_a_good_fact_passes_both_paths(f):
    fact = _fact(f, "none")
    assert _single(fact) is None
    row, _, _ = item = _row(fact)
    assert bulk.edges_add_checked([item]) == [None]
    assert Edge.objects.get(pk=row.pk).is_active


def test_the_rule_book_is_what_both_paths_say():
    """The words come from the rule book: a retired relation, a loop, a bad number."""
    relation = RelationType(key="gone", verb="goes to", active=False)
    concept = Concept(pk=7, name="Alpha", status=Concept.Status.ACTIVE)
    assert str(rules.relation_refusal(relation)) == (
        'The relation "gone" was retired; choose an active relation.'
    )
    assert str(rules.self_loop(concept, concept)) == 'An edge cannot join "Alpha" to itself.'
    assert rules.confidence_refusal(0.5) is None
    assert str(rules.weight_refusal(-1)) == "Weight cannot be negative (-1)."


def test_bulk_refuses_a_repeat_within_the_batch_and_an_inverse_twin_in_a_symmetric_relation(f):
    """Rows of a relation that keeps no order, inserted in one statement: the same fact
    twice, or both ways round in a symmetric relation, is refused after the first, naming
    the row the batch wrote; the first is written."""
    a, b, c = f.concept("Alpha"), f.concept("Beta"), f.concept("Gamma")
    base = {"confidence": 0.9, "weight": 1.0, "reason": "Stated.", "evidence": None}
    related, applies = f.relation("related"), f.relation("applies_to")
    items = [
        _row({**base, "source": a, "target": b, "relation": related}),
        _row({**base, "source": b, "target": a, "relation": related}),
        _row({**base, "source": a, "target": c, "relation": applies}),
        _row({**base, "source": a, "target": c, "relation": applies}),
        _row({**base, "source": c, "target": a, "relation": applies}),
    ]
    refusals = bulk.edges_add_checked(items)
    first, third = items[0][0], items[2][0]
    assert isinstance(refusals[1], DuplicateEdge) and isinstance(refusals[3], DuplicateEdge)
    assert str(refusals[1]) == (
        f'"Beta" {related.verb} "Alpha" is already in the graph (edge #{first.pk}).'
    )
    assert str(refusals[3]).endswith(f"is already in the graph (edge #{third.pk}).")
    assert [refusals[i] for i in (0, 2, 4)] == [None, None, None]
    assert Edge.objects.filter(status="active").count() == 3
