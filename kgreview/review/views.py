"""The reviewer workspace. Thin views: parse, check the role, call a service, render.

Every decision is one POST. With htmx it answers with the next card (and a toast, swapped
out of band); without JavaScript it redirects to the next card, so accept and reject
work from a plain form too.
"""

from __future__ import annotations

import uuid
from datetime import date
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from kgreview.core.errors import DomainError, NotFound
from kgreview.core.permissions import can_decide, decide_required, is_curator, view_required
from kgreview.graph import search as graph_search
from kgreview.graph.models import RelationType

from . import decisions, selectors
from .decisions import REJECT_REASONS, AlreadyDecided, EdgeEdits, VersionChanged
from .models import Proposal


def _filter_from(request: HttpRequest, source: QueryDict | None = None):
    query = source if source is not None else request.GET
    if "q" in query:  # a decision form carries the queue filter as one encoded string
        query = QueryDict(query.get("q", ""))
    return selectors.QueueFilter.from_query(query)


def _focus_url(f: selectors.QueueFilter, **extra) -> str:
    params = f.params() + [(k, str(v)) for k, v in extra.items() if v not in (None, "")]
    return reverse("review:focus") + ("?" + urlencode(params) if params else "")


def _undo_list(user, hint):
    """The newest undoable batch: known already after a decision, else read (one query)."""
    if hint is not None:
        return [hint]
    return decisions.undoable_batches(reviewer=user, limit=1) if can_decide(user) else []


def _card_context(request, card, f, *, cursor: str, notice: str = "", error: str = "", undo=None):
    user = request.user
    proposal = card.proposal
    return {
        "card": card,
        "p": proposal,
        "filter": f,
        "q": f.query(),
        "cursor": cursor,
        "can_decide": can_decide(user)
        and (proposal.kind not in decisions.CURATOR_KINDS or is_curator(user)),
        "reject_reasons": REJECT_REASONS,
        "relations": RelationType.objects.filter(active=True).order_by("key"),
        "notice": notice,
        "error": error,
        "undo": _undo_list(user, undo),
    }


def _render_card(request, proposal, f, *, notice="", error="", status=200, undo=None):
    if proposal is None:
        return render(
            request,
            "review/focus.html#card",
            {
                "p": None,
                "filter": f,
                "q": f.query(),
                "notice": notice,
                "error": error,
                "undo": _undo_list(request.user, undo),
            },
            status=status,
        )
    card = selectors.proposal_card(proposal)
    ctx = _card_context(
        request,
        card,
        f,
        cursor=selectors.cursor_of(proposal, f.sort),
        notice=notice,
        error=error,
        undo=undo,
    )
    return render(request, "review/focus.html#card", ctx, status=status)


# --- Reading ----------------------------------------------------------------------------


@require_GET
@login_required
@view_required
def queue(request: HttpRequest) -> HttpResponse:
    f, errors = _filter_from(request)
    page = selectors.queue_page(f, after=request.GET.get("after"), before=request.GET.get("before"))
    context = {
        "filter": f,
        "q": f.query(),
        "errors": errors,
        "page": page,
        "counts": None,  # filled in by a second, cached request (queue_counts)
        "kinds": Proposal.Kind.choices,
        "statuses": selectors.STATUS_CHOICES,
        "flags": selectors.FLAGS,
        "relations": RelationType.objects.order_by("key"),
        "can_decide": can_decide(request.user),
        "reject_reasons": REJECT_REASONS,
        "undo": _undo_list(request.user, None),
    }
    template = "review/queue.html#queue-results" if request.htmx else "review/queue.html"
    return render(request, template, context)


@require_GET
@login_required
@view_required
def queue_counts(request: HttpRequest) -> HttpResponse:
    """Facet counts and totals for a filter, loaded after the page (and cached until the
    queue changes), so a page of 100,000 proposals never waits on counting them."""
    f, _ = _filter_from(request)
    counts = selectors.queue_counts_cached(f)
    if request.GET.get("only") == "total":
        return render(
            request,
            "review/focus.html#focus-count",
            {"total": counts["total"], "filter": f, "q": f.query()},
        )
    context = {
        "filter": f,
        "q": f.query(),
        "counts": counts,
        "kinds": Proposal.Kind.choices,
        "statuses": selectors.STATUS_CHOICES,
        "flags": selectors.FLAGS,
        "relations": RelationType.objects.order_by("key"),
        # Only deciders have the bulk bar whose count is swapped out of band.
        "can_decide": can_decide(request.user),
    }
    return render(request, "review/queue.html#counts-response", context)


