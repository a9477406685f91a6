"""Attributes through review: add_attribute (curators) declares one on a concept type,
set_attribute (reviewers) gives a concept its value with the quote that states it; each
accepted, undone and blocked in words."""

from __future__ import annotations

import pytest

from kgreview.core.errors import DomainError, ValidationFailed
from kgreview.core.models import AuditEntry
from kgreview.graph import services as graph
from kgreview.graph.models import Attribute, AttributeValue
from kgreview.review import provenance
from kgreview.review.decide import decisions, undo
from kgreview.review.decide.outcome import NotAllowed
from kgreview.review.kinds import kind_of, payload_validate
from kgreview.review.models import Proposal
from kgreview.review.services import proposal_create
from tests.review.conftest import card, reload

pytestmark = pytest.mark.django_db

TEXT = (
    "work_mem sets the base maximum amount of memory used by a query operation.\n"
    "The default value of work_mem is 4MB.\n"
    "The default value of work_mem is 8MB in newer releases.\n"
)
EXAMPLE = {
    "quote": "The default value of work_mem is 4MB.",
    "source_slug": "runtime",
    "concept_name": "work_mem",
    "value": "4MB",
}


@pytest.fixture
def setting(f):
    """A type "setting" under "object", and a concept of it."""
    graph.concept_type_create(key="object", label="Object", acting_user=None)
    graph.concept_type_create(key="setting", label="Setting", parent_key="object", acting_user=None)
    work_mem = f.concept("work_mem")
    graph.concept_set_type(concept=work_mem, type_key="setting", acting_user=None)
    return work_mem


def attribute_proposal(**payload) -> Proposal:
    body = {
        "type_key": "setting",
        "key": "default_value",
        "label": "Default value",
        "datatype": "string",
        "examples": [EXAMPLE],
    }
    return proposal_create(kind="add_attribute", payload={**body, **payload}, confidence=0.9)


def value_proposal(f, concept, value="4MB", quote=EXAMPLE["quote"], *, end=None, **payload):
    """A set_attribute proposal for ``concept`` (or the payload end ``end``), quoting the
    runtime chapter (imported the first time)."""
    doc = Proposal.objects.filter(document__slug="runtime").first()
    doc = doc.document if doc else f.source(slug="runtime", text=TEXT)
    body = {
        "concept": end or {"name": concept.name, "concept_id": concept.pk, "match": "exact"},
        "type_key": "setting",
        "attribute_key": "default_value",
        "value": value,
    }
    return proposal_create(
        kind="set_attribute",
        payload={**body, **payload},
        confidence=0.8,
        reason="The manual states it.",
        evidence=f.evidence(doc.current_revision, quote),
        document=doc,
    )


# --- add_attribute ----------------------------------------------------------------------


def test_an_attribute_payload_is_cleaned_and_keeps_its_examples():
    clean = payload_validate(
        kind="add_attribute",
        payload={
            "type_key": "setting",
            "key": "default_value",
            "label": " Default ",
            "datatype": "string",
            "examples": [EXAMPLE],
        },
    )
    assert clean["label"] == "Default" and clean["description"] == ""
    assert clean["examples"][0]["value"] == "4MB"


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        ({"key": "Default", "label": "Default", "datatype": "string"}, "key"),
        (
            {"key": "default", "label": "Default", "datatype": "colour"},
            '"colour" is not an attribute datatype',
        ),
        ({"key": "default", "label": "", "datatype": "string"}, "label"),
        ({"key": "default", "label": "Default", "datatype": "string", "extra": 1}, "extra"),
    ],
)
def test_a_bad_attribute_payload_is_refused_in_words(payload, words):
    with pytest.raises(ValidationFailed, match="Invalid add_attribute payload") as caught:
        payload_validate(kind="add_attribute", payload={"type_key": "setting", **payload})
    assert words in str(caught.value)


def test_only_a_curator_accepts_an_attribute(setting, reviewer):
    p = attribute_proposal()
    with pytest.raises(NotAllowed):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert not Attribute.objects.exists() and reload(p).status == "pending"


def test_accepting_declares_the_attribute_with_the_decision_as_its_audit_row(setting, curator):
    logged = AuditEntry.objects.count()
    p = attribute_proposal(description="What the server uses unless told otherwise.")
    assert kind_of(p).claim(p) == "New attribute Default value (string) of the concept type setting"
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)
    made = Attribute.objects.get()
    assert (made.concept_type.key, made.key, made.datatype, made.active) == (
        "setting",
        "default_value",
        "string",
        True,
    )
    assert out.decision.after["attribute"] == made.pk
    assert AuditEntry.objects.count() == logged


