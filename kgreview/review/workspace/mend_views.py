"""Pages for mending the graph by hand. Thin: read a form (``mend_forms``), call a
``mend`` service, redirect.

Every action here becomes a decision by the signed-in person (see ``review.mend``), so it
appears in the decision log and the edge's life, and can be undone from the Review page.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from kgreview.core import links
from kgreview.core.errors import DomainError
from kgreview.core.forms import errors_in_words
from kgreview.core.permissions import curator_required, decide_required
from kgreview.core.refusals import form_refused, said
from kgreview.graph.models import Concept, Edge, RelationType
from kgreview.review.decide import mend, undo
from kgreview.review.decide.outcome import ProposalStale
from kgreview.review.workspace.card_parts import merge_sides
from kgreview.review.workspace.mend_forms import (
    ConceptMergeForm,
    ConceptNamesForm,
    ConceptStatusForm,
    ConceptTypeForm,
    EdgeAddForm,
    NoteForm,
)


def _own(exc: DomainError) -> DomainError:
    """The refusal to say: the graph's own (its words and status) rather than the queue's
    "cannot apply it as it stands", which speaks of a proposal the person never saw."""
    if isinstance(exc, ProposalStale) and isinstance(exc.__cause__, DomainError):
        return exc.__cause__
    return exc


def _tell(request: HttpRequest, change: Callable[[], str]) -> None:
    """Make the change and say what it did, or why it was refused, as a message."""
    with said(request, _own):
        messages.success(request, change())


# --- Edges ------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@login_required
@decide_required
def edge_add(request: HttpRequest) -> HttpResponse:
    """Add an edge the agents missed: two concepts, a relation, a reason, and optionally
    the quote that supports it (picked by selecting text on a source page)."""
    form = EdgeAddForm(request.POST if request.method == "POST" else request.GET)
    form.is_valid()  # every field is optional; ``refusal`` says what stops the edge
    data = form.cleaned_data
    context = {
        "relations": RelationType.objects.filter(active=True).order_by("key"),
        "evidence": data["evidence"],
        "evidence_problem": data["evidence_problem"],
        **form.shown(),
    }
    if request.method == "GET":
        return render(request, "review/edge_add.html", context)
    problem = form.refusal()
    if problem:
        context["error"] = problem
        return render(request, "review/edge_add.html", context, status=400)
    try:
        out = mend.edge_add_by_hand(
            acting_user=request.user,
            source=data["ends"]["source"],
            target=data["ends"]["target"],
            relation=data["relation"],
            note=data["note"],
            evidence=data["evidence"],
            confidence=form.confidence_number(),
        )
    except DomainError as exc:
        return form_refused(request, "review/edge_add.html", context, _own(exc))
    edge = out.edges[0]
    messages.success(
        request,
        f"Added edge #{edge.pk} by hand. Undo it from the Review page (u) if it was a mistake.",
    )
    return redirect("review:edge", pk=edge.pk)


@require_POST
@login_required
@decide_required
def edge_retire(request: HttpRequest, pk: int) -> HttpResponse:
    """Retire an accepted edge that is wrong; it stays in the history with the reason."""
    edge = get_object_or_404(Edge, pk=pk)
    form = NoteForm(request.POST)
    form.is_valid()  # the note is judged by the service, in its words

    def retire() -> str:
        mend.edge_retire_by_hand(
            acting_user=request.user, edge_id=edge.pk, note=form.cleaned_data["note"]
        )
        return f"Edge #{edge.pk} retired. Its history stays on this page."

    _tell(request, retire)
    return redirect("review:edge", pk=edge.pk)


# --- Concepts ---------------------------------------------------------------------------


@require_POST
@login_required
@curator_required
def concept_status(request: HttpRequest, pk: int) -> HttpResponse:
    """Retire a concept that should not be in the graph, or bring it back (a decision)."""
    concept = get_object_or_404(Concept, pk=pk)
    form = ConceptStatusForm(request.POST)
    if not form.is_valid():
        messages.error(request, errors_in_words(form))
        return redirect(links.url("concept", pk))
    status = form.cleaned_data["action"]

    def change() -> str:
        mend.concept_update_by_hand(
            acting_user=request.user,
            concept_id=concept.pk,
            status=status,
            note=form.cleaned_data["note"],
        )
        if status == "retired":
            return f'"{concept.name}" retired; its names stay reserved for it.'
        return f'"{concept.name}" is active again.'

    _tell(request, change)
    return redirect(links.url("concept", pk))


@require_POST
@login_required
@curator_required
def concept_names(request: HttpRequest, pk: int) -> HttpResponse:
    """Rename a concept, add an alias, or take one off (each a decision)."""
    concept = get_object_or_404(Concept, pk=pk)
    form = ConceptNamesForm(request.POST)
    if not form.is_valid():
        messages.error(request, errors_in_words(form))
        return redirect(links.url("concept", pk))
    action, name = form.cleaned_data["action"], form.cleaned_data["name"]

    def change() -> str:
        if action == "rename":
            mend.concept_update_by_hand(acting_user=request.user, concept_id=pk, name=name)
            return f'Renamed "{concept.name}" to "{name}"; the old name stays as an alias.'
        if action == "add_alias":
            mend.concept_update_by_hand(acting_user=request.user, concept_id=pk, add_aliases=[name])
            return f'"{name}" is now also a name of "{concept.name}".'
        mend.concept_update_by_hand(acting_user=request.user, concept_id=pk, remove_aliases=[name])
        return f'"{name}" is no longer a name of "{concept.name}"; the name is free again.'

    _tell(request, change)
    return redirect(links.url("concept", pk))


@require_POST
@login_required
@curator_required
def concept_type(request: HttpRequest, pk: int) -> HttpResponse:
    """Give a concept a type, or take its type away (a decision, kept in its history)."""
    concept = get_object_or_404(Concept, pk=pk)
    form = ConceptTypeForm(request.POST)
    form.is_valid()  # both fields are optional; the service judges the key
    type_key = form.cleaned_data.get("type_key", "")

    def change() -> str:
        mend.concept_update_by_hand(
            acting_user=request.user,
            concept_id=concept.pk,
            type_key=type_key,
            note=form.cleaned_data.get("note", ""),
        )
        if type_key:
            return f'"{concept.name}" is now a "{type_key}".'
        return f'"{concept.name}" has no type now.'

    _tell(request, change)
    return redirect(links.url("concept", pk))


@require_http_methods(["GET", "POST"])
@login_required
@curator_required
def concept_merge(request: HttpRequest, pk: int) -> HttpResponse:
    """Merge this concept with another the curator picks, choosing which one survives,
    with both shown side by side as on a merge proposal's card."""
    concept = get_object_or_404(Concept, pk=pk)
    form = ConceptMergeForm(request.POST if request.method == "POST" else request.GET)
    form.is_valid()  # every field is optional; what is missing is said below
    data = form.cleaned_data
    other_id = data["other_id"]
    other = Concept.objects.filter(pk=other_id).first() if other_id else None
    context = {"concept": concept, "other": other, "query": data["query"]}
    if other is not None:
        if other.pk == concept.pk:
            context["error"] = "Choose another concept than this one."
            context["other"] = None
        else:
            context["sides"] = merge_sides({"this": concept, "other": other})
    elif data["target_name"]:
        context["error"] = "Pick the other concept from the list (↓ then Enter)."
    elif request.method == "POST":
        context["error"] = "Pick the concept to merge with this one (type its name)."
    if request.method == "GET" or "error" in context or context.get("other") is None:
        status = 400 if request.method == "POST" else 200
        return render(request, "review/concept_merge.html", context, status=status)
    survivor_id = data["survivor"]
    if survivor_id not in (concept.pk, other.pk):
        context["error"] = "Choose which of the two concepts to keep."
        return render(request, "review/concept_merge.html", context, status=400)
    loser_id = other.pk if survivor_id == concept.pk else concept.pk
    try:
        out = mend.concepts_merge_by_hand(
            acting_user=request.user,
            survivor_id=survivor_id,
            loser_id=loser_id,
            note=data["note"],
        )
    except DomainError as exc:
        return form_refused(request, "review/concept_merge.html", context, _own(exc))
    survivor = out.concepts[0]
    moved = len(out.edges)
    messages.success(
        request,
        f'Merged into "{survivor.name}": its names and {moved} edge{"s" if moved != 1 else ""} '
        "moved over. Undo it from this page or from the Review page (u).",
    )
    return redirect(links.url("concept", survivor.pk))


@require_POST
@login_required
@curator_required
def concept_unmerge(request: HttpRequest, pk: int) -> HttpResponse:
    def split() -> str:
        concept = undo.merge_undo(loser_id=pk, acting_user=request.user)
        return f'"{concept.name}" is a concept of its own again.'

    _tell(request, split)
    return redirect(links.url("concept", pk))
