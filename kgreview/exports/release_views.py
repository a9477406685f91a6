"""The releases' pages: the list (with the builds under way), one release, its files,
and the curators' form that asks for a new one. Thin: a form, a service, a template."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from kgreview.core.errors import DomainError
from kgreview.core.permissions import is_curator, require, view_required
from kgreview.core.refusals import said

from .forms import ReleaseForm
from .releases import downloads, selectors
from .releases.files import STORED, VALIDATION
from .releases.services import release_build_retry, release_request

CUT_ONLY_CURATORS = (
    "Only curators can cut a release: a release says what the team vouches for. Ask a "
    "curator, or download an export of the graph as of any instant on the Exports page."
)
curators_only = require(is_curator, CUT_ONLY_CURATORS)


def _list_context(request: HttpRequest, form: ReleaseForm | None = None, **extra) -> dict:
    builds = selectors.recent_builds()
    return {
        "releases": list(selectors.releases()),
        "builds": builds,
        "building": any(b.is_open for b in builds),
        "can_cut": is_curator(request.user),
        "release_form": form or ReleaseForm(),
        "stored": [*STORED, VALIDATION],
        **extra,
    }


@require_GET
@login_required
@view_required
def index(request: HttpRequest) -> HttpResponse:
    """Every release, latest first, and the builds asked for; htmx asks for the builds'
    region alone while one is under way (it polls)."""
    context = _list_context(request)
    if request.htmx:
        # The builds' region, and the list of releases out of band: a build that just
        # finished shows its release in the list too.
        builds = render_to_string("exports/releases.html#release-builds", context, request)
        listed = render_to_string(
            "exports/releases.html#release-list", {**context, "oob": True}, request
        )
        return HttpResponse(builds + listed)
    return render(request, "exports/releases.html", context)


@require_POST
@login_required
@curators_only
def cut(request: HttpRequest) -> HttpResponse:
    """Ask for a release (a curator). Without htmx: back to the Releases page, where its
    build shows; refused, the form again with the words. With htmx: the form's card."""
    form = ReleaseForm(request.POST)
    error = None
    build = None
    if form.is_valid():
        try:
            build = release_request(
                name=form.cleaned_data["name"],
                as_of=form.cleaned_data["as_of"],
                notes=form.cleaned_data["notes"],
                acting_user=request.user,
            )
        except DomainError as exc:
            if exc.status in (403, 404):
                raise
            error = exc
    if build is not None:
        build.refresh_from_db()  # an eager worker (the embedded default) may be done already
    status = 200 if build is not None else (error.status if error else 400)
    if request.htmx:
        context = {
            "release_form": ReleaseForm() if build else form,
            "error": error.message if error else None,
            "build": build,
            "can_cut": True,
        }
        response = render(request, "exports/release_cut.html#release-cut", context, status=status)
        if build is not None:
            response["HX-Trigger"] = "releaseAsked"  # the Releases page shows the new build
        return response
    if build is not None:
        messages.success(request, f'Release "{build.name}" asked for; it shows below.')
        return redirect(reverse("releases:index"))
    context = _list_context(request, form, error=error.message if error else None)
    return render(request, "exports/releases.html", context, status=status)


@require_POST
@login_required
@curators_only
def retry(request: HttpRequest, pk: int) -> HttpResponse:
    """Ask again for the release a failed build asked for (a curator), then back to the
    Releases page, where the new build shows; refused in words as a message."""
    with said(request):
        build = release_build_retry(build_id=pk, acting_user=request.user)
        messages.success(request, f'Release "{build.name}" asked for again; it shows below.')
    return redirect(reverse("releases:index"))


@require_GET
@login_required
@view_required
def detail(request: HttpRequest, name: str) -> HttpResponse:
    """One release: its notes, its files with sizes and hashes, its validation report."""
    release = selectors.release_named(name)
    return render(
        request,
        "exports/release.html",
        {"release": release, "changes": release.changes, "report": release.validation},
    )


@require_GET
@login_required
@view_required
def download(request: HttpRequest, name: str, filename: str) -> HttpResponseBase:
    """A release's file at its stable address, named by its stored SHA-256 (ETag,
    Repr-Digest), checked against it first; a changed one is refused in words (409),
    never served (``releases.downloads``)."""
    release = selectors.release_named(name)
    return downloads.file_response(request, selectors.release_file(release, filename))