@require_GET
@login_required
@view_required
def focus(request: HttpRequest) -> HttpResponse:
    f, errors = _filter_from(request)
    if request.GET.get("id"):
        try:
            proposal = Proposal.objects.select_related(*selectors.CARD_RELATED).get(
                pk=int(request.GET["id"])
            )
        except (ValueError, Proposal.DoesNotExist):
            raise Http404("No such proposal.") from None
    else:
        proposal = selectors.next_in_queue(
            f, after=request.GET.get("after"), before=request.GET.get("before")
        )
    if request.htmx:
        return _render_card(request, proposal, f, error=" ".join(errors))
    context = {"filter": f, "q": f.query(), "errors": errors, "p": proposal}
    if proposal is not None:
        context.update(
            _card_context(
                request,
                selectors.proposal_card(proposal),
                f,
                cursor=selectors.cursor_of(proposal, f.sort),
            )
        )
    else:
        context["undo"] = _undo_list(request.user, None)
    context["total"] = None  # filled in by a second, cached request
    return render(request, "review/focus.html", context)


@require_GET
@login_required
@view_required
def proposal_detail(request: HttpRequest, pk: int) -> HttpResponse:
    get_object_or_404(Proposal, pk=pk)
    query = request.GET.copy()
    query["id"] = str(pk)
    return redirect(reverse("review:focus") + "?" + query.urlencode())


# --- Deciding ---------------------------------------------------------------------------


def _version(request) -> int | None:
    raw = request.POST.get("version", "")
    return int(raw) if raw.isdigit() else None


def _after_decision(request, f, cursor: str, *, notice: str, outcome=None):
    """Show the next card (htmx) or go there (plain form)."""
    if request.htmx:
        proposal = selectors.next_in_queue(f, after=cursor)
        hint = None
        if outcome is not None:
            hint = {"batch": outcome.batch, "decisions": outcome.decisions}
        return _render_card(request, proposal, f, notice=notice, undo=hint)
    messages.success(request, notice)
    return redirect(_focus_url(f, after=cursor))


def _refused(request, f, proposal_id: int, cursor: str, exc: DomainError):
    """A decision that could not be taken: say why, in words, and show what is true now."""
    if isinstance(exc, AlreadyDecided):
        # Someone else decided it: move on, and say who and when.
        if request.htmx:
            return _render_card(
                request, selectors.next_in_queue(f, after=cursor), f, error=str(exc)
            )
        messages.error(request, str(exc))
        return redirect(_focus_url(f, after=cursor))
    if request.htmx:
        proposal = (
            Proposal.objects.select_related(*selectors.CARD_RELATED).filter(pk=proposal_id).first()
        )
        status = 200 if isinstance(exc, VersionChanged) else 409
        return _render_card(request, proposal, f, error=str(exc), status=status)
    messages.error(request, str(exc))
    return redirect(_focus_url(f, id=proposal_id))


@require_POST
@login_required
@decide_required
def accept(request: HttpRequest, pk: int) -> HttpResponse:
    f, _ = _filter_from(request, request.POST)
    cursor = request.POST.get("cursor", "")
    try:
        if request.POST.get("over_conflicts"):
            out = decisions.proposal_accept_over_conflicts(
                proposal_id=pk, reviewer=request.user, version=_version(request)
            )
        else:
            out = decisions.proposal_accept(
                proposal_id=pk,
                reviewer=request.user,
                version=_version(request),
                note=request.POST.get("note", ""),
                merge_survivor=_int(request.POST.get("survivor")),
            )
    except decisions.NotAllowed as exc:
        raise PermissionDenied(str(exc)) from exc
    except NotFound as exc:
        raise Http404(str(exc)) from exc
    except DomainError as exc:
        return _refused(request, f, pk, cursor, exc)
    extra = ""
    if out.also_decided:
        extra = f" (and {len(out.also_decided)} concept proposal(s) it needed)"
    return _after_decision(request, f, cursor, notice=f"Accepted #{pk}{extra}.", outcome=out)


