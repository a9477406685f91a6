"""The read API for downstream agents and the explorer: /api/v1/.

Read-only by construction: every operation is a GET. Agents send
``Authorization: Bearer <token>``; the browser uses its session. Every graph read takes
``as_of`` (ISO 8601; a naive time is read in the server's time zone) and then answers
from the graph as it stood at that instant.
"""

from __future__ import annotations

from datetime import datetime
from functools import wraps
from typing import Literal

from django.db.models import Q
from django.http import HttpRequest, HttpResponseBase
from django.utils import timezone
from ninja import NinjaAPI, Query
from ninja.errors import AuthenticationError
from ninja.security import HttpBearer, SessionAuth

from kgreview.core.errors import ValidationFailed
from kgreview.core.instants import aware_utc
from kgreview.core.permissions import can_view
from kgreview.graph import history, search, traversal
from kgreview.graph.models import Concept, Edge, RelationType
from kgreview.graph.selectors import concept_names, edges_active, edges_as_of
from kgreview.graph.sources import RevisionPlaces
from kgreview.review import history as review_history

from . import schemas as s
from .services import api_token_authenticate


class BearerToken(HttpBearer):
    """``Authorization: Bearer kgr_…``: a read-only token made on the API tokens page."""

    def authenticate(self, request: HttpRequest, token: str):
        found = api_token_authenticate(secret=token)
        if found is None or not can_view(found.user):
            return None
        request.user = found.user
        request.api_token = found
        return found.user


DESCRIPTION = """
Read the reviewed knowledge graph: search concepts, walk neighbourhoods, find paths,
build learning paths, explain edges, and travel in time.

**Authentication.** Every operation needs either a read-only API token
(`Authorization: Bearer kgr_…`, made on the *API tokens* page or with
`manage.py api_token create`) or a signed-in browser session.

**Time travel.** Every graph read takes `as_of` (ISO 8601). Without it the answer is the
live graph; with it, the graph as it stood at that instant: edges recorded and valid by
then and not yet retired, concepts not yet merged or retired.
"""


class BrowserSession(SessionAuth):
    """A signed-in browser session (the explorer); GETs need no CSRF token."""

    def authenticate(self, request: HttpRequest, key: str | None):
        user = super().authenticate(request, key)
        return user if user is not None and can_view(user) else None


api = NinjaAPI(
    title="kgreview graph API",
    version="1",
    description=DESCRIPTION,
    urls_namespace="api",
    auth=[BearerToken(), BrowserSession()],
)


Direction = Literal["out", "in", "both"]


class ApiError(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@api.exception_handler(ApiError)
def _api_error(request, exc: ApiError):
    return api.create_response(request, {"detail": exc.detail}, status=exc.status)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request, exc):
    return api.create_response(
        request,
        {
            "detail": "Authentication needed: send Authorization: Bearer <token> (make one "
            "on the API tokens page or with manage.py api_token create), or sign in to a "
            "browser session with a role. Revoked tokens and accounts without a role are "
            "refused."
        },
        status=401,
    )


# --- Parameters and serialisation -------------------------------------------------------

EDGE_RELATED = ("source", "target", "relation", "evidence_revision__source", "decided_by")


def _instant(value: datetime | None, name: str = "as_of") -> datetime | None:
    if value is None:
        return None
    try:
        return aware_utc(value)
    except ValidationFailed as exc:
        raise ApiError(400, f"{name}: {exc.message}") from None


def _concept(pk: int) -> Concept:
    concept = Concept.objects.select_related("merged_into").filter(pk=pk).first()
    if concept is None:
        raise ApiError(404, f"There is no concept with id {pk}.")
    return concept


def _relation_ids(keys: list[str] | None) -> tuple[list[int], list[str]]:
    if not keys:
        return [], []
    wanted = list(dict.fromkeys(k.strip() for k in keys if k and k.strip()))
    found = dict(RelationType.objects.filter(key__in=wanted).values_list("key", "pk"))
    missing = [k for k in wanted if k not in found]
    if missing:
        known = ", ".join(RelationType.objects.order_by("key").values_list("key", flat=True))
        raise ApiError(400, f"Unknown relation {', '.join(missing)}. Known relations: {known}.")
    return [found[k] for k in wanted], wanted


