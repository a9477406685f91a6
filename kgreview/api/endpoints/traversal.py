"""Walking the graph: neighbourhoods, shortest paths and learning paths."""

from __future__ import annotations

from datetime import datetime

from ninja import Query

from kgreview.graph import history, learning, traversal
from kgreview.graph.models import Concept, RelationType
from kgreview.graph.selectors import concept_names

from .. import schemas as s
from ..app import ApiError, answers, api, served
from ..params import Direction, Text, concept_or_404, instant, relation_ids
from ..serializers import (
    edge_rows,
    edges_by_id,
    learning_path_out,
    neighbours_out,
    path_out,
)
from ..throttle import EVERY, HEAVY

#: Steps in one learning-path answer by default, and at most: a 20k-concept closure in
#: one answer was 7 MB, so it comes in pages.
STEPS_PAGE = 500
STEPS_PAGE_MAX = 2000


@api.get(
    "/v1/concepts/{concept_id}/neighbours",
    response=answers(s.NeighboursOut, 400, 404),
    tags=["traversal"],
    throttle=[EVERY, HEAVY],
)
@served
def neighbours(
    request,
    concept_id: int,
    depth: int = Query(1, ge=1, le=traversal.MAX_DEPTH),  # noqa: B008
    direction: Direction = "both",
    relation: list[Text] = Query(None),  # noqa: B008 - ninja's way to declare a repeated query parameter
    limit: int = Query(200, ge=1, le=traversal.NODE_LIMIT),  # noqa: B008
    as_of: datetime | None = None,
):
    """Concepts within ``depth`` steps (1–6), nearest first, and the edges among them.

    ``direction``: ``out`` follows edges from source to target, ``in`` the other way,
    ``both`` either; symmetric edges are walked both ways. ``relation`` (repeatable)
    keeps only those types. At most ``limit`` concepts; ``truncated`` says more exist.
    """
    return neighbours_answer(
        concept=concept_or_404(concept_id),
        depth=depth,
        direction=direction,
        relations=relation,
        limit=limit,
        at=instant(as_of),
    )


def neighbours_answer(
    *,
    concept: Concept,
    depth: int,
    direction: Direction,
    relations: list[str] | None,
    limit: int,
    at: datetime | None,
) -> dict:
    """A neighbourhood's answer (``NeighboursOut``), for the API and the MCP server."""
    rel_ids, rel_keys = relation_ids(relations)
    found = traversal.ball(
        start_id=concept.pk,
        depth=depth,
        direction=direction,
        relation_ids=rel_ids,
        at=at,
        limit=limit,
    )
    names = concept_names(found.distance)
    edges = traversal.edges_within(node_ids=found.distance, relation_ids=rel_ids, at=at)
    return neighbours_out(
        center=concept,
        existed=history.concept_existed_at(concept, at),
        depth=depth,
        direction=direction,
        relations=rel_keys,
        at=at,
        found=found,
        names=names,
        edges=edge_rows(edges.order_by("pk")),
        types=history.concept_types_at(list(found.distance), at=at),
    )


@api.get(
    "/v1/path",
    response=answers(s.PathOut, 400, 404),
    tags=["traversal"],
    throttle=[EVERY, HEAVY],
)
@served
def path(
    request,
    from_id: int,
    to_id: int,
    direction: Direction = "out",
    relation: list[Text] = Query(None),  # noqa: B008
    max_depth: int = Query(4, ge=1, le=traversal.MAX_DEPTH),  # noqa: B008
    as_of: datetime | None = None,
):
    """A shortest path between two concepts, within ``max_depth`` (1–6) steps."""
    return path_answer(
        start=concept_or_404(from_id),
        goal=concept_or_404(to_id),
        direction=direction,
        relations=relation,
        max_depth=max_depth,
        at=instant(as_of),
    )


def path_answer(
    *,
    start: Concept,
    goal: Concept,
    direction: Direction,
    relations: list[str] | None,
    max_depth: int,
    at: datetime | None,
) -> dict:
    """A shortest path's answer (``PathOut``), for the API and the MCP server."""
    rel_ids, rel_keys = relation_ids(relations)
    hops = traversal.shortest_path(
        start_id=start.pk,
        goal_id=goal.pk,
        direction=direction,
        relation_ids=rel_ids,
        at=at,
        max_depth=max_depth,
    )
    edges, names = {}, {}
    if hops is not None:
        edges = edges_by_id(h.edge_id for h in hops)
        names = concept_names([start.pk] + [h.to_id for h in hops])
    return path_out(
        start=start,
        goal=goal,
        max_depth=max_depth,
        direction=direction,
        relations=rel_keys,
        at=at,
        hops=hops,
        edges=edges,
        names=names,
    )


