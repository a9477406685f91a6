"""The reviewer workspace. Thin views: parse, check the role, call a service, render.

Every decision is one POST. With htmx it answers with the next card (and a toast, swapped
out of band); without JavaScript it redirects to the next card, so accept and reject
work from a plain form too.
"""

from __future__ import annotations

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
from kgreview.graph.models import RelationType

from . import card as card_reads
from . import decisions, ends, selectors
from . import undo as undo_service
from .decisions import (
    CURATOR_KINDS,
    REJECT_REASONS,
    AlreadyDecided,
    EdgeEdits,
    VersionChanged,
    can_decide_kind,
)
from .ends import EndChoice
from .kinds import kind_of
from .models import Proposal

TRAIL_MAX = 50


def _filter_from(request: HttpRequest, source: QueryDict | None = None):
    query = source if source is not None else request.GET
    if "q" in query:  # a decision form carries the queue filter as one encoded string
        query = QueryDict(query.get("q", ""))
    return selectors.QueueFilter.from_query(query)


def _hidden_kinds(user) -> tuple[str, ...]:
    """Kinds this user's role cannot decide: the focus queue never serves them."""
    return () if is_curator(user) else tuple(sorted(CURATOR_KINDS))


def _trail(source) -> list[int]:
    """The cards this reviewer saw before the current one, oldest first (for Previous)."""
    ids = []
    for part in str(source.get("trail", "")).split(","):
        part = part.strip()
        if part.isdigit() and len(part) < 19:
            ids.append(int(part))
    return ids[-TRAIL_MAX:]


def _trail_text(ids) -> str:
    return ",".join(str(i) for i in list(ids)[-TRAIL_MAX:])


def _focus_url(f: selectors.QueueFilter, **extra) -> str:
    params = f.params() + [(k, str(v)) for k, v in extra.items() if v not in (None, "")]
    return reverse("review:focus") + ("?" + urlencode(params) if params else "")


def _undo_list(user, hint):
    """The newest undoable batch: known already after a decision, else read."""
    if hint is not None:
        return [hint]
    return undo_service.undoable_batches(reviewer=user, limit=1) if can_decide(user) else []


def _next(request, f, *, after=None, before=None):
    return selectors.next_in_queue(
        f, after=after, before=before, exclude_kinds=_hidden_kinds(request.user)
    )


def _card_context(
    request, card, f, *, cursor: str, trail, notice="", error="", undo=None, reject_reason=""
):
    user = request.user
    proposal = card.proposal
    allowed = can_decide(user) and can_decide_kind(user, proposal.kind)
    return {
        "card": card,
        "p": proposal,
        "filter": f,
        "q": f.query(),
        "cursor": cursor,
        "trail": _trail_text(trail),
        "trail_next": _trail_text([*trail, proposal.pk]),
        "previous_id": trail[-1] if trail else None,
        "previous_trail": _trail_text(trail[:-1]),
        "can_decide": allowed,
        "curator_only": proposal.kind in CURATOR_KINDS and not is_curator(user),
        "reject_reasons": REJECT_REASONS,
        "reject_reason": reject_reason,
        "relations": RelationType.objects.filter(active=True).order_by("key"),
        "notice": notice,
        "error": error,
        "undo": _undo_list(user, undo),
    }