def _ref(concept: Concept) -> dict:
    return {"id": concept.pk, "name": concept.name}


EDGE_VALUES = (
    "id",
    "source_id",
    "source__name",
    "target_id",
    "target__name",
    "relation__key",
    "is_symmetric",
    "confidence",
    "weight",
    "reason",
    "status",
    "valid_at",
    "recorded_at",
    "invalid_at",
    "evidence_revision_id",
    "evidence_revision__source__slug",
    "evidence_revision__number",
    "evidence_start",
    "evidence_end",
    "evidence_quote",
    "proposal_id",
    "decision_id",
    "decided_by__username",
)


def edge_rows(qs, places: RevisionPlaces | None = None) -> list[dict]:
    """Edges as the API shows them (``EdgeOut``), read as plain rows in one joined query:
    lists of edges are the bulk of what agents read, and model instances would cost more
    than the query.

    Where each quote sits (page and section) comes from its revision's structure, read
    once per revision in one more query (none when ``places`` knows them all already),
    not joined to every row: a long PDF's structure would be repeated per edge.
    """
    rows = list(qs.values(*EDGE_VALUES))
    places = places or RevisionPlaces()
    places.load(r["evidence_revision_id"] for r in rows)
    out = []
    for r in rows:
        out.append(
            {
                "id": r["id"],
                "source": {"id": r["source_id"], "name": r["source__name"]},
                "relation": r["relation__key"],
                "target": {"id": r["target_id"], "name": r["target__name"]},
                "symmetric": r["is_symmetric"],
                "confidence": r["confidence"],
                "weight": r["weight"],
                "reason": r["reason"],
                "status": r["status"],
                "valid_at": r["valid_at"],
                "recorded_at": r["recorded_at"],
                "invalid_at": r["invalid_at"],
                "evidence": None
                if r["evidence_revision__number"] is None
                else {
                    "source": r["evidence_revision__source__slug"],
                    "revision": r["evidence_revision__number"],
                    "start": r["evidence_start"],
                    "end": r["evidence_end"],
                    "quote": r["evidence_quote"],
                    **places.place(r["evidence_revision_id"], r["evidence_start"]).as_json(),
                },
                "proposal_id": r["proposal_id"],
                "decision_id": r["decision_id"],
                "decided_by": r["decided_by__username"],
            }
        )
    return out


def edges_by_id(ids, places: RevisionPlaces | None = None) -> dict[int, dict]:
    """``EdgeOut`` rows for these edge ids, whatever their status (see ``edge_rows``)."""
    return {r["id"]: r for r in edge_rows(Edge.objects.filter(pk__in=list(ids)), places)}


def _edge_qs(at: datetime | None):
    return edges_active() if at is None else edges_as_of(at=at)


# --- Operations -------------------------------------------------------------------------


def served(view):
    """Render the view's dict straight to JSON.

    The response schema stays declared (it is what the OpenAPI document publishes and
    what the schemathesis tests hold every answer to), but re-validating thousands of
    nested fields on each request would cost more than the graph query itself.
    """

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        result = view(request, *args, **kwargs)
        if isinstance(result, HttpResponseBase):
            return result
        return api.create_response(request, result, status=200)

    return wrapped


def answers(ok, *codes: int) -> dict:
    """The documented responses: the answer, the refusals every operation can give
    (400 for a parameter the graph cannot answer, such as an instant out of range; 401
    without credentials; 422 for a malformed parameter) and the ones listed."""
    out = {200: ok, 400: s.Error, 401: s.Error, 422: s.ValidationErrorOut}
    for code in codes:
        out[code] = s.Error
    return out


