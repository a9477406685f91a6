"""A full disk, recognised wherever it surfaces, and remembered for ``/healthz``.

A write that finds no room fails as ``OSError(ENOSPC)`` (files: uploads' temporary
files, the embedded broker, the rate-limit counter), SQLite's "database or disk is
full", or PostgreSQL's SQLSTATE 53100 ("could not extend file … No space left on
device"). Nothing is saved in any of these: the transaction rolls back. ``is_disk_full``
reads an exception and the exceptions it was raised from; ``DiskFullMiddleware``
(``core.middleware``) answers such a request with a 503 in words, and ``noted`` lets
``/healthz`` report the disk as failing while writes keep failing.
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
import threading
import time
from pathlib import Path

from django.db import DatabaseError, InterfaceError

WORDS = "The server's disk is full: nothing was saved."
#: How long a failed write keeps the disk reported as full in this process.
REMEMBER_SECONDS = 60.0

_FULL_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_FULL_TEXTS = ("database or disk is full", "no space left on device", "could not extend file")
_lock = threading.Lock()
_last_seen = [0.0]


def _from_storage(exc: BaseException) -> bool:
    """An error of a file or a database driver (never a 404 or a refusal whose words
    may repeat what a user typed)."""
    return isinstance(exc, OSError | sqlite3.Error | DatabaseError | InterfaceError) or any(
        kind.__module__.startswith("psycopg") for kind in type(exc).__mro__
    )


def _one_is_full(exc: BaseException) -> bool:
    if not _from_storage(exc):
        return False
    if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS:
        return True
    if getattr(exc, "sqlstate", None) == "53100" or getattr(exc, "pgcode", None) == "53100":
        return True
    text = str(exc).lower()
    return any(words in text for words in _FULL_TEXTS)


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or an exception it was raised from) says the disk is full."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if _one_is_full(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def noted() -> None:
    """Remember that a write just failed for want of space."""
    with _lock:
        _last_seen[0] = time.monotonic()


def seconds_since_full() -> float | None:
    """Seconds since this process last met a full disk, if within ``REMEMBER_SECONDS``."""
    with _lock:
        last = _last_seen[0]
    if not last:
        return None
    ago = time.monotonic() - last
    return ago if ago <= REMEMBER_SECONDS else None


def forget() -> None:
    with _lock:
        _last_seen[0] = 0.0


def free_bytes(path: Path) -> int:
    """Free bytes on the file system holding ``path`` (for unprivileged writers)."""
    return shutil.disk_usage(path).free


# --- A database that does not answer ----------------------------------------------------

DATABASE_DOWN_WORDS = (
    "The database is not answering: nothing was saved. Try again in a minute; "
    "if it lasts, tell an admin."
)
#: PostgreSQL's SQLSTATEs of a lost or refused connection: class 08 (connection
#: exception), and an administrator's or a crash's shutdown (57P01–57P03).
_DOWN_STATES = ("08", "57P01", "57P02", "57P03")
_DOWN_TEXTS = (
    "connection refused",
    "server closed the connection",
    "connection already closed",
    "the connection is closed",
    "could not connect",
    "connection is lost",
    "terminating connection",
    "unable to open database file",
)


def _one_is_down(exc: BaseException) -> bool:
    if not _from_storage(exc) or isinstance(exc, OSError):
        return False
    state = getattr(exc, "sqlstate", None) or getattr(exc, "pgcode", None) or ""
    if state and state.startswith(_DOWN_STATES):
        return True
    text = str(exc).lower()
    return any(words in text for words in _DOWN_TEXTS)


def is_database_down(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or an exception it was raised from) says the database cannot be
    reached: its server stopped, the connection was cut or refused, SQLite's file gone.
    Never a lock wait ("database is locked", answered apart) or a query's own error."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if _one_is_down(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False
