"""One transaction, retried whole when the database gives up on it; refused in words if it
keeps failing.

PostgreSQL ends one of two transactions that wait on each other ("deadlock detected",
SQLSTATE 40P01) and may refuse a transaction it cannot serialise (40001). The lock
order every decision keeps (``kgreview.review.decide.decisions``) makes a deadlock between
decisions rare; what is left is retried here, at the outermost transaction only, a few
times with a short jittered pause. A transaction that still fails is refused with
``Busy`` (a ``DomainError``: the pages say it in words, with 409), and nothing of it
was written. SQLite says "database is locked" once its own wait ran out; that is refused
the same way at once (retrying would only wait again).

Inside an enclosing transaction nothing is retried: PostgreSQL has aborted that whole
transaction, so the error goes up to whoever opened it.

``once_before_commit`` lets a service put off a write to the end of the outermost retried
transaction, still inside it, done once however many times asked (the name journal's
rows: written last, so they commit right after their ids are drawn).
"""

from __future__ import annotations

import functools
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

from django.db import DEFAULT_DB_ALIAS, OperationalError, transaction

from .errors import Busy

P = ParamSpec("P")
R = TypeVar("R")
C = TypeVar("C", bound=Callable[[], object])

ATTEMPTS = 4
BACKOFF = 0.05  # seconds; the pause before attempt n is up to BACKOFF * 2 ** (n - 1)
RETRYABLE = frozenset({"40P01", "40001"})  # deadlock detected, serialization failure
BUSY_WORDS = (
    "Busy: another decision touched the same concepts at the same moment; nothing was "
    "changed — try again."
)
# SQLite's own wait for its one write lock ran out: nobody touched these concepts, the
# database was busy writing something else.
LOCKED_WORDS = (
    "Busy: the database was busy with other writes for too long; nothing was changed — "
    "try again in a moment."
)

_local = threading.local()


def sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of a database error: psycopg's error is the ``__cause__`` of Django's."""
    cause = exc.__cause__
    return getattr(cause, "sqlstate", None) or getattr(cause, "pgcode", None)


def is_retryable(exc: BaseException) -> bool:
    """A deadlock or a serialization failure: the whole transaction may simply run again."""
    return isinstance(exc, OperationalError) and sqlstate(exc) in RETRYABLE


def is_busy(exc: BaseException) -> bool:
    """A failure of contention, not of the request: retryable, or SQLite's lock timeout."""
    if is_retryable(exc):
        return True
    return isinstance(exc, OperationalError) and "database is locked" in str(exc)


def busy(exc: BaseException | None = None) -> Busy:
    """The refusal in words for a transaction that lost to others every time: two
    decisions on the same concepts, or SQLite's write lock held too long by another."""
    if exc is not None and not is_retryable(exc):
        return Busy(LOCKED_WORDS, sqlstate=None)
    return Busy(BUSY_WORDS, sqlstate=sqlstate(exc) if exc is not None else None)


class _Deferred:
    """Writes put off to the end of the outermost retried transaction, by key."""

    def __init__(self) -> None:
        self.calls: dict[str, Callable[[], object]] = {}

    def run(self, using: str) -> None:
        if transaction.get_connection(using).needs_rollback:
            return  # rolled back anyway (a dry run): nothing to make last
        while self.calls:
            _, fn = self.calls.popitem()
            fn()


def once_before_commit(key: str, fn: C) -> C | None:
    """Call ``fn`` once at the end of the outermost retried transaction (inside it), however
    often asked with ``key``; outside one, call it now.

    Returns the callable that will run for ``key`` (``fn``, or the one asked for first, so
    a caller can add to what it writes), or ``None`` once ``fn`` has run."""
    deferred = getattr(_local, "deferred", None)
    if deferred is None:
        fn()
        return None
    return deferred.calls.setdefault(key, fn)


@contextmanager
def writes_deferred(using: str = DEFAULT_DB_ALIAS) -> Iterator[None]:
    """Inside a transaction that is not retried (a bulk decision), put off the
    ``once_before_commit`` writes to the end of this block as a retried one does; use
    it as the transaction's innermost block. Nested in another, it adds nothing."""
    if getattr(_local, "deferred", None) is not None:
        yield
        return
    _local.deferred = deferred = _Deferred()
    try:
        yield
        deferred.run(using)
    finally:
        _local.deferred = None


def pause(attempt: int) -> float:
    """How long to wait before attempt ``attempt + 1``: short, jittered, growing."""
    return random.uniform(BACKOFF / 2, BACKOFF * 2 ** (attempt - 1))


def run_retried(
    body: Callable[[], R], *, using: str = DEFAULT_DB_ALIAS, attempts: int | None = None
) -> R:
    """Run ``body`` in one transaction, again from the start if the database ended it for
    a deadlock or a serialization failure, at most ``attempts`` times; then ``Busy``.

    Inside an enclosing transaction ``body`` runs once in a savepoint and any error goes
    up: only the outermost transaction can be run again.
    """
    if transaction.get_connection(using).in_atomic_block:
        with transaction.atomic(using=using):
            return body()
    attempts = attempts or ATTEMPTS
    for attempt in range(1, attempts + 1):
        try:
            with transaction.atomic(using=using), writes_deferred(using):
                result = body()
            return result
        except OperationalError as exc:
            if not is_busy(exc):
                raise
            if not is_retryable(exc) or attempt == attempts:
                raise busy(exc) from exc
        time.sleep(pause(attempt))
    raise busy()  # not reached: the last attempt returns or raises


def retried(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorate a service: its whole call is one transaction, retried (``run_retried``)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        return run_retried(lambda: fn(*args, **kwargs))

    return wrapper
