"""A concept's attribute values in the API's concept detail: now and as of an instant,
each with its quote, its source and the decision that set it."""

from __future__ import annotations

import pytest
from django.utils import timezone

from kgreview.api import schemas as s
from kgreview.graph import services
from kgreview.graph.models import Attribute
from kgreview.review.decide import decisions
from kgreview.review.services import proposal_create

pytestmark = pytest.mark.django_db

TEXT = "The default value of work_mem is 4MB.\n"


@pytest.fixture
def work_mem(f):
    services.concept_type_create(key="setting", label="Setting", acting_user=None)
    concept = f.concept("work_mem")
    services.concept_set_type(concept=concept, type_key="setting", acting_user=None)
    services.attribute_create(
        type_key="setting",
        key="default_value",
        label="Default value",
        datatype="string",
        acting_user=None,
    )
    return concept


def test_a_concept_answers_no_attributes_when_it_has_none(f, agent):
    c = f.concept("VACUUM")
    assert agent.get(f"/api/v1/concepts/{c.pk}").json()["attributes"] == []


def test_a_decided_value_answers_with_its_quote_and_decision(f, agent, work_mem):
    doc = f.source(slug="runtime", text=TEXT)
    p = proposal_create(
        kind="set_attribute",
        payload={
            "concept": {"name": "work_mem", "concept_id": work_mem.pk, "match": "exact"},
            "type_key": "setting",
            "attribute_key": "default_value",
            "value": "4MB",
        },
        confidence=0.8,
        evidence=f.evidence(doc.current_revision, "4MB"),
        document=doc,
    )
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=f.user("rita", role="reviewer"))
    body = agent.get(f"/api/v1/concepts/{work_mem.pk}").json()
    (value,) = body["attributes"]
    assert (value["key"], value["declared_by"], value["datatype"], value["value"]) == (
        "default_value",
        "setting",
        "string",
        "4MB",
    )
    assert value["evidence"]["source"] == "runtime" and value["evidence"]["quote"] == "4MB"
    assert value["evidence"]["start"] == TEXT.index("4MB")
    assert value["decision_id"] == out.decision.pk
    s.ConceptDetailOut.model_validate(body)


def test_as_of_answers_the_value_held_then(f, agent, work_mem):
    attribute = Attribute.objects.get()
    before = timezone.now()
    services.attribute_value_set(
        concept=work_mem, attribute=attribute, value="4MB", acting_user=None
    )
    middle = timezone.now()
    services.attribute_value_set(
        concept=work_mem, attribute=attribute, value="8MB", acting_user=None
    )
    url = f"/api/v1/concepts/{work_mem.pk}"

    def values(at=None):
        params = {"as_of": at.isoformat()} if at else {}
        return [(v["value"], v["decision_id"]) for v in agent.get(url, params).json()["attributes"]]

    assert values() == [("8MB", None)]
    assert values(middle) == [("4MB", None)]
    assert values(before) == []
