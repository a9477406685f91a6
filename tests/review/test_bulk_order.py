"""A whole vocabulary in one bulk decision: the kinds that define it (types, relations,
patterns, attributes) are accepted first, a type before its subtypes, so the concepts and
edges of the same selection may name them; the preview says so, and undo takes all back
(``review.decide.bulk_accept.in_stages``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgreview.agents.ontology_import import ontology_import
from kgreview.graph.models import (
    Attribute,
    Concept,
    ConceptType,
    Edge,
    RelationPattern,
    RelationType,
)
from kgreview.review.decide import bulk, undo
from kgreview.review.models import Proposal
from kgreview.review.services import proposal_create

pytestmark = pytest.mark.django_db

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "vocabularies"


def _import_both() -> list[int]:
    """Both example vocabularies imported; their proposals in the queue's order (newest
    first, so subtypes and edges come before what they need)."""
    for name, relation_map in (
        ("networking.ttl", ["broader=part_of", "related=related"]),
        ("database.owl", []),
    ):
        path = EXAMPLES / name
        ontology_import(
            raw=path.read_bytes(), filename=name, relation_map=relation_map, acting_user=None
        )
    return list(Proposal.objects.order_by("-priority", "-id").values_list("pk", flat=True))


def test_the_preview_of_a_whole_vocabulary_shows_no_blockers_and_changes_nothing(
    curator_user,
):
    ids = _import_both()
    preview = bulk.proposals_bulk_decide(
        acting_user=curator_user, proposal_ids=ids, action="accept", dry_run=True
    )
    assert preview.refused == []
    assert sorted(preview.done) == sorted(ids)
    assert not ConceptType.objects.exists() and not Concept.objects.exists()
    assert Proposal.objects.filter(status="pending").count() == len(ids)


def test_one_bulk_accept_takes_a_whole_vocabulary_and_one_undo_takes_it_back(curator_user):
    ids = _import_both()
    result = bulk.proposals_bulk_decide(acting_user=curator_user, proposal_ids=ids, action="accept")
    assert result.refused == []
    tcp = Concept.objects.get(name="Transmission Control Protocol")
    assert tcp.type.key == "protocol" and tcp.type.parent.key == "networking"
    assert {a.name for a in tcp.aliases.all()} >= {"TCP", "tcp/ip transport"}
    assert Edge.objects.filter(source=tcp, relation__key="part_of", target__name="Protocol")
    assert RelationPattern.objects.filter(
        relation__key="affects", domain__key="setting", range__key="process", active=True
    ).exists()
    assert Attribute.objects.filter(concept_type__key="setting", key="default_value").exists()
    assert Concept.objects.get(name="checkpoint_timeout").type.key == "setting"
    assert Edge.objects.filter(relation__key="affects", source__name="checkpoint_timeout")
    assert not Proposal.objects.filter(status="pending").exists()

    undo.decisions_undo(acting_user=curator_user, batch=result.batch)
    assert not Concept.objects.filter(status="active").exists()
    assert not Edge.objects.filter(status="active").exists()
    assert not ConceptType.objects.filter(active=True).exists()
    assert not RelationType.objects.filter(key="affects", active=True).exists()
    assert not RelationPattern.objects.filter(active=True).exists()
    assert not Attribute.objects.filter(active=True).exists()
    assert Proposal.objects.filter(status="pending").count() == len(ids)


def test_a_subtype_listed_before_its_parent_is_accepted_after_it(curator_user):
    child = proposal_create(
        kind="add_concept_type",
        payload={"key": "router", "label": "Router", "parent_key": "device"},
        confidence=0.9,
    )
    grandchild = proposal_create(
        kind="add_concept_type",
        payload={"key": "edge_router", "label": "Edge router", "parent_key": "router"},
        confidence=0.9,
    )
    parent = proposal_create(
        kind="add_concept_type", payload={"key": "device", "label": "Device"}, confidence=0.9
    )
    result = bulk.proposals_bulk_decide(
        acting_user=curator_user,
        proposal_ids=[grandchild.pk, child.pk, parent.pk],
        action="accept",
    )
    assert result.refused == []
    assert result.done == [grandchild.pk, child.pk, parent.pk]  # reported as asked
    assert ConceptType.objects.get(key="edge_router").parent.parent.key == "device"


def test_a_bootstrap_like_selection_of_types_relations_and_patterns_is_one_decision(
    curator_user,
):
    made = [
        proposal_create(kind="add_relation_pattern", payload=payload, confidence=0.8)
        for payload in (
            {"relation_key": "configures", "domain_key": "setting", "range_key": "process"},
        )
    ]
    made.append(
        proposal_create(
            kind="add_relation_type",
            payload={"key": "configures", "label": "Configures", "verb": "configures"},
            confidence=0.8,
        )
    )
    made += [
        proposal_create(kind="add_concept_type", payload=payload, confidence=0.8)
        for payload in (
            {"key": "setting", "label": "Setting", "parent_key": "component"},
            {"key": "process", "label": "Process", "parent_key": "component"},
            {"key": "component", "label": "Component"},
        )
    ]
    made.append(
        proposal_create(
            kind="add_attribute",
            payload={
                "type_key": "setting",
                "key": "default_value",
                "label": "Default value",
                "datatype": "integer",
            },
            confidence=0.8,
        )
    )
    ids = [p.pk for p in made]
    preview = bulk.proposals_bulk_decide(
        acting_user=curator_user, proposal_ids=ids, action="accept", dry_run=True
    )
    assert preview.refused == [] and not ConceptType.objects.exists()
    result = bulk.proposals_bulk_decide(acting_user=curator_user, proposal_ids=ids, action="accept")
    assert result.refused == []
    pattern = RelationPattern.objects.get(relation__key="configures")
    assert (pattern.domain.key, pattern.range.key) == ("setting", "process")
    assert ConceptType.objects.get(key="process").parent.key == "component"
    undo.decisions_undo(acting_user=curator_user, batch=result.batch)
    assert not ConceptType.objects.filter(active=True).exists()
    assert not RelationPattern.objects.filter(active=True).exists()
    assert Proposal.objects.filter(status="pending").count() == len(ids)
