"""The reviewer workspace's pages for reading: the queue, the focus card, the concept
picker, the decision log, an edge's life. Thin views: parse, check the role, read,
render. Deciding is ``decide_views``; both share the card helpers here.
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from kgreview.core.permissions import can_decide, is_curator, view_required
from kgreview.graph.models import ConceptType, RelationType
from kgreview.review import talk
from kgreview.review.decide import ends
from kgreview.review.decide import undo as undo_service
from kgreview.review.decide.decisions import (
    CURATOR_KINDS,
    REJECT_REASONS,
    can_decide_kind,
)
from kgreview.review.kinds import kind_of
from kgreview.review.kinds.base import NOT_EDITABLE
from kgreview.review.models import Proposal
from kgreview.review.team import assignments, leases
from kgreview.review.workspace import card as card_reads
from kgreview.review.workspace import counts as count_reads
from kgreview.review.workspace import selectors
from kgreview.review.workspace.forms import (
    TRAIL_MAX,
    ConceptSearchForm,
    DecisionLogForm,
    QueueWalkForm,
    TrailForm,
)


def filter_from(request: HttpRequest, source: QueryDict | None = None):
    query = source if source is not None else request.GET
    if "q" in query:  # a decision form carries the queue filter as one encoded string
        query = QueryDict(query.get("q", ""))
    f, errors = selectors.QueueFilter.from_query(query)
    if f.stage and not is_curator(request.user):
        errors.append("Only curators adjudicate; showing the shared queue.")
        f = replace(f, stage="")
    return f, errors


def hidden_kinds_of(user) -> tuple[str, ...]:
    """Kinds this user's role cannot decide: the focus queue never serves them."""
    return () if is_curator(user) else tuple(sorted(CURATOR_KINDS))


def trail_of(source) -> list[int]:
    """The cards this reviewer saw before the current one, oldest first (for Previous)."""
    form = TrailForm(source)
    form.is_valid()  # what is not an id is left out of the trail
    return form.cleaned_data["trail"]


def trail_text(ids) -> str:
    return ",".join(str(i) for i in list(ids)[-TRAIL_MAX:])


def focus_url(f: selectors.QueueFilter, **extra) -> str:
    params = f.params() + [(k, str(v)) for k, v in extra.items() if v not in (None, "")]
    return reverse("review:focus") + ("?" + urlencode(params) if params else "")


def _undo_list(user, hint):
    """The newest undoable batch: known already after a decision, else read."""
    if hint is not None:
        return [hint]
    return undo_service.undoable_batches(user=user, limit=1) if can_decide(user) else []


#: How often the focus queue reaches for another card when a colleague leased the one it
#: found first, in the moment between reading the queue and taking the lease.
LEASE_TRIES = 5


def next_card(request, f, *, after=None, before=None, moving=True):
    """The next card in the filter's order that this person's role decides. A reviewer
    who decides is leased it, with the window after it (``team.leases``): cards a
    colleague holds are skipped. When the reviewer ``moving`` on (not after deciding,
    where the card left behind is closed anyway), what they held before is let go."""
    user = request.user
    hidden = hidden_kinds_of(user)
    if not can_decide(user):
        found = selectors.next_in_queue(f, after=after, before=before, exclude_kinds=hidden)
        return found[0] if found else None
    lost: list[int] = []
    for _ in range(LEASE_TRIES):
        found = selectors.next_in_queue(
            f,
            after=after,
            before=before,
            exclude_kinds=hidden,
            reviewer=user,
            skip=lost,
            limit=leases.window(),
        )
        if not found:
            if moving:
                leases.keep_only(user, ())
            return None
        taken = leases.take(user, [p.pk for p in found])
        if found[0].pk in taken:
            if moving:
                leases.keep_only(user, taken)
            return found[0]
        lost.append(found[0].pk)
    return None


#: The query parameters that choose a part of the queue: a focus page without any of
#: them is the reviewer's own stream (their assignments first, then the shared pool).
FILTER_KEYS = (
    "q",
    "status",
    "kind",
    "relation",
    "source",
    "run",
    "cmin",
    "cmax",
    "flag",
    "sort",
    "stage",
    "assignment",
)


def assignment_filter(assignment) -> selectors.QueueFilter:
    f, _ = assignments.parse(assignment.query)
    return replace(f, assignment=assignment.pk)