def _too_long(name: str, limit: int, depth: int | None) -> str:
    """Why a learning path was refused, and what to ask instead."""
    within = f" within {depth} steps" if depth else ""
    said = (
        f"“{name}” needs more than {limit - 1:,} concepts{within}, more than one learning "
        f"path holds (KG_LEARNING_PATH_LIMIT is {limit:,} concepts, the target included)."
    )
    if depth == 1:
        return said + " Even its direct needs are too many: read them as neighbours instead."
    fewer = (depth or traversal.MAX_DEPTH + 1) - 1
    return said + f" Ask for fewer levels: depth=1 to {fewer}."


@api.get(
    "/v1/concepts/{concept_id}/learning-path",
    response=answers(s.LearningPathOut, 400, 404),
    tags=["traversal"],
    throttle=[EVERY, HEAVY],
)
@served
def learning_path(
    request,
    concept_id: int,
    via: list[Text] = Query(None),  # noqa: B008
    as_of: datetime | None = None,
    limit: int = Query(STEPS_PAGE, ge=1, le=STEPS_PAGE_MAX),  # noqa: B008
    offset: int = Query(0, ge=0, le=1_000_000),  # noqa: B008
    depth: int | None = Query(None, ge=1, le=traversal.MAX_DEPTH),  # noqa: B008
):
    """Everything the target needs, in a valid study order (foundations first).

    One answer holds at most ``limit`` steps (default 500, at most 2000) from
    ``offset``; ``total_steps`` counts them all and ``next_offset`` asks for the next
    page (null on the last one). ``depth`` (1–6) keeps only the needs at most that many
    steps away ("what to study in the last three steps before it").

    A learning path holds at most ``KG_LEARNING_PATH_LIMIT`` concepts (2,000 unless
    configured), the target included; a target that needs more is refused (400) in
    words, naming the limit: ask again with a ``depth``.

    ``via`` (repeatable) names the ordering relations: ``prerequisite`` (the source is
    studied first; the default) and ``builds_on`` (the target is studied first). When
    the needs form a cycle, ``ok`` is false and ``cycle`` names it with its edges;
    ``blocked`` lists the concepts that wait on it.
    """
    return learning_path_answer(
        target=concept_or_404(concept_id),
        via=via,
        at=instant(as_of),
        limit=limit,
        offset=offset,
        depth=depth,
    )


def learning_path_answer(
    *,
    target: Concept,
    via: list[str] | None,
    at: datetime | None,
    limit: int,
    offset: int,
    depth: int | None,
) -> dict:
    """A learning path's answer (``LearningPathOut``), for the API and the MCP server;
    refused with an ``ApiError`` in words (an ordering relation unknown or retired, a
    path too long for one answer, an offset past its end)."""
    via = list(dict.fromkeys(via or ["prerequisite"]))
    unknown = [v for v in via if v not in learning.STUDY_ORDER]
    if unknown:
        raise ApiError(
            400,
            f"via {', '.join(unknown)} does not order study; use "
            + " or ".join(learning.STUDY_ORDER)
            + ".",
        )
    rel_ids, _keys = relation_ids(via)
    retired = set(
        RelationType.objects.filter(pk__in=rel_ids, active=False).values_list("key", flat=True)
    )
    if at is None and retired == set(via):
        # A graph whose vocabulary has no ordering relation (a team's documentation
        # graph): an empty path would read as "nothing to learn first", which is not known.
        raise ApiError(
            400,
            f"{' and '.join(via)} {'is' if len(via) == 1 else 'are'} retired in this graph, "
            "so nothing orders study now; ask with as_of for the graph as it was, or see "
            "its relations at /api/v1/relations.",
        )
    orders = {rid: learning.STUDY_ORDER[key] for rid, key in zip(rel_ids, via, strict=True)}
    limit_concepts = learning.learning_path_limit()
    result = learning.learning_path(
        target_id=target.pk,
        relations=orders,
        at=at,
        name_lookup=concept_names,
        limit=limit_concepts,
        depth=depth,
    )
    if result.truncated:
        raise ApiError(400, _too_long(target.name, limit_concepts, depth))
    if offset and offset >= len(result.order):
        raise ApiError(
            400,
            f"offset {offset} is past the last step: this learning path has "
            f"{len(result.order)} steps.",
        )
    return learning_path_out(
        target=target,
        via=via,
        at=at,
        result=result,
        keys=dict(zip(rel_ids, via, strict=True)),
        cycle_edges=edges_by_id(e.edge_id for e in result.cycle) if result.cycle else {},
        offset=offset,
        limit=limit,
    )
