"""Views on batches of decisions: undo (one decision or a bulk batch) and bulk decisions.

Thin, like the card views they share helpers with: read the form, call ``undo`` or
``bulk``, show the card that was undone, or the bulk panel.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from kgreview.core.errors import DomainError
from kgreview.core.permissions import decide_required
from kgreview.core.refusals import form_refused
from kgreview.review.decide import bulk as bulk_service
from kgreview.review.decide import decisions
from kgreview.review.decide import undo as undo_service
from kgreview.review.decide.decisions import REJECT_REASONS
from kgreview.review.workspace import selectors
from kgreview.review.workspace.forms import BulkForm, UndoForm
from kgreview.review.workspace.views import (
    filter_from,
    focus_url,
    hidden_kinds_of,
    next_card,
    render_card,
    trail_text,
)


@require_POST
@login_required
@decide_required
def undo(request: HttpRequest) -> HttpResponse:
    """Undo a batch, then show the card that was undone (focus) or stay on the queue."""
    f, _ = filter_from(request, request.POST)
    form = UndoForm(request.POST)
    form.is_valid()  # no batch means the reviewer's latest; an unreadable one is refused
    trail = form.cleaned_data["trail"]
    back_to_queue = form.back_to_queue()
    if "batch" in form.errors:
        return _undo_refused(
            request, f, trail, " ".join(form.errors["batch"]), back_to_queue=back_to_queue
        )
    batch = form.cleaned_data["batch"]
    if batch is None:
        recent = undo_service.undoable_batches(user=request.user, limit=1)
        if not recent:
            return _undo_refused(request, f, trail, "There is nothing of yours to undo.")
        batch = recent[0].batch
    try:
        result = undo_service.decisions_undo(acting_user=request.user, batch=batch)
    except DomainError as exc:
        if isinstance(exc, decisions.NotAllowed):  # not theirs: a 403 (core.refusals)
            raise
        return _undo_refused(request, f, trail, str(exc), back_to_queue=back_to_queue)
    primary = result.primary
    verb = undo_service.UNDO_VERBS.get(primary[0].action, primary[0].action)
    if len(primary) == 1:
        notice = f"Undone: {verb} #{primary[0].proposal_id}"
    else:
        notice = f"Undone: the bulk {verb} of {len(primary)} proposals"
    rest = len(result.undone) - len(primary)
    if rest > 0:
        notice += f" and {rest} decision{'s' if rest > 1 else ''} taken with it"
    notice += "; back in the queue."
    if back_to_queue:
        messages.success(request, notice)
        return _to_queue(request, f)
    # Back to exactly the card that was undone, its place in the trail restored.
    first_id = result.first_proposal_id
    if first_id in trail:
        trail = trail[: trail.index(first_id)]
    if request.htmx:
        proposal = selectors.card_proposals().filter(pk=first_id).first()
        return render_card(request, proposal, f, trail=trail, notice=notice)
    messages.success(request, notice)
    return redirect(focus_url(f, id=first_id, trail=trail_text(trail)))


def _undo_refused(request, f, trail, words: str, *, back_to_queue: bool = False):
    if request.htmx and not back_to_queue:
        return render_card(request, next_card(request, f), f, trail=trail, error=words)
    messages.error(request, words)
    if back_to_queue:
        return _to_queue(request, f)
    return redirect(focus_url(f))


def _to_queue(request, f) -> HttpResponse:
    """Back to the queue under the same filter: a full page load, with htmx too."""
    url = reverse("review:queue") + (f"?{f.query()}" if f.query() else "")
    if request.htmx:
        return HttpResponseClientRedirect(url, status=204)
    return redirect(url)


# --- Bulk -------------------------------------------------------------------------------

BULK_PAGE = 50


def _bulk_ids(request, f, form: BulkForm) -> list[int]:
    if form.cleaned_data["scope"] == "filter":
        return list(
            selectors.queue_queryset(f)
            .exclude(kind__in=hidden_kinds_of(request.user))
            .order_by(*selectors._order(f.sort))
            .values_list("pk", flat=True)[: bulk_service.BULK_LIMIT + 1]
        )
    return form.cleaned_data["ids"]


@require_POST
@login_required
@decide_required
def bulk(request: HttpRequest) -> HttpResponse:
    """Preview (a dry run of every decision, listed item by item) then apply, as one
    undoable batch."""
    f, _ = filter_from(request, request.POST)
    form = BulkForm(request.POST)
    form.is_valid()  # every field is optional; the checks below say what is missing
    data = form.cleaned_data
    action, reason, note, step = data["action"], data["reason_code"], data["note"], data["step"]
    ids = _bulk_ids(request, f, form)
    context = {
        "filter": f,
        "q": f.query(),
        "action": action,
        "reason_code": reason,
        "note": note,
        "ids": ids,
        "reject_reasons": REJECT_REASONS,
    }
    if not ids:
        context["error"] = "Select at least one proposal, or choose everything that matches."
    elif len(ids) > bulk_service.BULK_LIMIT:
        context["error"] = (
            f"More than {bulk_service.BULK_LIMIT} proposals match; narrow the filter first."
        )
    elif action not in ("accept", "reject"):
        context["error"] = "Choose accept or reject."
    elif action == "reject" and reason not in REJECT_REASONS:
        context["error"] = "Choose a reason for rejecting."
    elif action == "reject" and reason == "other" and not note.strip():
        context["error"] = 'Say why in a few words when the reason is "other".'
    template = "review/bulk.html#bulk-panel" if request.htmx else "review/bulk.html"
    if "error" in context:
        return render(request, template, context, status=200 if request.htmx else 400)
    try:
        result = bulk_service.proposals_bulk_decide(
            acting_user=request.user,
            proposal_ids=ids,
            action=action,
            reason_code=reason,
            note=note,
            dry_run=step != "apply",
        )
    except DomainError as exc:
        # The panel says it in place of the listing (htmx swaps only a 200).
        return form_refused(request, template, context, exc, status=200 if request.htmx else None)
    context.update(selectors.bulk_listing(result, page=data["page"]))
    context["result"] = result
    context["applied"] = step == "apply"
    if context["applied"]:
        context["undo_words"] = (
            f"the bulk {action} of {len(result.done)} proposal"
            f"{'s' if len(result.done) != 1 else ''}"
        )
    return render(request, template, context)
