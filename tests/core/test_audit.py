"""The curation log: one append-only row per change, written inside the change."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection, transaction

from kgreview.core import audit
from kgreview.core.errors import ImmutableRecord
from kgreview.core.models import AuditEntry

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def test_action(monkeypatch):
    """An action registered for these tests alone (about ``("x", id)`` subjects)."""
    monkeypatch.setitem(audit.ACTIONS, "a.b", audit.Action("a.b", "a test's change", "x"))


def test_record_writes_who_what_and_the_before_and_after(f):
    curator = f.user("cora", role="curator")
    relation = f.relation("prerequisite")
    with transaction.atomic():
        row = audit.record(
            acting_user=curator,
            action="relation_type.retire",
            subject=relation,
            summary="Retired the relation type “Prerequisite”.",
            before={"active": True},
            after={"active": False},
        )
    row = AuditEntry.objects.get(pk=row.pk)
    assert (row.user, row.action, row.subject_type, row.subject_id) == (
        curator,
        "relation_type.retire",
        "relationtype",
        str(relation.pk),
    )
    assert (row.before, row.after) == ({"active": True}, {"active": False})


def test_a_change_belonging_to_a_decision_writes_no_second_row(f):
    with transaction.atomic():
        assert (
            audit.record(
                acting_user=f.user(),
                action="concept.retire",
                subject=("concept", 1),
                summary="x",
                decided=True,
            )
            is None
        )
    assert AuditEntry.objects.count() == 0


def test_an_anonymous_or_missing_user_is_recorded_as_the_system():
    with transaction.atomic():
        a = audit.record(acting_user=AnonymousUser(), action="a.b", subject=("x", 1), summary="s")
        b = audit.record(acting_user=None, action="a.b", subject=("x", None), summary="s")
    assert a.user is None and b.user is None and b.subject_id == ""


def test_a_long_summary_is_cut_to_fit_with_an_ellipsis():
    with transaction.atomic():
        row = audit.record(acting_user=None, action="a.b", subject=("x", 1), summary="w" * 900)
    assert len(row.summary) == audit.MAX_SUMMARY and row.summary.endswith("…")


def test_recording_outside_a_transaction_is_refused(transactional_db):
    with pytest.raises(RuntimeError, match="inside its transaction"):
        audit.record(acting_user=None, action="a.b", subject=("x", 1), summary="s")


def test_a_subject_that_is_neither_a_row_nor_a_pair_is_refused():
    with transaction.atomic(), pytest.raises(TypeError):
        audit.record(acting_user=None, action="a.b", subject="concept 1", summary="s")


def test_entries_can_be_neither_changed_nor_deleted_through_the_orm():
    with transaction.atomic():
        row = audit.record(acting_user=None, action="a.b", subject=("x", 1), summary="s")
    with pytest.raises(ImmutableRecord):
        row.save()
    with pytest.raises(ImmutableRecord):
        AuditEntry.objects.filter(pk=row.pk).update(summary="t")
    with pytest.raises(Exception, match="never|audit"):
        row.delete()


def test_the_database_refuses_raw_updates_and_deletes_of_entries(db):
    """PostgreSQL and SQLite both: a trigger refuses the SQL."""
    from django.db.utils import IntegrityError, InternalError

    with transaction.atomic():
        row = audit.record(acting_user=None, action="a.b", subject=("x", 1), summary="s")
    for sql in (
        "UPDATE core_auditentry SET summary = 'forged' WHERE id = %s",
        "DELETE FROM core_auditentry WHERE id = %s",
    ):
        with (
            pytest.raises((IntegrityError, InternalError)),
            transaction.atomic(),
            connection.cursor() as cur,
        ):
            cur.execute(sql, [row.pk])
    assert AuditEntry.objects.get(pk=row.pk).summary == "s"


def test_an_action_nobody_registered_is_refused_and_writes_nothing():
    with transaction.atomic(), pytest.raises(audit.UnknownAction, match="'concept.rename_typo'"):
        audit.record(acting_user=None, action="concept.rename_typo", subject=("x", 1), summary="s")
    assert not AuditEntry.objects.filter(action="concept.rename_typo").exists()


def test_an_action_about_another_subject_is_refused(f):
    concept = f.concept("Alpha")
    with transaction.atomic(), pytest.raises(audit.UnknownAction, match="about a relationtype"):
        audit.record(acting_user=None, action="relation_type.retire", subject=concept, summary="s")


def test_an_action_is_registered_once():
    assert audit.action("a.b", "a test's change", "x") == "a.b"  # the same again: harmless
    with pytest.raises(ValueError, match="registered twice"):
        audit.action("a.b", "something else", "x")


def test_every_action_the_services_write_is_registered_with_words():
    """Each app registers its own actions when it is ready; the curation log lists them."""
    names = {a.name for a in audit.actions()}
    assert {"concept.create", "edge.invalidate", "source.import", "vocabulary.install"} <= names
    assert {
        "agent_run.start",
        "schedule.pause",
        "api_token.revoke",
        "competency_run.start",
    } <= names
    assert all(a.words and a.subject for a in audit.actions())
