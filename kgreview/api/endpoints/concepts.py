"""Finding concepts and reading one: /v1/concepts and /v1/concepts/{id}."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q
from ninja import Query

from kgreview.graph import history, search

from .. import schemas as s
from ..app import ApiError, answers, api, served
from ..params import TEXT_PATTERN, concept_or_404, edges_at, instant
from ..serializers import concept_detail_out, edge_rows, search_out


@api.get("/v1/concepts", response=answers(s.SearchOut, 400), tags=["concepts"])
@served
def concept_search(
    request,
    q: str = Query(..., min_length=1, max_length=200, pattern=TEXT_PATTERN),  # noqa: B008
    limit: int = Query(10, ge=1, le=100),  # noqa: B008
    as_of: datetime | None = None,
):
    """Fuzzy search over canonical names and aliases: exact, prefix, then fuzzy matches."""
    at = instant(as_of)
    if not q.strip():
        raise ApiError(400, "Give a name or part of one to search for (q).")
    hits = search.concept_search(q=q, limit=limit, at=at)
    return search_out(query=q, at=at, hits=hits)


@api.get(
    "/v1/concepts/{concept_id}",
    response=answers(s.ConceptDetailOut, 404),
    tags=["concepts"],
)
@served
def concept_detail(request, concept_id: int, as_of: datetime | None = None):
    """A concept with its names and its edges (active now, or at ``as_of``), each with
    provenance. A merged concept answers with ``merged_into``, so old ids still lead on."""
    at = instant(as_of)
    concept = concept_or_404(concept_id)
    existed = history.concept_existed_at(concept, at)
    edges = edge_rows(
        edges_at(at).filter(Q(source=concept) | Q(target=concept)).order_by("relation__key", "pk")
    )
    return concept_detail_out(concept, at=at, existed=existed, edges=edges)
