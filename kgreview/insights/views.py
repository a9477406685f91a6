"""The insights dashboard. Thin: read the filters, build the numbers, render."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from kgreview.core.permissions import view_required
from kgreview.graph.models import RelationType

from . import agreement
from . import dashboard as board
from .forms import WINDOW_CHOICES, DashboardForm


@require_GET
@login_required
@view_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """Queue, reviewers, acceptance and calibration, and agreement between reviewers;
    with htmx only the charts region (agreement does not follow the filters, so it is
    neither read nor drawn again).

    Invalid filters answer 400 with the reason in words and the default in their place.
    """
    keys = set(RelationType.objects.values_list("key", flat=True))
    chosen, errors = DashboardForm(request.GET, relation_keys=keys).values()
    context = board.build(
        days=chosen["window"], relation=chosen["relation"], target=chosen["target"]
    )
    decided = {r.key: r.n for r in context["outcomes"].by_relation}
    context.update(
        chosen=chosen,
        errors=errors,
        windows=WINDOW_CHOICES,
        relation_choices=[(key, decided.get(key, 0)) for key in sorted(keys | set(decided))],
    )
    # A history restore (back button, cache miss) needs the whole page, not the region.
    partial = request.htmx and not request.htmx.history_restore_request
    if not partial:
        context["agreement"] = agreement.section(request.user)
    template = "insights/dashboard.html#insights-charts" if partial else "insights/dashboard.html"
    return render(request, template, context, status=400 if errors else 200)
