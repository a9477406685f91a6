"""Attributes in the graph: the rule book (``graph.attribute_rules``: datatypes and their
canonical forms, declarations along a type's chain) and the services
(``graph.services.attributes``), each refusal in words and each change audited."""

from __future__ import annotations

import pytest

from kgreview.core.errors import (
    ConceptNotActive,
    DomainError,
    EvidenceMismatch,
    NameTaken,
    StateConflict,
    ValidationFailed,
)
from kgreview.core.models import AuditEntry
from kgreview.graph import attribute_rules as arules
from kgreview.graph import services as graph
from kgreview.graph.models import Attribute, AttributeValue, ConceptType

pytestmark = pytest.mark.django_db


# --- The datatypes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("datatype", "written", "stored"),
    [
        ("string", "  4MB ", "4MB"),
        ("integer", "1,024", "1024"),
        ("integer", "+007", "7"),
        ("integer", "-3", "-3"),
        ("integer", "1,000,000", "1000000"),
        ("decimal", "0.50", "0.5"),
        ("decimal", "12", "12.0"),
        ("decimal", "1,250.75", "1250.75"),
        ("decimal", ".5", "0.5"),
        ("decimal", "-0.0", "0.0"),
        ("boolean", "Yes", "true"),
        ("boolean", "off", "false"),
        ("boolean", "TRUE", "true"),
        ("boolean", "0", "false"),
        ("date", "2024-02-29", "2024-02-29"),
        ("uri", "HTTPS://www.postgresql.org/docs/", "https://www.postgresql.org/docs/"),
        ("uri", "urn:isbn:0451450523", "urn:isbn:0451450523"),
    ],
)
def test_a_value_is_stored_in_its_datatypes_canonical_form(datatype, written, stored):
    attribute = Attribute(key="a", label="A", datatype=datatype)
    assert arules.value_refusal(attribute, written) is None
    assert arules.canonical_value(datatype, written) == stored


@pytest.mark.parametrize(
    ("datatype", "written"),
    [
        ("string", "   "),
        ("string", "x" * 2001),
        ("integer", "4MB"),
        ("integer", "1,02"),
        ("integer", "1.5"),
        ("integer", "1e3"),
        ("decimal", "1e3"),
        ("decimal", "NaN"),
        ("decimal", "."),
        ("boolean", "maybe"),
        ("date", "2023-02-29"),
        ("date", "31/03/2024"),
        ("date", "20240331"),
        ("uri", "www.postgresql.org"),
        ("uri", "https://exa mple.org"),
    ],
)
def test_a_value_outside_its_datatype_is_refused_naming_value_attribute_and_datatype(
    datatype, written
):
    attribute = Attribute(key="max_connections", label="Maximum", datatype=datatype)
    refusal = arules.value_refusal(attribute, written)
    assert isinstance(refusal, ValidationFailed)
    words = str(refusal)
    assert "Maximum" in words and '"max_connections"' in words and f"({datatype})" in words
    with pytest.raises(ValueError):
        arules.canonical_value(datatype, written)


def test_the_refusal_quotes_the_value_as_written():
    attribute = Attribute(key="port", label="Port", datatype="integer")
    assert str(arules.value_refusal(attribute, "5432 or so")) == (
        '"5432 or so" is not a valid Port ("port"): it is a whole number (integer) and takes '
        'a whole number, such as 1024 or "1,024".'
    )


# --- Declaring ----------------------------------------------------------------------------


@pytest.fixture
def types():
    """object > setting > memory_setting, and command beside setting."""
    graph.concept_type_create(key="object", label="Object", acting_user=None)
    graph.concept_type_create(key="setting", label="Setting", parent_key="object", acting_user=None)
    graph.concept_type_create(
        key="memory_setting", label="Memory setting", parent_key="setting", acting_user=None
    )
    graph.concept_type_create(key="command", label="Command", parent_key="object", acting_user=None)


def declare(type_key="setting", key="default_value", datatype="string", **kw) -> Attribute:
    return graph.attribute_create(
        type_key=type_key,
        key=key,
        label=kw.pop("label", key.replace("_", " ").capitalize()),
        datatype=datatype,
        acting_user=None,
        **kw,
    )


