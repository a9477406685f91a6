"""Finding concepts and reading one: /v1/concepts and /v1/concepts/{id}."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q
from ninja import Query

from kgreview.graph import history, rules, search
from kgreview.graph.models import Concept
from kgreview.graph.type_selectors import type_family

from .. import schemas as s
from ..app import ApiError, answers, api, served
from ..params import TEXT_PATTERN, concept_or_404, edges_at, instant
from ..serializers import concept_detail_out, edge_rows, search_out

#: How far down the name matches a search with a type filter looks.
TYPED_DEPTH = 500


@api.get("/v1/concepts", response=answers(s.SearchOut, 400), tags=["concepts"])
@served
def concept_search(
    request,
    q: str = Query(..., min_length=1, max_length=200, pattern=TEXT_PATTERN),  # noqa: B008
    limit: int = Query(10, ge=1, le=100),  # noqa: B008
    as_of: datetime | None = None,
    type: str | None = Query(None, max_length=200, pattern=TEXT_PATTERN),  # noqa: A002, B008
):
    """Fuzzy search over canonical names and aliases: exact, prefix, then fuzzy matches.
    ``type``: only concepts of that type or a type below it (at ``as_of``)."""
    return concept_search_answer(q=q, limit=limit, at=instant(as_of), type=type)


def concept_search_answer(*, q: str, limit: int, at: datetime | None, type: str | None) -> dict:  # noqa: A002
    """The search's answer (``SearchOut``), for the API and the MCP server; refused with
    an ``ApiError`` or a ``DomainError`` in words."""
    if not q.strip():
        raise ApiError(400, "Give a name or part of one to search for (q).")
    family = None
    if type is not None:
        family = type_family(type)
        if family is None:
            raise rules.type_key_refusal(type) or rules.no_type(type)
    # A type filter looks further down the matches, then keeps the first ``limit``.
    hits = search.concept_search(q=q, limit=limit if family is None else TYPED_DEPTH, at=at)
    types = history.concept_types_at([h.concept.pk for h in hits], at=at)
    if family is not None:
        hits = [h for h in hits if (t := types[h.concept.pk]) is not None and t.pk in family]
        hits = hits[:limit]
    return search_out(query=q, at=at, hits=hits, types=types)


@api.get(
    "/v1/concepts/{concept_id}",
    response=answers(s.ConceptDetailOut, 404),
    tags=["concepts"],
)
@served
def concept_detail(request, concept_id: int, as_of: datetime | None = None):
    """A concept with its names and its edges (active now, or at ``as_of``), each with
    provenance. A merged concept answers with ``merged_into``, so old ids still lead on."""
    return concept_detail_answer(concept=concept_or_404(concept_id), at=instant(as_of))


def concept_detail_answer(*, concept: Concept, at: datetime | None) -> dict:
    """A concept's answer (``ConceptDetailOut``), for the API and the MCP server."""
    existed = history.concept_existed_at(concept, at)
    edges = edge_rows(
        edges_at(at).filter(Q(source=concept) | Q(target=concept)).order_by("relation__key", "pk")
    )
    return concept_detail_out(concept, at=at, existed=existed, edges=edges)
