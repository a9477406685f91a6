"""Attribute values in the JSON-LD export (and the records every format is written
from): each concept carries the values it held at the export's instant, typed by their
datatype, with their quote and the decision that set them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rdflib import Literal, Namespace

from kgreview.exports import vocabulary
from kgreview.exports.writers import records
from kgreview.graph import services
from kgreview.review.decide import decisions
from kgreview.review.services import proposal_create
from tests.exports.support import jsonld_doc, rdf_of, text_of

pytestmark = pytest.mark.django_db

NS = {prefix: Namespace(iri) for prefix, iri in vocabulary.PREFIXES.items()}
KG, RDF, XSD, CONCEPT = NS["kg"], NS["rdf"], NS["xsd"], NS["concepts"]
TEXT = "max_connections defaults to 100 connections.\n"


@pytest.fixture
def max_connections(f):
    services.concept_type_create(key="setting", label="Setting", acting_user=None)
    concept = f.concept("max_connections")
    services.concept_set_type(concept=concept, type_key="setting", acting_user=None)
    attribute = services.attribute_create(
        type_key="setting",
        key="default_value",
        label="Default value",
        datatype="integer",
        acting_user=None,
    )
    return concept, attribute


def concept_item(doc: dict, concept_id: int) -> dict:
    return next(i for i in doc["@graph"] if i.get("identifier") == concept_id and "prefLabel" in i)


def test_a_decided_value_is_exported_typed_with_its_quote_and_decision(f, max_connections):
    concept, _ = max_connections
    doc_source = f.source(slug="runtime", text=TEXT)
    p = proposal_create(
        kind="set_attribute",
        payload={
            "concept": {"name": concept.name, "concept_id": concept.pk, "match": "exact"},
            "type_key": "setting",
            "attribute_key": "default_value",
            "value": "100",
        },
        confidence=0.8,
        evidence=f.evidence(doc_source.current_revision, "defaults to 100"),
        document=doc_source,
    )
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=f.user("rita", role="reviewer"))
    (value,) = concept_item(jsonld_doc(), concept.pk)["attribute"]
    assert value["@type"] == "kg:AttributeValue"
    assert (value["attributeKey"], value["declaredBy"], value["datatype"]) == (
        "default_value",
        "setting",
        "integer",
    )
    assert value["value"] == {"@value": "100", "@type": "xsd:integer"}
    assert value["evidence"]["quote"] == "defaults to 100"
    assert value["evidence"]["quotedFrom"]["sourceSlug"] == "runtime"
    assert value["decision"] == f"decisions:{out.decision.pk}"
    g = rdf_of(text_of("jsonld"))
    (node,) = g.objects(CONCEPT[str(concept.pk)], KG.attribute)
    assert g.value(node, RDF.value) == Literal(100)
    assert g.value(node, RDF.value).datatype == XSD.integer


def test_the_export_holds_the_values_of_its_instant(max_connections):
    concept, attribute = max_connections
    services.attribute_value_set(
        concept=concept, attribute=attribute, value="100", acting_user=None
    )
    middle = timezone.now()
    services.attribute_value_set(
        concept=concept, attribute=attribute, value="1,000", acting_user=None
    )
    now = [a["value"]["@value"] for a in concept_item(jsonld_doc(), concept.pk)["attribute"]]
    then = [a["value"]["@value"] for a in concept_item(jsonld_doc(middle), concept.pk)["attribute"]]
    assert (now, then) == (["1000"], ["100"])
    before = jsonld_doc(middle - timedelta(days=1))
    assert all("attribute" not in i for i in before["@graph"])


def test_the_records_count_the_values_written(max_connections):
    concept, attribute = max_connections
    services.attribute_value_set(
        concept=concept, attribute=attribute, value="100", acting_user=None
    )
    stats = records.ExportStats()
    rows = list(records.concept_records(at=timezone.now(), stats=stats))
    (row,) = [r for r in rows if r["id"] == concept.pk]
    assert row["attributes"][0]["value"] == "100" and row["attributes"][0]["decision"] is None
    assert stats.attribute_values == 1
