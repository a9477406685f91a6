"""The Ontology page's upload of a vocabulary (SKOS, OWL): one file, queued as one batch
of proposals by ``agents.ontology_import``. Curators only.

Thin, like the source upload it mirrors: the size limit is in place before the body is
parsed (a file past ``KG_VOCABULARY_MAX_BYTES`` is skipped as it streams in, never kept),
the form reads the fields, the service does the rest. With htmx the section answers in
place (its result, or the refusal in words above the form); without, the Ontology page
says it as a message.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from kgreview.agents.models import AgentRun
from kgreview.agents.ontology_import import ImportSummary, ontology_import
from kgreview.core.errors import DomainError
from kgreview.core.middleware import parses_own_body
from kgreview.core.permissions import curator_required
from kgreview.graph import upload

from .forms import VocabularyImportForm

TEMPLATE = "web/_vocabulary_import.html"


def _answer(
    request: HttpRequest, *, summary: ImportSummary | None = None, error: str = ""
) -> HttpResponse:
    if request.htmx:
        return render(
            request,
            TEMPLATE,
            {"can_curate": True, "import_summary": summary, "import_error": error},
        )
    if error:
        messages.error(request, f"The vocabulary was not imported: {error}")
    elif summary is not None:
        messages.success(request, said(summary))
    return redirect(reverse("ontology") + "#vocabulary-import")


def said(summary: ImportSummary) -> str:
    """The import in one sentence, for the page's message."""
    left = len(summary.skipped)
    return (
        f"Imported {summary.source_slug}: {summary.total} proposal"
        f"{'s' if summary.total != 1 else ''} queued as run #{summary.run_id}"
        + (f"; {left} thing{'s' if left != 1 else ''} left out" if left else "")
        + "."
    )


@parses_own_body  # the size limit must be in place before the body is parsed
@csrf_exempt  # checked by _vocabulary_import, once the size limit is in place
@require_POST
@login_required
@curator_required
def vocabulary_import(request: HttpRequest) -> HttpResponse:
    """Import one vocabulary file as a batch of proposals."""
    limit = upload.SizeLimit(max_bytes=settings.KG_VOCABULARY_MAX_BYTES)
    request.upload_handlers.insert(0, limit)
    try:
        request.FILES  # noqa: B018 (parse the body now, behind the limit)
    except (SuspiciousOperation, MultiPartParserError):
        return _answer(request, error="the upload could not be read; send one file again.")
    return _vocabulary_import(request, limit)


@csrf_protect
def _vocabulary_import(request: HttpRequest, limit: upload.SizeLimit) -> HttpResponse:
    if limit.refused:
        size = upload.human_size(settings.KG_VOCABULARY_MAX_BYTES)
        return _answer(
            request,
            error=f"the file is over the limit of {size} for a vocabulary "
            "(KG_VOCABULARY_MAX_BYTES); nothing was saved.",
        )
    form = VocabularyImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return _answer(request, error=form.problem())
    data = form.cleaned_data
    try:
        summary = ontology_import(
            raw=data["file"].read(),
            filename=upload.clean_name(data["file"].name) or "vocabulary",
            syntax=data["syntax"] or None,
            relation_map=[data["map"]] if data["map"] else [],
            lang=data["lang"] or "en",
            acting_user=request.user,
            trigger=AgentRun.Trigger.MANUAL,
        )
    except DomainError as exc:
        return _answer(request, error=exc.message)
    return _answer(request, summary=summary)
