"""The one retry of a whole transaction: on a deadlock or a serialization failure it runs
again from the start, a few times; then it refuses in words; inside an enclosing
transaction it never retries."""

from __future__ import annotations

import threading

import pytest
from django.db import OperationalError, connections, transaction

from kgreview.core import retry
from kgreview.core.errors import Busy, DomainError
from kgreview.core.models import AuditEntry
from kgreview.graph.models import Concept


class _PgError(Exception):
    """Stands for the psycopg error Django wraps (its ``sqlstate``)."""

    def __init__(self, sqlstate: str) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def db_error(sqlstate: str | None, words: str = "deadlock detected") -> OperationalError:
    exc = OperationalError(words)
    if sqlstate is not None:
        exc.__cause__ = _PgError(sqlstate)
    return exc


@pytest.fixture
def no_pause(monkeypatch):
    monkeypatch.setattr(retry, "pause", lambda attempt: 0.0)


def _write_then(fail_times: int, sqlstate: str = "40P01"):
    """A body that writes an audit row, then fails the first ``fail_times`` runs."""
    calls = []

    def body():
        calls.append(1)
        AuditEntry.objects.create(
            action="test.retry", subject_type="test", summary=f"attempt {len(calls)}"
        )
        if len(calls) <= fail_times:
            raise db_error(sqlstate)
        return len(calls)

    return body, calls


@pytest.mark.parametrize("sqlstate", ["40P01", "40001"])
def test_a_deadlocked_transaction_runs_again_whole_and_then_succeeds(
    transactional_db, no_pause, sqlstate
):
    body, calls = _write_then(2, sqlstate)
    assert retry.run_retried(body) == 3
    assert len(calls) == 3
    # Only the attempt that committed left its row: the failed ones rolled back whole.
    assert list(AuditEntry.objects.values_list("summary", flat=True)) == ["attempt 3"]


def test_a_transaction_that_keeps_deadlocking_is_refused_in_words(transactional_db, no_pause):
    body, calls = _write_then(99)
    with pytest.raises(Busy) as refused:
        retry.run_retried(body)
    assert len(calls) == retry.ATTEMPTS
    assert isinstance(refused.value, DomainError) and refused.value.code == "busy"
    assert str(refused.value).startswith("Busy: another decision touched the same concepts")
    assert "nothing was changed" in str(refused.value)
    assert not AuditEntry.objects.exists()


def test_inside_an_enclosing_transaction_nothing_is_retried(transactional_db, no_pause):
    body, calls = _write_then(1)
    with pytest.raises(OperationalError), transaction.atomic():
        retry.run_retried(body)
    assert len(calls) == 1
    assert not AuditEntry.objects.exists()


def test_sqlite_database_is_locked_is_refused_in_words_without_retrying(transactional_db, no_pause):
    calls = []

    def body():
        calls.append(1)
        raise db_error(None, "database is locked")

    with pytest.raises(Busy, match="the database was busy with other writes") as refused:
        retry.run_retried(body)
    assert len(calls) == 1
    assert "touched the same concepts" not in str(refused.value)


def test_other_database_errors_are_not_mistaken_for_contention(transactional_db, no_pause):
    calls = []

    def body():
        calls.append(1)
        raise db_error("08006", "connection failure")

    with pytest.raises(OperationalError, match="connection failure"):
        retry.run_retried(body)
    assert len(calls) == 1


def test_the_decorator_retries_the_whole_service_call(transactional_db, no_pause):
    body, calls = _write_then(1)

    @retry.retried
    def service(*, times: int) -> int:
        return body() * times

    assert service(times=10) == 20
    assert len(calls) == 2


def test_a_write_put_off_to_the_end_is_made_once_inside_the_transaction(transactional_db):
    made = []

    def bump():
        made.append(transaction.get_connection().in_atomic_block)

    def body():
        retry.once_before_commit("bump", bump)
        retry.once_before_commit("bump", bump)
        assert made == []  # not yet
        return "done"

    assert retry.run_retried(body) == "done"
    assert made == [True]
    retry.once_before_commit("bump", bump)  # outside a retried transaction: at once
    assert made == [True, False]


def test_a_rolled_back_run_makes_no_deferred_write(transactional_db):
    made = []

    def body():
        retry.once_before_commit("bump", lambda: made.append(1))
        transaction.set_rollback(True)

    retry.run_retried(body)
    assert made == []


def test_a_real_deadlock_on_postgresql_is_retried_until_both_succeed(
    transactional_db, on_postgres, f
):
    """Two transactions lock two rows in opposite orders: PostgreSQL ends one with
    "deadlock detected" (40P01), which runs again and succeeds."""
    a, b = f.concept("Deadlock A"), f.concept("Deadlock B")
    barrier = threading.Barrier(2, timeout=10)
    attempts = {"ab": 0, "ba": 0}
    results: dict[str, object] = {}

    def locker(name, first, second):
        def body():
            attempts[name] += 1
            Concept.objects.select_for_update().get(pk=first.pk)
            if attempts[name] == 1:
                barrier.wait()  # both hold their first row
            Concept.objects.select_for_update().get(pk=second.pk)
            return attempts[name]

        try:
            results[name] = retry.run_retried(body)
        except BaseException as exc:  # collected for the assertions
            results[name] = exc
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=locker, args=("ab", a, b)),
        threading.Thread(target=locker, args=("ba", b, a)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(results.values()) == [1, 2], results  # one went through again
