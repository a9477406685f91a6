"""Pages that combine apps: the sources home (with the review totals), a source with the
proposals quoting it, a concept with its open proposals, the ontology with the relations
agents met, and the worker's status. Thin: read the input through a form, select, render.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_http_methods, require_safe

from kgreview.agents.selectors import unknown_relations, worker_status
from kgreview.core.errors import ValidationFailed
from kgreview.core.forms import errors_in_words
from kgreview.core.markup import Span
from kgreview.core.middleware import parses_own_body
from kgreview.core.permissions import can_decide, curator_required, is_curator, view_required
from kgreview.graph import (
    attribute_selectors,
    pattern_book,
    selectors,
    sourcepage,
    type_selectors,
    upload,
)
from kgreview.graph.models import Concept, Source, SourceFile
from kgreview.graph.sources import place_of, revision_structure
from kgreview.review import provenance, talk
from kgreview.review.models import Proposal
from kgreview.review.team import doubling
from kgreview.review.workspace import pending
from kgreview.review.workspace.selectors import STATUS_RANK

from . import health
from .forms import ConceptPageForm, SourcePageForm


def _home_context(request: HttpRequest) -> dict:
    sources = list(selectors.source_list())
    for source in sources:
        revision = source.current_revision
        source.format_label = sourcepage.format_label(revision.media_type) if revision else ""
        source.pages = revision.page_count if revision else 0
    return {
        "sources": sources,
        "totals": {**selectors.graph_totals(), **pending.proposal_totals()},
        "can_upload": is_curator(request.user),
        # The questions this reader asked that someone answered (review.talk).
        "answers": talk.answers_for(request.user) if can_decide(request.user) else [],
        "max_bytes": settings.KG_MAX_SOURCE_BYTES,
        "max_size": upload.human_size(settings.KG_MAX_SOURCE_BYTES),
        "accept": upload.ACCEPT,
    }


@require_GET
@login_required
@view_required
def home(request: HttpRequest) -> HttpResponse:
    if request.htmx:  # after an upload: the table, and the totals out of band
        context = {**_home_context(request), "oob_totals": True}
        return render(request, "web/home.html#source-table", context)
    return render(request, "web/home.html", _home_context(request))


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def _upload_answer(
    request: HttpRequest, results: list[upload.UploadResult], status: int, problem: str = ""
) -> HttpResponse:
    if _wants_json(request):
        body: dict = {"results": [r.as_json() for r in results]}
        if problem:
            body["error"] = problem
        return JsonResponse(body, status=status)
    context = {
        "upload_results": results,
        "upload_problem": problem,
        "any_stored": any(r.ok and r.outcome != "unchanged" for r in results),
    }
    if request.htmx:
        return render(request, "web/home.html#upload-results", context, status=status)
    return render(request, "web/home.html", {**_home_context(request), **context}, status=status)


NO_FILE = (
    "No file arrived: choose at least one file to upload (a file whose name is not UTF-8 "
    "text is dropped on the way)."
)


# The files are read from request.FILES, not through a form: the size limit must be in
# place before the body is parsed, and each file gets its own result in words (a form
# would refuse the whole upload for one bad file).
@parses_own_body  # the size limit must be in place before the body is parsed
@csrf_exempt  # checked by _source_upload, once the size limit is in place
@require_http_methods(["GET", "POST"])
@login_required
@curator_required
def source_upload(request: HttpRequest) -> HttpResponse:
    """Documents from the browser: each file its own result (JSON for script, else HTML)."""
    if request.method == "GET":
        return redirect("home")
    limit = upload.SizeLimit(max_bytes=settings.KG_MAX_SOURCE_BYTES)
    request.upload_handlers.insert(0, limit)
    try:
        files = request.FILES.getlist(upload.FIELD)
    except SuspiciousOperation as exc:  # too many files, or fields over the memory limit
        if exc.__class__.__name__ == "TooManyFilesSent":
            words = (
                f"too many files in one upload: send at most "
                f"{settings.DATA_UPLOAD_MAX_NUMBER_FILES} at a time"
            )
            return _upload_answer(request, [], 400, words)
        return _upload_answer(request, [], 413, "the form is larger than the server accepts")
    except MultiPartParserError as exc:
        return _upload_answer(request, [], 400, f"the upload could not be read: {exc}")
    return _source_upload(request, files, limit)


@csrf_protect
def _source_upload(request: HttpRequest, files: list, limit: upload.SizeLimit) -> HttpResponse:
    if not files and not limit.refused:
        return _upload_answer(request, [], 400, NO_FILE)
    results = upload.upload_files(
        files, refused=limit.refused, acting_user=request.user, max_bytes=limit.max_bytes
    )
    return _upload_answer(request, results, upload.status_for(results))


@require_GET
@login_required
@view_required
def source_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """A revision's text with every proposal quoting it highlighted and linked."""
    source = get_object_or_404(Source.objects.select_related("current_revision"), slug=slug)
    form = SourcePageForm(request.GET)
    revision = form.revision_of(source)
    if revision is None:
        return render(
            request,
            "graph/source_missing.html",
            {"source": source, "problem": f"{source.slug} has no text yet."},
            status=404,
        )
    proposals = list(
        Proposal.objects.filter(evidence_revision=revision)
        # With what each kind's row names (``kind_part "row"``): its ends and relation.
        .select_related("source_concept", "target_concept", "relation")
        .only(
            *("id", "kind", "status", "payload", "evidence_start", "evidence_end"),
            *("source_concept", "target_concept", "relation"),
        )
        .order_by("evidence_start", "id")
    )
    quoted = [p for p in proposals if p.evidence_start is not None and p.evidence_end is not None]
    structure = revision_structure(revision)
    if form.wants_place():
        at, page = form.place()
        fragment = sourcepage.fragment_for(
            at=at,
            page=page,
            structure=structure,
            quotes=[(p.evidence_start, p.evidence_end) for p in quoted],
        )
        url = reverse("source-detail", args=[source.slug])
        if form.names_a_revision():
            url += f"?rev={revision.number}"
        return redirect(url + (f"#{fragment}" if fragment else ""))
    # Each quote links to its proposal; where quotes overlap, the most open one wins. The
    # first quote (by that rank) starting at an offset gets the #q-START anchor.
    first: dict[int, Proposal] = {}
    for p in sorted(quoted, key=lambda p: (STATUS_RANK.get(p.status, 9), p.pk)):
        first.setdefault(p.evidence_start, p)
    anchors = {str(p.pk): sourcepage.quote_anchor(start) for start, p in first.items()}
    spans = [
        Span(
            p.evidence_start,
            p.evidence_end,
            tag="a",
            attrs={
                "href": reverse("review:proposal", args=[p.pk]),
                "class": f"hl status-{p.status}",
            },
            key=str(p.pk),
            label=f"#{p.pk} {p.status}",
            rank=STATUS_RANK.get(p.status, 9),
        )
        for p in quoted
    ]
    for p in proposals:
        p.place = place_of(revision, p.evidence_start).label if p.evidence_end is not None else ""
    return render(
        request,
        "web/source_detail.html",
        {
            "source": source,
            "revision": revision,
            "revisions": _revisions(source),
            "text_html": sourcepage.render_revision(revision, spans, anchors),
            "format_label": sourcepage.format_label(revision.media_type),
            "pages": len(structure.pages),
            "outline": sourcepage.outline(structure),
            "n_sections": len(structure.sections),
            "original": _original_facts(revision),
            "proposals": proposals,
            "can_decide": can_decide(request.user),
        },
    )


