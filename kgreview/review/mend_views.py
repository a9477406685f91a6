"""Pages for mending the graph by hand. Thin: parse, call a ``mend`` service, redirect.

Every action here becomes a decision by the signed-in person (see ``review.mend``), so it
appears in the decision log and the edge's life, and can be undone from the Review page.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from kgreview.core.errors import DomainError, NotFound, ValidationFailed
from kgreview.core.markup import locate_quote
from kgreview.core.permissions import curator_required, decide_required
from kgreview.graph.models import Concept, Edge, RelationType, SourceRevision
from kgreview.graph.services import Evidence

from . import decisions, mend, undo
from .card_parts import merge_sides
from .forms import clean_text, end_choice
from .forms import parse_float as _float
from .forms import parse_id as _int
from .outcome import ProposalStale


def _words(exc: DomainError) -> str:
    """The refusal in words, without the queue's "cannot apply it as it stands" preamble."""
    if isinstance(exc, ProposalStale) and isinstance(exc.__cause__, DomainError):
        return str(exc.__cause__)
    return str(exc)


def _tell(request, do, done, *, raise_as: tuple = ()) -> None:
    """Do ``do()`` and tell the person how it went: ``done(its result)`` in words, or why
    it was refused. A refusal of a type named in ``raise_as`` ((error, HTTP error) pairs)
    is answered with that HTTP error instead."""
    try:
        result = do()
    except DomainError as exc:
        for error, answer in raise_as:
            if isinstance(exc, error):
                raise answer(str(exc)) from exc
        messages.error(request, _words(exc))
    else:
        messages.success(request, done(result))


# --- Edges ------------------------------------------------------------------------------


def _evidence_from(source) -> tuple[Evidence | None, str]:
    """Evidence picked on a source page: a revision and the selected text (located in the
    revision's text), or explicit offsets. Returns the evidence and any problem in words."""
    revision_id = _int(source.get("revision"))
    if not revision_id:
        return None, ""
    revision = SourceRevision.objects.select_related("source").filter(pk=revision_id).first()
    if revision is None:
        return None, f"There is no source revision #{revision_id}."
    start, end = _int(source.get("start")), _int(source.get("end"))
    selected = str(source.get("quote", "")).replace("\x00", "")
    if start is None or end is None:
        if not selected.strip():
            return None, "Select the sentence that supports the edge on the source page."
        found = locate_quote(
            revision.text,
            selected,
            before=str(source.get("before", "")),
            plain=revision.text_format == SourceRevision.TextFormat.PLAIN,
        )
        if found is None:
            return None, "The selected text was not found in that revision; select it again."
        start, end = found
    if not 0 <= start < end <= len(revision.text):
        return None, "The selected text lies outside the revision."
    quote = revision.text[start:end]
    return Evidence(revision=revision, start=start, end=end, quote=quote), ""


@require_http_methods(["GET", "POST"])
@login_required
@decide_required
def edge_add(request: HttpRequest) -> HttpResponse:
    """Add an edge the agents missed: two concepts, a relation, a reason, and optionally
    the quote that supports it (picked by selecting text on a source page)."""
    source = request.POST if request.method == "POST" else request.GET
    evidence, problem = _evidence_from(source)
    context = {
        "relations": RelationType.objects.filter(active=True).order_by("key"),
        "evidence": evidence,
        "evidence_problem": problem,
        "values": {
            "relation": source.get("relation", ""),
            "note": clean_text(source.get("note", "")),
            "confidence": source.get("confidence", "1.0"),
        },
        "ends": {},
    }
    for role in ("source", "target"):
        picked = _int(source.get(f"{role}_concept_id"))
        concept = Concept.objects.filter(pk=picked).first() if picked else None
        context["ends"][role] = {
            "name": concept.name if concept else clean_text(source.get(f"{role}_name", ""), 200),
            "concept_id": concept.pk if concept else "",
            "proposal_id": source.get(f"{role}_proposal_id", ""),
            "create": source.get(f"{role}_create", ""),
        }
    if request.method == "GET":
        return render(request, "review/edge_add.html", context)
    try:
        if problem:
            raise ValidationFailed(problem)
        confidence = _float(source.get("confidence")) if source.get("confidence") else 1.0
        choice = {role: end_choice(request.POST, role) for role in ("source", "target")}
        if choice["source"] is None or choice["target"] is None:
            raise ValidationFailed("Pick a concept for both ends.")
        out = mend.edge_add_by_hand(
            user=request.user,
            source=choice["source"],
            target=choice["target"],
            relation=source.get("relation", ""),
            note=source.get("note", ""),
            evidence=evidence,
            confidence=confidence if confidence is not None else 1.0,
        )
    except ValueError:
        context["error"] = "Confidence must be a number between 0 and 1."
        return render(request, "review/edge_add.html", context, status=400)
    except decisions.NotAllowed as exc:
        raise PermissionDenied(str(exc)) from exc
    except DomainError as exc:
        context["error"] = _words(exc)
        return render(request, "review/edge_add.html", context, status=400)
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
    _tell(
        request,
        lambda: mend.edge_retire_by_hand(
            user=request.user, edge_id=edge.pk, note=request.POST.get("note", "")
        ),
        lambda _: f"Edge #{edge.pk} retired. Its history stays on this page.",
        raise_as=((decisions.NotAllowed, PermissionDenied),),
    )
    return redirect("review:edge", pk=edge.pk)