@api.get("/v1/relations", response=answers(list[s.RelationOut]), tags=["ontology"])
@served
def relations(request, as_of: datetime | None = None):
    """The relation vocabulary (at ``as_of``): what each type means and how it behaves."""
    at = _instant(as_of)
    qs = RelationType.objects.all() if at is None else history.relations_as_of(at=at)
    return [
        {
            "key": r.key,
            "label": r.label,
            "verb": r.verb,
            "description": r.description,
            "directed": r.directed,
            "symmetric": r.symmetric,
            "acyclic": r.acyclic,
            "active": r.active if at is None else True,
            "study_order": traversal.STUDY_ORDER.get(r.key),
        }
        for r in qs.order_by("key")
    ]


@api.get("/v1/concepts", response=answers(s.SearchOut, 400), tags=["concepts"])
@served
def concept_search(
    request,
    q: str = Query(..., min_length=1, max_length=200),  # noqa: B008
    limit: int = Query(10, ge=1, le=100),  # noqa: B008
    as_of: datetime | None = None,
):
    """Fuzzy search over canonical names and aliases: exact, prefix, then fuzzy matches."""
    at = _instant(as_of)
    if not q.strip():
        raise ApiError(400, "Give a name or part of one to search for (q).")
    hits = search.concept_search(q=q, limit=limit, at=at)
    return {
        "query": q,
        "as_of": at,
        "results": [
            {
                "concept": _ref(h.concept),
                "status": h.concept.status,
                "matched_name": h.matched_name,
                "match": h.match,
                "score": h.score,
            }
            for h in hits
        ],
    }


@api.get(
    "/v1/concepts/{concept_id}",
    response=answers(s.ConceptDetailOut, 404),
    tags=["concepts"],
)
@served
def concept_detail(request, concept_id: int, as_of: datetime | None = None):
    """A concept with its names and its edges (active now, or at ``as_of``), each with
    provenance. A merged concept answers with ``merged_into``, so old ids still lead on."""
    at = _instant(as_of)
    concept = _concept(concept_id)
    existed = history.concept_existed_at(concept, at)
    edges = edge_rows(
        _edge_qs(at).filter(Q(source=concept) | Q(target=concept)).order_by("relation__key", "pk")
    )
    return {
        "id": concept.pk,
        "name": concept.name,
        "description": concept.description,
        "status": concept.status,
        "merged_into": _ref(concept.merged_into) if concept.merged_into_id else None,
        "aliases": list(
            concept.aliases.exclude(kind="canonical")
            .order_by("name")
            .values_list("name", flat=True)
        ),
        "as_of": at,
        "existed": existed,
        "outgoing": [e for e in edges if e["source"]["id"] == concept.pk],
        "incoming": [e for e in edges if e["target"]["id"] == concept.pk],
    }


@api.get(
    "/v1/concepts/{concept_id}/neighbours",
    response=answers(s.NeighboursOut, 400, 404),
    tags=["traversal"],
)
@served
def neighbours(
    request,
    concept_id: int,
    depth: int = Query(1, ge=1, le=traversal.MAX_DEPTH),  # noqa: B008
    direction: Direction = "both",
    relation: list[str] = Query(None),  # noqa: B008 - ninja's way to declare a repeated query parameter
    limit: int = Query(200, ge=1, le=traversal.NODE_LIMIT),  # noqa: B008
    as_of: datetime | None = None,
):
    """Concepts within ``depth`` steps (1–6), nearest first, and the edges among them.

    ``direction``: ``out`` follows edges from source to target, ``in`` the other way,
    ``both`` either; symmetric edges are walked both ways. ``relation`` (repeatable)
    keeps only those types. At most ``limit`` concepts; ``truncated`` says more exist.
    """
    at = _instant(as_of)
    concept = _concept(concept_id)
    rel_ids, rel_keys = _relation_ids(relation)
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
    return {
        "center": _ref(concept),
        # Whether the centre was a node of the graph at as_of (or is now).
        "existed": history.concept_existed_at(concept, at),
        "depth": depth,
        "direction": direction,
        "relations": rel_keys,
        "as_of": at,
        "nodes": [
            {"id": n, "name": names.get(n, ""), "distance": d} for n, d in found.distance.items()
        ],
        "edges": edge_rows(edges.order_by("pk")),
        "truncated": found.truncated,
    }


