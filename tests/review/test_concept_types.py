"""Concept types through review: the add_concept_type kind (payload, accept, undo, card)
and a concept's type changed by a decision, with its history and its undo."""

from __future__ import annotations

import pytest
from django.utils import timezone

from kgreview.core.errors import DomainError, ValidationFailed
from kgreview.core.models import AuditEntry
from kgreview.graph import history
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, ConceptType, ConceptTypeChange
from kgreview.review.decide import decisions, mend, undo
from kgreview.review.decide.outcome import NotAllowed
from kgreview.review.kinds import kind_of, payload_validate
from kgreview.review.models import Decision, Proposal
from kgreview.review.services import proposal_create
from tests.review.conftest import reload

pytestmark = pytest.mark.django_db

EXAMPLE = {
    "quote": "checkpoint_timeout is a setting that bounds the time between checkpoints.",
    "source_slug": "wal",
    "concept_name": "checkpoint_timeout",
}


def type_proposal(key: str = "setting", **payload) -> Proposal:
    body = {"key": key, "label": key.replace("_", " ").title(), "examples": [EXAMPLE]}
    return proposal_create(kind="add_concept_type", payload={**body, **payload}, confidence=0.9)


# --- payload_validate -------------------------------------------------------------------


def test_a_concept_type_payload_is_cleaned_with_its_examples():
    """Text is stripped and defaults filled; the examples keep their quotes."""
    clean = payload_validate(
        kind="add_concept_type",
        payload={"key": "setting", "label": "  Setting ", "examples": [EXAMPLE]},
    )
    assert clean["label"] == "Setting"
    assert clean["parent_key"] == "" and clean["description"] == ""
    assert clean["examples"][0]["quote"] == EXAMPLE["quote"]


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        ({"key": "Setting", "label": "Setting"}, "key"),
        ({"key": "setting"}, "label"),
        ({"key": "setting", "label": "x" * 10_000}, "label"),
        ({"key": "setting", "label": "Setting", "description": "a\x00b"}, "control characters"),
        ({"key": "setting", "label": "Setting", "parent_key": "setting"}, "would loop"),
        ({"key": "setting", "label": "Setting", "parent_key": "No Slug"}, "There is no concept"),
        ({"key": "setting", "label": "Setting", "examples": [{"quote": ""}]}, "examples"),
        ({"key": "setting", "label": "Setting", "surprise": 1}, "surprise"),
        ({"key": "setting", "label": "Setting", "examples": [EXAMPLE] * 51}, "examples"),
    ],
)
def test_a_bad_concept_type_payload_is_refused_in_words(payload, words):
    """Nothing queues a payload the kind would not accept."""
    with pytest.raises(ValidationFailed, match="Invalid add_concept_type payload") as caught:
        payload_validate(kind="add_concept_type", payload=payload)
    assert words in str(caught.value)
    assert not Proposal.objects.exists()


def test_control_characters_are_taken_out_of_a_label_like_any_name():
    """A label is a name: its stored form holds no NUL (``construction.text.normal_name``)."""
    clean = payload_validate(kind="add_concept_type", payload={"key": "s", "label": "Set\x00ting"})
    assert clean["label"] == "Setting"


def test_the_same_type_is_queued_once():
    """Twins share a dedup key: the key of the type."""
    p = type_proposal()
    assert p.dedup_key == "add_concept_type:setting"
    assert kind_of(p).claim(p) == "New concept type Setting"
    assert kind_of(type_proposal("lock_mode", parent_key="setting")).claim(
        Proposal.objects.latest("pk")
    ) == ("New concept type Lock Mode, a kind of setting")


# --- accept and undo --------------------------------------------------------------------


def test_only_a_curator_accepts_a_concept_type(f, reviewer):
    """The kind is curator-only, like a relation type."""
    p = type_proposal()
    with pytest.raises(NotAllowed):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert not ConceptType.objects.exists() and reload(p).status == "pending"


def test_accepting_creates_the_type_with_the_decision_as_its_audit_row(f, curator):
    """The type exists under its parent; the curation log gets no second row."""
    graph.concept_type_create(key="object", label="Object", acting_user=None)
    logged = AuditEntry.objects.count()
    p = type_proposal(parent_key="object", description="A server parameter.")
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)
    made = ConceptType.objects.get(key="setting")
    assert (made.label, made.parent.key, made.description) == (
        "Setting",
        "object",
        "A server parameter.",
    )
    assert reload(p).status == "accepted" and out.decision.action == "accept"
    assert AuditEntry.objects.count() == logged


