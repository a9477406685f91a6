"""Why an edge exists: /v1/edges/{id}."""

from __future__ import annotations

from datetime import datetime

from kgreview.graph.models import Edge
from kgreview.graph.sources import RevisionPlaces
from kgreview.review import history as review_history

from .. import schemas as s
from ..app import ApiError, answers, api, served
from ..params import instant
from ..serializers import EDGE_RELATED, edges_by_id, explain_out


@api.get("/v1/edges/{edge_id}", response=answers(s.ExplainOut, 404), tags=["edges"])
@served
def edge_explain(request, edge_id: int, as_of: datetime | None = None):
    """Why an edge exists: its evidence quoted in context (source and revision), the
    agent's reason and confidence, the decisions made about it, and what it replaced."""
    at = instant(as_of)
    edge = (
        Edge.objects.select_related(
            *EDGE_RELATED, "invalidated_by", "evidence_revision__source__current_revision"
        )
        .filter(pk=edge_id)
        .first()
    )
    if edge is None:
        raise ApiError(404, f"There is no edge with id {edge_id}.")
    info = review_history.edge_explain(edge=edge, at=at)
    # The revision came whole with the edge: its place costs no query.
    places = RevisionPlaces([edge.evidence_revision] if edge.evidence_revision_id else [])
    evidence = info["evidence"]
    if evidence is not None:
        evidence = {
            **evidence,
            **places.place(edge.evidence_revision_id, edge.evidence_start).as_json(),
        }
    return explain_out(
        edge=edge,
        info=info,
        at=at,
        edge_row=edges_by_id([edge.pk], places)[edge.pk],
        evidence=evidence,
    )
