"""Control characters are refused at the edge, before any view reads a parameter.

A NUL byte in a query parameter or a form field used to reach the database raw (a 500
on PostgreSQL, whose text cannot hold it); other control characters (C0 but tab, newline
and carriage return; DEL; C1; lone surrogates, see ``construction.text.CONTROL``) are
never meant either. ``RefuseControlCharacters`` reads every key and value of the query
string and of a form body, and the names of uploaded files, and answers 400 in words:
``{"detail": ...}`` for the API, a fragment and a toast for htmx, a page otherwise.

A view that must install its own upload handlers before the body is parsed (the upload
page's size limit) is marked with ``@parses_own_body``: its query string is still
checked here, its body by the view itself (the upload cleans each file's name).

A refusal of a service (a ``DomainError``, ``Busy`` among them) and a lost lock race
that reached Django are answered by ``core.refusals.RefusalMiddleware``, in the same
three shapes.

``HtmxSignInAgain``: an htmx request from a session that ended goes to the sign-in page
as a whole page (its docstring says why).

``DiskFullMiddleware``: a write that found the disk full (``core.disk``) is answered
503 "The server's disk is full: nothing was saved." in the same three shapes, wherever
it failed: in a view (``process_exception``) or after it, such as the session saved as
a login's response leaves (a ``got_request_exception`` receiver marks the request; the
middleware sits outside the session's and turns that request's 500 into the 503).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.core.signals import got_request_exception
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render, resolve_url
from django.utils.html import format_html
from django_htmx.http import HttpResponseClientRedirect

from construction.text import CONTROL, control_in

from . import disk
from .forms import BIGGEST_INT
from .refusals import is_htmx, refusal

_NAMES = {
    "\x00": "a NUL byte",
    "\x7f": "a DEL character",
    "\x1b": "an escape character",
}
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def parses_own_body(view: Callable) -> Callable:
    """Mark a view that parses its request body itself (after installing upload
    handlers): the middleware then leaves the body alone."""
    view.parses_own_body = True  # type: ignore[attr-defined]
    return view


def character_words(ch: str) -> str:
    """A control character named for a person: "a NUL byte", "a control character (U+0007)"."""
    if ch in _NAMES:
        return _NAMES[ch]
    if "\ud800" <= ch <= "\udfff":
        return f"a lone surrogate (U+{ord(ch):04X})"
    return f"a control character (U+{ord(ch):04X})"


def shown(text: str, limit: int = 40) -> str:
    """Text safe to repeat back: control characters written as U+XXXX, cut to ``limit``."""
    text = CONTROL.sub(lambda m: f"U+{ord(m.group()):04X}", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_problem(pairs: Iterable[tuple[str, str]], value_words: str, name_words: str):
    """The refusal for the first key or value holding a control character, or None.
    ``value_words`` names where a bad value sits (``{key}`` is filled in)."""
    for key, value in pairs:
        for subject, text in ((name_words, key), (value_words.format(key=shown(key)), value)):
            ch = control_in(text)
            if ch is not None:
                return (
                    f"{subject} holds {character_words(ch)}, which kgreview does not "
                    "accept. Remove it and send again; nothing was saved."
                )
    return None


def _lists(query) -> Iterable[tuple[str, str]]:
    for key, values in query.lists():
        for value in values:
            yield key, value if isinstance(value, str) else ""


def control_problem(request: HttpRequest, *, body: bool = True) -> str | None:
    """Why this request is refused, in words, or None: the first control character in a
    query parameter, a form field (``body``) or an uploaded file's name."""
    problem = _first_problem(
        _lists(request.GET), "The query parameter “{key}”", "A query parameter’s name"
    )
    if problem or not body or request.method in ("GET", "HEAD", "OPTIONS"):
        return problem
    if not request.content_type.startswith(_FORM_TYPES):
        return None
    problem = _first_problem(_lists(request.POST), "The form field “{key}”", "A form field’s name")
    if problem is None and request.content_type.startswith("multipart/"):
        names = ((key, f.name or "") for key, files in request.FILES.lists() for f in files)
        problem = _first_problem(
            names, "The name of the file sent as “{key}”", "A form field’s name"
        )
    return problem