def test_declaring_an_attribute_writes_it_and_its_log_row(types, f):
    curator = f.user("cora", role="curator")
    made = graph.attribute_create(
        type_key="setting",
        key="default_value",
        label=" Default value ",
        datatype="string",
        description=" What it is unless set. ",
        acting_user=curator,
    )
    assert (made.label, made.description, made.active) == (
        "Default value",
        "What it is unless set.",
        True,
    )
    row = AuditEntry.objects.get(action="attribute.create")
    assert row.user == curator and row.after["datatype"] == "string"
    assert "Declared the attribute “Default value” (string)" in row.summary


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"type_key": "nothing"}, ValidationFailed, 'There is no concept type "nothing".'),
        ({"key": "Default"}, ValidationFailed, "cannot be an attribute's key"),
        ({"datatype": "colour"}, ValidationFailed, '"colour" is not an attribute datatype'),
        ({"label": " "}, ValidationFailed, "An attribute needs a label"),
        ({"label": "x" * 101}, ValidationFailed, "100 characters at most"),
        ({"description": "a\x00b"}, ValidationFailed, "control characters"),
    ],
)
def test_a_bad_declaration_is_refused_in_words(types, kwargs, error, words):
    with pytest.raises(error, match=words):
        declare(**kwargs)
    assert not Attribute.objects.exists()


def test_a_key_is_declared_once_along_a_types_chain(types):
    declare("object")
    with pytest.raises(NameTaken, match='from the type above it, "object"'):
        declare("memory_setting")
    with pytest.raises(NameTaken, match='"object" already declares the attribute'):
        declare("object")
    declare("object", key="unit")
    assert Attribute.objects.count() == 2


def test_a_retired_ancestors_key_may_be_declared_again_below_it(types):
    graph.attribute_retire(attribute=declare("object"), acting_user=None)
    assert declare("setting").concept_type.key == "setting"


def test_a_retired_type_declares_nothing(types):
    command = ConceptType.objects.get(key="command")
    graph.concept_type_retire(concept_type=command, acting_user=None)
    with pytest.raises(DomainError, match='"command" was retired'):
        declare("command")


def test_retiring_and_reactivating_an_attribute(types):
    attribute = declare()
    graph.attribute_retire(attribute=attribute, acting_user=None)
    attribute.refresh_from_db()
    assert not attribute.active and attribute.retired_at is not None
    with pytest.raises(StateConflict, match="is already retired"):
        graph.attribute_retire(attribute=attribute, acting_user=None)
    graph.attribute_reactivate(attribute=attribute, acting_user=None)
    attribute.refresh_from_db()
    assert attribute.active and attribute.retired_at is None
    with pytest.raises(StateConflict, match="is already active"):
        graph.attribute_reactivate(attribute=attribute, acting_user=None)
    actions = list(
        AuditEntry.objects.filter(action__startswith="attribute.").values_list("action", flat=True)
    )
    assert sorted(actions) == ["attribute.create", "attribute.reactivate", "attribute.retire"]


def test_an_attribute_of_a_retired_type_is_not_reactivated(types):
    attribute = declare("command", key="syntax")
    graph.attribute_retire(attribute=attribute, acting_user=None)
    graph.concept_type_retire(concept_type=ConceptType.objects.get(key="command"), acting_user=None)
    with pytest.raises(StateConflict, match="reactivate the type first"):
        graph.attribute_reactivate(attribute=attribute, acting_user=None)


# --- Values -------------------------------------------------------------------------------


@pytest.fixture
def work_mem(types, f):
    concept = f.concept("work_mem")
    graph.concept_set_type(concept=concept, type_key="memory_setting", acting_user=None)
    return concept


def test_a_value_is_set_in_canonical_form_with_its_quote(work_mem, f):
    attribute = declare("setting", key="max_value", datatype="integer")
    doc = f.source(slug="runtime", text="The maximum is 2,147,483,647 kilobytes.\n")
    evidence = f.evidence(doc.current_revision, "2,147,483,647")
    row = graph.attribute_value_set(
        concept=work_mem,
        attribute=attribute,
        value="2,147,483,647",
        evidence=evidence,
        acting_user=None,
    )
    assert (row.value, row.status, row.invalid_at) == ("2147483647", "active", None)
    assert (row.evidence_quote, row.evidence_start) == ("2,147,483,647", 15)
    logged = AuditEntry.objects.get(action="attribute_value.set")
    assert logged.after == {"max_value": "2147483647", "value_id": row.pk}
    assert logged.summary == "Set the Max value of “work_mem” to “2147483647”."


def test_a_new_value_supersedes_the_old_row_at_the_same_instant(work_mem):
    attribute = declare()
    old = graph.attribute_value_set(
        concept=work_mem, attribute=attribute, value="4MB", acting_user=None
    )
    new = graph.attribute_value_set(
        concept=work_mem, attribute=attribute, value="8MB", acting_user=None
    )
    old.refresh_from_db()
    assert (old.status, old.invalid_at) == ("superseded", new.recorded_at)
    assert list(AttributeValue.objects.filter(status="active").values_list("value", flat=True)) == [
        "8MB"
    ]
    assert AuditEntry.objects.filter(action="attribute_value.set").first().before == {
        "default_value": "4MB"
    }


