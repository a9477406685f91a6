"""The curation log page: every change a person made outside a decision, newest first.

Rows are ``kgreview.core.models.AuditEntry``, written by the services that make the
changes. The page sits beside the decision log (decisions are their own audit rows) and
links each row's subject to its page where there is one, which is why it lives in the
top layer: a subject may belong to any app.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from kgreview.core.clip import clip_end
from kgreview.core.models import AuditEntry
from kgreview.core.permissions import is_curator, require
from kgreview.graph.models import Source

from .forms import CurationLogForm

PAGE_SIZE = 50
VALUE_CHARS = 60
_ABSENT = object()

curation_log_required = require(
    is_curator, "Only curators can read the curation log; the decision log is open to all."
)


@dataclass(frozen=True)
class Change:
    """One field of a subject as it was and as it became (``None``: absent)."""

    field: str
    before: str | None
    after: str | None


def entries(*, action: str = "", user: str = "") -> QuerySet[AuditEntry]:
    """Curation log rows, newest first, optionally of one action and one person."""
    qs = AuditEntry.objects.select_related("user").order_by("-created_at", "-id")
    if action:
        qs = qs.filter(action=action)
    if user:
        qs = qs.filter(user__username=user)
    return qs


def _shown(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return clip_end(text, VALUE_CHARS)


def changes(entry: AuditEntry) -> list[Change]:
    """The fields that differ between before and after, in the order they were written."""
    before, after = entry.before or {}, entry.after or {}
    keys = list(dict.fromkeys([*before, *after]))
    return [
        Change(
            field=k.replace("_", " "),
            before=_shown(before[k]) if k in before else None,
            after=_shown(after[k]) if k in after else None,
        )
        for k in keys
        if before.get(k, _ABSENT) != after.get(k, _ABSENT)
    ]


def subject_links(rows: list[AuditEntry]) -> dict[int, str]:
    """The page of each row's subject, where it has one (a concept, a relation or concept
    type, a source, an agent run), by row id. One query for the sources' slugs."""
    source_ids = [r.subject_id for r in rows if r.subject_type == "source" and r.subject_id]
    slugs = dict(
        Source.objects.filter(pk__in=[i for i in source_ids if i.isdigit()]).values_list(
            "pk", "slug"
        )
    )
    links = {}
    for r in rows:
        kind, pk = r.subject_type.replace("_", ""), r.subject_id
        if not pk.isdigit():
            continue
        if kind == "concept":
            links[r.pk] = reverse("concept-detail", args=[int(pk)])
        elif kind == "relationtype":
            links[r.pk] = f"{reverse('ontology')}#relation-{pk}"
        elif kind == "concepttype":
            links[r.pk] = f"{reverse('ontology')}#concept-type-{pk}"
        elif kind == "source" and int(pk) in slugs:
            links[r.pk] = reverse("source-detail", args=[slugs[int(pk)]])
        elif kind == "agentrun":
            links[r.pk] = reverse("agents:run", args=[int(pk)])
    return links


@require_GET
@login_required
@curation_log_required
def curation_log(request: HttpRequest) -> HttpResponse:
    """The curation log, 50 rows a page, filtered by action and person. An htmx request
    (the filters changing, a page link) gets the results alone."""
    form = CurationLogForm(request.GET)
    filters = form.filters()
    page = Paginator(entries(**filters), PAGE_SIZE).get_page(form.page_number())
    rows = list(page.object_list)
    links = subject_links(rows)
    for row in rows:
        row.link = links.get(row.pk, "")
        row.changes = changes(row)
    context = {
        "form": form,
        "page": page,
        "rows": rows,
        "errors": form.problems(),
        "q": urlencode(sorted(filters.items())),
    }
    if request.htmx:
        return render(request, "web/curation_log.html#curation-results", context)
    return render(request, "web/curation_log.html", context)
