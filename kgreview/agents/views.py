"""The Agents page: schedules, run now, live progress, cancel. Curators act; others read."""

from __future__ import annotations

import logging

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_celery_beat.models import PeriodicTask

from kgreview.core.forms import errors_in_words
from kgreview.core.permissions import curator_required, is_curator, view_required
from kgreview.core.refusals import said

from . import selectors
from .forms import RunNowForm, ScheduleToggleForm
from .heal import skipped_blocks_in_words
from .models import AgentRun, AgentRunItem
from .run_now import agent_run_now
from .runs import agent_run_cancel
from .schedules import schedule_set_enabled

log = logging.getLogger(__name__)

AGENTS = {
    AgentRun.Agent.CONSTRUCT: {
        "task": "agents.construct_scheduled",
        "about": "Reads new or changed sources and drafts edges with the text that supports them.",
    },
    AgentRun.Agent.HEAL: {
        "task": "agents.heal",
        "about": "Finds duplicate concepts, cycles in acyclic relations and evidence that "
        "vanished from its source; lists orphan concepts.",
    },
    AgentRun.Agent.DISCOVER: {
        "task": "agents.discover",
        "about": "Turns relations the vocabulary lacks, stated again and again, into "
        "relation-type proposals; proposes the types, patterns and attributes new documents "
        "ask for, the patterns accepted edges already use, and types for untyped concepts.",
    },
}


@require_GET
@login_required
@view_required
def agents_home(request: HttpRequest) -> HttpResponse:
    schedules = {t.task: t for t in PeriodicTask.objects.select_related("crontab", "interval")}
    cards = []
    for agent, info in AGENTS.items():
        cards.append(
            {
                "agent": agent,
                "label": AgentRun.Agent(agent).label,
                "about": info["about"],
                "schedule": schedules.get(info["task"]),
                "last": AgentRun.objects.filter(agent=agent).order_by("-created_at", "-id").first(),
            }
        )
    runs = list(
        AgentRun.objects.select_related("requested_by")
        .annotate(n_proposals=Count("origin__proposals"))
        .order_by("-created_at", "-id")[:25]
    )
    _attach_reading(runs)
    context = {
        "cards": cards,
        "runs": runs,
        "any_running": any(not r.is_finished for r in runs),
        "can_run": is_curator(request.user),
        "worker": selectors.worker_status(),
    }
    template = "agents/home.html#runs-table" if request.htmx else "agents/home.html"
    return render(request, template, context)


def _refused(request: HttpRequest, words: str) -> HttpResponse:
    """Bad input, in words: a 400 for htmx, else a message on the Agents page."""
    if request.htmx:
        return HttpResponseBadRequest(words, content_type="text/plain; charset=utf-8")
    messages.error(request, words)
    return redirect("agents:home")


@require_POST
@login_required
@curator_required
def run_now(request: HttpRequest, agent: str) -> HttpResponse:
    if agent not in AGENTS:
        raise Http404("No such agent.")
    form = RunNowForm(request.POST)
    if not form.is_valid():
        return _refused(request, errors_in_words(form))
    started = agent_run_now(
        agent=agent,
        acting_user=request.user,
        every_source=form.cleaned_data["scope"] == "all",
    )
    if started.run is None:
        messages.info(request, started.words)
        return redirect("agents:home")
    if not started.queued:
        messages.error(request, started.words)
        return redirect("agents:run", pk=started.run.pk)
    messages.success(request, started.words)
    return redirect("agents:run", pk=started.run.pk)


def _attach_reading(runs: list[AgentRun]) -> None:
    """Each unfinished construction run gets ``reading``: the sources being read now, with
    their chunks done and total (one query, and none when every run has finished)."""
    busy = [r.pk for r in runs if r.agent == AgentRun.Agent.CONSTRUCT and not r.is_finished]
    reading: dict[int, list[AgentRunItem]] = {}
    if busy:
        items = (
            AgentRunItem.objects.filter(run_id__in=busy, status=AgentRunItem.Status.RUNNING)
            .select_related("source")
            .only("run_id", "status", "chunks_done", "chunks_total", "stats", "source__slug")
            .order_by("pk")
        )
        for item in items:
            reading.setdefault(item.run_id, []).append(item)
    for run in runs:
        run.reading = reading.get(run.pk, [])


def _numbers(run: AgentRun) -> list[tuple[str, object]]:
    """The run's counters as (words, value): "pairs_compared" reads "pairs compared", and a
    timing ("cycles_s") says it is in seconds. A budget stop is said in words elsewhere."""
    rows = []
    for key, value in (run.stats or {}).items():
        if key in ("proposals", "dropped", "budget_stop", "skipped_blocks"):
            continue
        words = key.replace("_", " ")
        if key.endswith("_s"):
            words = f"{words[:-2]} (seconds)"
        rows.append((words, value))
    return rows


def _queued(run: AgentRun) -> dict[str, dict[str, int]]:
    """Proposals by kind and status: construction counts them as it queues them; the other
    agents do not, so their proposals are counted as they stand now."""
    counted = (run.stats or {}).get("proposals")
    if counted and isinstance(counted, dict):
        return counted
    queued: dict[str, dict[str, int]] = {}
    for kind, status, n in (
        run.proposals.order_by().values_list("kind", "status").annotate(n=Count("id"))
    ):
        queued.setdefault(kind, {})[status] = n
    return queued


@require_GET
@login_required
@view_required
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(AgentRun.objects.select_related("requested_by"), pk=pk)
    context = {
        "run": run,
        "numbers": _numbers(run),
        "queued": _queued(run),
        # Polled every second: the revisions' texts and structures stay in the database.
        "items": list(
            run.items.select_related("source", "revision")
            .defer("revision__text", "revision__structure")
            .order_by("pk")[:500]
        )
        if run.agent == AgentRun.Agent.CONSTRUCT
        else [],
        "can_cancel": is_curator(request.user) and not run.is_finished,
        "worker": selectors.worker_status(),
        "proposals": run.proposals.count(),
        "tokens": selectors.token_use(run),
        "skipped_blocks": skipped_blocks_in_words(run.stats or {})
        if run.agent == AgentRun.Agent.HEAL
        else "",
    }
    template = "agents/run.html#run-progress" if request.htmx else "agents/run.html"
    return render(request, template, context)


@require_POST
@login_required
@curator_required
def run_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    with said(request):
        run = agent_run_cancel(run_id=pk, acting_user=request.user)
        messages.success(
            request,
            f"Run #{run.pk} will stop after the source it is reading now."
            if not run.is_finished
            else f"Run #{run.pk} cancelled.",
        )
    return redirect(reverse("agents:run", args=[pk]))


@require_POST
@login_required
@curator_required
def schedule_toggle(request: HttpRequest, pk: int) -> HttpResponse:
    schedule = get_object_or_404(PeriodicTask, pk=pk)
    if schedule.task not in {a["task"] for a in AGENTS.values()}:
        raise PermissionDenied("Only agent schedules are managed here.")
    form = ScheduleToggleForm(request.POST)
    form.is_valid()  # never invalid: only enabled=1 resumes, anything else pauses
    schedule_set_enabled(
        schedule=schedule, enabled=form.cleaned_data["enabled"], acting_user=request.user
    )
    messages.success(request, f"“{schedule.name}” {'resumed' if schedule.enabled else 'paused'}.")
    return redirect("agents:home")
