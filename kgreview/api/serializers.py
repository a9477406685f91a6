"""The API's answers, built by one small function per shape of ``schemas.py``.

Each function takes rows already read (or, for edges, the query to read them from) and
returns the plain dict its schema describes (``edge_explanation`` also reads the edge's
history, so that the endpoint and its test compose the explanation one way); the
endpoints render these dicts straight to JSON (see ``app.served``), and
tests/api/test_serializers.py holds each one to its schema. Keys keep the schema's
order, which is the order the JSON is written in.
"""

from __future__ import annotations

from datetime import datetime

from kgreview.graph import learning, traversal
from kgreview.graph.history import EDGE_RELATED, GraphDiff, attribute_values_at, concept_type_at
from kgreview.graph.models import AttributeValue, Concept, Edge, RelationType
from kgreview.graph.search import SearchHit
from kgreview.graph.selectors import survivor_of
from kgreview.graph.sources import RevisionPlaces
from kgreview.review import history as review_history
from kgreview.review import provenance
from kgreview.review.models import Proposal

from .models import ApiToken, SubmittedProposal
from .proposing import ORIGIN_AGENTS

# What an edge's explanation reads beside the edge itself, in the same query.
EXPLAIN_RELATED = (*EDGE_RELATED, "evidence_revision__source__current_revision", "provenance")


def concept_ref(concept: Concept) -> dict:
    """``ConceptRef``: a concept by id and name."""
    return {"id": concept.pk, "name": concept.name}


def relation_out(relation: RelationType, *, at: datetime | None) -> dict:
    """``RelationOut``: what a relation type means and how it behaves. At a past instant
    the types are those in use then, so each was active."""
    return {
        "key": relation.key,
        "label": relation.label,
        "verb": relation.verb,
        "description": relation.description,
        "directed": relation.directed,
        "symmetric": relation.symmetric,
        "acyclic": relation.acyclic,
        "active": relation.active if at is None else True,
        "study_order": learning.STUDY_ORDER.get(relation.key),
    }


def search_out(
    *, query: str, at: datetime | None, hits: list[SearchHit], types: dict | None = None
) -> dict:
    """``SearchOut``: the query and its hits, best first, each with its concept's type at
    ``at`` (``types``: concept id -> ``ConceptType`` or None)."""
    types = types or {}
    return {
        "query": query,
        "as_of": at,
        "results": [
            {
                "concept": concept_ref(h.concept),
                "status": h.concept.status,
                "type": t.key if (t := types.get(h.concept.pk)) is not None else None,
                "matched_name": h.matched_name,
                "match": h.match,
                "score": h.score,
            }
            for h in hits
        ],
    }


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
    # Review's record of why the edge exists (none for an edge seeded or imported).
    "provenance__proposal_id",
    "provenance__decision_id",
    "decided_by__username",
)


def edge_out(row: dict, places: RevisionPlaces) -> dict:
    """``EdgeOut`` from one ``EDGE_VALUES`` row; ``places`` knows its revision already."""
    return {
        "id": row["id"],
        "source": {"id": row["source_id"], "name": row["source__name"]},
        "relation": row["relation__key"],
        "target": {"id": row["target_id"], "name": row["target__name"]},
        "symmetric": row["is_symmetric"],
        "confidence": row["confidence"],
        "weight": row["weight"],
        "reason": row["reason"],
        "status": row["status"],
        "valid_at": row["valid_at"],
        "recorded_at": row["recorded_at"],
        "invalid_at": row["invalid_at"],
        "evidence": None
        if row["evidence_revision__number"] is None
        else {
            "source": row["evidence_revision__source__slug"],
            "revision": row["evidence_revision__number"],
            "start": row["evidence_start"],
            "end": row["evidence_end"],
            "quote": row["evidence_quote"],
            **places.place(row["evidence_revision_id"], row["evidence_start"]).as_json(),
        },
        "proposal_id": row["provenance__proposal_id"],
        "decision_id": row["provenance__decision_id"],
        "decided_by": row["decided_by__username"],
    }


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
    return [edge_out(r, places) for r in rows]


def edges_by_id(ids, places: RevisionPlaces | None = None) -> dict[int, dict]:
    """``EdgeOut`` rows for these edge ids, whatever their status (see ``edge_rows``)."""
    return {r["id"]: r for r in edge_rows(Edge.objects.filter(pk__in=list(ids)), places)}


