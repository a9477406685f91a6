"""Why an edge exists: /v1/edges/{id}."""

from __future__ import annotations

from datetime import datetime

from kgreview.core.forms import BIGGEST_INT
from kgreview.graph.models import Edge

from .. import schemas as s
from ..app import ApiError, answers, api, served
from ..params import instant
from ..serializers import EXPLAIN_RELATED, edge_explanation


@api.get("/v1/edges/{edge_id}", response=answers(s.ExplainOut, 404), tags=["edges"])
@served
def edge_explain(request, edge_id: int, as_of: datetime | None = None):
    """Why an edge exists: its evidence quoted in context (source and revision), the
    agent's reason and confidence, the decisions made about it, and what it replaced."""
    return edge_explain_answer(edge_id=edge_id, at=instant(as_of))


def edge_explain_answer(*, edge_id: int, at: datetime | None) -> dict:
    """An edge's explanation (``ExplainOut``), for the API and the MCP server; a 404
    ``ApiError`` in words when no edge has the id."""
    in_range = 1 <= edge_id <= BIGGEST_INT  # no row has another, and SQLite cannot be asked
    edge = (
        Edge.objects.select_related(*EXPLAIN_RELATED).filter(pk=edge_id).first()
        if in_range
        else None
    )
    if edge is None:
        raise ApiError(404, f"There is no edge with id {edge_id}.")
    return edge_explanation(edge, at=at)