@api.get("/v1/path", response=answers(s.PathOut, 400, 404), tags=["traversal"])
@served
def path(
    request,
    from_id: int,
    to_id: int,
    direction: Direction = "out",
    relation: list[str] = Query(None),  # noqa: B008
    max_depth: int = Query(4, ge=1, le=traversal.MAX_DEPTH),  # noqa: B008
    as_of: datetime | None = None,
):
    """A shortest path between two concepts, within ``max_depth`` (1–6) steps."""
    at = _instant(as_of)
    start, goal = _concept(from_id), _concept(to_id)
    rel_ids, rel_keys = _relation_ids(relation)
    hops = traversal.shortest_path(
        start_id=start.pk,
        goal_id=goal.pk,
        direction=direction,
        relation_ids=rel_ids,
        at=at,
        max_depth=max_depth,
    )
    base = {
        "max_depth": max_depth,
        "direction": direction,
        "relations": rel_keys,
        "as_of": at,
    }
    if hops is None:
        return {
            **base,
            "found": False,
            "length": None,
            "concepts": [],
            "hops": [],
            "message": f"No path from {start.name} to {goal.name} within {max_depth} steps.",
        }
    edges = edges_by_id(h.edge_id for h in hops)
    ids = [start.pk] + [h.to_id for h in hops]
    names = concept_names(ids)
    return {
        **base,
        "found": True,
        "length": len(hops),
        "concepts": [{"id": i, "name": names[i]} for i in ids],
        "hops": [
            {
                "from_concept": {"id": h.from_id, "name": names[h.from_id]},
                "to_concept": {"id": h.to_id, "name": names[h.to_id]},
                "along_edge_direction": edges[h.edge_id]["source"]["id"] == h.from_id,
                "edge": edges[h.edge_id],
            }
            for h in hops
        ],
        "message": f"{start.name} reaches {goal.name} in {len(hops)} step"
        + ("" if len(hops) == 1 else "s")
        + ".",
    }


@api.get(
    "/v1/concepts/{concept_id}/learning-path",
    response=answers(s.LearningPathOut, 400, 404),
    tags=["traversal"],
)
@served
def learning_path(
    request,
    concept_id: int,
    via: list[str] = Query(None),  # noqa: B008
    as_of: datetime | None = None,
):
    """Everything the target needs, in a valid study order (foundations first).

    ``via`` (repeatable) names the ordering relations: ``prerequisite`` (the source is
    studied first; the default) and ``builds_on`` (the target is studied first). When
    the needs form a cycle, ``ok`` is false and ``cycle`` names it with its edges;
    ``blocked`` lists the concepts that wait on it.
    """
    at = _instant(as_of)
    target = _concept(concept_id)
    via = list(dict.fromkeys(via or ["prerequisite"]))
    unknown = [v for v in via if v not in traversal.STUDY_ORDER]
    if unknown:
        raise ApiError(
            400,
            f"via {', '.join(unknown)} does not order study; use "
            + " or ".join(traversal.STUDY_ORDER)
            + ".",
        )
    rel_ids, _keys = _relation_ids(via)
    orders = {rid: traversal.STUDY_ORDER[key] for rid, key in zip(rel_ids, via, strict=True)}
    result = traversal.learning_path(
        target_id=target.pk,
        relations=orders,
        at=at,
        name_lookup=concept_names,
    )
    names = result.names
    keys = dict(zip(rel_ids, via, strict=True))

    def ref(i: int) -> dict:
        return {"id": i, "name": names.get(i, "")}

    cycle = None
    if result.cycle:
        cycle_edges = edges_by_id(e.edge_id for e in result.cycle)
        members = [e.before_id for e in result.cycle]
        words = " → ".join(names.get(i, "") for i in [*members, members[0]])
        cycle = {
            "concepts": [ref(i) for i in members],
            "edges": [cycle_edges[e.edge_id] for e in result.cycle],
            "message": f"These needs form a cycle, so no study order satisfies them: {words}.",
        }
    return {
        "target": _ref(target),
        "via": via,
        "as_of": at,
        "ok": result.ok,
        "steps": [
            {
                "position": i + 1,
                "concept": ref(n),
                "level": result.level.get(n, 0),
                "needs": [
                    {
                        "concept": ref(e.before_id),
                        "relation": keys[e.relation_id],
                        "edge_id": e.edge_id,
                    }
                    for e in result.needs.get(n, [])
                ],
            }
            for i, n in enumerate(result.order)
        ],
        "cycle": cycle,
        "blocked": [ref(i) for i in result.blocked],
        "truncated": result.truncated,
    }


