"""The exports page and the download. Thin: validate the form, let the writers stream."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from kgreview.core.permissions import is_curator, view_required

from . import selectors, vocabulary, writers
from .forms import ExportForm, ReleaseForm


def _page(request: HttpRequest, form: ExportForm, *, status: int = 200) -> HttpResponse:
    at = None
    if form.is_bound and form.is_valid():
        at = form.cleaned_data["as_of"]
    at = at or timezone.now()
    return render(
        request,
        "exports/home.html",
        {
            "form": form,
            "at": at,
            "counts": None if form.errors else selectors.export_counts(at=at),
            "formats": list(writers.FORMATS.values()),
            "terms": vocabulary.TERMS,
            "classes": vocabulary.CLASSES,
            "prefixes": vocabulary.PREFIXES,
            "time_zone": settings.TIME_ZONE,
            "can_cut": is_curator(request.user),
            "release_form": ReleaseForm(),
        },
        status=status,
    )


@require_GET
@login_required
@view_required
def home(request: HttpRequest) -> HttpResponse:
    """The form, and how many concepts and edges an export would hold (now, or as of)."""
    asked = "as_of" in request.GET or "format" in request.GET
    form = ExportForm(request.GET if asked else None)
    if form.is_bound and not form.is_valid():
        return _page(request, form, status=400)
    return _page(request, form)


@require_GET
@login_required
@view_required
@never_cache
def download(request: HttpRequest) -> HttpResponse:
    form = ExportForm(request.GET)
    if not form.is_valid():
        return _page(request, form, status=400)
    fmt = writers.FORMATS[form.cleaned_data["format"]]
    at = form.cleaned_data["as_of"] or timezone.now()
    chunks = fmt.stream(at=at, raw_cells=form.cleaned_data["raw_cells"])
    response = StreamingHttpResponse(chunks, content_type=fmt.content_type)
    response["Content-Disposition"] = f'attachment; filename="{writers.filename(fmt, at)}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


@require_GET
def context_document(request: HttpRequest) -> JsonResponse:
    """The bare JSON-LD context. Public: it is vocabulary, not data, and JSON-LD
    processors fetch contexts without signing in."""
    response = JsonResponse(
        {"@context": vocabulary.context()},
        content_type="application/ld+json",
        json_dumps_params={"indent": 1},
    )
    response["Access-Control-Allow-Origin"] = "*"
    return response
