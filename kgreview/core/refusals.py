"""A refusal in words, answered one way wherever it comes from.

A service refuses with a ``DomainError`` (``core.errors``): its message is the words, its
class says the HTTP ``status``. ``answer`` turns one into a response for the request that
caused it:

- under ``/api/`` (the API's operations), JSON: ``{"detail": words, "code": code}``;
- for htmx, a fragment saying the words, a toast (``HX-Trigger: kgRefused``) and no swap;
- otherwise the page of that status (``400.html``, ``403.html``, ``404.html``,
  ``409.html``; any other status on ``400.html``'s) with the words.

``RefusalMiddleware`` answers so every ``DomainError`` a view lets through, and a lost lock
race that reached Django as a database error (``core.retry.busy``); views need no
``try``/``except`` of their own. The API's operations answer through django-ninja's
handler for ``DomainError`` (``api.app``), in the same JSON.

Two kinds of view keep the person on their page instead, and each uses one helper here:

- a view that does something and goes back where it came from says the refusal as a
  message on that page: ``with said(request): ...``;
- a view that shows its form again says the refusal above the form, with the status:
  ``form_refused(request, template, context, exc)``.

A refusal of the person's role (403) or of a row that does not exist (404) is never a
message: both helpers let it through to ``answer``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.html import format_html
from django_htmx.http import reswap, trigger_client_event

from .errors import DomainError
from .retry import busy, is_busy

TOAST_EVENT = "kgRefused"
# The statuses with a page of their own that says the words; any other is said on 400's.
PAGES = {400: "400.html", 403: "403.html", 404: "404.html", 409: "409.html"}
# Never a message on the page the person came from: they may not, or it is not there.
NOT_A_MESSAGE = (403, 404)


def is_api(request: HttpRequest) -> bool:
    """Whether the request is one of the API's operations (not the API's pages for people,
    such as the tokens page)."""
    match = request.resolver_match
    if match is not None:
        return "api" in match.namespaces
    return request.path.startswith("/api/")


def is_htmx(request: HttpRequest) -> bool:
    """Whether htmx sent the request: django-htmx's ``request.htmx`` (a request that never
    passed its middleware is not htmx's)."""
    return bool(getattr(request, "htmx", False))


def refusal(
    request: HttpRequest, words: str, *, status: int = 400, code: str | None = None
) -> HttpResponse:
    """``words`` as the answer to ``request``, with ``status``: JSON under ``/api/``, a
    fragment and a toast for htmx, a page otherwise."""
    response: HttpResponse
    if is_api(request):
        body = {"detail": words} if code is None else {"detail": words, "code": code}
        return JsonResponse(body, status=status)
    if is_htmx(request):
        response = HttpResponse(
            format_html('<p class="refusal" role="alert">{}</p>', words), status=status
        )
        reswap(response, "none")
        return trigger_client_event(response, TOAST_EVENT, {"message": words})
    template = PAGES.get(status, PAGES[400])
    context = {"words": words, "exception": words, "request_path": request.path}
    return render(request, template, context, status=status)


def answer(request: HttpRequest, exc: DomainError) -> HttpResponse:
    """The one translation of a ``DomainError``: its words, its status and its code (and
    ``Retry-After`` when trying again may be all it takes)."""
    response = refusal(request, exc.message, status=exc.status, code=exc.code)
    retry_after = getattr(exc, "retry_after", None)
    if retry_after:
        response["Retry-After"] = retry_after
    return response


class RefusalMiddleware:
    """Answer every ``DomainError`` a view did not catch, and every lost lock race (a
    deadlock, a serialization failure, SQLite's "database is locked") as ``Busy``, in
    words (``answer``), never with a 500."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, DomainError):
            return answer(request, exception)
        if is_busy(exception):
            return answer(request, busy(exception))
        return None


def passes_on(exc: DomainError) -> bool:
    """Whether a refusal is never a page's own to say: the person's role may not (403) or
    the row is not there (404). A view that says refusals itself lets these go on to
    ``answer``."""
    return exc.status in NOT_A_MESSAGE


def _itself(exc: DomainError) -> DomainError:
    return exc


@contextmanager
def said(
    request: HttpRequest, refusal_of: Callable[[DomainError], DomainError] = _itself
) -> Iterator[None]:
    """Run the block; a ``DomainError`` it raises becomes an error message on the page the
    view goes back to, with htmx too (``refusal_of`` may pick the refusal to say, such as
    the one it wraps). Under the API, and for a 403 or a 404, it goes on to ``answer``."""
    try:
        yield
    except DomainError as exc:
        if passes_on(exc) or is_api(request):
            raise
        messages.error(request, refusal_of(exc).message)


def form_refused(
    request: HttpRequest,
    template: str,
    context: dict,
    exc: DomainError,
    *,
    status: int | None = None,
) -> HttpResponse:
    """The view's form again with what was typed, the refusal in words above it
    (``context["error"]``) and the refusal's status (or ``status``). A 403 or a 404 is not
    the form's to say: it goes on to ``answer``."""
    if passes_on(exc):
        raise exc
    context["error"] = exc.message
    return render(request, template, context, status=status or exc.status)
