"""Per-account rate limits: ninja's throttle hook, counted where every process sees it.

Each account (all its API tokens and its browser session together) may make
``KG_API_RATE`` requests, and ``KG_API_HEAVY_RATE`` of the walks that can read thousands
of rows. Counting is a fixed window per account, so making more tokens never buys more
requests. A refused request is a 429 whose ``Retry-After`` says when the window ends.

Where the counts live:

- ``KG_CACHE_URL`` set (scaled out): the ``shared`` cache, Redis, whose ``add`` and
  ``incr`` are atomic, so every process and machine counts together.
- Embedded: a small SQLite file of its own beside the database (``KG_VAR_DIR/rates.sqlite3``,
  not the graph's database, so counting never waits on a decision's write lock), where
  one ``INSERT … ON CONFLICT DO UPDATE … RETURNING`` statement counts a request. The file
  cache's ``incr`` was a read and a write, and let concurrent requests through.

**When the counter cannot count** (Redis down, the disk full, the file unreadable) the
request is let through and a warning is logged (at most once a minute per process): the
limit guards capacity, and reads must not fail because the guard's store did. That is
the documented choice ("fails open"); ``/healthz`` names the cache as failing meanwhile.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest
from ninja.throttling import BaseThrottle

log = logging.getLogger(__name__)

PERIODS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}
#: How long a counter waits for another process's statement before giving up (fail open).
BUSY_TIMEOUT_SECONDS = 2.0
#: At most one "cannot count" warning per process per this many seconds.
WARN_EVERY = 60.0


def clock() -> float:
    """The time windows are cut from (tests hold it still)."""
    return time.time()


def parse_rate(rate: str) -> tuple[int, int] | None:
    """ "600/min" -> (600, 60); "off" -> None (settings checked the shape)."""
    if rate == "off":
        return None
    count, unit = rate.split("/", 1)
    return int(count), PERIODS[unit]


def caller(request: HttpRequest) -> str | None:
    """Who is counted: the account behind the token or the browser session (so all of an
    account's tokens share one budget); None before authentication."""
    token = getattr(request, "api_token", None)
    if token is not None:
        return f"user-{token.user_id}"
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user-{user.pk}"
    return None


# --- The embedded counter -------------------------------------------------------------


class SqliteCounter:
    """Counts in one SQLite file shared by every process of the machine; each count is
    one statement, so concurrent requests are counted exactly."""

    SCHEMA = (
        "CREATE TABLE IF NOT EXISTS rate_count ("
        " key TEXT PRIMARY KEY, expires REAL NOT NULL, used INTEGER NOT NULL)"
    )
    COUNT = (
        "INSERT INTO rate_count (key, expires, used) VALUES (?, ?, 1) "
        "ON CONFLICT (key) DO UPDATE SET used = used + 1 RETURNING used"
    )

    def __init__(self) -> None:
        self._local = threading.local()

    def path(self) -> Path:
        return Path(settings.VAR_DIR) / "rates.sqlite3"

    def _connection(self) -> sqlite3.Connection:
        path = self.path()
        held = getattr(self._local, "held", None)
        if held is not None and held[0] == path:
            return held[1]
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
        )
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(self.SCHEMA)
        self._local.held = (path, conn)
        return conn

    def forget(self) -> None:
        """Close this thread's connection (the next count opens the file again)."""
        held = getattr(self._local, "held", None)
        if held is not None:
            held[1].close()
        self._local.held = None

    def incr(self, key: str, period: int, now: float) -> int:
        conn = self._connection()
        (used,) = conn.execute(self.COUNT, (key, now + period + 1)).fetchone()
        if used == 1:  # a new window: drop the windows that have ended
            conn.execute("DELETE FROM rate_count WHERE expires < ?", (now,))
        return used

    def check(self) -> None:
        self._connection().execute("SELECT 1 FROM rate_count LIMIT 1").fetchall()

    def clear(self) -> None:
        self._connection().execute("DELETE FROM rate_count")


EMBEDDED = SqliteCounter()


def _cache_incr(key: str, period: int) -> int:
    cache = caches["shared"]
    cache.add(key, 0, timeout=period + 1)
    try:
        return cache.incr(key)
    except ValueError:  # the window's key expired between add and incr
        cache.add(key, 1, timeout=period + 1)
        return 1


def count(key: str, period: int, now: float) -> int:
    """Count one request in ``key``'s window; the requests counted so far, this one
    included. Raises whatever the store raises when it cannot count."""
    if settings.KG_CACHE_URL:
        return _cache_incr(key, period)
    return EMBEDDED.incr(key, period, now)


def counter_problem() -> str | None:
    """Why the rate-limit counter cannot count right now, in words, or None (for
    ``/healthz``: one cheap read of the store)."""
    try:
        if settings.KG_CACHE_URL:
            caches["shared"].get("kg-health-probe")
        else:
            EMBEDDED.check()
    except Exception as exc:  # any store error means the counter is unusable
        return f"error: {exc.__class__.__name__}"
    return None


def reset() -> None:
    """Forget every count (tests)."""
    caches["shared"].clear()
    EMBEDDED.clear()


_last_warning = [0.0]


def _warn_open(exc: BaseException) -> None:
    now = time.monotonic()
    if _last_warning[0] and now - _last_warning[0] < WARN_EVERY:
        return
    _last_warning[0] = now
    where = "the shared cache (KG_CACHE_URL)" if settings.KG_CACHE_URL else "rates.sqlite3"
    log.warning(
        "API rate limits are not counted: %s failed (%s: %s); requests are let through "
        "until it answers again.",
        where,
        exc.__class__.__name__,
        exc,
    )


class PerAccount(BaseThrottle):
    """At most the rate named by the setting ``setting`` per account, in fixed windows.

    Ninja shares one instance between the threads of a process, so the wait it asks for
    after a refusal is kept per thread.
    """

    def __init__(self, scope: str, setting: str) -> None:
        self.scope = scope
        self.setting = setting
        self._local = threading.local()

    def rate(self) -> tuple[int, int] | None:
        return parse_rate(getattr(settings, self.setting))

    def who(self, request: HttpRequest) -> str | None:
        return caller(request)

    def allow_request(self, request: HttpRequest) -> bool:
        self._local.wait = None
        rate, who = self.rate(), self.who(request)
        if rate is None or who is None:
            return True
        limit, period = rate
        now = clock()
        window = int(now // period)
        key = f"kg-api-rate:{self.scope}:{who}:{period}:{window}"
        try:
            used = count(key, period, now)
        except Exception as exc:  # the store is down or full: fail open, in the log
            _warn_open(exc)
            return True
        if used <= limit:
            return True
        self._local.wait = max(1.0, (window + 1) * period - now)
        return False

    def wait(self) -> float | None:
        return getattr(self._local, "wait", None)


class PerToken(PerAccount):
    """At most the rate named by ``setting`` per API token (per account for a browser
    session): proposing is limited token by token, so one busy tool cannot spend the
    budget of another tool of the same account."""

    def who(self, request: HttpRequest) -> str | None:
        token = getattr(request, "api_token", None)
        if token is not None:
            return f"token-{token.pk}"
        return caller(request)


#: Every operation.
EVERY = PerAccount("all", "KG_API_RATE")
#: The walks and the diff, which may read thousands of rows per answer.
HEAVY = PerAccount("heavy", "KG_API_HEAVY_RATE")
#: Proposing (``POST /v1/proposals``), per token.
PROPOSE = PerToken("propose", "KG_API_PROPOSE_RATE")
