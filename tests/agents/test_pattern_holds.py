"""The agents hand verify the ontology (``adapters.ontology``); a draft verify flagged
``pattern_violation`` is queued held whatever its confidence; accepting a pattern (or a
type) lets go the held proposals that fit now, and only those."""

from __future__ import annotations

import pytest

from kgreview.agents import adapters
from kgreview.graph import services as graph
from kgreview.review.decide import decisions
from kgreview.review.models import Proposal
from kgreview.review.services import PATTERN_FLAG, proposal_create
from tests.review.conftest import reload

pytestmark = pytest.mark.django_db


@pytest.fixture
def onto(f):
    for key in ("setting", "process", "file"):
        graph.concept_type_create(key=key, label=key, acting_user=None)
    graph.concept_type_create(
        key="background", label="background", parent_key="process", acting_user=None
    )
    graph.pattern_create(
        relation_key="prerequisite", domain_key="setting", range_key="process", acting_user=None
    )
    return {
        "setting": f.concept("shared_buffers", type_key="setting"),
        "process": f.concept("checkpoint", type_key="process"),
        "file": f.concept("WAL", type_key="file"),
    }


def test_the_ontology_verify_gets_lists_patterns_types_and_proposed_types(f, onto):
    proposal_create(
        kind="add_concept",
        payload={"name": "Autovacuum", "type_key": "background"},
        confidence=0.9,
    )
    untyped = proposal_create(kind="add_concept", payload={"name": "Vacuum"}, confidence=0.9)
    ontology = adapters.ontology()
    assert ontology.patterns == {"prerequisite": (("setting", "process"),)}
    assert ontology.parents["background"] == "process"
    assert ontology.concept_types[onto["file"].pk] == "file"
    assert "background" in ontology.proposal_types.values()
    assert untyped.pk not in ontology.proposal_types


def test_without_patterns_the_ontology_is_empty_and_read_in_one_query(f, django_assert_num_queries):
    with django_assert_num_queries(1):
        ontology = adapters.ontology()
    assert ontology.patterns == {} and ontology.concept_types == {}


def _held(f, source, target):
    return f.edge_proposal(source, target, flags=[PATTERN_FLAG])


def test_a_draft_flagged_as_breaking_a_pattern_is_held_whatever_its_confidence(f, onto):
    p = _held(f, onto["file"], onto["process"])
    assert p.confidence >= 0.6 and p.status == "held"


def test_accepting_a_pattern_releases_the_held_proposals_that_fit_now(
    f, onto, django_capture_on_commit_callbacks
):
    fits_then = _held(f, onto["file"], onto["process"])
    still_breaks = _held(f, onto["process"], onto["setting"])
    pattern = proposal_create(
        kind="add_relation_pattern",
        payload={"relation_key": "prerequisite", "domain_key": "file", "range_key": "process"},
        confidence=0.8,
    )
    with django_capture_on_commit_callbacks(execute=True):
        decisions.proposal_accept(
            proposal_id=pattern.pk, acting_user=f.user("cora", role="curator")
        )
    fits_then, still_breaks = reload(fits_then), reload(still_breaks)
    assert fits_then.status == "pending" and PATTERN_FLAG not in fits_then.flags
    assert fits_then.version == 2
    assert still_breaks.status == "held" and PATTERN_FLAG in still_breaks.flags
    assert Proposal.objects.filter(status="held").count() == 1


def test_accepting_a_pattern_holds_the_queued_edges_that_break_it_now(
    f, onto, django_capture_on_commit_callbacks
):
    """An edge queued before its relation had a pattern (a "builds_on" here, untyped
    end or wrong types) waited in the queue for an acceptance every reviewer is
    refused; accepting the pattern holds it with the flag, and leaves the one that fits
    and those of other relations queued."""
    untyped = f.concept("Vacuum")
    breaks = f.edge_proposal(onto["file"], onto["process"], "builds_on")
    breaks_untyped = f.edge_proposal(untyped, onto["process"], "builds_on")
    fits = f.edge_proposal(onto["setting"], onto["process"], "builds_on")
    other = f.edge_proposal(onto["file"], onto["process"], "related")
    assert {p.status for p in (breaks, breaks_untyped, fits, other)} == {"pending"}
    pattern = proposal_create(
        kind="add_relation_pattern",
        payload={"relation_key": "builds_on", "domain_key": "setting", "range_key": "process"},
        confidence=0.8,
    )
    with django_capture_on_commit_callbacks(execute=True):
        decisions.proposal_accept(
            proposal_id=pattern.pk, acting_user=f.user("cora", role="curator")
        )
    for p in (breaks, breaks_untyped):
        p = reload(p)
        assert p.status == "held" and PATTERN_FLAG in p.flags and p.version == 2
    assert reload(fits).status == "pending" and PATTERN_FLAG not in reload(fits).flags
    assert reload(other).status == "pending"
