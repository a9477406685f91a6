"""The Ontology page's validation report: the graph (now, or as of an instant) checked
against the SHACL shapes its ontology implies (``exports.shapes``). Computed only when
asked ("Validate now"), never on the page's load: at scale it takes seconds."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from kgreview.core.forms import InstantField
from kgreview.core.permissions import view_required
from kgreview.exports.shapes import validate


class ValidationForm(forms.Form):
    as_of = InstantField(
        label="As of",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}),
        help_text="Leave empty to validate the graph as it is now.",
    )


@require_GET
@login_required
@view_required
@never_cache
def ontology_validation(request: HttpRequest) -> HttpResponse:
    """The report as the section's fragment (htmx) or on a page of its own."""
    form = ValidationForm(request.GET)
    report = None
    status = 200
    if form.is_valid():
        report = validate(at=form.cleaned_data["as_of"] or timezone.now())
    else:
        status = 400
    template = "web/_validation.html" if request.htmx else "web/validation.html"
    return render(
        request, template, {"validation_form": form, "validation_report": report}, status=status
    )
