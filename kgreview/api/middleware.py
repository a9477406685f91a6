"""Every refusal under /api/ is JSON with ``detail`` in words, whoever produced it.

The operations answer their own refusals as JSON. What reaches a client from outside
them was HTML: Django's 404 page for a path with no operation, ninja's bare 405 for a
wrong method, the CSRF 403, the 500 page. This middleware, outermost but for the
security headers, turns those into the API's error shape. The API tokens pages and the
interactive docs under /api/ are pages for people and stay HTML.
"""

from __future__ import annotations

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
