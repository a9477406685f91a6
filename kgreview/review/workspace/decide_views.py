"""The reviewer's decisions on one card: accept, reject, edit then accept.

Every decision is one POST, read through a form (``forms``). With htmx it answers with
the next card (and a toast, swapped out of band); without JavaScript it redirects to the
next card, so accept and reject work from a plain form too.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.module_loading import import_string
from django.views.decorators.http import require_http_methods, require_POST

from kgreview.core.errors import Busy, DomainError
from kgreview.core.forms import parse_row_id
from kgreview.core.permissions import decide_required
from kgreview.core.refusals import passes_on
from kgreview.review.decide import decisions, widen
from kgreview.review.decide import undo as undo_service
from kgreview.review.decide.decisions import REJECT_REASONS, AlreadyDecided, VersionChanged
from kgreview.review.kinds import KINDS, kind_of
from kgreview.review.kinds.base import NOT_EDITABLE, Kind
from kgreview.review.models import Proposal
from kgreview.review.workspace import card as card_reads
from kgreview.review.workspace import selectors
from kgreview.review.workspace.forms import (
    VERSION_UNREADABLE,
    AcceptForm,
    DecisionForm,
    RejectForm,
)
from kgreview.review.workspace.views import (
    card_context,
    filter_from,
    focus_url,
    next_card,
    render_card,
    serve,
    trail_of,
    trail_text,
)


def _after_decision(request, f, cursor: str, *, notice: str, outcome=None, decided=None):
    """Show the next card (htmx) or go there (plain form); the decided card joins the trail."""
    trail = trail_of(request.POST)
    if decided is not None:
        trail = [*trail, decided]
    if request.htmx:
        hint = undo_service.outcome_summary(outcome) if outcome is not None else None
        shown = parse_row_id(request.headers.get("X-KG-Prefetched", ""))
        if shown is not None and hint is not None and shown not in _closed_by(outcome):
            return _decided(request, f, trail=[*trail, shown], notice=notice, undo=hint)
        proposal, f = serve(request, f, after=cursor, moving=False)
        return render_card(request, proposal, f, trail=trail, notice=notice, undo=hint)
    messages.success(request, notice)
    return redirect(focus_url(f, after=cursor, trail=trail_text(trail)))


def _closed_by(outcome) -> set[int]:
    """The proposals a decision closed besides its own: the concepts accepted with an
    edge, the proposals it settled. A card the page holds ready that is among them is
    stale: the next card is found again."""
    closed = {p.pk for p in outcome.also_decided}
    closed |= {d.proposal_id for d in outcome.settled}
    return closed


def _decided(request, f, *, trail, notice: str, undo) -> HttpResponse:
    """The decision taken, when the page already shows the next card: it fetched that
    card while the reviewer read this one (``review.js``, "ahead") and put it up on the
    keypress. Only what changed is sent: the words and the undo button, for that card."""
    response = render(
        request,
        "review/focus.html#decided",
        {"notice": notice, "undo": [undo], "q": f.query(), "trail": trail_text(trail)},
    )
    response["X-KG-Decided"] = "1"
    return response


def _busy(request, f, proposal_id: int, trail, exc: Busy, **extra) -> HttpResponse:
    """Another decision held the same rows, every time it was tried: nothing changed. The
    same card again with the words, as a 409 (htmx swaps it in; a plain form gets the
    whole page), so pressing the same button tries again."""
    proposal = selectors.card_proposals().filter(pk=proposal_id).first()
    if request.htmx or proposal is None:
        return render_card(request, proposal, f, trail=trail, error=str(exc), status=409, **extra)
    card = card_reads.proposal_card(proposal)
    ctx = card_context(
        request,
        card,
        f,
        cursor=selectors.cursor_of(proposal, f.sort),
        trail=trail,
        error=str(exc),
        reject_reason=extra.pop("reject_reason", ""),
    )
    ctx.update(extra, total=None)
    return render(request, "review/focus.html", ctx, status=409)


def _refused(request, f, proposal_id: int, cursor: str, exc: DomainError, **extra):
    """A decision that could not be taken: say why, in words, and show what is true now."""
    trail = trail_of(request.POST if request.method == "POST" else request.GET)
    if isinstance(exc, Busy):
        return _busy(request, f, proposal_id, trail, exc, **extra)
    if isinstance(exc, AlreadyDecided):
        # Someone else decided it: move on, and say who and when.
        if request.htmx:
            return render_card(
                request, next_card(request, f, after=cursor), f, trail=trail, error=str(exc)
            )
        messages.error(request, str(exc))
        return redirect(focus_url(f, after=cursor, trail=trail_text(trail)))
    if request.htmx:
        proposal = selectors.card_proposals().filter(pk=proposal_id).first()
        # The card itself says why in words; a 4xx would only add a console error, since
        # htmx swaps it the same way.
        status = 200
        if isinstance(exc, VersionChanged) or (proposal and not kind_of(proposal).editable):
            extra.pop("editing", None)
            extra.pop("edit", None)
        if extra.get("editing") and proposal is not None:
            # The field the refusal is about: the card puts the reviewer back in it.
            extra["error_field"] = kind_of(proposal).refused_field(exc)
        return render_card(
            request, proposal, f, trail=trail, error=str(exc), status=status, **extra
        )
    messages.error(request, str(exc))
    return redirect(focus_url(f, id=proposal_id, trail=trail_text(trail)))


# A version the page sent that cannot be read (``_posted``): never taken as "no version".
UNREADABLE = object()


def _posted(request, form_class) -> tuple:
    """The queue's filter and the decision form's fields. The form reads leniently: its
    fields are optional, and what they must hold (a reason to reject) the service judges
    and says in its words."""
    f, _ = filter_from(request, request.POST)
    form = form_class(request.POST)
    form.is_valid()
    data = form.cleaned_data
    if "version" in form.errors:  # sent but unreadable: refused in ``_decide``
        data["version"] = UNREADABLE
    return f, data


def _decide(request, f, pk: int, cursor: str, service, version, *, refused=None, **details):
    """Take the decision ``service`` makes on proposal ``pk`` as this reviewer, at the
    ``version`` the card showed. Returns (its outcome, None), or (None, the page that says
    why it could not be taken, with ``refused`` passed on to it). A decision the person
    may not take (403) and a proposal that does not exist (404) are not the card's to say:
    they go on to ``core.refusals``."""
    if version is UNREADABLE:
        return None, _refused(request, f, pk, cursor, DomainError(VERSION_UNREADABLE))
    try:
        out = service(proposal_id=pk, acting_user=request.user, version=version, **details)
    except DomainError as exc:
        if passes_on(exc):
            raise
        return None, _refused(request, f, pk, cursor, exc, **(refused or {}))
    return out, None


def _accept_words(pk: int, out) -> str:
    words = f"Accepted #{pk}"
    if out.also_decided:
        names = ", ".join(f"“{p.payload.get('name', '')}”" for p in out.also_decided)
        words += f" with the concept{'s' if len(out.also_decided) > 1 else ''} {names}"
    if out.settled:
        words += f"; {len(out.settled)} other proposal{'s' if len(out.settled) > 1 else ''} settled"
    words += "."
    if out.message:
        words += " " + out.message
    return words


@require_POST
@login_required
@decide_required
def accept(request: HttpRequest, pk: int) -> HttpResponse:
    f, data = _posted(request, AcceptForm)
    cursor = data["cursor"]
    if data["over_conflicts"]:
        service, details = decisions.proposal_accept_over_conflicts, {}
    elif data["widen"]:
        service, details = widen.proposal_accept_widening, {"note": data["note"]}
    else:
        service = decisions.proposal_accept
        details = {"note": data["note"], "merge_survivor": data["survivor"]}
    out, refusal = _decide(request, f, pk, cursor, service, data["version"], **details)
    if refusal is not None:
        return refusal
    return _after_decision(
        request, f, cursor, notice=_accept_words(pk, out), outcome=out, decided=pk
    )


@require_POST
@login_required
@decide_required
def reject(request: HttpRequest, pk: int) -> HttpResponse:
    f, data = _posted(request, RejectForm)
    cursor, reason = data["cursor"], data["reason_code"]
    out, refusal = _decide(
        request,
        f,
        pk,
        cursor,
        decisions.proposal_reject,
        data["version"],
        refused={"reject_reason": reason},
        reason_code=reason,
        note=data["note"],
    )
    if refusal is not None:
        return refusal
    label = REJECT_REASONS.get(reason, reason).lower()
    words = f"Rejected #{pk}: {label}."
    if out.settled:
        words += f" {len(out.settled)} proposal{'s' if len(out.settled) > 1 else ''} waiting "
        words += "for it settled."
    return _after_decision(request, f, cursor, notice=words, outcome=out, decided=pk)


def _edit_kind(pk: int, sent: str) -> Kind | None:
    """The kind whose edit form reads the corrections: the one the page's form names
    (``kind``), known without a query (a decision's query budget counts them); else the
    proposal's own kind. The service refuses in words a proposal of another kind."""
    named = KINDS.get(sent)
    if named is not None and named.editable:
        return named
    key = Proposal.objects.filter(pk=pk).values_list("kind", flat=True).first()
    return KINDS.get(key or "")


def _edit_form(pk: int, source) -> tuple[DecisionForm, Kind | None]:
    """The editing kind and the form its corrections are read through (the shared fields
    alone when there is none: the service refuses)."""
    kind = _edit_kind(pk, str(source.get("kind", "")))
    edit_form = kind.edit_form if kind is not None else None
    form_class = import_string(edit_form) if edit_form else DecisionForm
    return form_class(source), kind


@require_http_methods(["GET", "POST"])
@login_required
@decide_required
def edit(request: HttpRequest, pk: int) -> HttpResponse:
    source = request.POST if request.method == "POST" else request.GET
    f, _ = filter_from(request, source)
    form, kind = _edit_form(pk, source)
    form.is_valid()  # judged below when accepting; the cursor is always read
    cursor = form.cleaned_data["cursor"]
    if request.method == "POST":
        return _edit_accept(request, pk, f, cursor, form, kind)
    proposal = get_object_or_404(
        selectors.card_proposals(),
        pk=pk,
    )
    if not kind_of(proposal).editable:
        return _refused(
            request,
            f,
            pk,
            cursor,
            DomainError(NOT_EDITABLE),
        )
    card = card_reads.proposal_card(proposal)
    ctx = card_context(request, card, f, cursor=cursor, trail=trail_of(source))
    ctx["editing"] = True
    template = "review/focus.html#card" if request.htmx else "review/focus.html"
    if not request.htmx:
        ctx["total"] = None
    return render(request, template, ctx)


def _edit_accept(
    request: HttpRequest, pk: int, f, cursor: str, form: DecisionForm, kind: Kind | None
) -> HttpResponse:
    values = form.typed_values()
    if not form.is_valid():
        first = next((name for name in form.errors if name != "__all__"), "")
        return _refused(
            request,
            f,
            pk,
            cursor,
            DomainError(form.error_words(), field=first),
            editing=True,
            edit=values,
        )
    data = form.cleaned_data
    edits = kind.edits(data) if kind is not None and kind.editable else None
    out, refusal = _decide(
        request,
        f,
        pk,
        cursor,
        decisions.proposal_edit_accept,
        data["version"],
        refused={"editing": True, "edit": values},
        edits=edits,
        note=data["note"],
    )
    if refusal is not None:
        return refusal
    notice = _accept_words(pk, out).replace("Accepted", "Edited and accepted", 1)
    return _after_decision(request, f, cursor, notice=notice, outcome=out, decided=pk)