def concept_detail_out(
    concept: Concept, *, at: datetime | None, existed: bool, edges: list[dict]
) -> dict:
    """``ConceptDetailOut``: the concept, its other names, and its ``edges`` (``EdgeOut``
    rows touching it) split by direction. A merged concept names the one its names and
    edges live on now: the end of its chain of merges (``graph.selectors.survivor_of``)."""
    survivor = survivor_of(concept)
    concept_type = concept_type_at(concept, at)
    return {
        "id": concept.pk,
        "name": concept.name,
        "description": concept.description,
        "status": concept.status,
        "type": concept_type.key if concept_type is not None else None,
        "merged_into": concept_ref(survivor) if survivor is not None else None,
        "aliases": list(
            concept.aliases.exclude(kind="canonical")
            .order_by("name")
            .values_list("name", flat=True)
        ),
        "as_of": at,
        "existed": existed,
        "outgoing": [e for e in edges if e["source"]["id"] == concept.pk],
        "incoming": [e for e in edges if e["target"]["id"] == concept.pk],
        "attributes": attribute_values_out(
            attribute_values_at([concept.pk], at=at).get(concept.pk, [])
        ),
    }


def attribute_values_out(rows: list[AttributeValue]) -> list[dict]:
    """``AttributeValueOut`` rows from values read with their attribute, its type and
    their evidence's revision (``graph.history.attribute_values_at``), each with the
    decision that set it (one query for them all)."""
    decided = provenance.value_decisions(r.pk for r in rows)
    places = RevisionPlaces()
    places.load(r.evidence_revision_id for r in rows)
    out = []
    for r in rows:
        revision = r.evidence_revision
        decision = decided.get(r.pk)
        out.append(
            {
                "key": r.attribute.key,
                "label": r.attribute.label,
                "declared_by": r.attribute.concept_type.key,
                "datatype": r.attribute.datatype,
                "value": r.value,
                "recorded_at": r.recorded_at,
                "invalid_at": r.invalid_at,
                "evidence": None
                if revision is None
                else {
                    "source": revision.source.slug,
                    "revision": revision.number,
                    "start": r.evidence_start,
                    "end": r.evidence_end,
                    "quote": r.evidence_quote,
                    **places.place(revision.pk, r.evidence_start).as_json(),
                },
                "decision_id": decision.pk if decision is not None else None,
            }
        )
    return out


def neighbours_out(
    *,
    center: Concept,
    existed: bool,
    depth: int,
    direction: str,
    relations: list[str],
    at: datetime | None,
    found: traversal.Ball,
    names: dict[int, str],
    edges: list[dict],
    types: dict | None = None,
) -> dict:
    """``NeighboursOut``: the concepts ``found`` around the centre, nearest first, each
    with its type at ``at`` (``types``: concept id -> ``ConceptType`` or None), and the
    edges among them."""
    types = types or {}
    return {
        "center": concept_ref(center),
        # Whether the centre was a node of the graph at as_of (or is now).
        "existed": existed,
        "depth": depth,
        "direction": direction,
        "relations": relations,
        "as_of": at,
        "nodes": [
            {
                "id": n,
                "name": names.get(n, ""),
                "distance": d,
                "type": t.key if (t := types.get(n)) is not None else None,
            }
            for n, d in found.distance.items()
        ],
        "edges": edges,
        "truncated": found.truncated,
    }


def path_out(
    *,
    start: Concept,
    goal: Concept,
    max_depth: int,
    direction: str,
    relations: list[str],
    at: datetime | None,
    hops: list[traversal.Hop] | None,
    edges: dict[int, dict],
    names: dict[int, str],
) -> dict:
    """``PathOut``: the hops from ``start`` to ``goal`` with their edges (``EdgeOut`` by
    id), or, when ``hops`` is None, that there is no path within ``max_depth``."""
    base = {
        "max_depth": max_depth,
        "direction": direction,
        "relations": relations,
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
    ids = [start.pk] + [h.to_id for h in hops]
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


def learning_path_out(
    *,
    target: Concept,
    via: list[str],
    at: datetime | None,
    result: learning.LearningPath,
    keys: dict[int, str],
    cycle_edges: dict[int, dict],
    offset: int = 0,
    limit: int | None = None,
) -> dict:
    """``LearningPathOut``: the study order, each step with what it needs (``keys`` names
    the relation of each relation id), or the cycle that prevents one, its edges taken
    from ``cycle_edges`` (``EdgeOut`` by id). One page of steps: ``limit`` steps from
    ``offset`` (all of them without a limit); ``next_offset`` names the next page."""
    names = result.names
    total = len(result.order)
    end = total if limit is None else min(total, offset + limit)

    def ref(i: int) -> dict:
        return {"id": i, "name": names.get(i, "")}

    cycle = None
    if result.cycle:
        members = [e.before_id for e in result.cycle]
        words = " → ".join(names.get(i, "") for i in [*members, members[0]])
        cycle = {
            "concepts": [ref(i) for i in members],
            "edges": [cycle_edges[e.edge_id] for e in result.cycle],
            "message": f"These needs form a cycle, so no study order satisfies them: {words}.",
        }
    return {
        "target": concept_ref(target),
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
            for i, n in enumerate(result.order[offset:end], start=offset)
        ],
        "total_steps": total,
        "next_offset": end if end < total else None,
        "cycle": cycle,
        "blocked": [ref(i) for i in result.blocked],
        "truncated": result.truncated,
    }