def test_accepting_a_type_whose_key_exists_is_refused_in_words(f, curator):
    """The card's blocker and the accept say the same words; nothing changes."""
    graph.concept_type_create(key="setting", label="Setting", acting_user=None)
    p = type_proposal()
    assert kind_of(p).blockers(p, None) == ['The concept type "setting" already exists.']
    with pytest.raises(DomainError, match='The concept type "setting" already exists.'):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)
    assert reload(p).status == "pending" and ConceptType.objects.count() == 1


def test_a_missing_or_retired_parent_blocks_the_proposal(f):
    """The blocker names the parent's trouble."""
    p = type_proposal(parent_key="object")
    assert kind_of(p).blockers(p, None) == ['There is no concept type "object".']
    parent = graph.concept_type_create(key="object", label="Object", acting_user=None)
    assert kind_of(p).blockers(p, None) == []
    graph.concept_type_retire(concept_type=parent, acting_user=None)
    (words,) = kind_of(p).blockers(p, None)
    assert '"object" was retired' in words


def test_undoing_the_acceptance_retires_the_type_and_reopens_the_proposal(f, curator):
    """Undo writes a compensating change: the type stays, retired."""
    p = type_proposal()
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)
    undo.decisions_undo(acting_user=curator, batch=out.batch)
    made = ConceptType.objects.get(key="setting")
    assert made.active is False and made.retired_at is not None
    assert reload(p).status == "pending"


def test_undo_is_refused_while_a_concept_has_the_type(f, curator):
    """A type in use stays; the refusal says what to do."""
    c = f.concept("checkpoint_timeout")
    out = decisions.proposal_accept(proposal_id=type_proposal().pk, acting_user=curator)
    graph.concept_set_type(concept=c, type_key="setting", acting_user=None)
    with pytest.raises(DomainError, match="already given to 1 concept; change their types"):
        undo.decisions_undo(acting_user=curator, batch=out.batch)
    assert ConceptType.objects.get(key="setting").active


def test_the_card_shows_the_examples_with_their_quotes(f, curator):
    """The partial renders the quote, its source and the concept it shows."""
    from django.test import Client
    from django.urls import reverse

    p = type_proposal(description="A server parameter.")
    client = Client()
    client.force_login(curator)
    page = client.get(reverse("review:proposal", args=[p.pk]), follow=True).content.decode()
    assert "Examples in the documents" in page
    assert "checkpoint_timeout is a setting that bounds the time between checkpoints." in page
    assert "A server parameter." in page and "New concept type" in page
    assert "No quoted evidence." not in page
    assert "No single quote: its evidence is the 1 example below" in page


def test_a_relation_type_card_shows_its_examples_shape_and_what_accepting_rechecks(f, curator):
    """Its payload holds quoted examples: the card shows them as its evidence (it said "No
    quoted evidence"), with how the relation reads and the dropped labels it covers."""
    from django.test import Client
    from django.urls import reverse

    from kgreview.review.services import proposal_create

    example = {
        "quote": "Raising max_wal_size mitigates checkpoint spikes.",
        "source_slug": "wal",
        "source_name": "max_wal_size",
        "target_name": "checkpoint spikes",
    }
    p = proposal_create(
        kind="add_relation_type",
        payload={
            "key": "mitigates",
            "label": "Mitigates",
            "verb": "mitigates",
            "description": "The source lessens the target.",
            "examples": [example, {**example, "quote": "A larger buffer mitigates it."}],
            "labels": ["mitigates", "reduces"],
        },
        confidence=0.7,
    )
    client = Client()
    client.force_login(curator)
    page = client.get(reverse("review:proposal", args=[p.pk]), follow=True).content.decode()
    assert "No quoted evidence." not in page
    assert "No single quote: its evidence is the 2 examples below" in page
    assert "Raising max_wal_size mitigates checkpoint spikes." in page
    assert "A larger buffer mitigates it." in page
    assert "<strong><bdi>max_wal_size</bdi></strong> → <strong><bdi>checkpoint spikes</bdi>" in page
    assert "Reads “source <em>mitigates</em> target”; directed." in page
    assert "dropped under “mitigates”, “reduces” back to be checked" in page


# --- a concept's type through review ----------------------------------------------------