def _render_card(
    request, proposal, f, *, trail=(), notice="", error="", status=200, undo=None, **extra
):
    trail = list(trail)
    if proposal is None:
        return render(
            request,
            "review/focus.html#card",
            {
                "p": None,
                "filter": f,
                "q": f.query(),
                "trail": _trail_text(trail),
                "previous_id": trail[-1] if trail else None,
                "previous_trail": _trail_text(trail[:-1]),
                "notice": notice,
                "error": error,
                "undo": _undo_list(request.user, undo),
                "can_decide": can_decide(request.user),
            },
            status=status,
        )
    card = card_reads.proposal_card(proposal)
    ctx = _card_context(
        request,
        card,
        f,
        cursor=selectors.cursor_of(proposal, f.sort),
        trail=trail,
        notice=notice,
        error=error,
        undo=undo,
        reject_reason=extra.pop("reject_reason", ""),
    )
    ctx.update(extra)
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
        "hidden_kinds": _hidden_kinds(request.user),
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
    """One card at a time, in queue order, of the kinds this reviewer's role decides.

    ``id`` shows one proposal (any kind, any status: a curator-only card is shown read-only
    to a reviewer); ``after``/``before`` walk the queue; ``trail`` lists the cards seen
    before, so Previous goes back through them.
    """
    f, errors = _filter_from(request)
    trail = _trail(request.GET)
    notice = ""
    raw_id = request.GET.get("id", "")
    if raw_id:
        if not raw_id.isdigit() or len(raw_id) > 18:
            raise Http404("No such proposal.")
        proposal = Proposal.objects.select_related(*selectors.CARD_RELATED).filter(pk=raw_id)
        proposal = proposal.first()
        if proposal is None:
            raise Http404("No such proposal.")
    else:
        proposal = _next(
            request, f, after=request.GET.get("after"), before=request.GET.get("before")
        )
        came_from = request.GET.get("from", "")
        if proposal is None and request.GET.get("before") and came_from.isdigit():
            # Nothing earlier in this view: stay on the card, and say so.
            proposal = (
                Proposal.objects.select_related(*selectors.CARD_RELATED)
                .filter(pk=came_from)
                .first()
            )
            notice = "This is the first card in this view; nothing comes before it."
    if request.htmx:
        return _render_card(
            request, proposal, f, trail=trail, notice=notice, error=" ".join(errors)
        )
    context = {"filter": f, "q": f.query(), "errors": errors, "p": proposal}
    if proposal is not None:
        context.update(
            _card_context(
                request,
                card_reads.proposal_card(proposal),
                f,
                cursor=selectors.cursor_of(proposal, f.sort),
                trail=trail,
                notice=notice,
            )
        )
    else:
        context.update(
            undo=_undo_list(request.user, None),
            trail=_trail_text(trail),
            previous_id=trail[-1] if trail else None,
            previous_trail=_trail_text(trail[:-1]),
            can_decide=can_decide(request.user),
        )
    context["total"] = None  # filled in by a second, cached request
    context["hidden_kinds"] = _hidden_kinds(request.user)
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
    return int(raw) if raw.isdigit() and len(raw) < 10 else None


def _after_decision(request, f, cursor: str, *, notice: str, outcome=None, decided=None):
    """Show the next card (htmx) or go there (plain form); the decided card joins the trail."""
    trail = _trail(request.POST)
    if decided is not None:
        trail = [*trail, decided]
    if request.htmx:
        proposal = _next(request, f, after=cursor)
        hint = undo_service.batch_summary(outcome.decisions) if outcome is not None else None
        return _render_card(request, proposal, f, trail=trail, notice=notice, undo=hint)
    messages.success(request, notice)
    return redirect(_focus_url(f, after=cursor, trail=_trail_text(trail)))


def _refused(request, f, proposal_id: int, cursor: str, exc: DomainError, **extra):
    """A decision that could not be taken: say why, in words, and show what is true now."""
    trail = _trail(request.POST if request.method == "POST" else request.GET)
    if isinstance(exc, AlreadyDecided):
        # Someone else decided it: move on, and say who and when.
        if request.htmx:
            return _render_card(
                request, _next(request, f, after=cursor), f, trail=trail, error=str(exc)
            )
        messages.error(request, str(exc))
        return redirect(_focus_url(f, after=cursor, trail=_trail_text(trail)))
    if request.htmx:
        proposal = (
            Proposal.objects.select_related(*selectors.CARD_RELATED).filter(pk=proposal_id).first()
        )
        # The card itself says why in words; a 4xx would only add a console error, since
        # htmx swaps it the same way.
        status = 200
        if isinstance(exc, VersionChanged) or (proposal and not kind_of(proposal).editable):
            extra.pop("editing", None)
            extra.pop("edit", None)
        return _render_card(
            request, proposal, f, trail=trail, error=str(exc), status=status, **extra
        )
    messages.error(request, str(exc))
    return redirect(_focus_url(f, id=proposal_id, trail=_trail_text(trail)))


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
    return _after_decision(
        request, f, cursor, notice=_accept_words(pk, out), outcome=out, decided=pk
    )


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
        return _refused(request, f, pk, cursor, exc, reject_reason=reason)
    label = REJECT_REASONS.get(reason, reason).lower()
    words = f"Rejected #{pk}: {label}."
    if out.settled:
        words += f" {len(out.settled)} proposal{'s' if len(out.settled) > 1 else ''} waiting "
        words += "for it settled."
    return _after_decision(request, f, cursor, notice=words, outcome=out, decided=pk)


