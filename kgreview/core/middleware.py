"""A request that lost to other writers is answered in words, never with a 500.

The decision services retry a deadlocked transaction and refuse with ``Busy`` in words
(``kgreview.core.retry``), and their views show those words. This catches what reaches
Django anyway: a ``Busy`` no view caught, or a deadlock, serialization failure or SQLite
"database is locked" from a write outside a retried service. The answer is a 409 with
the words and ``Retry-After``: JSON under ``/api/``, a fragment for htmx, else a page.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.html import format_html

from .errors import Busy
from .retry import busy, is_busy

RETRY_AFTER = "1"


class BusyMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, Busy):
            refusal = exception
        elif is_busy(exception):
            refusal = busy(exception)
        else:
            return None
        words = str(refusal)
        response: HttpResponse
        if request.path.startswith("/api/"):
            response = JsonResponse({"detail": words, "code": refusal.code}, status=409)
        elif getattr(request, "htmx", False):
            response = HttpResponse(
                format_html('<div class="flash bad" role="alert">{}</div>', words), status=409
            )
        else:
            response = render(request, "409.html", {"exception": words}, status=409)
        response["Retry-After"] = RETRY_AFTER
        return response
