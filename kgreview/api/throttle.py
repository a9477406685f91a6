"""Per-token rate limits: ninja's throttle hook, counted in the shared cache.

Each API token (or, for a browser session, each signed-in user) may make
``KG_API_RATE`` requests, and ``KG_API_HEAVY_RATE`` of the walks that can read
thousands of rows. Counting is a fixed window per token in the ``shared`` cache, whose
``add`` and ``incr`` are atomic on Redis, so every process and machine counts together.
A refused request is a 429 whose ``Retry-After`` says when the window ends.
"""

from __future__ import annotations

import threading
import time

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest
from ninja.throttling import BaseThrottle

PERIODS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}


def parse_rate(rate: str) -> tuple[int, int] | None:
    """ "600/min" -> (600, 60); "off" -> None (settings checked the shape)."""
    if rate == "off":
        return None
    count, unit = rate.split("/", 1)
    return int(count), PERIODS[unit]


def caller(request: HttpRequest) -> str | None:
    """Who is counted: the token, else the signed-in user; None before authentication."""
    token = getattr(request, "api_token", None)
    if token is not None:
        return f"token-{token.pk}"
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user-{user.pk}"
    return None


class PerToken(BaseThrottle):
    """At most the rate named by the setting ``setting`` per caller, in fixed windows.

    Ninja shares one instance between the threads of a process, so the wait it asks for
    after a refusal is kept per thread.
    """

    def __init__(self, scope: str, setting: str) -> None:
        self.scope = scope
        self.setting = setting
        self._local = threading.local()

    def rate(self) -> tuple[int, int] | None:
        return parse_rate(getattr(settings, self.setting))

    def allow_request(self, request: HttpRequest) -> bool:
        self._local.wait = None
        rate, who = self.rate(), caller(request)
        if rate is None or who is None:
            return True
        count, period = rate
        now = time.time()
        window = int(now // period)
        key = f"kg-api-rate:{self.scope}:{who}:{period}:{window}"
        cache = caches["shared"]
        cache.add(key, 0, timeout=period + 1)
        try:
            used = cache.incr(key)
        except ValueError:  # the window's key expired between add and incr
            cache.add(key, 1, timeout=period + 1)
            used = 1
        if used <= count:
            return True
        self._local.wait = max(1.0, (window + 1) * period - now)
        return False

    def wait(self) -> float | None:
        return getattr(self._local, "wait", None)


#: Every operation.
EVERY = PerToken("all", "KG_API_RATE")
#: The walks and the diff, which may read thousands of rows per answer.
HEAVY = PerToken("heavy", "KG_API_HEAVY_RATE")
