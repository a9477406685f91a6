"""Pages for reading the graph and its sources. Thin: validate, select, render."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from kgreview.agents.selectors import worker_status
from kgreview.core.permissions import view_required
from kgreview.review.selectors import source_segments

from . import selectors
from .models import Source


@require_GET
@login_required
@view_required
def home(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "graph/home.html",
        {
            "sources": selectors.source_list(),
            "totals": selectors.graph_totals(),
        },
    )


@require_GET
@login_required
@view_required
def source_detail(request: HttpRequest, slug: str) -> HttpResponse:
    source = get_object_or_404(Source.objects.select_related("current_revision"), slug=slug)
    revisions = list(
        source.revisions.order_by("-number").only(
            "number", "sha256", "created_at", "title", "origin"
        )
    )
    wanted = request.GET.get("rev")
    revision = source.current_revision
    if wanted:
        try:
            revision = source.revisions.get(number=int(wanted))
        except (ValueError, source.revisions.model.DoesNotExist):
            raise Http404(f"{slug} has no revision {wanted!r}") from None
    segments, proposals = source_segments(revision)
    return render(
        request,
        "graph/source_detail.html",
        {
            "source": source,
            "revision": revision,
            "revisions": revisions,
            "segments": segments,
            "proposals": proposals,
        },
    )


@require_GET
@login_required
@never_cache
def worker_badge(request: HttpRequest) -> HttpResponse:
    return render(request, "base.html#worker-badge", {"worker": worker_status()})


@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers: the database answers; the worker is reported, not required."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        database = "ok"
    except Exception as exc:  # any driver error means the database is unreachable
        database = f"error: {exc.__class__.__name__}"
    worker = worker_status()
    status = 200 if database == "ok" else 503
    return JsonResponse(
        {
            "database": database,
            "worker": {"alive": worker.alive, "seconds_ago": worker.seconds_ago},
        },
        status=status,
    )