def serve(request, f, *, after=None, before=None, moving=True):
    """The next card, and the filter it was found in: an assignment that has nothing left
    for this reviewer hands over to their next one, then to the shared pool."""
    proposal = next_card(request, f, after=after, before=before, moving=moving)
    if proposal is None and f.assignment is not None and not before:
        found = (
            assignments.with_work(request.user, skip=(f.assignment,))
            if can_decide(request.user)
            else None
        )
        f = assignment_filter(found[0]) if found else selectors.QueueFilter()
        proposal = next_card(request, f, moving=moving)
    return proposal, f


def card_context(
    request, card, f, *, cursor: str, trail, notice="", error="", undo=None, reject_reason=""
):
    user = request.user
    proposal = card.proposal
    waits_for_curator = (
        proposal.stage == Proposal.Stage.ADJUDICATE and proposal.is_open and not is_curator(user)
    )
    allowed = can_decide(user) and can_decide_kind(user, proposal.kind) and not waits_for_curator
    return {
        "card": card,
        "p": proposal,
        "filter": f,
        "q": f.query(),
        "cursor": cursor,
        "trail": trail_text(trail),
        "trail_next": trail_text([*trail, proposal.pk]),
        "previous_id": trail[-1] if trail else None,
        "previous_trail": trail_text(trail[:-1]),
        "can_decide": allowed,
        # The refusal in words when only curators decide it, this person is not one, and
        # it is still waiting (a decided card says who decided it instead).
        "curator_only": (
            kind_of(proposal).curators_only()
            if proposal.kind in CURATOR_KINDS
            and not is_curator(user)
            and proposal.status == Proposal.Status.PENDING
            else ""
        ),
        # A curator may accept a pattern breaker by widening the pattern, with a note.
        "can_widen": allowed and card.pattern_blocked and is_curator(user),
        "not_editable": NOT_EDITABLE,  # what e says on a card of a kind that is not editable
        "reject_reasons": REJECT_REASONS,
        "reject_reason": reject_reason,
        "relations": RelationType.objects.filter(active=True).order_by("key"),
        # Read only by an edit form that offers a type (a new concept's).
        "concept_types": ConceptType.objects.filter(active=True).order_by("label", "key"),
        "notice": notice,
        "error": error,
        "undo": _undo_list(user, undo),
        "awaiting_adjudication": waits_for_curator,
        # The talk bar: who writes comments and asks, who picks examples, and the type
        # whose guideline the card offers (from the proposal's columns: no query).
        "can_write": can_decide(user),
        "can_curate": is_curator(user),
        "guide": kind_of(proposal).guided_by(proposal),
        "can_exemplify": is_curator(user)
        and proposal.status in talk.EXAMPLE_STATUSES
        and kind_of(proposal).guided_by(proposal) is not None,
    }


