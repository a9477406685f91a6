"""The concept vocabulary's services: types added, described, retired and reactivated,
a concept given a type with its history, every refusal in words with nothing written."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from kgreview.core.errors import (
    ConceptNotActive,
    CycleDetected,
    DomainError,
    InactiveType,
    NameTaken,
    StateConflict,
    ValidationFailed,
)
from kgreview.core.models import AuditEntry
from kgreview.graph import history, services
from kgreview.graph.models import Concept, ConceptType, ConceptTypeChange

pytestmark = pytest.mark.django_db


def new_type(key: str, parent: str = "", **kwargs) -> ConceptType:
    return services.concept_type_create(
        key=key,
        label=kwargs.pop("label", key.replace("_", " ")),
        parent_key=parent,
        acting_user=None,
        **kwargs,
    )


def counts() -> tuple[int, int, int, int]:
    """What a refused call must leave as it was: types, type changes, log rows, typed concepts."""
    return (
        ConceptType.objects.count(),
        ConceptTypeChange.objects.count(),
        AuditEntry.objects.count(),
        Concept.objects.filter(type__isnull=False).count(),
    )


def refused(call, error: type[DomainError], words: str) -> DomainError:
    """``call`` raises ``error`` saying ``words`` and writes nothing."""
    before = counts()
    with pytest.raises(error) as caught:
        call()
    assert words in str(caught.value)
    assert counts() == before
    return caught.value


# --- the vocabulary ---------------------------------------------------------------------


def test_the_starting_vocabulary_is_empty_and_concepts_are_untyped(f):
    """An untyped graph keeps working: no type exists and a new concept has none."""
    assert not ConceptType.objects.exists()
    assert f.concept("Checkpoint").type is None


def test_a_curator_adds_a_type_under_a_parent_with_one_log_row(f):
    """The type is stored with its normal label, its parent, and one curation log row."""
    curator = f.user(role="curator")
    new_type("object")
    made = services.concept_type_create(
        key="setting",
        label="  Configuration   setting ",
        description=" A server parameter. ",
        parent_key="object",
        acting_user=curator,
    )
    assert (made.label, made.description, made.parent.key, made.active) == (
        "Configuration setting",
        "A server parameter.",
        "object",
        True,
    )
    entry = AuditEntry.objects.latest("pk")
    assert (entry.action, entry.user, entry.subject_id) == (
        "concept_type.create",
        curator,
        str(made.pk),
    )
    assert entry.after["parent"] == "object"


def test_a_type_made_by_a_decision_writes_no_log_row(f):
    """The decision is the audit row of a change it makes."""
    before = AuditEntry.objects.count()
    services.concept_type_create(
        key="command", label="Command", acting_user=None, decision=object()
    )
    assert AuditEntry.objects.count() == before
    assert ConceptType.objects.filter(key="command").exists()


def test_a_taken_key_is_refused_even_when_retired(f):
    """Keys are never reused: a retired type still holds its key."""
    services.concept_type_retire(concept_type=new_type("file"), acting_user=None)
    refused(lambda: new_type("file"), NameTaken, 'The concept type "file" already exists.')


@pytest.mark.parametrize(
    "key", ["", "Setting", "1st", "lock-mode", "lock mode", "a" * 65, "a\x00b", "x" * 10_000]
)
def test_a_key_that_is_no_slug_is_refused_in_words(key):
    """A key is a lowercase letter and up to 63 letters, digits or underscores."""
    refused(
        lambda: new_type(key, label="Label"), ValidationFailed, "cannot be a concept type's key"
    )


@pytest.mark.parametrize(
    ("label", "description", "words"),
    [
        ("", "", "needs a label"),
        ("   ", "", "needs a label"),
        ("x" * 10_000, "", "100 characters at most, not 10000"),
        ("Lock\x00mode", "", "control characters"),
        ("Lock mode", "bad\x00words", "control characters"),
        ("Lock mode", "d" * 10_000, "5,000 characters at most"),
    ],
)
def test_hostile_words_are_refused_and_nothing_is_written(label, description, words):
    """NUL bytes, empty and overlong labels or descriptions never reach the table."""
    refused(
        lambda: services.concept_type_create(
            key="lock_mode", label=label, description=description, acting_user=None
        ),
        ValidationFailed,
        words,
    )


@pytest.mark.parametrize("parent", ["nowhere", "X" * 10_000, "a\x00", "9" * 40])
def test_a_missing_parent_is_refused_in_words(parent):
    """A parent must exist; a hostile key is not echoed back."""
    error = refused(
        lambda: new_type("setting", parent), ValidationFailed, "There is no concept type"
    )
    assert len(str(error)) < 200


def test_a_retired_parent_is_refused():
    """No new type goes under a retired one."""
    services.concept_type_retire(concept_type=new_type("thing"), acting_user=None)
    refused(lambda: new_type("setting", "thing"), InactiveType, '"thing" was retired')


def test_a_parent_that_would_close_a_loop_is_refused_in_words():
    """A type is never its own ancestor: the words show the loop."""
    a = new_type("a")
    new_type("b", "a")
    new_type("c", "b")
    error = refused(
        lambda: services.concept_type_describe(concept_type=a, parent_key="c", acting_user=None),
        CycleDetected,
        '"c" cannot be the parent of "a": the hierarchy would loop (a → c → b → a).',
    )
    assert error.details["path"] == ["a", "c", "b", "a"]
    assert ConceptType.objects.get(key="a").parent is None


def test_a_type_cannot_be_its_own_parent():
    """The shortest loop is refused like a long one."""
    a = new_type("a")
    refused(
        lambda: services.concept_type_describe(concept_type=a, parent_key="a", acting_user=None),
        CycleDetected,
        "would loop (a → a)",
    )


def test_describe_changes_words_and_parent_and_logs_only_what_changed(f):
    """Before and after name the fields that changed; ``parent_key=""`` makes a top type."""
    new_type("object")
    setting = new_type("setting", "object", description="old")
    described = services.concept_type_describe(
        concept_type=setting, label="Setting", description="new", acting_user=None
    )
    entry = AuditEntry.objects.latest("pk")
    assert entry.before == {"label": "setting", "description": "old"}
    assert entry.after == {"label": "Setting", "description": "new"}
    assert described.parent.key == "object"
    services.concept_type_describe(concept_type=setting, parent_key="", acting_user=None)
    assert ConceptType.objects.get(key="setting").parent is None
    assert AuditEntry.objects.latest("pk").after == {"parent": None}


def test_retire_and_reactivate_keep_the_row_and_log_each_change():
    """Retiring stamps the time; reactivating clears it; each writes a log row."""
    t = new_type("process")
    services.concept_type_retire(concept_type=t, acting_user=None)
    t.refresh_from_db()
    assert (t.active, t.retired_at is not None) == (False, True)
    services.concept_type_reactivate(concept_type=t, acting_user=None)
    t.refresh_from_db()
    assert (t.active, t.retired_at) == (True, None)
    actions = list(AuditEntry.objects.order_by("-pk").values_list("action", flat=True)[:2])
    assert actions == ["concept_type.reactivate", "concept_type.retire"]


def test_retiring_twice_or_reactivating_an_active_type_is_refused():
    """A change to nothing is refused in words."""
    t = new_type("process")
    refused(
        lambda: services.concept_type_reactivate(concept_type=t, acting_user=None),
        StateConflict,
        "is already active",
    )
    services.concept_type_retire(concept_type=t, acting_user=None)
    refused(
        lambda: services.concept_type_retire(concept_type=t, acting_user=None),
        StateConflict,
        "is already retired",
    )


def test_a_type_with_active_subtypes_cannot_be_retired():
    """Its subtypes go first (or move), so no active type hangs under a retired one."""
    parent = new_type("object")
    new_type("setting", "object")
    refused(
        lambda: services.concept_type_retire(concept_type=parent, acting_user=None),
        StateConflict,
        "still has active subtypes (setting)",
    )


def test_a_subtype_of_a_retired_type_cannot_come_back_before_its_parent():
    """Reactivating a child under a retired parent is refused; parent first, then child."""
    parent, child = new_type("object"), new_type("setting", "object")
    services.concept_type_retire(concept_type=child, acting_user=None)
    services.concept_type_retire(concept_type=parent, acting_user=None)
    refused(
        lambda: services.concept_type_reactivate(concept_type=child, acting_user=None),
        InactiveType,
        '"object" was retired',
    )
    services.concept_type_reactivate(concept_type=parent, acting_user=None)
    assert services.concept_type_reactivate(concept_type=child, acting_user=None).active


def test_a_type_is_never_deleted(f):
    """Retire it instead: the row stays for history."""
    t = new_type("process")
    with pytest.raises(DomainError, match="never deleted"):
        t.delete()
    assert ConceptType.objects.filter(pk=t.pk).exists()


# --- a concept's type -------------------------------------------------------------------


def test_a_concept_gets_a_type_and_loses_it_with_its_history(f):
    """Each change sets ``Concept.type``, adds a history row and one log row."""
    c = f.concept("checkpoint_timeout")
    new_type("setting")
    services.concept_set_type(concept=c, type_key="setting", acting_user=None)
    assert Concept.objects.get(pk=c.pk).type.key == "setting"
    services.concept_set_type(concept=c, type_key="", acting_user=None)
    assert Concept.objects.get(pk=c.pk).type is None
    assert [ch.type_id is not None for ch in ConceptTypeChange.objects.filter(concept=c)] == [
        True,
        False,
    ]
    entry = AuditEntry.objects.latest("pk")
    assert (entry.action, entry.before, entry.after) == (
        "concept.set_type",
        {"type": "setting"},
        {"type": None},
    )


def test_as_of_reads_the_type_a_concept_had_then(f):
    """Before any change it was untyped; between changes, the type of the last one."""
    c = f.concept("VACUUM")
    new_type("command")
    new_type("process")
    start = timezone.now()
    services.concept_set_type(concept=c, type_key="command", acting_user=None)
    middle = timezone.now()
    services.concept_set_type(concept=c, type_key="process", acting_user=None)
    c.refresh_from_db()
    assert history.concept_type_at(c, start - timedelta(seconds=1)) is None
    assert history.concept_type_at(c, middle).key == "command"
    assert history.concept_type_at(c, None).key == "process"
    assert history.concept_types_at([c.pk], at=timezone.now())[c.pk].key == "process"


@pytest.mark.parametrize("key", ["nowhere", "a\x00", "K" * 10_000])
def test_a_missing_type_is_refused_for_a_concept(f, key):
    """Nothing is written when the type does not exist."""
    c = f.concept("VACUUM")
    refused(
        lambda: services.concept_set_type(concept=c, type_key=key, acting_user=None),
        ValidationFailed,
        "There is no concept type",
    )


def test_a_retired_type_cannot_be_given_to_a_concept(f):
    """A concept that had it keeps it; no other concept gets it."""
    c, d = f.concept("VACUUM"), f.concept("ANALYZE")
    t = new_type("command")
    services.concept_set_type(concept=c, type_key="command", acting_user=None)
    services.concept_type_retire(concept_type=t, acting_user=None)
    refused(
        lambda: services.concept_set_type(concept=d, type_key="command", acting_user=None),
        InactiveType,
        "cannot be given to a concept",
    )
    assert Concept.objects.get(pk=c.pk).type_id == t.pk


def test_giving_a_concept_the_type_it_has_is_refused(f):
    """A type change must change something."""
    c = f.concept("VACUUM")
    refused(
        lambda: services.concept_set_type(concept=c, type_key="", acting_user=None),
        StateConflict,
        '"VACUUM" has no type already.',
    )
    new_type("command", label="command")
    services.concept_set_type(concept=c, type_key="command", acting_user=None)
    refused(
        lambda: services.concept_set_type(concept=c, type_key="command", acting_user=None),
        StateConflict,
        '"VACUUM" is a command already.',
    )


def test_a_retired_concept_gets_no_type(f):
    """Only an active concept's type changes."""
    c = f.concept("VACUUM")
    new_type("command")
    services.concept_retire(concept=c, acting_user=None)
    refused(
        lambda: services.concept_set_type(concept=c, type_key="command", acting_user=None),
        ConceptNotActive,
        "was retired",
    )