def test_the_same_value_again_is_refused(work_mem):
    attribute = declare("setting", key="enabled", datatype="boolean")
    graph.attribute_value_set(concept=work_mem, attribute=attribute, value="on", acting_user=None)
    with pytest.raises(StateConflict, match='The Enabled of "work_mem" is "true" already.'):
        graph.attribute_value_set(
            concept=work_mem, attribute=attribute, value="yes", acting_user=None
        )
    assert AttributeValue.objects.count() == 1


def test_a_value_is_refused_when_the_type_does_not_declare_it(types, f):
    attribute = declare()
    vacuum = f.concept("VACUUM")
    with pytest.raises(ValidationFailed, match='"VACUUM" has no type, so it has no attribute'):
        graph.attribute_value_set(concept=vacuum, attribute=attribute, value="x", acting_user=None)
    graph.concept_set_type(concept=vacuum, type_key="command", acting_user=None)
    with pytest.raises(ValidationFailed, match="neither that type nor a type above it"):
        graph.attribute_value_set(concept=vacuum, attribute=attribute, value="x", acting_user=None)
    assert not AttributeValue.objects.exists()


def test_a_subtype_inherits_its_ancestors_attribute(work_mem):
    attribute = declare("object", key="documented_at", datatype="uri")
    row = graph.attribute_value_set(
        concept=work_mem,
        attribute=attribute,
        value="https://www.postgresql.org/docs/current/runtime-config-resource.html",
        acting_user=None,
    )
    assert row.attribute.concept_type.key == "object"


def test_a_retired_concept_or_attribute_takes_no_value(work_mem):
    attribute = declare()
    graph.attribute_retire(attribute=attribute, acting_user=None)
    with pytest.raises(StateConflict, match="was retired and takes no new value"):
        graph.attribute_value_set(
            concept=work_mem, attribute=attribute, value="4MB", acting_user=None
        )
    graph.attribute_reactivate(attribute=attribute, acting_user=None)
    graph.concept_retire(concept=work_mem, acting_user=None)
    with pytest.raises(ConceptNotActive, match='"work_mem" was retired'):
        graph.attribute_value_set(
            concept=work_mem, attribute=attribute, value="4MB", acting_user=None
        )


def test_a_datatype_mismatch_is_refused_before_anything_is_written(work_mem):
    attribute = declare("setting", key="since", datatype="date")
    with pytest.raises(ValidationFailed, match='"9.6" is not a valid Since'):
        graph.attribute_value_set(
            concept=work_mem, attribute=attribute, value="9.6", acting_user=None
        )
    assert (
        not AttributeValue.objects.exists()
        and not AuditEntry.objects.filter(action="attribute_value.set").exists()
    )


def test_evidence_must_quote_its_revision(work_mem, f):
    attribute = declare()
    doc = f.source(slug="runtime", text="The default is 4MB.\n")
    wrong = graph.Evidence(revision=doc.current_revision, start=0, end=3, quote="Tha")
    with pytest.raises(EvidenceMismatch):
        graph.attribute_value_set(
            concept=work_mem, attribute=attribute, value="4MB", evidence=wrong, acting_user=None
        )
    assert not AttributeValue.objects.exists()


def test_retiring_a_value_leaves_none_and_is_refused_twice(work_mem):
    attribute = declare()
    row = graph.attribute_value_set(
        concept=work_mem, attribute=attribute, value="4MB", acting_user=None
    )
    graph.attribute_value_retire(value=row, acting_user=None)
    row.refresh_from_db()
    assert row.status == "retired" and row.invalid_at is not None
    with pytest.raises(StateConflict, match="was retired already"):
        graph.attribute_value_retire(value=row, acting_user=None)
    assert AuditEntry.objects.filter(action="attribute_value.retire").count() == 1


def test_restoring_gives_an_ended_value_back_as_a_new_row(work_mem):
    attribute = declare()
    old = graph.attribute_value_set(
        concept=work_mem, attribute=attribute, value="4MB", acting_user=None
    )
    new = graph.attribute_value_set(
        concept=work_mem, attribute=attribute, value="8MB", acting_user=None
    )
    with pytest.raises(StateConflict, match='holds the Default value "8MB" now'):
        graph.attribute_value_restore(value=old, acting_user=None)
    graph.attribute_value_retire(value=new, acting_user=None)
    back = graph.attribute_value_restore(value=old, acting_user=None)
    assert (back.value, back.status) == ("4MB", "active") and back.pk not in (old.pk, new.pk)
    assert AuditEntry.objects.get(action="attribute_value.restore").after["restores"] == old.pk


def test_a_value_row_is_never_deleted(work_mem):
    row = graph.attribute_value_set(
        concept=work_mem, attribute=declare(), value="4MB", acting_user=None
    )
    with pytest.raises(DomainError):
        row.delete()
