"""Construct queues the attribute values a source states (``agents.attribute_values``):
for concepts whose type declares a default or a value type, a ``set_attribute``
proposal with its quote, held to the rule book first; read off the PostgreSQL manual's
resource chapter."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from construction.doc_html import read_html
from kgreview.graph import services
from kgreview.graph.models import Attribute, AttributeValue
from kgreview.review.decide.decisions import proposal_accept
from kgreview.review.models import Proposal

pytestmark = pytest.mark.django_db

PAGE = (
    Path(__file__).resolve().parents[2]
    / "evaluation/manuals/postgresql/pages/runtime-config-resource.html"
)


def construct(slug: str) -> dict:
    out = io.StringIO()
    call_command("construct", "--provider", "rules", "--json", "--source", slug, stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def manual():
    text = read_html(PAGE.read_bytes(), filename=PAGE.name).text
    return services.source_import(
        slug="runtime-config-resource", title="Resource Consumption", text=text, acting_user=None
    ).source


@pytest.fixture
def settings_typed(f):
    services.concept_type_create(key="setting", label="Setting", acting_user=None)
    services.concept_type_create(
        key="memory_setting", label="Memory setting", parent_key="setting", acting_user=None
    )
    made = {}
    for name, type_key in (("work_mem", "memory_setting"), ("vacuum_cost_limit", "setting")):
        made[name] = f.concept(name)
        services.concept_set_type(concept=made[name], type_key=type_key, acting_user=None)
    return made


def set_attribute_proposals() -> dict[tuple[str, str], Proposal]:
    return {
        (p.payload["concept"]["name"], p.payload["attribute_key"]): p
        for p in Proposal.objects.filter(kind="set_attribute")
    }


def test_a_graph_whose_types_declare_no_attribute_gets_no_value_proposal(manual, settings_typed):
    construct("runtime-config-resource")
    assert set_attribute_proposals() == {}


def test_construct_queues_the_stated_defaults_and_types_with_their_quotes(
    manual, settings_typed, f
):
    services.attribute_create(
        type_key="setting",
        key="default_value",
        label="Default value",
        datatype="string",
        acting_user=None,
    )
    services.attribute_create(
        type_key="setting",
        key="value_type",
        label="Value type",
        datatype="string",
        acting_user=None,
    )
    construct("runtime-config-resource")
    found = set_attribute_proposals()
    work_mem = found[("work_mem", "default_value")]
    assert work_mem.payload["value"] == "4MB" and work_mem.payload["type_key"] == "setting"
    assert work_mem.evidence_quote == "The default value is four megabytes (`4MB`)."
    revision = manual.current_revision
    assert revision.text[work_mem.evidence_start : work_mem.evidence_end] == work_mem.evidence_quote
    assert work_mem.origin is not None and work_mem.document_id == manual.pk
    assert found[("work_mem", "value_type")].payload["value"] == "integer"
    assert found[("vacuum_cost_limit", "default_value")].payload["value"] == "200"
    assert len(found) == 4 and {p.status for p in found.values()} == {"pending"}
    proposal_accept(proposal_id=work_mem.pk, acting_user=f.user("rita", role="reviewer"))
    assert AttributeValue.objects.get(concept=settings_typed["work_mem"]).value == "4MB"


def test_a_value_outside_the_datatype_or_held_already_is_not_queued(manual, settings_typed):
    """An integer default: "4MB" is no whole number and is left out; 200 is held
    already; nothing is queued."""
    attribute = services.attribute_create(
        type_key="setting",
        key="default_value",
        label="Default value",
        datatype="integer",
        acting_user=None,
    )
    services.attribute_value_set(
        concept=settings_typed["vacuum_cost_limit"],
        attribute=attribute,
        value="200",
        acting_user=None,
    )
    construct("runtime-config-resource")
    assert set_attribute_proposals() == {}
    assert Attribute.objects.count() == 1
