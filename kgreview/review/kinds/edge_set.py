"""Accepting edge and concept proposals as one set: a thousand in a few statements.

The ``accept_set`` of both kinds (``add_edge``, ``add_concept``): an edge is decided with
the concept proposals it needs, so the two are one set. One read of the concept
proposals in play (locked by the driver with the batch), one locking read of the ends;
concepts, decisions and edges written with bulk inserts. The rules are the graph's
(``graph.rules``: the same refusals as the single path, in the same words); what they
cannot decide cheaply for a whole set (a cycle in an acyclic relation) is checked edge
by edge against the graph as the batch writes it (``graph.bulk``).

``accept_edges_and_concepts`` reads from top to bottom as its stages: gather the concept
proposals, check the edges (``edge_set_check``, which writes nothing), then make the
concepts, write the edges, write the decisions with the edges' provenance and link the
concepts; the driver (``review.bulk_accept``) closes the proposals and settles the queue.

Locking, in the lock order of ``decisions``: the driver locked the proposals of the
batch with the concept proposals they need, in id order, in one statement; here the
concepts at the ends (and those the pending ends are reused as), in id order; then the
rows of the acyclic relations, as ``edge_add`` does; the name index last.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.utils import timezone

from kgreview.graph import bulk as graph_bulk
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph
from kgreview.graph import sources as graph_sources
from kgreview.graph.models import Concept, Edge
from kgreview.review import provenance
from kgreview.review.decide.changes import GraphChanges
from kgreview.review.decide.outcome import stale
from kgreview.review.kinds.base import SetBatch, SetDone, Slow
from kgreview.review.kinds.edge_set_check import (
    EDGE,
    Ends,
    Gathered,
    Lookups,
    Planned,
    check_edges,
    drop_repeats,
    gather,
    one_by_one,
    read_lookups,
    waiting_on,
)
from kgreview.review.models import Decision, Proposal

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def accept_edges_and_concepts(_kind, batch: SetBatch) -> SetDone:
    """Accept the edge and concept proposals of ``batch`` as one set (an edge with a
    bare name for an end is left to the one-by-one path). Runs inside the driver's
    transaction; raises ``Slow`` when a race makes the set-based writes impossible."""
    slow = [p.pk for p in batch.proposals if one_by_one(p)]
    fast = [p for p in batch.proposals if p.pk not in set(slow)]
    if not fast:
        return SetDone(slow=slow)
    acting_user, result, asked = batch.acting_user, batch.result, batch.asked
    g = gather(fast, batch.locked, result)
    look = read_lookups(g)
    survivors = drop_repeats(check_edges(g, look, result), look, result)
    made = _make_concepts(g, look, survivors, acting_user=acting_user)
    new_edges = _write_edges(survivors, g.ends, look, result, acting_user=acting_user)
    decided = _write_decisions(
        g, made, survivors, new_edges, asked, batch.note, batch.batch, acting_user=acting_user
    )
    closed = _close(g, batch.locked, decided, new_edges)
    _report(made, decided, asked, result)
    return SetDone(
        slow=slow,
        closed=closed,
        changes=_changes(g.ends, closed, new_edges),
        first=decided.first,
        linked={p.pk: g.ends.concept_id(p.pk) for p in closed if p.kind != EDGE},
    )


@dataclass(frozen=True)
class _Made:
    """The concept proposals the batch accepts, and what accepting them did to concepts."""

    used: set[int]  # concept proposals the surviving edges and concept items need
    accepted: list[Proposal]  # the open ones among them, in id order
    created: set[int]  # concepts made (or brought back) by the batch
    alias_ids: dict[int, list[int]]  # proposal -> aliases added to the concept it reused


def _make_concepts(
    g: Gathered, look: Lookups, survivors: list[Planned], *, acting_user: User
) -> _Made:
    """Make the concepts the surviving edges and concept items need, in bulk; add names to
    the concepts reused; bring back the retired ones proposed again."""
    used = {pid for p, _, _, _ in survivors for pid in waiting_on(p)} | {
        p.pk for p in g.concepts if p.pk not in g.ends.refused
    }
    accepted = [g.needed[pk] for pk in sorted(used) if g.needed[pk].is_open]
    to_create = [p for p in accepted if g.ends.stands.get(p.pk) == ("new", p.pk)]
    made = graph_bulk.concepts_create_many(
        [
            (p.payload["name"], p.payload.get("description", ""), p.payload.get("aliases", []))
            for p in to_create
        ],
        types=[g.types.get(p.payload.get("type_key", "")) for p in to_create],
    )
    for p, concept in zip(to_create, made, strict=True):
        g.ends.stands[p.pk] = concept.pk
        look.concepts[concept.pk] = concept
    created = {c.pk for c in made}
    alias_ids = _add_aliases(g.ends, look, used, acting_user=acting_user)
    created |= _reactivate(g.ends, look, used, acting_user=acting_user)
    return _Made(used=used, accepted=accepted, created=created, alias_ids=alias_ids)


def _add_aliases(
    ends: Ends, look: Lookups, used: set[int], *, acting_user: User
) -> dict[int, list[int]]:
    """Add a reused concept's proposed names that no concept owns yet; returns the alias
    ids added, by proposal."""
    alias_ids: dict[int, list[int]] = {}
    for pk, names in ends.reuse_aliases.items():
        if pk not in used:
            continue
        cid = ends.concept_id(pk)
        concept = look.concepts.get(cid) or Concept.objects.get(pk=cid)
        alias_ids[pk] = [
            graph.concept_add_alias(
                concept=concept, name=n, acting_user=acting_user, decision=graph.DECIDING
            ).pk
            for n in dict.fromkeys(names)
            if graph_selectors.name_owner(name=n) is None
        ]
    return alias_ids


def _reactivate(ends: Ends, look: Lookups, used: set[int], *, acting_user: User) -> set[int]:
    """Bring back the retired concepts proposed again by the proposal they came from."""
    back = set()
    for pk, cid in ends.reactivate.items():
        if pk in used:
            look.concepts[cid] = graph.concept_reactivate(
                concept=Concept.objects.get(pk=cid),
                acting_user=acting_user,
                decision=graph.DECIDING,
            )
            back.add(cid)
    return back


def _write_edges(
    survivors: list[Planned],
    ends: Ends,
    look: Lookups,
    result,
    *,
    acting_user: User,
) -> list[tuple[Proposal, Edge]]:
    """Write the edges through ``graph.bulk``, which holds every row to the graph's rules
    and refuses, in words, a fact already held or a cycle closed as the batch goes."""
    now = timezone.now()
    rows: list[tuple[Proposal, Edge, Concept, Concept]] = []
    for p, s_end, t_end, relation in survivors:
        s, t = ends.resolve(s_end), ends.resolve(t_end)
        row = graph.edge_row(
            source_id=s,
            target_id=t,
            relation=relation,
            weight=p.payload.get("weight", 1.0),
            confidence=p.confidence,
            reason=p.reason or "Accepted by a reviewer.",
            evidence=graph.Evidence.of(p),
            valid_at=now,
            recorded_at=now,
            decided_by=acting_user,
        )
        rows.append((p, row, look.concepts[s], look.concepts[t]))
    new_edges: list[tuple[Proposal, Edge]] = []
    refusals = graph_bulk.edges_add_checked(
        [(row, a, b) for _, row, a, b in rows], patterns=look.patterns
    )
    for (p, row, _, _), refusal in zip(rows, refusals, strict=True):
        if refusal is None:
            new_edges.append((p, row))
        else:
            result.refuse(p.pk, stale(str(refusal)))
    return new_edges


@dataclass(frozen=True)
class _Decided:
    """The decisions the batch wrote: one per proposal the reviewer asked for, and one per
    concept proposal accepted because an edge needs it (caused by that edge's decision)."""

    primaries: list[Proposal]  # the proposals asked for and accepted, in the order asked
    first: Decision | None  # the first of their decisions, the cause of what settles
    decision_of: dict[int, Decision]  # proposal -> its decision
    cause_of: dict[int, Decision]  # concept proposal -> the edge decision that needs it


def _write_decisions(
    g: Gathered,
    made: _Made,
    survivors: list[Planned],
    new_edges: list[tuple[Proposal, Edge]],
    proposal_ids,
    note: str,
    batch,
    *,
    acting_user: User,
) -> _Decided:
    """Write the decisions in two inserts, then the new edges' provenance (each edge's
    proposal and decision) in a third. Raises ``Slow`` when a concept would be made for
    no decision."""
    accepted_edges = {p.pk for p, _ in new_edges}
    primaries = [
        p for p in g.fast if p.pk in accepted_edges or (p.pk in g.needed and p.pk in made.used)
    ]
    order = {pk: i for i, pk in enumerate(proposal_ids)}
    primaries.sort(key=lambda p: order[p.pk])
    primary_rows = Decision.objects.bulk_create(
        [
            Decision(
                proposal=p,
                user=acting_user,
                action=Decision.Action.ACCEPT,
                note=note.strip(),
                before={"status": p.status},
                after=_after(p, g.ends, made),
                proposal_version=p.version,
                batch=batch,
            )
            for p in primaries
        ]
    )
    decision_of = {d.proposal_id: d for d in primary_rows}
    cause_of: dict[int, Decision] = {}
    for p, _, _, _ in survivors:
        if p.pk in accepted_edges:
            for pid in waiting_on(p):
                cause_of.setdefault(pid, decision_of[p.pk])
    consequences = [
        Decision(
            proposal=c,
            user=acting_user,
            action=Decision.Action.ACCEPT,
            note=f"Accepted with edge proposal #{cause_of[c.pk].proposal_id}, which needs it.",
            before={"status": c.status},
            after=_after(c, g.ends, made),
            proposal_version=c.version,
            batch=batch,
            caused_by=cause_of[c.pk],
        )
        for c in made.accepted
        if c.pk in cause_of and c.pk not in decision_of
    ]
    for d in Decision.objects.bulk_create(consequences):
        decision_of[d.proposal_id] = d
    if any(c.pk not in decision_of for c in made.accepted):
        raise Slow("a concept would be made for no decision")
    provenance.edges_made(
        provenance.Made(edge.pk, p.pk, decision_of[p.pk].pk) for p, edge in new_edges
    )
    first = primary_rows[0] if primary_rows else None
    return _Decided(primaries=primaries, first=first, decision_of=decision_of, cause_of=cause_of)


def _after(p: Proposal, ends: Ends, made: _Made) -> dict:
    after: dict[str, object] = {"status": "accepted"}
    if p.kind != EDGE:
        cid = ends.concept_id(p.pk)
        after.update(concept_id=cid, created=cid in made.created)
        if p.pk in made.alias_ids:
            after["aliases_added"] = made.alias_ids[p.pk]
    return after


def _close(
    g: Gathered,
    proposals: dict[int, Proposal],
    decided: _Decided,
    new_edges: list[tuple[Proposal, Edge]],
) -> list[Proposal]:
    """The proposals to close as accepted (the driver closes them): every decided one,
    the concept proposals linked to their concepts, and the sources grounded in what
    they now name."""
    closed = [g.needed.get(pk) or proposals[pk] for pk in decided.decision_of]
    for p in closed:
        if p.kind != EDGE:  # linked to its concept by the driver's close (``linked``)
            p.concept_id = g.ends.concept_id(p.pk)
    _ground(closed, new_edges)
    return closed


def _ground(closed: list[Proposal], new_edges) -> None:
    rows: dict[tuple[int, int], int] = {}
    for p, edge in new_edges:
        if p.document_id and p.evidence_revision_id:
            for cid in (edge.source_id, edge.target_id):
                rows[(p.document_id, cid)] = p.evidence_revision_id
    for p in closed:
        if p.kind != EDGE and p.document_id and p.evidence_revision_id and p.concept_id:
            rows[(p.document_id, p.concept_id)] = p.evidence_revision_id
    graph_sources.sources_ground(rows)


def _changes(
    ends: Ends, closed: list[Proposal], new_edges: list[tuple[Proposal, Edge]]
) -> GraphChanges:
    """What the set changed, for settling the queue once for the whole batch: the
    concepts named, the concept proposals resolved, the edges added."""
    changes = GraphChanges()
    for p in closed:
        if p.kind != EDGE:
            changes.named.add(ends.concept_id(p.pk))
            changes.resolved[p.pk] = ends.concept_id(p.pk)
    for p, edge in new_edges:
        changes.edge_accepted(edge, p)
    return changes


def _report(made: _Made, decided: _Decided, proposal_ids, result) -> None:
    """Tell ``result`` what was accepted, with the concept proposals each edge brought
    along that the reviewer did not ask for."""
    also: dict[int, list[tuple[int, str]]] = {}
    asked = set(proposal_ids)
    for c in made.accepted:
        if c.pk in decided.cause_of and c.pk not in asked:
            cause = decided.cause_of[c.pk].proposal_id
            also.setdefault(cause, []).append((c.pk, c.payload["name"]))
    for p in decided.primaries:
        result.accept(p.pk, also=also.get(p.pk, []))
