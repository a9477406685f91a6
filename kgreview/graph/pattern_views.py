"""Curators' changes to relation patterns from the Ontology page: allow a pattern,
retire one, bring one back. Thin: a form, a service, back to the page with the words."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from kgreview.core import links
from kgreview.core.forms import errors_in_words
from kgreview.core.permissions import curator_required
from kgreview.core.refusals import said

from . import services
from .models import RelationPattern
from .ontology_forms import PatternAddForm, SwitchForm


def _back() -> HttpResponse:
    return redirect(links.url("ontology") + "#relation-patterns")


@require_POST
@login_required
@curator_required
def pattern_add(request: HttpRequest) -> HttpResponse:
    """Allow a (domain type, range type) pair on a relation."""
    form = PatternAddForm(request.POST)
    if not form.is_valid():
        messages.error(request, errors_in_words(form))
        return _back()
    data = form.cleaned_data
    with said(request):
        services.pattern_create(
            relation_key=data["relation_key"],
            domain_key=data["domain_key"],
            range_key=data["range_key"],
            description=data["description"],
            acting_user=request.user,
        )
        messages.success(
            request,
            f'"{data["relation_key"]}" now joins {data["domain_key"]} to {data["range_key"]}.',
        )
    return _back()


@require_POST
@login_required
@curator_required
def pattern_action(request: HttpRequest, pk: int) -> HttpResponse:
    """Retire a pattern, or bring a retired one back."""
    pattern = get_object_or_404(RelationPattern.objects.select_related("relation"), pk=pk)
    form = SwitchForm(request.POST)
    if not form.is_valid():
        messages.error(request, errors_in_words(form))
        return _back()
    with said(request):
        if form.cleaned_data["action"] == "retire":
            services.pattern_retire(pattern=pattern, acting_user=request.user)
            messages.success(request, f'A pattern of "{pattern.relation.key}" was retired.')
        else:
            services.pattern_reactivate(pattern=pattern, acting_user=request.user)
            messages.success(request, f'A pattern of "{pattern.relation.key}" is allowed again.')
    return _back()
