"""The Ontology page's bootstrap panel: start a bootstrap (curators) and watch it."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from kgreview.core.forms import errors_in_words
from kgreview.core.links import url
from kgreview.core.permissions import curator_required, is_curator, view_required

from .bootstrap import DEFAULT_SAMPLE
from .forms import BootstrapForm
from .models import AgentRun
from .run_now import bootstrap_now

PANEL = "agents/_bootstrap.html"


def panel_context(user, *, words: str = "", refused: str = "") -> dict:
    """What the panel shows: the last bootstrap run, and whether this person may start one."""
    last = (
        AgentRun.objects.filter(agent=AgentRun.Agent.BOOTSTRAP)
        .order_by("-created_at", "-id")
        .first()
    )
    return {
        "last": last,
        "can_run": is_curator(user),
        "default_sample": DEFAULT_SAMPLE,
        "words": words,
        "refused": refused,
    }


@require_GET
@login_required
@view_required
def bootstrap_panel(request: HttpRequest) -> HttpResponse:
    """The panel alone: polled while a run is going."""
    return render(request, PANEL, panel_context(request.user))


@require_POST
@login_required
@curator_required
def bootstrap_start(request: HttpRequest) -> HttpResponse:
    form = BootstrapForm(request.POST)
    if not form.is_valid():
        words = errors_in_words(form)
        if request.htmx:
            return render(request, PANEL, panel_context(request.user, refused=words), status=400)
        messages.error(request, words)
        return redirect(url("ontology"))
    sample = form.cleaned_data["sample_chunks"]
    started = bootstrap_now(
        acting_user=request.user,
        sample_chunks=DEFAULT_SAMPLE if sample is None else (sample or None),
    )
    if request.htmx:
        return render(request, PANEL, panel_context(request.user, words=started.words))
    (messages.success if started.queued else messages.error)(request, started.words)
    assert started.run is not None
    return redirect("agents:run", pk=started.run.pk)
