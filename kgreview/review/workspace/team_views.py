"""Team review's pages: the lease heartbeat, assignments and everyone's progress."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from kgreview.core import links
from kgreview.core.errors import DomainError, NotFound
from kgreview.core.forms import parse_finite, parse_row_id
from kgreview.core.permissions import decide_required, is_curator
from kgreview.graph.models import RelationType
from kgreview.review.models import Assignment
from kgreview.review.team import assignments, doubling, leases
from kgreview.review.workspace import selectors
from kgreview.review.workspace.forms import AssignmentForm


@require_POST
@login_required
@decide_required
def lease_renew(request: HttpRequest) -> HttpResponse:
    """The card page's heartbeat: the reviewer is still reading, keep their cards."""
    leases.renew(request.user)
    return HttpResponse(status=204)


def _assignee_choices():
    """Who work can go to: each person who decides, and the two deciding groups."""
    people = (
        get_user_model()
        .objects.filter(is_active=True, groups__name__in=("reviewer", "curator"))
        .distinct()
        .order_by("username")
    )
    groups = Group.objects.filter(name__in=("reviewer", "curator")).order_by("name")
    return [(f"u:{u.pk}", u.get_username()) for u in people] + [
        (f"g:{g.pk}", f"everyone in {g.name}s") for g in groups
    ]


@require_http_methods(["GET", "POST"])
@login_required
@decide_required
def team(request: HttpRequest) -> HttpResponse:
    """Assignments and progress: a curator shares the queue out and sees everyone's; a
    reviewer sees their own."""
    curator = is_curator(request.user)
    error = ""
    form = AssignmentForm(request.POST or None, initial={"query": request.GET.get("q", "")})
    if request.method == "POST":
        if not curator:
            raise PermissionDenied("Only curators assign work.")
        if "share_relation" in request.POST:
            error = _set_share(request)
            if not error:
                if request.POST.get("next") == "ontology":  # saved from the Ontology page
                    return redirect(links.url("ontology"))
                return redirect(reverse("review:team") + "#double-review")
        elif "close" in request.POST:
            try:
                closing = parse_row_id(request.POST["close"])
                if closing is None:
                    raise NotFound("There is no such assignment: pick one from the list.")
                closed = assignments.assignment_close(
                    acting_user=request.user, assignment_id=closing
                )
            except DomainError as exc:
                error = str(exc)
            else:
                messages.success(request, f"Closed “{closed.name}”.")
                return redirect("review:team")
        elif form.is_valid():
            data = form.cleaned_data
            try:
                made = assignments.assignment_create(
                    acting_user=request.user,
                    name=data["name"],
                    query=data["query"],
                    user_id=data["user_id"],
                    group_id=data["group_id"],
                    target=data["target"],
                )
            except DomainError as exc:
                error = str(exc)
            else:
                messages.success(
                    request, f"Assigned “{made.name}” to {assignments.assignee_words(made)}."
                )
                return redirect("review:team")
        else:
            error = form.error_words()
    if curator:
        rows = Assignment.objects.filter(closed_at__isnull=True).select_related("user", "group")
        shown = [(a, assignments.progress(a)) for a in rows.order_by("id")]
    else:
        shown = [
            (a, assignments.progress(a, only_user=request.user))
            for a in assignments.open_for(request.user)
        ]
    context = {
        "rows": shown,
        "curator": curator,
        "form": form,
        "choices": _assignee_choices() if curator else [],
        "error": error,
        "working": leases.working_now() if curator else [],
        "adjudication": selectors.adjudication_count() if curator else 0,
        "doubling": _doubling_rows() if curator else [],
        "default_share": doubling.global_share(),
    }
    status = 400 if error and request.method == "POST" else 200
    return render(request, "review/team.html", context, status=status)


def _doubling_rows() -> list[dict]:
    """Each active relation type with its double-review share and agreement flag."""
    own = doubling.shares()
    rows = []
    for relation in RelationType.objects.filter(active=True).order_by("key"):
        row = own.get(relation.pk)
        share = row.share if row is not None else None
        rows.append(
            {
                "relation": relation,
                "share": share,
                "effective": share if share is not None else doubling.global_share(),
                "low": bool(row is not None and row.low_agreement),
            }
        )
    return rows


def _set_share(request: HttpRequest) -> str:
    """A curator's share for one relation type ("" follows the default); words if refused."""
    relation = RelationType.objects.filter(key=request.POST.get("share_relation", "")).first()
    if relation is None:
        return "There is no such relation type."
    raw = (request.POST.get("share") or "").strip().rstrip("%").strip()
    share = None
    if raw:
        number = parse_finite(raw)
        if number is None:
            return f"A share is a percentage from 0 to 100, not “{raw[:40]}”."
        share = number / 100.0
    try:
        doubling.set_share(relation=relation, share=share, acting_user=request.user)
    except DomainError as exc:
        return str(exc).replace("a number between 0 and 1", "a percentage from 0 to 100")
    messages.success(request, f"Double review of {relation.key} saved.")
    return ""