@api.get("/v1/edges/{edge_id}", response=answers(s.ExplainOut, 404), tags=["edges"])
@served
def edge_explain(request, edge_id: int, as_of: datetime | None = None):
    """Why an edge exists: its evidence quoted in context (source and revision), the
    agent's reason and confidence, the decisions made about it, and what it replaced."""
    at = _instant(as_of)
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
    proposal = info["proposal"]
    run = info["agent_run"]
    # The revision came whole with the edge: its place costs no query.
    places = RevisionPlaces([edge.evidence_revision] if edge.evidence_revision_id else [])
    evidence = info["evidence"]
    if evidence is not None:
        evidence = {
            **evidence,
            **places.place(edge.evidence_revision_id, edge.evidence_start).as_json(),
        }
    return {
        "edge": edges_by_id([edge.pk], places)[edge.pk],
        "claim": info["claim"],
        "as_of": at,
        "state_at": info["state_at"],
        "invalidation_reason": edge.invalidation_reason,
        "invalidated_by": edge.invalidated_by.get_username() if edge.invalidated_by_id else None,
        "evidence": evidence,
        "proposal": None
        if proposal is None
        else {
            "id": proposal.pk,
            "kind": proposal.kind,
            "confidence": proposal.confidence,
            "reason": proposal.reason,
            "created_at": proposal.created_at,
            "agent": None
            if run is None
            else {
                "run_id": run.pk,
                "agent": run.agent,
                "provider": run.provider,
                "model": run.model,
            },
        },
        "trail": info["trail"],
        "supersedes": info["supersedes"],
        "superseded_by": info["superseded_by"],
    }


@api.get("/v1/diff", response=answers(s.DiffOut, 400), tags=["time travel"])
@served
def diff(
    request,
    since: datetime,
    until: datetime | None = None,
    limit: int = Query(200, ge=1, le=1000),  # noqa: B008
):
    """What changed between two instants (``until`` defaults to now): edges added,
    invalidated, and superseded (with the row that replaced each), concepts added and
    merged. Lists hold at most ``limit`` rows each; ``counts`` has the totals."""
    start = _instant(since, "since")
    end = _instant(until, "until") or timezone.now()
    d = history.graph_diff(since=start, until=end, limit=limit)
    rows = edges_by_id(
        [e.pk for e in (*d.added, *d.invalidated)]
        + [e.pk for pair in d.superseded for e in pair if e is not None]
    )
    return {
        "since": d.since,
        "until": d.until,
        "counts": d.counts,
        "truncated": d.truncated,
        "added": [rows[e.pk] for e in d.added],
        "invalidated": [rows[e.pk] for e in d.invalidated],
        "superseded": [
            {"old": rows[old.pk], "new": rows[new.pk] if new else None} for old, new in d.superseded
        ],
        "concepts_added": [_ref(c) for c in d.concepts_added],
        "concepts_merged": [
            {
                "concept": _ref(c),
                "into": _ref(c.merged_into) if c.merged_into_id else None,
                "at": c.merged_at,
            }
            for c in d.concepts_merged
        ],
    }