def render_card(
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
                "trail": trail_text(trail),
                "previous_id": trail[-1] if trail else None,
                "previous_trail": trail_text(trail[:-1]),
                "notice": notice,
                "error": error,
                "undo": _undo_list(request.user, undo),
                "can_decide": can_decide(request.user),
            },
            status=status,
        )
    card = card_reads.proposal_card(proposal)
    ctx = card_context(
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
    f, errors = filter_from(request)
    walk = QueueWalkForm(request.GET)
    walk.is_valid()  # cursors are judged by the selectors; one they cannot read is ignored
    page = selectors.queue_page(
        f, after=walk.cleaned_data["after"], before=walk.cleaned_data["before"]
    )
    context = {
        "filter": f,
        "q": f.query(),
        "errors": errors,
        "page": page,
        "counts": None,  # filled in by a second, cached request (queue_counts)
        "kinds": Proposal.KindChoice.choices,
        "statuses": selectors.STATUS_CHOICES,
        "flags": selectors.shown_flags(f),
        "relations": RelationType.objects.order_by("key"),
        "can_decide": can_decide(request.user),
        "can_curate": is_curator(request.user),
        "hidden_kinds": hidden_kinds_of(request.user),
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
    f, _ = filter_from(request)
    counts = count_reads.queue_counts_cached(f)
    walk = QueueWalkForm(request.GET)
    walk.is_valid()
    if walk.cleaned_data["only"] == "total":
        return render(
            request,
            "review/focus.html#focus-count",
            {
                "total": counts["total"],
                "estimated": counts["estimated"],
                "filter": f,
                "q": f.query(),
            },
        )
    context = {
        "filter": f,
        "q": f.query(),
        "counts": counts,
        "kinds": Proposal.KindChoice.choices,
        "statuses": selectors.STATUS_CHOICES,
        "flags": selectors.shown_flags(f),
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
    f, errors = filter_from(request)
    assignment = None
    if can_decide(request.user) and not any(k in request.GET for k in FILTER_KEYS):
        found = assignments.with_work(request.user)
        if found is not None:
            assignment = found
            f = assignment_filter(found[0])
    elif f.assignment is not None:
        mine = [a for a in assignments.open_for(request.user) if a.pk == f.assignment]
        if mine:
            assignment = (mine[0], assignments.progress(mine[0]))
    trail = trail_of(request.GET)
    notice = ""
    walk = QueueWalkForm(request.GET)
    if not walk.is_valid():  # only an ``id`` that is not one fails
        raise Http404("No such proposal.")
    asked, before = walk.cleaned_data["id"], walk.cleaned_data["before"]
    came_from = walk.cleaned_data["from"]
    held_by = ""
    if asked is not None:
        proposal = selectors.card_proposals().filter(pk=asked)
        proposal = proposal.first()
        if proposal is None:
            raise Http404("No such proposal.")
        if proposal.is_open and can_decide(request.user):
            held_by = leases.holder(proposal.pk, besides=request.user)
    else:
        # ``prefetch``: the card page fetching the next card ahead, while the reviewer
        # still reads this one, which they keep holding.
        ahead = request.GET.get("prefetch") == "1"
        proposal, f = serve(
            request, f, after=walk.cleaned_data["after"], before=before, moving=not ahead
        )
        if proposal is None and before and came_from is not None:
            # Nothing earlier in this view: stay on the card, and say so.
            proposal = selectors.card_proposals().filter(pk=came_from).first()
            notice = "This is the first card in this view; nothing comes before it."
    if request.htmx:
        return render_card(
            request,
            proposal,
            f,
            trail=trail,
            notice=notice,
            error=" ".join(errors),
            held_by=held_by,
        )
    context = {"filter": f, "q": f.query(), "errors": errors, "p": proposal}
    if proposal is not None:
        context.update(
            card_context(
                request,
                card_reads.proposal_card(proposal),
                f,
                cursor=selectors.cursor_of(proposal, f.sort),
                trail=trail,
                notice=notice,
            ),
            held_by=held_by,
        )
    else:
        context.update(
            undo=_undo_list(request.user, None),
            trail=trail_text(trail),
            previous_id=trail[-1] if trail else None,
            previous_trail=trail_text(trail[:-1]),
            can_decide=can_decide(request.user),
        )
    context["total"] = None  # filled in by a second, cached request
    context["hidden_kinds"] = hidden_kinds_of(request.user)
    context["assignment"] = assignment
    return render(request, "review/focus.html", context)


@require_GET
@login_required
@view_required
def proposal_detail(request: HttpRequest, pk: int) -> HttpResponse:
    get_object_or_404(Proposal, pk=pk)
    query = request.GET.copy()
    query["id"] = str(pk)
    return redirect(reverse("review:focus") + "?" + query.urlencode())


# --- Look-ups and history ---------------------------------------------------------------


@require_GET
@login_required
@view_required
def concept_search(request: HttpRequest) -> HttpResponse:
    """Options for the concept picker: concepts (by name and alias, plural/singular twins
    first), pending concept proposals, and an explicit "create it" choice."""
    form = ConceptSearchForm(request.GET)
    form.is_valid()  # every field is optional; ``clean`` settles the role and the name
    role, q = form.cleaned_data["role"], form.cleaned_data["q"]
    options = ends.concept_options(q=q)
    if form.cleaned_data["only"] == "concepts":  # picking an existing concept (a merge)
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
    form = DecisionLogForm(request.GET)
    form.is_valid()  # a date it cannot read is left out, and said so in words
    reviewer = form.cleaned_data.get("reviewer", "")
    since, until = form.cleaned_data.get("since"), form.cleaned_data.get("until")
    errors = form.error_words()
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
