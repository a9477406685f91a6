"""The talk on a card: its type's guideline and examples, its comments, "needs
discussion" and examples chosen from decided cards. Thin views over ``review.talk``: a
panel fragment for htmx (opened with a key on the card), a page of its own otherwise.

Reading is for anyone who can view the queue; writing is for reviewers and curators (a
viewer is answered 403 in words), choosing examples for curators.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from kgreview.core import links
from kgreview.core.permissions import (
    can_decide,
    curator_required,
    is_curator,
    require,
    view_required,
)
from kgreview.core.refusals import said
from kgreview.review import talk
from kgreview.review.decide.decisions import REJECT_REASONS
from kgreview.review.models import Comment, Proposal
from kgreview.review.workspace import selectors
from kgreview.review.workspace.talk_forms import (
    CommentEditForm,
    CommentForm,
    PlaceForm,
    QuestionForm,
    ResolveForm,
)
from kgreview.review.workspace.views import (
    focus_url,
    next_card,
    render_card,
    trail_of,
    trail_text,
)

writer_required = require(can_decide, talk.WRITERS_ONLY)


def _panel(request: HttpRequest, partial: str, context: dict, *, status: int = 200):
    """The panel alone for htmx; otherwise a page holding it, with a way back to the card."""
    template = f"review/talk.html#{partial}" if request.htmx else "review/talk.html"
    return render(request, template, {**context, "partial": partial}, status=status)


# --- Guideline ---------------------------------------------------------------------------


@require_GET
@login_required
@view_required
def guideline(request: HttpRequest, pk: int) -> HttpResponse:
    """The guideline of the card's relation type (or concept type) and its examples:
    accepted first, then rejected, each with its quote and reject reason."""
    proposal = get_object_or_404(Proposal, pk=pk)
    return _panel(
        request,
        "guideline-panel",
        {"p": proposal, **talk.guide_of(proposal), "reject_reasons": REJECT_REASONS},
    )


# --- Comments ----------------------------------------------------------------------------


def _thread_context(request: HttpRequest, proposal: Proposal, place: dict, **extra) -> dict:
    user = request.user
    discussion = talk.open_discussion_of(proposal.pk)
    rows = talk.thread(proposal.pk)
    history = talk.discussion_history(proposal.pk)
    return {
        "p": proposal,
        "rows": [(c, depth, talk.can_edit(c, user)) for c, depth in rows],
        "discussion": discussion,
        "history": [d for d in history if not d.is_open or not proposal.is_open],
        "question_ids": {d.question_id for d in history},
        "can_write": can_decide(user),
        "can_resolve": discussion is not None
        and can_decide(user)
        and (discussion.asked_by_id == user.pk or is_curator(user)),
        "ask": place.get("ask") == "1" and proposal.is_open and discussion is None,
        "no_ask": _why_no_question(proposal) if place.get("ask") == "1" else "",
        "place": place,
        "edit_minutes": int(talk.EDIT_WINDOW.total_seconds() // 60),
        **extra,
    }


def _why_no_question(proposal: Proposal) -> str:
    """Why "needs discussion" cannot be asked on this card now (empty when it can): it
    was decided meanwhile (a colleague's edge took this concept with it, say)."""
    if proposal.is_open:
        return ""
    who = f" by {proposal.decided_by}" if proposal.decided_by_id else ""
    return (
        f"Proposal #{proposal.pk} was {proposal.get_status_display().lower()}{who} while the "
        "card was open, so it needs no discussion now; a comment is still welcome."
    )


def _place(source: QueryDict) -> dict:
    form = PlaceForm(source)
    form.is_valid()  # every field is optional text
    return form.cleaned_data


def _thread(request: HttpRequest, proposal: Proposal, *, status: int = 200, **extra):
    place = _place(request.POST if request.method == "POST" else request.GET)
    talk.discussion_seen(proposal_id=proposal.pk, acting_user=request.user)
    context = _thread_context(request, proposal, place, **extra)
    return _panel(request, "thread-panel", context, status=status)


@require_http_methods(["GET", "POST"])
@login_required
@view_required
def comments(request: HttpRequest, pk: int) -> HttpResponse:
    """The card's comments, threaded (GET); a comment or a reply (POST, reviewers and
    curators). ``ask=1`` offers the question that marks the card as needing discussion."""
    proposal = get_object_or_404(Proposal, pk=pk)
    if request.method == "GET":
        return _thread(request, proposal)
    if not can_decide(request.user):
        raise PermissionDenied(talk.WRITERS_ONLY)
    form = CommentForm(request.POST)
    form.is_valid()
    talk.comment_post(
        proposal_id=proposal.pk,
        body=form.cleaned_data.get("body", ""),
        parent_id=form.cleaned_data.get("parent"),
        acting_user=request.user,
    )
    if not request.htmx:
        messages.success(request, "Your comment is posted.")
        return redirect(reverse("review:comments", args=[proposal.pk]))
    return _thread(request, proposal, notice="Your comment is posted.", oob_count=True)


@require_POST
@login_required
@writer_required
def comment_edit(request: HttpRequest, comment_id: int) -> HttpResponse:
    """Change a comment: its author, within 15 minutes of posting it."""
    comment = get_object_or_404(Comment.objects.select_related("proposal"), pk=comment_id)
    form = CommentEditForm(request.POST)
    form.is_valid()
    talk.comment_edit(
        comment_id=comment.pk, body=form.cleaned_data.get("body", ""), acting_user=request.user
    )
    if not request.htmx:
        messages.success(request, "Your comment is changed; its earlier text is kept.")
        return redirect(reverse("review:comments", args=[comment.proposal_id]))
    return _thread(request, comment.proposal, notice="Changed; the earlier text is kept.")


# --- Needs discussion --------------------------------------------------------------------


def _filter(place: dict) -> selectors.QueueFilter:
    """The queue's filter the card was shown in (its ``q``), unusable values left out."""
    return selectors.QueueFilter.from_query(QueryDict(place.get("q", "")))[0]


def _next_after(request: HttpRequest, place: dict, proposal: Proposal, notice: str):
    """After a question, the next card as after a decision (htmx), or go there."""
    f = _filter(place)
    trail = [*trail_of({"trail": place.get("trail", "")}), proposal.pk]
    # Without a place in the queue (the thread's own page), from the queue's start: the
    # card asked about is out of it now anyway.
    cursor = place.get("cursor") or None
    if request.htmx:
        return render_card(
            request, next_card(request, f, after=cursor), f, trail=trail, notice=notice
        )
    messages.success(request, notice)
    return redirect(focus_url(f, after=cursor, trail=trail_text(trail)))


@require_POST
@login_required
@writer_required
def discuss(request: HttpRequest, pk: int) -> HttpResponse:
    """Mark the card as needing discussion, with a question; then the next card."""
    proposal = get_object_or_404(Proposal, pk=pk)
    form = QuestionForm(request.POST)
    form.is_valid()
    talk.discussion_open(
        proposal_id=proposal.pk,
        question=form.cleaned_data.get("question", ""),
        acting_user=request.user,
    )
    notice = (
        f"Asked about #{proposal.pk}. It is out of the focus queue until the discussion is "
        "resolved; answers show on your home page."
    )
    return _next_after(request, form.cleaned_data, proposal, notice)


def _same_card(request: HttpRequest, proposal: Proposal, place: dict, notice: str):
    f = _filter(place)
    trail = trail_of({"trail": place.get("trail", "")})
    if request.htmx:
        card = selectors.card_proposals().filter(pk=proposal.pk).first()
        return render_card(request, card, f, trail=trail, notice=notice)
    messages.success(request, notice)
    return redirect(focus_url(f, id=proposal.pk, trail=trail_text(trail)))


@require_POST
@login_required
@writer_required
def resolve(request: HttpRequest, pk: int) -> HttpResponse:
    """Resolve the card's discussion (its asker or a curator): back in the queue."""
    proposal = get_object_or_404(Proposal, pk=pk)
    form = ResolveForm(request.POST)
    form.is_valid()
    talk.discussion_resolve(
        proposal_id=proposal.pk, note=form.cleaned_data.get("note", ""), acting_user=request.user
    )
    return _same_card(
        request, proposal, form.cleaned_data, "Resolved: the card is back in the queue."
    )


# --- Examples ----------------------------------------------------------------------------


@require_POST
@login_required
@curator_required
def example_add(request: HttpRequest, pk: int) -> HttpResponse:
    """Use a decided card as an example of its relation type or concept type."""
    proposal = get_object_or_404(Proposal, pk=pk)
    place = _place(request.POST)
    example = talk.example_add(proposal_id=proposal.pk, acting_user=request.user)
    what = example.relation.key if example.relation_id else example.concept_type.key
    return _same_card(
        request,
        proposal,
        place,
        f"#{proposal.pk} is now an example of “{what}”; its guideline shows it.",
    )


@require_POST
@login_required
@curator_required
def example_retire(request: HttpRequest, example_id: int) -> HttpResponse:
    """Stop showing an example (from the Ontology page); it stays, retired."""
    with said(request):
        talk.example_retire(example_id=example_id, acting_user=request.user)
        messages.success(request, "The example is retired; it no longer shows on cards.")
    return redirect(links.url("ontology") + "#examples")