def test_the_blockers_say_a_missing_type_and_a_key_declared_above(f, setting, curator):
    p = attribute_proposal(type_key="command")
    assert kind_of(p).blockers(p, None) == ['There is no concept type "command".']
    graph.attribute_create(
        type_key="object", key="default_value", label="Default", datatype="string", acting_user=None
    )
    q = attribute_proposal()
    words = (
        'The concept type "setting" already has the attribute "default_value" from the '
        'type above it, "object".'
    )
    assert kind_of(q).blockers(q, None) == [words]
    with pytest.raises(DomainError, match="from the type above it"):
        decisions.proposal_accept(proposal_id=q.pk, acting_user=curator)
    assert reload(q).status == "pending"


def test_undoing_an_attribute_retires_it_while_no_value_uses_it(f, setting, curator):
    p = attribute_proposal()
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)
    undo.decisions_undo(acting_user=curator, batch=out.batch)
    made = Attribute.objects.get()
    assert not made.active and made.retired_at is not None
    assert reload(p).status == "pending"


def test_an_attribute_with_a_value_is_not_taken_back(f, setting, curator):
    p = attribute_proposal()
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)
    graph.attribute_value_set(
        concept=setting, attribute=Attribute.objects.get(), value="4MB", acting_user=None
    )
    with pytest.raises(DomainError, match="already has 1 value; retire it instead"):
        undo.decisions_undo(acting_user=curator, batch=out.batch)
    assert Attribute.objects.get().active and reload(p).status == "accepted"


# --- set_attribute ----------------------------------------------------------------------


@pytest.fixture
def default_value(setting):
    return graph.attribute_create(
        type_key="setting",
        key="default_value",
        label="Default value",
        datatype="string",
        acting_user=None,
    )


def test_a_reviewer_accepts_a_value_with_its_quote(f, setting, default_value, reviewer):
    p = value_proposal(f, setting)
    assert kind_of(p).claim(p) == "work_mem: default value = 4MB"
    assert kind_of(p).blockers(p, None) == []
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    row = AttributeValue.objects.get()
    assert (row.value, row.status, row.evidence_quote) == ("4MB", "active", EXAMPLE["quote"])
    assert row.evidence_revision_id == p.evidence_revision_id
    assert out.decision.after["attribute_value"] == row.pk
    assert out.decision.after["previous_value"] is None
    assert provenance.value_decisions([row.pk]) == {row.pk: out.decision}


def test_a_new_value_supersedes_and_undo_gives_the_old_one_back(
    f, setting, default_value, reviewer
):
    first = decisions.proposal_accept(
        proposal_id=value_proposal(f, setting).pk, acting_user=reviewer
    )
    old = AttributeValue.objects.get()
    p = value_proposal(f, setting, "8MB", "The default value of work_mem is 8MB in newer releases.")
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    old.refresh_from_db()
    new = AttributeValue.objects.get(status="active")
    assert (old.status, new.value) == ("superseded", "8MB")
    assert old.invalid_at == new.recorded_at
    assert out.decision.after["previous_value"] == old.pk
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    new.refresh_from_db()
    back = AttributeValue.objects.get(status="active")
    assert new.status == "retired" and back.value == "4MB" and back.pk not in (old.pk, new.pk)
    assert back.evidence_quote == EXAMPLE["quote"]
    assert reload(p).status == "pending" and first.decision.action == "accept"


def test_undo_refuses_a_value_that_was_replaced_since(f, setting, default_value, reviewer):
    out = decisions.proposal_accept(proposal_id=value_proposal(f, setting).pk, acting_user=reviewer)
    graph.attribute_value_set(
        concept=setting, attribute=default_value, value="16MB", acting_user=None
    )
    with pytest.raises(DomainError, match="was superseded since"):
        undo.decisions_undo(acting_user=reviewer, batch=out.batch)


def test_the_blockers_name_a_missing_attribute(f, setting, reviewer):
    p = value_proposal(f, setting)
    assert kind_of(p).blockers(p, None) == [
        'The concept type "setting" declares no attribute "default_value".'
    ]
    with pytest.raises(DomainError, match="declares no attribute"):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert reload(p).status == "pending"


def test_the_blockers_name_a_datatype_mismatch(f, setting, reviewer):
    graph.attribute_create(
        type_key="setting",
        key="default_value",
        label="Default value",
        datatype="integer",
        acting_user=None,
    )
    p = value_proposal(f, setting)
    (words,) = kind_of(p).blockers(p, None)
    assert words.startswith(
        '"4MB" is not a valid Default value ("default_value"): it is a whole number (integer)'
    )
    with pytest.raises(DomainError, match="is not a valid Default value"):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert not AttributeValue.objects.exists()


def test_the_blockers_name_a_type_that_does_not_declare_it(f, setting, default_value, reviewer):
    command = f.concept("VACUUM")
    graph.concept_type_create(key="command", label="Command", parent_key="object", acting_user=None)
    graph.concept_set_type(concept=command, type_key="command", acting_user=None)
    p = value_proposal(f, command)
    (words,) = kind_of(p).blockers(p, None)
    assert words == (
        '"VACUUM" is a Command ("command"), and neither that type nor a type above it '
        'declares the attribute "default_value" (it is "setting"\'s).'
    )
    with pytest.raises(DomainError, match="neither that type nor a type above it"):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)