@require_POST
@login_required
@decide_required
def reject(request: HttpRequest, pk: int) -> HttpResponse:
    f, _ = _filter_from(request, request.POST)
    cursor = request.POST.get("cursor", "")
    reason = request.POST.get("reason_code", "")
    try:
        out = decisions.proposal_reject(
            proposal_id=pk,
            reviewer=request.user,
            reason_code=reason,
            note=request.POST.get("note", ""),
            version=_version(request),
        )
    except decisions.NotAllowed as exc:
        raise PermissionDenied(str(exc)) from exc
    except NotFound as exc:
        raise Http404(str(exc)) from exc
    except DomainError as exc:
        return _refused(request, f, pk, cursor, exc)
    label = REJECT_REASONS.get(reason, reason).lower()
    return _after_decision(request, f, cursor, notice=f"Rejected #{pk}: {label}.", outcome=out)


def _float(value: str | None) -> float | None:
    if value is None or not value.strip():
        return None
    return float(value)


def _int(value: str | None) -> int | None:
    return int(value) if value and value.strip().isdigit() else None


@require_http_methods(["GET", "POST"])
@login_required
@decide_required
def edit(request: HttpRequest, pk: int) -> HttpResponse:
    proposal = get_object_or_404(
        Proposal.objects.select_related(*selectors.CARD_RELATED),
        pk=pk,
    )
    source = request.POST if request.method == "POST" else request.GET
    f, _ = _filter_from(request, source)
    cursor = source.get("cursor", "")
    if proposal.kind != Proposal.Kind.ADD_EDGE:
        return _refused(
            request,
            f,
            pk,
            cursor,
            DomainError("Only edge proposals can be edited before accepting."),
        )
    if request.method == "GET":
        card = selectors.proposal_card(proposal)
        ctx = _card_context(request, card, f, cursor=cursor)
        ctx["editing"] = True
        template = "review/focus.html#card" if request.htmx else "review/focus.html"
        if not request.htmx:
            ctx["total"] = None
        return render(request, template, ctx)
    try:
        edits = EdgeEdits(
            relation=request.POST.get("relation") or None,
            swap_direction=bool(request.POST.get("swap")),
            source_concept_id=_int(request.POST.get("source_concept_id")),
            target_concept_id=_int(request.POST.get("target_concept_id")),
            source_name=request.POST.get("source_name") or None,
            target_name=request.POST.get("target_name") or None,
            confidence=_float(request.POST.get("confidence")),
            weight=_float(request.POST.get("weight")),
        )
    except ValueError:
        return _refused(
            request, f, pk, cursor, DomainError("Confidence and weight must be numbers.")
        )
    try:
        out = decisions.proposal_edit_accept(
            proposal_id=pk,
            reviewer=request.user,
            edits=edits,
            version=_version(request),
            note=request.POST.get("note", ""),
        )
    except decisions.NotAllowed as exc:
        raise PermissionDenied(str(exc)) from exc
    except DomainError as exc:
        return _refused(request, f, pk, cursor, exc)
    return _after_decision(request, f, cursor, notice=f"Edited and accepted #{pk}.", outcome=out)


@require_POST
@login_required
@decide_required
def undo(request: HttpRequest) -> HttpResponse:
    f, _ = _filter_from(request, request.POST)
    raw = request.POST.get("batch", "")
    try:
        batch = uuid.UUID(raw)
    except ValueError:
        recent = decisions.undoable_batches(reviewer=request.user, limit=1)
        if not recent:
            error = "There is nothing of yours to undo."
            if request.htmx:
                return _render_card(request, selectors.next_in_queue(f), f, error=error)
            messages.error(request, error)
            return redirect(_focus_url(f))
        batch = recent[0]["batch"]
    try:
        undone = decisions.decisions_undo(reviewer=request.user, batch=batch)
    except decisions.NotAllowed as exc:
        raise PermissionDenied(str(exc)) from exc
    except DomainError as exc:
        if request.htmx:
            return _render_card(request, selectors.next_in_queue(f), f, error=str(exc))
        messages.error(request, str(exc))
        return redirect(_focus_url(f))
    ids = ", ".join(f"#{d.proposal_id}" for d in undone)
    notice = f"Undone: {ids} back in the queue."
    # Show the proposal that came back first, so it can be decided again at once.
    first = undone[-1].proposal_id if undone else None
    if request.htmx:
        proposal = Proposal.objects.select_related(*selectors.CARD_RELATED).filter(pk=first).first()
        return _render_card(request, proposal, f, notice=notice)
    messages.success(request, notice)
    return redirect(_focus_url(f, id=first))


