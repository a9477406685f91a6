"""The visual explorer and the changes page. Thin: the explorer view renders a shell and
the browser reads the graph from the read API with its session; the changes page is
rendered here from the graph's history."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET

from kgreview.core import links
from kgreview.core.errors import DomainError
from kgreview.core.permissions import view_required
from kgreview.core.refusals import form_refused
from kgreview.graph import history
from kgreview.graph.asking import ask_graph, question_max
from kgreview.graph.models import Concept
from kgreview.graph.selectors import with_survivors
from kgreview.graph.type_selectors import type_tree

from . import selectors
from .forms import AskForm, ChangesForm
from .suggestions import Suggestions, ask_suggestions, question_shapes

# How many concepts one drawing asks the API for; more would not read as a picture.
NODE_LIMIT = 150


def _shell(request: HttpRequest, concept: Concept | None) -> HttpResponse:
    first = selectors.first_edge_instant()
    relations = selectors.relation_palette()
    types = selectors.type_palette()
    api_base = links.url("api-relations").removesuffix("relations")
    return render(
        request,
        "explorer/explore.html",
        {
            "concept": concept,
            "relations": relations,
            "types": types,
            # The type filter's menu: each parent before its subtypes, indented.
            "type_menu": type_tree() if types else [],
            "first_edge_at": first,
            "now": timezone.now(),
            "starting_points": selectors.starting_points() if concept is None else [],
            "config": {
                "apiBase": api_base,
                "centre": None if concept is None else {"id": concept.pk, "name": concept.name},
                "firstEdgeAt": selectors.iso_ms(first, up=True) if first else None,
                "nodeLimit": NODE_LIMIT,
                # The API quotes this many characters either side of the evidence.
                "contextChars": history.CONTEXT_CHARS,
                "relations": relations,
                "types": types,
                "untypedColour": selectors.UNTYPED_COLOUR,
                "urls": {
                    "explore": reverse("explorer:home"),
                    "changes": reverse("explorer:changes"),
                    "concept": links.url("concept", 0).replace("/0/", "/{id}/"),
                    "edge": reverse("review:edge", args=[0]).replace("/0/", "/{id}/"),
                    "source": links.url("source", "slug").replace("/slug/", "/{slug}/"),
                },
            },
        },
    )


@require_GET
@login_required
@view_required
def home(request: HttpRequest) -> HttpResponse:
    """The explorer before a concept is chosen: search, and a few places to start."""
    return _shell(request, None)


@require_GET
@login_required
@view_required
def concept(request: HttpRequest, pk: int) -> HttpResponse:
    """The neighbourhood of one concept, drawn in the browser from the read API."""
    found = get_object_or_404(Concept.objects.select_related("merged_into"), pk=pk)
    with_survivors([found])
    return _shell(request, found)


@require_GET
@login_required
@view_required
def changes(request: HttpRequest) -> HttpResponse:
    """What changed in the graph between two instants (the last seven days by default)."""
    # Whole seconds, as the form shows them: sending the form back gives the same window.
    now = timezone.now().replace(microsecond=0) + timedelta(seconds=1)
    form = ChangesForm(request.GET, now=now)
    result = None
    error = "" if form.is_valid() else form.error_in_words()
    since, until = form.window
    if not error:
        result = selectors.changes_between(since=since, until=until, limit=selectors.DIFF_LIMIT)
    raw_since, raw_until = form.cleaned_data.get("since", ""), form.cleaned_data.get("until", "")
    local = timezone.get_current_timezone()
    context = {
        "error": error,
        "result": result,
        "since": since,
        "until": until,
        # A bad value goes back into its box as typed, so it can be corrected.
        "since_value": raw_since
        if error and raw_since
        else (timezone.localtime(since, local).strftime("%Y-%m-%dT%H:%M:%S") if since else ""),
        "until_value": raw_until
        if error and raw_until
        else (timezone.localtime(until, local).strftime("%Y-%m-%dT%H:%M:%S") if until else ""),
        "tz_name": timezone.get_current_timezone_name(),
    }
    template = "explorer/changes.html#diff-results" if request.htmx else "explorer/changes.html"
    return render(request, template, context, status=400 if error else 200)


@require_GET
@login_required
@view_required
def ask(request: HttpRequest) -> HttpResponse:
    """Ask the graph a question; the answer cites every hop's edge and evidence, with the
    plan and the critique that found it. Before a question, suggestions built from the
    graph's own concepts and relations. Works with and without htmx."""
    form = AskForm(request.GET)
    template = "explorer/ask.html#ask-results" if request.htmx else "explorer/ask.html"
    answer, error = None, ""
    if not form.is_valid():
        error = next(iter(form.errors.values()))[0]
    elif request.GET.get("q", "").strip():
        try:
            answer = ask_graph(form.cleaned_data["q"], at=form.cleaned_data["as_of"])
        except DomainError as exc:
            # The refusal is said where the answer would be, as a 400 even for a model
            # that is unavailable (503): htmx swaps a 400 in place, never a 5xx.
            context = _ask_context(request, form, None, refused=True)
            return form_refused(request, template, context, exc, status=400)
    elif "q" in request.GET:
        error = "Write a question first."
    context = _ask_context(request, form, answer, refused=bool(error))
    context["error"] = error
    return render(request, template, context, status=400 if error else 200)


def _ask_context(request: HttpRequest, form: AskForm, answer, *, refused: bool) -> dict:
    # Suggestions show where no answer and no error does (and name the empty box's example).
    suggestions = ask_suggestions() if answer is None and not refused else Suggestions()
    shapes = () if request.htmx else question_shapes()
    data = answer.as_json() if answer is not None else None
    found = data["answer"] if data else {"concept_ids": [], "concepts": []}
    return {
        "form": form,
        "q": request.GET.get("q", "")[: question_max() * 2],
        "as_of_value": request.GET.get("as_of", "")[:60],
        "answer": data,
        "concepts": list(zip(found["concept_ids"], found["concepts"], strict=True)),
        "suggestions": suggestions,
        "shapes": shapes,
        "placeholder": (suggestions.questions or shapes or ("",))[0],
        "question_max": question_max(),
        "tz_name": timezone.get_current_timezone_name(),
    }
