"""The graph's own pages: a source's original file, the concept list, and curators'
changes to relation and concept types. Thin: validate, select, render.

Pages that also show proposals or agents' findings (the sources home, a source's text,
a concept, the ontology) live in ``kgreview.web``, above every app they read.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_POST

from kgreview.core import links
from kgreview.core.forms import errors_in_words
from kgreview.core.permissions import curator_required, view_required
from kgreview.core.refusals import said

from . import selectors, services, sourcepage, type_selectors
from .forms import (
    CONCEPT_FILTERS,
    UNTYPED,
    ConceptListForm,
    ConceptTypeActionForm,
    RelationActionForm,
    RevisionForm,
)
from .models import ConceptType, RelationType, Source, SourceFile


@require_GET
@login_required
@view_required
def source_original(request: HttpRequest, slug: str) -> HttpResponse:
    """The file a revision was read from, always as a download (never shown inline)."""
    source = get_object_or_404(Source.objects.select_related("current_revision"), slug=slug)
    revision = RevisionForm(request.GET).revision_of(source)
    original = None
    if revision is not None and revision.original_id is not None:
        original = SourceFile.objects.filter(pk=revision.original_id).first()
    if original is None:
        problem = f"{source.slug} has no text yet, so no original file."
        if revision is not None:
            problem = (
                f"Revision {revision.number} of {source.slug} has no original file: it was "
                "imported before kgreview kept originals, or from text alone."
            )
        context = {"source": source, "problem": problem, "back": True}
        return render(request, "graph/source_missing.html", context, status=404)
    data = bytes(original.data)
    response = HttpResponse(data, content_type=sourcepage.safe_media_type(original.media_type))
    response["Content-Disposition"] = content_disposition_header(
        True, sourcepage.download_name(revision, source.slug, original.media_type)
    )
    response["Content-Length"] = str(len(data))
    response["X-Content-Type-Options"] = "nosniff"
    # Even if a browser ignored the attachment, an HTML original could run nothing.
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    response["Cache-Control"] = "private, max-age=0"
    return response


# --- Concepts and the ontology ----------------------------------------------------------


@require_GET
@login_required
@view_required
def concepts(request: HttpRequest) -> HttpResponse:
    """Concepts by name with their types, a search box, a type filter (the type and its
    subtypes) and the orphan list curators clean up."""
    form = ConceptListForm(request.GET)
    q, show, after = form.values()
    type_key, family, problem = form.type_filter()
    rows, next_after = selectors.concept_page(q=q, show=show, after=after, types=family)
    context = {
        "rows": rows,
        "q": q,
        "show": show,
        "filters": CONCEPT_FILTERS,
        "next_after": next_after,
        "type_key": type_key,
        "types": type_selectors.type_tree(),
        "untyped": UNTYPED,
        "problem": problem,
    }
    return render(request, "graph/concepts.html", context)


@require_POST
@login_required
@curator_required
def relation_action(request: HttpRequest, pk: int) -> HttpResponse:
    relation = get_object_or_404(RelationType, pk=pk)
    form = RelationActionForm(request.POST)
    if not form.is_valid():
        messages.error(request, errors_in_words(form))
        return redirect(links.url("ontology"))
    data = form.cleaned_data
    with said(request):
        if data["action"] == "retire":
            services.relation_type_retire(relation=relation, acting_user=request.user)
            messages.success(request, f'"{relation.key}" retired; its edges and history stay.')
        elif data["action"] == "reactivate":
            services.relation_type_reactivate(relation=relation, acting_user=request.user)
            messages.success(request, f'"{relation.key}" is active again.')
        elif data["action"] == "guideline":
            services.relation_type_guideline(
                relation=relation, text=data["guideline"], acting_user=request.user
            )
            messages.success(request, f'The guideline of "{relation.key}" is saved.')
        else:
            relation = services.relation_type_describe(
                relation=relation,
                label=data["label"],
                verb=data["verb"],
                description=data["description"],
                inverse_key=data["inverse_key"],
                acting_user=request.user,
            )
            messages.success(request, f'"{relation.key}" described.')
    return redirect(links.url("ontology"))


@require_POST
@login_required
@curator_required
def concept_type_action(request: HttpRequest, pk: int) -> HttpResponse:
    """Retire a concept type, bring it back or describe it (its words and its parent),
    then go back to the Ontology page."""
    concept_type = get_object_or_404(ConceptType, pk=pk)
    form = ConceptTypeActionForm(request.POST)
    if not form.is_valid():
        messages.error(request, errors_in_words(form))
        return redirect(links.url("ontology"))
    data = form.cleaned_data
    with said(request):
        if data["action"] == "retire":
            services.concept_type_retire(concept_type=concept_type, acting_user=request.user)
            messages.success(
                request, f'"{concept_type.key}" retired; the concepts that have it keep it.'
            )
        elif data["action"] == "describe":
            services.concept_type_describe(
                concept_type=concept_type,
                label=data["label"],
                description=data["description"],
                parent_key=data["parent_key"],
                acting_user=request.user,
            )
            messages.success(request, f'"{concept_type.key}" described.')
        elif data["action"] == "guideline":
            services.concept_type_guideline(
                concept_type=concept_type, text=data["guideline"], acting_user=request.user
            )
            messages.success(request, f'The guideline of "{concept_type.key}" is saved.')
        else:
            services.concept_type_reactivate(concept_type=concept_type, acting_user=request.user)
            messages.success(request, f'"{concept_type.key}" is active again.')
    return redirect(links.url("ontology"))