class RefuseControlCharacters:
    """Answer 400 in words to any request whose parameters hold control characters."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs):
        for value in (*view_args, *view_kwargs.values()):
            if isinstance(value, int) and not -BIGGEST_INT <= value <= BIGGEST_INT:
                # ``<int:pk>`` takes any run of digits; no row has such an id.
                raise Http404(f"No row has the id {value}: it is larger than any id can be.")
        own_body = getattr(view_func, "parses_own_body", False)
        words = control_problem(request, body=not own_body)
        return refusal(request, words) if words else None


# --- A full disk ----------------------------------------------------------------------

log = logging.getLogger(__name__)
DISK_RETRY_AFTER = "60"


DATABASE_RETRY_AFTER = "30"


def disk_full_response(request: HttpRequest) -> HttpResponse:
    """The 503 of a full disk, in words."""
    return outage_response(
        request, disk.WORDS, code="disk_full", title="Disk full", retry_after=DISK_RETRY_AFTER
    )


def outage_response(
    request: HttpRequest, words: str, *, code: str, title: str, retry_after: str
) -> HttpResponse:
    """A 503 in words: JSON under ``/api/`` (or to a script asking for JSON), a
    fragment for htmx, else a page (or the words alone, when the page cannot be drawn)."""
    response: HttpResponse
    accept = request.headers.get("Accept", "")
    if request.path.startswith("/api/") or (
        "application/json" in accept and "text/html" not in accept
    ):
        response = JsonResponse({"detail": words, "code": code}, status=503)
    elif is_htmx(request):
        response = HttpResponse(
            format_html('<div class="flash bad" role="alert">{}</div>', words), status=503
        )
    else:
        try:
            context = {"words": words, "title": title}
            response = render(request, "503.html", context, status=503)
        except Exception:  # the page itself could not be drawn: the words alone
            response = HttpResponse(f"<!doctype html><title>{title}</title><p>{words}</p>")
            response.status_code = 503
    response["Retry-After"] = retry_after
    return response


def _outage(request: HttpRequest | None, exception: BaseException) -> str:
    """Which outage ``exception`` says ("disk", "database"), noted in the log; else ""."""
    if disk.is_disk_full(exception):
        disk.noted()
        what, said = "disk", "The disk is full"
    elif disk.is_database_down(exception):
        what, said = "database", "The database is not answering"
    else:
        return ""
    log.error(
        "%s: %s %s failed (%s: %s); nothing was saved.",
        said,
        getattr(request, "method", "?"),
        getattr(request, "path", "?"),
        exception.__class__.__name__,
        exception,
    )
    return what


def _answer(request: HttpRequest, what: str) -> HttpResponse:
    if what == "disk":
        return disk_full_response(request)
    return outage_response(
        request,
        disk.DATABASE_DOWN_WORDS,
        code="database_down",
        title="Database not answering",
        retry_after=DATABASE_RETRY_AFTER,
    )


def _mark_outage(sender, request=None, **kwargs) -> None:
    """A failure outside any view (a session saved after the view, say): remember it on
    the request, for ``DiskFullMiddleware`` to answer in words."""
    # Django sends the signal from inside its ``except`` block, without the exception.
    exception = kwargs.get("exception") or sys.exc_info()[1]
    if request is not None and exception is not None:
        what = _outage(request, exception)
        if what:
            request._kg_outage = what  # type: ignore[attr-defined]


got_request_exception.connect(_mark_outage, dispatch_uid="kgreview-disk-full")


class DiskFullMiddleware:
    """A full disk or a database that does not answer: a 503 in words, wherever the
    request failed (a view, or the session saved after it), never the generic 500."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        what = getattr(request, "_kg_outage", "")
        if response.status_code == 500 and what:
            return _answer(request, what)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        what = _outage(request, exception)
        return _answer(request, what) if what else None


class HtmxSignInAgain:
    """A request htmx sent after its session ended (signed out in another tab, the
    session expired) is sent to the sign-in page as a whole page, coming back to the
    page the person was on.

    ``login_required`` answers with a redirect to the sign-in page; htmx follows it
    inside the request and swapped the sign-in form into the card. htmx's ``HX-Redirect``
    makes the browser go there instead; ``next`` is the page in the address bar, not the
    fragment or decision URL the request was for. Nothing was decided: the view never ran.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not (is_htmx(request) and response.status_code in (301, 302)):
            return response
        sign_in = resolve_url(settings.LOGIN_URL)
        if urlsplit(response.get("Location", "")).path != sign_in:
            return response
        here = request.htmx.current_url_abs_path or "/"
        return HttpResponseClientRedirect(f"{sign_in}?{urlencode({'next': here})}")
