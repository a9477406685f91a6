"""A curator's changes to the attributes concept types declare, from the Ontology page:
declare one, retire it, bring it back. Thin: read the form, call the service, go back to
the Ontology page with the outcome (or the refusal) as a message, with htmx too."""

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
from .models import Attribute
from .ontology_forms import AttributeAddForm, SwitchForm


@require_POST
@login_required
@curator_required
def attribute_add(request: HttpRequest) -> HttpResponse:
    """Declare an attribute on a concept type, then go back to the Ontology page."""
    form = AttributeAddForm(request.POST)
    form.is_valid()  # every field is optional text: the service judges what was typed
    data = form.cleaned_data
    with said(request):
        made = services.attribute_create(
            type_key=data["type_key"],
            key=data["key"],
            label=data["label"],
            datatype=data["datatype"],
            description=data["description"],
            acting_user=request.user,
        )
        messages.success(request, f'"{made.key}" declared on "{data["type_key"]}".')
    return redirect(links.url("ontology"))


@require_POST
@login_required
@curator_required
def attribute_action(request: HttpRequest, pk: int) -> HttpResponse:
    """Retire an attribute or bring it back, then go back to the Ontology page."""
    attribute = get_object_or_404(Attribute.objects.select_related("concept_type"), pk=pk)
    form = SwitchForm(request.POST)
    if not form.is_valid():
        messages.error(request, errors_in_words(form))
        return redirect(links.url("ontology"))
    where = f'"{attribute.key}" of "{attribute.concept_type.key}"'
    with said(request):
        if form.cleaned_data["action"] == "retire":
            services.attribute_retire(attribute=attribute, acting_user=request.user)
            messages.success(request, f"{where} retired; the values held keep their history.")
        else:
            services.attribute_reactivate(attribute=attribute, acting_user=request.user)
            messages.success(request, f"{where} is active again.")
    return redirect(links.url("ontology"))