def _revisions(source: Source) -> list:
    return list(
        source.revisions.order_by("-number").only(
            "number", "sha256", "created_at", "title", "origin", "filename", "media_type"
        )
    )


def _original_facts(revision) -> dict | None:
    if revision.original_id is None:
        return None
    row = SourceFile.objects.filter(pk=revision.original_id).values("size", "media_type").first()
    if row is None:
        return None
    return {
        "filename": revision.filename or "",
        "size": upload.human_size(row["size"]),
        "media_type": row["media_type"],
    }


@require_GET
@login_required
@view_required
@never_cache
def worker_badge(request: HttpRequest) -> HttpResponse:
    return render(request, "base.html#worker-badge", {"worker": worker_status()})


@require_safe  # load balancers probe with HEAD as often as with GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """Health, always JSON: the database, the broker, the rate limits' cache, the worker's
    and beat's heartbeats and the free disk (``web.health``). 503 when a part fails,
    ``down`` naming the failing parts and ``words`` saying why in words.

    ``?need=database,disk`` (any of the parts) makes only those decide the status: a load
    balancer keeps a web server whose pages work while the worker is down. Every part is
    still reported; failing parts that were not needed make the status ``degraded``.
    """
    raw = request.GET.get("need", "")
    need = {part.strip() for part in raw.split(",") if part.strip()} or set(health.PARTS)
    unknown = sorted(need - set(health.PARTS))
    if unknown:
        return JsonResponse(
            {
                "detail": f"need names parts /healthz does not know: {', '.join(unknown)}. "
                f"Use any of {', '.join(health.PARTS)}, separated by commas."
            },
            status=400,
        )
    found = health.health()
    failing = found.failing
    status = "down" if set(failing) & need else "degraded" if failing else "ok"
    return JsonResponse(
        {"status": status, "down": failing, **found.report, "words": found.words},
        status=503 if status == "down" else 200,
    )


@require_GET
@login_required
@view_required
def concept_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """A concept's names, edges, sources and attribute values (``?as_of=``: the values it
    held then), with the open proposals about it."""
    form = ConceptPageForm(request.GET)
    if not form.is_valid():
        raise ValidationFailed(errors_in_words(form))
    as_of = form.cleaned_data["as_of"]
    concept = get_object_or_404(
        Concept.objects.select_related("merged_into", "type__parent"), pk=pk
    )
    selectors.with_survivors([concept])
    profile = selectors.concept_profile(concept)
    # The canonical name first, then aliases, then names that came with merges.
    order = {"canonical": 0, "alias": 1}
    profile["names"].sort(key=lambda n: (order.get(n.kind, 2), n.name.casefold()))
    return render(
        request,
        "web/concept.html",
        {
            **profile,
            "proposals": pending.open_proposals_touching(concept),
            "attribute_lines": _with_decisions(
                attribute_selectors.concept_attributes(concept, at=as_of)
            ),
            "as_of": as_of,
            "concept_types": type_selectors.assignable_types() if is_curator(request.user) else [],
            "can_curate": is_curator(request.user),
            "can_decide": can_decide(request.user),
        },
    )


def _with_decisions(lines: list) -> list[tuple]:
    """Each attribute line with the decision that set its value (None: set by hand, or
    no value), read in one query."""
    decided = provenance.value_decisions(line.value.pk for line in lines if line.value)
    return [(line, decided.get(line.value.pk) if line.value else None) for line in lines]


def _with_double_review(relations):
    """Each relation type with the share of its proposals double review sends to two
    reviewers (``double_share``: the curator's own, None for the default) and whether its
    reviewers agree too little (``low_agreement``)."""
    rows = doubling.shares()
    for r in relations:
        row = rows.get(r.pk)
        r.double_share = row.share if row is not None else None
        r.low_agreement = bool(row is not None and row.low_agreement)
    return relations


@require_GET
@login_required
@view_required
def ontology(request: HttpRequest) -> HttpResponse:
    """The concept types (with their parents and concepts counted), the relation
    vocabulary with its edges and open proposals counted, and the relations agents met
    that it lacks."""
    return render(
        request,
        "web/ontology.html",
        {
            "concept_types": type_selectors.concept_type_overview(),
            "relation_patterns": pattern_book.pattern_overview(),
            "attributes": attribute_selectors.attribute_overview(),
            "attribute_datatypes": attribute_selectors.DATATYPES,
            "relations": _with_double_review(
                pending.with_open_counts(selectors.relation_overview())
            ),
            "default_share": doubling.global_share(),
            "unknown": unknown_relations(),
            "min_support": settings.KG_DISCOVERY_MIN_SUPPORT,
            "min_sources": settings.KG_DISCOVERY_MIN_SOURCES,
            "can_curate": is_curator(request.user),
            "examples": talk.active_examples(),
        },
    )
