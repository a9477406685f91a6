"""A ``Server-Timing`` header on the review loop's responses, so a browser (the devtools'
Timing tab, Resource Timing's ``serverTiming``, ``manage.py bench keys``) can tell the
server's share of a keypress from its own.

    Server-Timing: db;dur=6.20;desc="9 queries", app;dur=13.85, total;dur=20.05

``total`` is the time from the request reaching this middleware (first in
``MIDDLEWARE``, so every other middleware is inside it) to its response; ``db`` the time
spent in database calls through Django's connection, and their number; ``app`` the rest
(Python: middleware, view, template rendering). Where the ``app`` share goes is what
``manage.py bench --profile`` splits further.

Only the Review page's endpoints carry it (:data:`TIMED`: the card, which a skip asks
for too, accept, reject, edit), and only for a signed-in user: elsewhere a query
count could tell an anonymous caller something (a sign-in that looked a name up or not).
``KG_SERVER_TIMING=false`` turns it off (the middleware then unloads itself).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed
from django.db import connection
from django.http import HttpRequest, HttpResponse

#: The review loop's endpoints ("namespace:name") whose responses carry the header.
TIMED = frozenset({"review:focus", "review:accept", "review:reject", "review:edit"})


class ServerTiming:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        if not getattr(settings, "KG_SERVER_TIMING", True):
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        spent, statements = 0.0, 0

        def timed(execute, sql, params, many, context):
            nonlocal spent, statements
            started = time.perf_counter()
            try:
                return execute(sql, params, many, context)
            finally:
                spent += time.perf_counter() - started
                statements += 1

        started = time.perf_counter()
        with connection.execute_wrapper(timed):
            response = self.get_response(request)
        total_ms = (time.perf_counter() - started) * 1000
        if _timed(request):
            response.headers["Server-Timing"] = header(total_ms, spent * 1000, statements)
        return response


def header(total_ms: float, db_ms: float, queries: int) -> str:
    """The header's value: ``db`` (with the number of statements), ``app`` (the rest)
    and ``total``, in milliseconds."""
    noun = "query" if queries == 1 else "queries"
    return (
        f'db;dur={db_ms:.2f};desc="{queries} {noun}", '
        f"app;dur={max(0.0, total_ms - db_ms):.2f}, total;dur={total_ms:.2f}"
    )


def _timed(request: HttpRequest) -> bool:
    match = getattr(request, "resolver_match", None)
    if match is None or match.view_name not in TIMED:
        return False
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated)