def explain_out(
    *, edge: Edge, info: dict, at: datetime | None, edge_row: dict, evidence: dict | None
) -> dict:
    """``ExplainOut``: the edge (``edge_row``, its ``EdgeOut``), ``info`` from
    ``review.history.edge_explain``, and its ``evidence`` in context with the quote's place."""
    proposal = info["proposal"]
    origin = info["origin"]
    return {
        "edge": edge_row,
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
            **_attributes(proposal, "kind", "confidence", "reason", "created_at"),
            # A submitted proposal's origin number is its token's (or account's) id, no
            # run: it says who submitted it instead.
            "agent": None
            if origin is None or origin.is_submitted
            else {"run_id": origin.run, **_attributes(origin, "agent", "provider", "model")},
            "submitter": submitter_out(proposal)
            if origin is not None and origin.is_submitted
            else None,
        },
        "trail": info["trail"],
        "supersedes": info["supersedes"],
        "superseded_by": info["superseded_by"],
    }


def submitter_out(proposal: Proposal) -> dict | None:
    """``SubmitterOut``: who proposed ``proposal`` (read with its ``origin`` and
    ``created_by``). Submitted through the API or MCP: the account, the door, the token's
    name and the batch that queued it (``api.SubmittedProposal``; a proposal queued
    before batches were linked names its token by the origin, which is the token's,
    and no batch). An agent's: its key. A person's by hand: ``person``. None if unknown."""
    origin = proposal.origin if proposal.origin_id else None
    creator = proposal.created_by if proposal.created_by_id else None
    user = creator.get_username() if creator is not None else None
    if origin is None:
        if user is None:
            return None
        return {"user": user, "via": "person", "name": user, "token": None, "batch": None}
    if not origin.is_submitted:
        return {
            "user": user,
            "via": origin.agent,
            "name": origin.agent_label,
            "token": None,
            "batch": None,
        }
    link = (
        SubmittedProposal.objects.select_related("batch__token", "batch__user")
        .filter(proposal_id=proposal.pk)
        .first()
    )
    if link is not None:
        token = link.batch.token
        user = link.batch.user.get_username()
        via = link.batch.via
    else:
        with_token = origin.agent in (pair[0] for pair in ORIGIN_AGENTS.values())
        token = (
            ApiToken.objects.filter(pk=origin.run).first()
            if with_token and origin.run is not None
            else None
        )
        via = origin.via
    return {
        "user": user,
        "via": via,
        "name": origin.agent_label,
        "token": token.name if token is not None else None,
        "batch": link.batch_id if link is not None else None,
    }


def _attributes(row, *names: str) -> dict:
    """The named attributes of ``row``, under their own names, in that order."""
    return {name: getattr(row, name) for name in names}


def edge_explanation(edge: Edge, *, at: datetime | None) -> dict:
    """``ExplainOut`` for an edge read with ``EXPLAIN_RELATED``: its history as of ``at``
    and its evidence with the quote's place (the revision came with the edge, so placing
    the quote costs no query)."""
    info = review_history.edge_explain(edge=edge, at=at)
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


def diff_out(d: GraphDiff, rows: dict[int, dict]) -> dict:
    """``DiffOut``: what changed between two instants; ``rows`` holds the ``EdgeOut`` of
    every edge the diff names."""
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
        "concepts_added": [concept_ref(c) for c in d.concepts_added],
        "concepts_merged": [
            {
                "concept": concept_ref(c),
                "into": concept_ref(c.merged_into) if c.merged_into_id else None,
                "at": c.merged_at,
            }
            for c in d.concepts_merged
        ],
    }