def test_a_subtype_inherits_the_attribute(f, setting, reviewer):
    graph.attribute_create(
        type_key="object",
        key="default_value",
        label="Default value",
        datatype="string",
        acting_user=None,
    )
    p = value_proposal(f, setting, type_key="object")
    assert kind_of(p).blockers(p, None) == []
    decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert AttributeValue.objects.get().concept_id == setting.pk


def test_a_value_held_already_is_a_blocker(f, setting, default_value):
    graph.attribute_value_set(
        concept=setting, attribute=default_value, value="4MB", acting_user=None
    )
    p = value_proposal(f, setting)
    assert kind_of(p).blockers(p, None) == ['The Default value of "work_mem" is "4MB" already.']


def test_a_value_for_a_pending_concept_accepts_the_concept_with_it(
    f, setting, default_value, reviewer
):
    """The concept is named by its open proposal; accepting the value accepts it first.
    The untyped new concept then has no such attribute, said in words."""
    waiting = f.concept_proposal("maintenance_work_mem")
    p = value_proposal(
        f,
        setting,
        end={"name": "maintenance_work_mem", "proposal_id": waiting.pk, "match": "new"},
    )
    assert kind_of(p).blockers(p, None) == []
    with pytest.raises(DomainError, match='"maintenance_work_mem" has no type'):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert reload(waiting).status == "pending"


def test_a_value_payload_needs_words():
    with pytest.raises(ValidationFailed, match="value: String should have at least 1 character"):
        payload_validate(
            kind="set_attribute",
            payload={
                "concept": {"name": "x"},
                "type_key": "s",
                "attribute_key": "a",
                "value": "  ",
            },
        )


def test_twin_values_share_a_dedup_key(f, setting, default_value):
    p = value_proposal(f, setting)
    assert p.dedup_key.startswith("set_attribute:setting.default_value=")
    assert p.source_concept_id == setting.pk


# --- the cards ----------------------------------------------------------------------------


def test_the_attribute_card_shows_its_examples_with_values(f, setting, curator):
    p = attribute_proposal(description="What the server uses unless told otherwise.")
    page = card(curator, p)
    assert "Examples in the documents" in page and "New attribute" in page
    assert "<code>4MB</code>" in page and EXAMPLE["quote"] in page
    assert "No single quote: its evidence is the 1 example below" in page
    assert "What the server uses unless told otherwise." in page


@pytest.mark.parametrize("htmx", [False, True])
def test_the_value_card_shows_its_quote_datatype_and_the_value_it_replaces(
    f, setting, default_value, reviewer, htmx
):
    graph.attribute_value_set(
        concept=setting, attribute=default_value, value="2MB", acting_user=None
    )
    p = value_proposal(f, setting)
    page = card(reviewer, p, **({"HTTP_HX_REQUEST": "true"} if htmx else {}))
    assert "The default value of work_mem is 4MB." in page
    assert '<code class="attribute-value">4MB</code>' in page
    assert "It holds <code>2MB</code> now; accepting replaces it" in page
    assert "is a text" in page and "No quoted evidence" not in page


def test_the_value_card_says_its_blocker(f, setting, reviewer):
    p = value_proposal(f, setting)
    page = card(reviewer, p)
    assert "declares no attribute" in page


def test_an_open_value_closes_when_its_concept_is_merged(f, setting, default_value, curator):
    """The concept is the proposal's source column: a merge supersedes the proposal in
    the merge's batch, saying why."""
    p = value_proposal(f, setting)
    survivor = f.concept("work memory")
    merge = proposal_create(
        kind="merge_concepts",
        payload={"survivor_id": survivor.pk, "loser_id": setting.pk, "score": 90.0, "why": "Same."},
        confidence=0.9,
    )
    decisions.proposal_accept(proposal_id=merge.pk, acting_user=curator)
    assert reload(p).status == "superseded"
    assert (
        reload(p)
        .decisions.get()
        .note.startswith("One of its concepts was merged in another decision.")
    )


def test_the_command_line_names_a_value_as_a_triple(f, setting, default_value):
    p = value_proposal(f, setting)
    assert kind_of(p).named_ends(p, {}, {}) == ("work_mem", "4MB", "default_value")
    q = attribute_proposal(key="unit", label="Unit")
    assert kind_of(q).named_ends(q, {}, {}) == ("Unit", None, "unit")


def test_a_quote_in_the_payload_is_refused_saying_where_it_goes():
    payload = {
        "concept": {"name": "work_mem"},
        "type_key": "setting",
        "attribute_key": "default_value",
        "value": "4MB",
        "evidence": {"quote": "The default value of work_mem is 4MB."},
    }
    with pytest.raises(ValidationFailed, match=r"the proposal's evidence \(proposal_create"):
        payload_validate(kind="set_attribute", payload=payload)