def clean_text(value, limit: int = 2000) -> str:
    """Form text as stored: NUL bytes dropped, runs of whitespace one space, capped."""
    return " ".join(str(value or "").replace("\x00", "").split())[:limit]


def _float(value: str | None) -> float | None:
    if value is None or not value.strip():
        return None
    number = float(value)
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(value)
    return number


def _int(value: str | None) -> int | None:
    value = (value or "").strip()
    return int(value) if value.isdigit() and len(value) < 19 else None


def end_choice(source, role: str) -> EndChoice | None:
    """One end of an edge as the concept picker sent it (None: left as it was)."""
    concept_id = _int(source.get(f"{role}_concept_id"))
    proposal_id = _int(source.get(f"{role}_proposal_id"))
    name = clean_text(source.get(f"{role}_name", ""), 300)
    if not (concept_id or proposal_id or name):
        return None
    return EndChoice(
        concept_id=concept_id,
        proposal_id=proposal_id,
        name=name or None,
        create=source.get(f"{role}_create") == "1",
    )


def _edit_values(source) -> dict:
    """What the reviewer typed in the edit form, to show it again after a refusal."""
    keys = ("relation", "confidence", "weight", "note", "swap")
    roles = ("name", "concept_id", "proposal_id", "create")
    values = {k: source.get(k, "") for k in keys}
    for role in ("source", "target"):
        values[role] = {r: source.get(f"{role}_{r}", "") for r in roles}
    return values


@require_http_methods(["GET", "POST"])
@login_required
@decide_required
def edit(request: HttpRequest, pk: int) -> HttpResponse:
    source = request.POST if request.method == "POST" else request.GET
    f, _ = _filter_from(request, source)
    cursor = source.get("cursor", "")
    if request.method == "POST":
        return _edit_accept(request, pk, f, cursor)
    proposal = get_object_or_404(
        Proposal.objects.select_related(*selectors.CARD_RELATED),
        pk=pk,
    )
    if not kind_of(proposal).editable:
        return _refused(
            request,
            f,
            pk,
            cursor,
            DomainError("Only edge proposals can be edited before accepting."),
        )
    card = card_reads.proposal_card(proposal)
    ctx = _card_context(request, card, f, cursor=cursor, trail=_trail(source))
    ctx["editing"] = True
    template = "review/focus.html#card" if request.htmx else "review/focus.html"
    if not request.htmx:
        ctx["total"] = None
    return render(request, template, ctx)


def _edit_accept(request: HttpRequest, pk: int, f, cursor: str) -> HttpResponse:
    values = _edit_values(request.POST)
    try:
        edits = EdgeEdits(
            relation=request.POST.get("relation") or None,
            swap_direction=bool(request.POST.get("swap")),
            source=end_choice(request.POST, "source"),
            target=end_choice(request.POST, "target"),
            confidence=_float(request.POST.get("confidence")),
            weight=_float(request.POST.get("weight")),
        )
    except ValueError:
        return _refused(
            request,
            f,
            pk,
            cursor,
            DomainError("Confidence and weight must be numbers."),
            editing=True,
            edit=values,
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
    except NotFound as exc:
        raise Http404(str(exc)) from exc
    except DomainError as exc:
        return _refused(request, f, pk, cursor, exc, editing=True, edit=values)
    notice = _accept_words(pk, out).replace("Accepted", "Edited and accepted", 1)
    return _after_decision(request, f, cursor, notice=notice, outcome=out, decided=pk)


# --- Look-ups and history ---------------------------------------------------------------


@require_GET
@login_required
@view_required
def concept_search(request: HttpRequest) -> HttpResponse:
    """Options for the concept picker: concepts (by name and alias, plural/singular twins
    first), pending concept proposals, and an explicit "create it" choice."""
    role = request.GET.get("role", "target")
    if role not in ("source", "target"):
        role = "target"
    raw = request.GET.get("q") or request.GET.get(f"{role}_name") or ""
    q = clean_text(raw, 100)
    options = ends.concept_options(q=q)
    if request.GET.get("only") == "concepts":  # picking an existing concept (a merge)
        options = [o for o in options if o.kind == "concept"]
    return render(
        request,
        "review/focus.html#concept-options",
        {"options": options, "q": q, "role": role},
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
    return render(
        request,
        "review/edge.html",
        {"edge": edge, "life": selectors.edge_life(edge), "can_decide": can_decide(request.user)},
    )