# --- Bulk -------------------------------------------------------------------------------


def _bulk_ids(request, f) -> list[int]:
    if request.POST.get("scope") == "filter":
        return list(
            selectors.queue_queryset(f)
            .order_by(*selectors._order(f.sort))
            .values_list("pk", flat=True)[: decisions.BULK_LIMIT + 1]
        )
    ids = []
    for raw in request.POST.getlist("ids"):
        if raw.isdigit():
            ids.append(int(raw))
    return ids


@require_POST
@login_required
@decide_required
def bulk(request: HttpRequest) -> HttpResponse:
    """Preview (a dry run of every decision) then apply, as one undoable batch."""
    f, _ = _filter_from(request, request.POST)
    action = request.POST.get("action", "")
    reason = request.POST.get("reason_code", "")
    ids = _bulk_ids(request, f)
    step = request.POST.get("step", "preview")
    context = {
        "filter": f,
        "q": f.query(),
        "action": action,
        "reason_code": reason,
        "ids": ids,
        "reject_reasons": REJECT_REASONS,
    }
    if not ids:
        context["error"] = "Select at least one proposal, or choose everything that matches."
    elif len(ids) > decisions.BULK_LIMIT:
        context["error"] = (
            f"More than {decisions.BULK_LIMIT} proposals match; narrow the filter first."
        )
    elif action not in ("accept", "reject"):
        context["error"] = "Choose accept or reject."
    elif action == "reject" and reason not in REJECT_REASONS:
        context["error"] = "Choose a reason for rejecting."
    else:
        try:
            result = decisions.proposals_bulk_decide(
                reviewer=request.user,
                proposal_ids=ids,
                action=action,
                reason_code=reason,
                note=request.POST.get("note", ""),
                dry_run=step != "apply",
            )
        except DomainError as exc:
            context["error"] = str(exc)
        else:
            context["result"] = result
            context["applied"] = step == "apply"
            shown = result.refused[:50]
            found = Proposal.objects.only("id").in_bulk([pid for pid, _ in shown])
            context["refused"] = [(found.get(pid), reason_text) for pid, reason_text in shown]
    template = "review/bulk.html#bulk-panel" if request.htmx else "review/bulk.html"
    return render(request, template, context, status=400 if "error" in context else 200)


# --- Look-ups and history ---------------------------------------------------------------


@require_GET
@login_required
@view_required
def concept_search(request: HttpRequest) -> HttpResponse:
    """Concepts whose name or alias looks like ``q``: exact, prefix, then fuzzy matches."""
    role = request.GET.get("role", "target")
    if role not in ("source", "target"):
        role = "target"
    raw = request.GET.get("q") or request.GET.get(f"{role}_name") or ""
    q = " ".join(raw.split())[:100]
    results = [
        (hit.concept.pk, hit.concept.name, hit.matched_name)
        for hit in graph_search.concept_search(q=q, limit=10)
    ]
    return render(
        request,
        "review/focus.html#concept-options",
        {"results": results, "q": q, "role": role},
    )


@require_GET
@login_required
@view_required
def decision_log(request: HttpRequest) -> HttpResponse:
    reviewer = request.GET.get("reviewer", "").strip()
    errors = []

    def day(name: str) -> date | None:
        raw = request.GET.get(name, "").strip()
        if not raw:
            return None
        try:
            return date.fromisoformat(raw)
        except ValueError:
            errors.append(f"{raw!r} is not a date (use YYYY-MM-DD).")
            return None

    since, until = day("since"), day("until")
    rows = selectors.decision_log(reviewer=reviewer, since=since, until=until)
    reviewers = (
        get_user_model().objects.filter(decisions__isnull=False).distinct().order_by("username")
    )
    return render(
        request,
        "review/decisions.html",
        {
            "rows": rows,
            "reviewer": reviewer,
            "since": since,
            "until": until,
            "errors": errors,
            "reviewers": reviewers,
            "reject_reasons": REJECT_REASONS,
        },
    )


@require_GET
@login_required
@view_required
def edge_detail(request: HttpRequest, pk: int) -> HttpResponse:
    edge = get_object_or_404(selectors.life_rows(), pk=pk)
    return render(request, "review/edge.html", {"edge": edge, "life": selectors.edge_life(edge)})