# --- Concepts ---------------------------------------------------------------------------


@require_POST
@login_required
@curator_required
def concept_status(request: HttpRequest, pk: int) -> HttpResponse:
    """Retire a concept that should not be in the graph, or bring it back (a decision)."""
    concept = get_object_or_404(Concept, pk=pk)
    action = request.POST.get("action")
    status = {"retire": "retired", "reactivate": "active"}.get(action)

    def change() -> str:
        if status is None:
            raise ValidationFailed("Choose retire or reactivate.")
        mend.concept_update_by_hand(
            user=request.user,
            concept_id=concept.pk,
            status=status,
            note=request.POST.get("note", ""),
        )
        if status == "retired":
            return f'"{concept.name}" retired; its names stay reserved for it.'
        return f'"{concept.name}" is active again.'

    _tell(request, change, str)
    return redirect("concept-detail", pk=pk)


@require_POST
@login_required
@curator_required
def concept_names(request: HttpRequest, pk: int) -> HttpResponse:
    """Rename a concept, add an alias, or take one off (each a decision)."""
    concept = get_object_or_404(Concept, pk=pk)
    action = request.POST.get("action")
    name = clean_text(request.POST.get("name", ""), 300)

    def change() -> str:
        if action == "rename":
            if not name:
                raise ValidationFailed("Type the new name.")
            mend.concept_update_by_hand(user=request.user, concept_id=pk, name=name)
            return f'Renamed "{concept.name}" to "{name}"; the old name stays as an alias.'
        if action == "add_alias":
            if not name:
                raise ValidationFailed("Type the alias to add.")
            mend.concept_update_by_hand(user=request.user, concept_id=pk, add_aliases=[name])
            return f'"{name}" is now also a name of "{concept.name}".'
        if action == "remove_alias":
            mend.concept_update_by_hand(user=request.user, concept_id=pk, remove_aliases=[name])
            return f'"{name}" is no longer a name of "{concept.name}"; the name is free again.'
        raise ValidationFailed("Choose rename, add an alias or remove one.")

    _tell(request, change, str)
    return redirect("concept-detail", pk=pk)


@require_http_methods(["GET", "POST"])
@login_required
@curator_required
def concept_merge(request: HttpRequest, pk: int) -> HttpResponse:
    """Merge this concept with another the curator picks, choosing which one survives,
    with both shown side by side as on a merge proposal's card."""
    concept = get_object_or_404(Concept, pk=pk)
    source = request.POST if request.method == "POST" else request.GET
    other_id = _int(source.get("target_concept_id")) or _int(source.get("other"))
    other = Concept.objects.filter(pk=other_id).first() if other_id else None
    context = {
        "concept": concept,
        "other": other,
        "query": clean_text(source.get("target_name", "")),
    }
    if other is not None:
        if other.pk == concept.pk:
            context["error"] = "Choose another concept than this one."
            context["other"] = None
        else:
            context["sides"] = merge_sides({"this": concept, "other": other})
    elif source.get("target_name"):
        context["error"] = "Pick the other concept from the list (↓ then Enter)."
    if request.method == "GET" or "error" in context or context.get("other") is None:
        status = 400 if request.method == "POST" else 200
        return render(request, "review/concept_merge.html", context, status=status)
    survivor_id = _int(request.POST.get("survivor"))
    if survivor_id not in (concept.pk, other.pk):
        context["error"] = "Choose which of the two concepts to keep."
        return render(request, "review/concept_merge.html", context, status=400)
    loser_id = other.pk if survivor_id == concept.pk else concept.pk
    try:
        out = mend.concepts_merge_by_hand(
            user=request.user,
            survivor_id=survivor_id,
            loser_id=loser_id,
            note=request.POST.get("note", ""),
        )
    except DomainError as exc:
        context["error"] = _words(exc)
        return render(request, "review/concept_merge.html", context, status=400)
    survivor = out.concepts[0]
    moved = len(out.edges)
    messages.success(
        request,
        f'Merged into "{survivor.name}": its names and {moved} edge{"s" if moved != 1 else ""} '
        "moved over. Undo it from this page or from the Review page (u).",
    )
    return redirect("concept-detail", pk=survivor.pk)


@require_POST
@login_required
@curator_required
def concept_unmerge(request: HttpRequest, pk: int) -> HttpResponse:
    _tell(
        request,
        lambda: undo.merge_undo(loser_id=pk, user=request.user),
        lambda concept: f'"{concept.name}" is a concept of its own again.',
        raise_as=((NotFound, Http404),),
    )
    return redirect(reverse("concept-detail", args=[pk]))
