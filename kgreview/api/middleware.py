"""Every refusal under /api/ is JSON with ``detail`` in words, whoever produced it.

The operations answer their own refusals as JSON. What reaches a client from outside
them was HTML: Django's 404 page for a path with no operation, ninja's bare 405 for a
wrong method, the CSRF 403, the 500 page. This middleware, outermost but for the
security headers, turns those into the API's error shape. The API tokens pages and the
interactive docs under /api/ are pages for people and stay HTML.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from http import HTTPStatus

from django.http import HttpRequest, HttpResponse, JsonResponse

PAGES = ("/api/tokens/", "/api/docs")


def is_api(path: str) -> bool:
    return path.startswith("/api/") and not path.startswith(PAGES)


def words(request: HttpRequest, response: HttpResponse) -> str:
    status = response.status_code
    if status == 404:
        return (
            f"There is no API operation at {request.path}. The operations are listed at "
            "/api/docs (the schema at /api/openapi.json)."
        )
    if status == 405:
        allowed = response.get("Allow", "GET")
        return f"{request.method} is not allowed on {request.path}; use {allowed}."
    if status == 403:
        return (
            "Refused: this request may not be made here (a browser session's form needs "
            "its CSRF token; API clients send Authorization: Bearer <token>)."
        )
    if status >= 500:
        return "The server failed to answer this request; the failure is logged. Try again."
    try:
        return f"{HTTPStatus(status).phrase}."
    except ValueError:
        return f"Refused ({status})."


class JsonErrors:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code < 400 or not is_api(request.path):
            return response
        if response.get("Content-Type", "").startswith("application/json"):
            return response
        answer = JsonResponse({"detail": words(request, response)}, status=response.status_code)
        for header in ("Allow", "Retry-After", "WWW-Authenticate"):
            if header in response:
                answer[header] = response[header]
        return answer


#: The media types a body sent to the API may have: JSON, or a JSON dialect (``+json``).
JSON_TYPE = re.compile(r"^application/(?:[\w.+-]+\+)?json$")
WRITES = ("POST", "PUT", "PATCH")
#: The operations that read a body (the writing API). Elsewhere a write is the wrong
#: method, a 405 whatever the body.
BODY_PATHS = ("/api/v1/proposals", "/api/v1/proposals/")


def json_body_problem(request: HttpRequest) -> str | None:
    """Why a body sent to an API operation cannot be read, in words, or None: the API's
    operations read JSON only, and a form or a multipart body would be parsed as one by
    the middlewares that read forms before the operation could refuse it."""
    media_type = request.content_type or ""
    if JSON_TYPE.match(media_type.strip().lower()):
        return None
    sent = f"Content-Type {media_type}" if media_type else "no Content-Type"
    return (
        f"The body was sent with {sent}; the API reads JSON only: send the body with "
        "Content-Type: application/json. Nothing was done."
    )


class JsonBodies:
    """Refuse a body of any other type than JSON sent to an API operation with 415, in
    words, before any middleware reads it as a form (no body at all is the operation's
    to refuse) (``/api/mcp`` says so in JSON-RPC,
    ``api.mcp.http``)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        sends_body = request.META.get("CONTENT_LENGTH", "") not in ("", "0")
        if request.method in WRITES and sends_body and request.path in BODY_PATHS:
            words = json_body_problem(request)
            if words is not None:
                return JsonResponse({"detail": words, "code": "unsupported_media_type"}, status=415)
        return self.get_response(request)