def test_a_type_change_is_a_decision_with_its_history_and_undo(f, curator):
    """Accepted by hand, it types the concept and writes its history; undo puts it back."""
    c = f.concept("VACUUM")
    graph.concept_type_create(key="command", label="Command", acting_user=None)
    before = timezone.now()
    out = mend.concept_update_by_hand(acting_user=curator, concept_id=c.pk, type_key="command")
    decision = Decision.objects.get(pk=out.decision.pk)
    assert decision.after["type_from"] == "" and decision.after["type_to"] == "command"
    assert decision.proposal.payload["type_key"] == "command"
    assert reload(c).type.key == "command"
    typed_at = timezone.now()
    undo.decisions_undo(acting_user=curator, batch=out.batch)
    assert Concept.objects.get(pk=c.pk).type is None
    assert ConceptTypeChange.objects.filter(concept=c).count() == 2
    assert history.concept_type_at(c, before) is None
    assert history.concept_type_at(c, typed_at).key == "command"
    assert history.concept_type_at(reload(c), timezone.now()) is None


def test_a_type_change_to_another_type_is_undone_to_the_first(f, curator):
    """Undo restores the type it had, not merely none."""
    c = f.concept("Autovacuum")
    for key in ("command", "process"):
        graph.concept_type_create(key=key, label=key.title(), acting_user=None)
    graph.concept_set_type(concept=c, type_key="command", acting_user=None)
    out = mend.concept_update_by_hand(acting_user=curator, concept_id=c.pk, type_key="process")
    assert kind_of(out.decision.proposal).claim(out.decision.proposal) == (
        "Autovacuum: type process"
    )
    undo.decisions_undo(acting_user=curator, batch=out.batch)
    assert reload(c).type.key == "command"


def test_a_type_change_to_a_retired_or_missing_type_is_refused_in_words(f, curator):
    """Nothing is decided and the concept keeps its type."""
    c = f.concept("VACUUM")
    t = graph.concept_type_create(key="command", label="Command", acting_user=None)
    graph.concept_type_retire(concept_type=t, acting_user=None)
    decided = Decision.objects.count()
    with pytest.raises(DomainError, match="was retired and cannot be given to a concept"):
        mend.concept_update_by_hand(acting_user=curator, concept_id=c.pk, type_key="command")
    with pytest.raises(DomainError, match='There is no concept type "nowhere"'):
        mend.concept_update_by_hand(acting_user=curator, concept_id=c.pk, type_key="nowhere")
    with pytest.raises(ValidationFailed, match="There is no concept type by that key."):
        mend.concept_update_by_hand(acting_user=curator, concept_id=c.pk, type_key="x" * 10_000)
    assert Decision.objects.count() == decided and reload(c).type is None


def test_taking_a_type_away_is_a_change_and_keeping_it_is_none(f, curator):
    """``type_key=""`` unsets it; the type it already has changes nothing, said in words."""
    c = f.concept("VACUUM")
    graph.concept_type_create(key="command", label="Command", acting_user=None)
    graph.concept_set_type(concept=c, type_key="command", acting_user=None)
    with pytest.raises(ValidationFailed, match="Nothing would change"):
        mend.concept_update_by_hand(acting_user=curator, concept_id=c.pk, type_key="command")
    mend.concept_update_by_hand(acting_user=curator, concept_id=c.pk, type_key="")
    assert reload(c).type is None


def test_a_type_change_cannot_ride_with_a_retirement():
    """Retire or reactivate alone, as with renames."""
    with pytest.raises(ValidationFailed, match="on its own"):
        payload_validate(
            kind="update_concept",
            payload={"concept_id": 1, "status": "retired", "type_key": "command"},
        )


def test_an_update_that_leaves_the_type_keys_as_before_types_existed(f):
    """Old and new proposals of the same rename share their dedup key."""
    kind = kind_of("update_concept")
    clean = payload_validate(kind="update_concept", payload={"concept_id": 1, "name": "X"})
    assert clean["type_key"] is None
    without = {k: v for k, v in clean.items() if k != "type_key"}
    assert kind.dedup_key(clean) == kind.dedup_key(without)


def test_the_decision_log_and_queue_row_say_the_type_change(f, curator):
    """The update_concept partial names the new type (or "untyped")."""
    from django.template.loader import render_to_string

    c = f.concept("VACUUM")
    graph.concept_type_create(key="command", label="Command", acting_user=None)
    out = mend.concept_update_by_hand(acting_user=curator, concept_id=c.pk, type_key="command")
    proposal = out.decision.proposal
    view = kind_of(proposal).view(proposal)
    for part in ("row", "log"):
        html = render_to_string(f"review/cards/update_concept.html#{part}", {"view": view})
        assert "type command" in html
    view["type_key"] = ""
    assert "untyped" in render_to_string("review/cards/update_concept.html#log", {"view": view})
