"""The Questions pages: competency questions, their latest results and history, Run now,
and the add / edit / retire forms. Everyone with a role reads; curators act."""

from __future__ import annotations

import logging

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from kgreview.agents.schedules import schedule_set_enabled
from kgreview.core.errors import DomainError
from kgreview.core.forms import errors_in_words
from kgreview.core.permissions import curator_required, is_curator, view_required
from kgreview.core.refusals import form_refused, said

from . import runs, selectors, services, tasks
from .forms import QuestionForm, RunNowForm
from .models import CompetencyQuestion, CompetencyRun
from .schedule import schedule_current

log = logging.getLogger(__name__)


def _home_context(request: HttpRequest, form: QuestionForm | None = None) -> dict:
    questions = selectors.questions_with_latest()
    latest = selectors.run_latest()
    return {
        "questions": questions,
        "active_count": sum(q.active for q in questions),
        "passing": sum(1 for q in questions if q.active and q.latest and q.latest.passed),
        "run": latest,
        "running": latest is not None and not latest.is_finished,
        "runs": selectors.runs_recent(),
        "schedule": schedule_current(),
        "can_curate": is_curator(request.user),
        "form": form or QuestionForm(initial={"expect": "concepts"}),
    }


@require_GET
@login_required
@view_required
def questions_home(request: HttpRequest) -> HttpResponse:
    context = _home_context(request)
    if request.htmx:
        return render(request, "questions/home.html#results", context)
    return render(request, "questions/home.html", context)


def _refused(request: HttpRequest, words: str, *, to: str) -> HttpResponse:
    """Bad input, in words: a 400 for htmx, else a message on the page it came from."""
    if request.htmx:
        return HttpResponseBadRequest(words, content_type="text/plain; charset=utf-8")
    messages.error(request, words)
    return redirect(to)


def _form_page(request: HttpRequest, form: QuestionForm, question=None) -> tuple[str, dict]:
    """The page (or, for htmx, the part) that shows the question form again."""
    if question is not None:
        template = "questions/edit.html" + ("#question-form" if request.htmx else "")
        return template, {"question": question, "form": form, "can_curate": True}
    template = "questions/home.html#question-form" if request.htmx else "questions/home.html"
    return template, _home_context(request, form)


def _form_again(request: HttpRequest, form: QuestionForm, question=None) -> HttpResponse:
    """The form with what was typed, and what is wrong with it in words (400)."""
    form.refusal = errors_in_words(form)
    template, context = _form_page(request, form, question)
    return render(request, template, context, status=400)


@require_POST
@login_required
@curator_required
def question_add(request: HttpRequest) -> HttpResponse:
    form = QuestionForm(request.POST)
    if not form.is_valid():
        return _form_again(request, form)
    try:
        question = services.question_create(spec=form.spec(), acting_user=request.user)
    except DomainError as exc:
        return form_refused(request, *_form_page(request, form), exc)
    messages.success(request, f"Question #{question.pk} added; it is asked on the next run.")
    if request.htmx:
        return HttpResponseClientRedirect(reverse("questions:home"), status=204)
    return redirect("questions:home")


@require_http_methods(["GET", "POST"])
@login_required
@curator_required
def question_edit(request: HttpRequest, pk: int) -> HttpResponse:
    question = get_object_or_404(CompetencyQuestion, pk=pk)
    if request.method == "GET":
        form = QuestionForm(initial=QuestionForm.initial_for(question))
        return render(
            request, "questions/edit.html", {"question": question, "form": form, "can_curate": True}
        )
    form = QuestionForm(request.POST)
    if not form.is_valid():
        return _form_again(request, form, question)
    try:
        services.question_update(question_id=pk, spec=form.spec(), acting_user=request.user)
    except DomainError as exc:
        return form_refused(request, *_form_page(request, form, question), exc)
    messages.success(request, f"Question #{pk} saved.")
    if request.htmx:
        return HttpResponseClientRedirect(reverse("questions:detail", args=[pk]), status=204)
    return redirect("questions:detail", pk=pk)


def _state_change(request: HttpRequest, pk: int, service, done: str) -> HttpResponse:
    with said(request):
        service(question_id=pk, acting_user=request.user)
        messages.success(request, f"Question #{pk} {done}.")
    return redirect("questions:detail", pk=pk)


@require_POST
@login_required
@curator_required
def question_retire(request: HttpRequest, pk: int) -> HttpResponse:
    return _state_change(request, pk, services.question_retire, "retired; its history stays")


@require_POST
@login_required
@curator_required
def question_reactivate(request: HttpRequest, pk: int) -> HttpResponse:
    return _state_change(request, pk, services.question_reactivate, "is asked again")


@require_POST
@login_required
@curator_required
def run_now(request: HttpRequest) -> HttpResponse:
    form = RunNowForm(request.POST)
    if not form.is_valid():
        return _refused(request, errors_in_words(form), to=reverse("questions:home"))
    question_id = form.cleaned_data["question"]
    back = (
        reverse("questions:detail", args=[question_id])
        if question_id
        else reverse("questions:home")
    )
    run = None
    with said(request):
        run = runs.competency_run_create(
            trigger=CompetencyRun.Trigger.MANUAL,
            acting_user=request.user,
            question_id=question_id,
        )
    if run is None:  # refused, and said on the page it came from
        return redirect(back)
    try:
        tasks.run_questions.delay(run_id=run.pk)
    except Exception as exc:  # any broker failure: said in words, the run not left queued
        log.exception("run now: the broker refused competency run #%s", run.pk)
        reason = f"the task queue refused it ({exc.__class__.__name__}: {exc})."
        runs.competency_run_not_queued(run_id=run.pk, reason=reason)
        messages.error(
            request,
            f"Competency run #{run.pk} could not be started: {reason} Try again once the "
            "worker's broker is reachable.",
        )
        return redirect(back)
    messages.success(request, f"Competency run #{run.pk} queued.")
    return redirect(back)


@require_POST
@login_required
@curator_required
def schedule_toggle(request: HttpRequest) -> HttpResponse:
    schedule = schedule_current()
    if schedule is None:
        raise Http404("The competency questions have no schedule; run migrate.")
    enabled = request.POST.get("enabled") == "1"  # only "1" resumes; anything else pauses
    schedule_set_enabled(schedule=schedule, enabled=enabled, acting_user=request.user)
    messages.success(request, f"“{schedule.name}” {'resumed' if enabled else 'paused'}.")
    return redirect("questions:home")


@require_GET
@login_required
@view_required
def question_detail(request: HttpRequest, pk: int) -> HttpResponse:
    question = get_object_or_404(CompetencyQuestion.objects.select_related("created_by"), pk=pk)
    latest = selectors.run_latest()
    context = {
        "question": question,
        "history": selectors.question_history(question),
        "proposals": selectors.gap_proposals(question),
        "searches": selectors.gap_searches(question),
        "running": latest is not None and not latest.is_finished,
        "can_curate": is_curator(request.user),
    }
    if request.htmx:
        return render(request, "questions/detail.html#history", context)
    return render(request, "questions/detail.html", context)
