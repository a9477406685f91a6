"""Pages for reading the graph and its sources. Thin: validate, select, render."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from kgreview.agents.selectors import unknown_relations, worker_status
from kgreview.core.errors import DomainError, ValidationFailed
from kgreview.core.markup import Span
from kgreview.core.permissions import can_decide, curator_required, is_curator, view_required
from kgreview.review.models import Proposal
from kgreview.review.selectors import STATUS_RANK

from . import selectors, services
from .models import Concept, RelationType, Source


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
    proposals = list(
        Proposal.objects.filter(evidence_revision=revision)
        .only("id", "kind", "status", "payload", "evidence_start", "evidence_end")
        .order_by("evidence_start", "id")
    )
    # Each quote links to its proposal; where quotes overlap, the most open one wins.
    spans = [
        Span(
            p.evidence_start,
            p.evidence_end,
            tag="a",
            attrs={
                "href": reverse("review:proposal", args=[p.pk]),
                "class": f"hl status-{p.status}",
            },
            key=str(p.pk),
            label=f"#{p.pk} {p.status}",
            rank=STATUS_RANK.get(p.status, 9),
        )
        for p in proposals
        if p.evidence_start is not None and p.evidence_end is not None
    ]
    return render(
        request,
        "graph/source_detail.html",
        {
            "source": source,
            "revision": revision,
            "revisions": revisions,
            "spans": spans,
            "proposals": proposals,
            "can_decide": can_decide(request.user),
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


# --- Concepts and the ontology ----------------------------------------------------------

CONCEPT_FILTERS = ("active", "orphans", "merged", "retired", "all")


@require_GET
@login_required
@view_required
def concepts(request: HttpRequest) -> HttpResponse:
    """Concepts by name, with a search box and the orphan list curators clean up."""
    q = " ".join(request.GET.get("q", "").split())[:100]
    show = request.GET.get("show", "active")
    if show not in CONCEPT_FILTERS:
        show = "active"
    rows, next_after = selectors.concept_page(q=q, show=show, after=request.GET.get("after", ""))
    return render(
        request,
        "graph/concepts.html",
        {"rows": rows, "q": q, "show": show, "filters": CONCEPT_FILTERS, "next_after": next_after},
    )


@require_GET
@login_required
@view_required
def concept_detail(request: HttpRequest, pk: int) -> HttpResponse:
    concept = get_object_or_404(Concept.objects.select_related("merged_into"), pk=pk)
    profile = selectors.concept_profile(concept)
    # The canonical name first, then aliases, then names that came with merges.
    order = {"canonical": 0, "alias": 1}
    profile["names"].sort(key=lambda n: (order.get(n.kind, 2), n.name.casefold()))
    return render(
        request,
        "graph/concept.html",
        {**profile, "can_curate": is_curator(request.user), "can_decide": can_decide(request.user)},
    )


@require_GET
@login_required
@view_required
def ontology(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "graph/ontology.html",
        {
            "relations": selectors.relation_overview(),
            "unknown": unknown_relations(),
            "min_support": settings.KG_DISCOVERY_MIN_SUPPORT,
            "min_sources": settings.KG_DISCOVERY_MIN_SOURCES,
            "can_curate": is_curator(request.user),
        },
    )


@require_POST
@login_required
@curator_required
def relation_action(request: HttpRequest, pk: int) -> HttpResponse:
    relation = get_object_or_404(RelationType, pk=pk)
    action = request.POST.get("action")
    try:
        if action == "retire":
            services.relation_type_retire(relation=relation)
            messages.success(request, f'"{relation.key}" retired; its edges and history stay.')
        elif action == "reactivate":
            services.relation_type_reactivate(relation=relation)
            messages.success(request, f'"{relation.key}" is active again.')
        elif action == "describe":
            label = request.POST.get("label", "").strip()
            verb = request.POST.get("verb", "").strip()
            if not label or not verb:
                raise ValidationFailed("A relation needs a label and a verb.")
            services.relation_type_describe(
                relation=relation,
                label=label[:100],
                verb=verb[:100],
                description=request.POST.get("description", "")[:5000],
            )
            messages.success(request, f'"{relation.key}" described.')
        else:
            raise ValidationFailed("Choose retire, reactivate or describe.")
    except DomainError as exc:
        messages.error(request, str(exc))
    return redirect("ontology")
