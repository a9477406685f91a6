"""Keep the queue decidable: when the graph changes under open proposals, settle them.

A decision (or a curator's mend, or an undo) changes concepts and edges. Open proposals
that depended on what changed are settled in the same transaction, by the same person
(``acting_user``), in the same batch, each with a decision that names its cause:

- a concept came into being or gained a name: open ``add_concept`` proposals for that
  name (its twins) are superseded, linked to the concept;
- an ``add_concept`` proposal now stands for a concept (accepted, reused, or its twin
  superseded): the ``add_edge`` proposals waiting for it are re-pointed at the concept;
- an ``add_concept`` proposal was rejected: if its name belongs to a concept now, the
  edges waiting for it are re-pointed there; otherwise they are superseded, since the
  concept they need will not exist;
- a concept was merged: proposals on the loser are re-pointed at the survivor (merge
  proposals involving it are superseded); a concept was retired: proposals needing it
  are superseded; a concept was taken back by an undo: proposals on it wait again for
  the add_concept proposal that the undo reopened;
- an edge stopped being active: the open proposals to retire or update it are
  superseded; an edge became active: an open proposal asking for the same fact is
  superseded.

Which proposals each of these reaches, each kind says (``Kind.settled``, the ways of
``kinds.base.Settle``); this module never names a kind. Above, "edge proposals" are those
settled by their ends, "merge proposals" those settled by their concepts, "add_concept
proposals" those settled by their name, and "proposals to retire or update an edge" those
settled by their edge.

A re-pointed proposal is checked like a new one: both ends the same concept, the edge
already in the graph, or the same change already waiting all close it as superseded
with that reason. Locking: rows settled here are locked with SKIP LOCKED, after the
deciding service locked its own rows, so two decisions never wait on each other here;
a proposal locked by someone deciding it right now is left to that decision, whose
own checks see the new state.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from django.db.models import Q

from construction import keys
from kgreview.graph import rules
from kgreview.graph import selectors as graph_selectors
from kgreview.graph.models import Concept, Edge
from kgreview.review import talk
from kgreview.review.decide.changes import GraphChanges
from kgreview.review.decide.settle import Settler
from kgreview.review.kinds import settled_by
from kgreview.review.kinds.base import Settle
from kgreview.review.models import Decision, Proposal

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def _concept_end(concept: Concept) -> dict:
    return {
        "name": concept.name,
        "concept_id": concept.pk,
        "match": "exact",
        "score": 100.0,
        "matched_name": concept.name,
    }


def _proposal_end(proposal: Proposal) -> dict:
    return {"name": proposal.payload["name"], "proposal_id": proposal.pk, "match": "new"}


def _waiting_on_names(names) -> Q:
    node_keys = {keys.new_concept_key(n) for n in names}
    return Q(source_key__in=node_keys) | Q(target_key__in=node_keys)


def _waiting_on_concepts(ids) -> Q:
    return Q(source_concept_id__in=ids) | Q(target_concept_id__in=ids)


def _ends_matching(proposal: Proposal, test) -> list[str]:
    return [role for role in ("source", "target") if test(proposal.payload[role])]


def _settled(how: Settle):
    """The proposals of the kinds settled this way (``Kind.settled``)."""
    return Proposal.objects.filter(kind__in=settled_by(how))


def _edge_proposals():
    """Proposals whose payload's ends wait on concepts (an edge's)."""
    return _settled(Settle.ENDS)


def _merge_proposals():
    """Proposals that name concepts by their columns and close when one goes."""
    return _settled(Settle.CONCEPTS)


def reconcile(
    changes: GraphChanges,
    *,
    acting_user: User,
    batch: uuid.UUID,
    cause: Decision | None,
    why: str = "",
) -> list[Decision]:
    """Settle the open proposals that ``changes`` affect; returns the decisions taken.

    The stages run in this order because each may add to ``changes`` what a later one
    reads: merges name their survivors, twins and rejected names resolve concept
    proposals, and the edges waiting on those are settled after."""
    if not changes:
        return []
    s = Settler(acting_user=acting_user, batch=batch, cause=cause, why=why)
    if cause is not None:
        s.done.add(cause.proposal_id)
    if changes.merged:
        _settle_merged(s, changes)
    if changes.named:
        _settle_twins(s, changes)
    dead = _rejected_for_good(changes) if changes.rejected else {}
    if changes.resolved:
        _repoint_to_resolved(s, changes)
    if dead:
        _supersede_waiting_on_rejected(s, dead)
    if changes.retired:
        _supersede_on_retired(s, changes)
    if changes.unmade:
        _repoint_to_reopened(s, changes)
    added = _edges_added(changes)
    _settle_edge_changes(s, changes, added)
    _supersede_same_facts(s, changes, added)
    # A card someone asked about and this settling closed: its question resolves itself,
    # naming the decision (an asker would otherwise wait on a card no one can answer).
    talk.discussions_closed_by([d for d in s.decisions if d.proposal_id in s.discussed])
    return s.decisions


def _settle_merged(s: Settler, changes: GraphChanges) -> None:
    """Merged concepts: their survivors gained names; proposals on the loser move over,
    merge proposals involving it close."""
    survivors = Concept.objects.in_bulk(set(changes.merged.values()))
    changes.named |= set(survivors)
    losers = Concept.objects.in_bulk(set(changes.merged))
    moves = []
    for p in s._open(_edge_proposals().filter(_waiting_on_concepts(changes.merged))):
        ends = {}
        for role in _ends_matching(p, lambda e: e.get("concept_id") in changes.merged):
            loser = losers[p.payload[role]["concept_id"]]
            ends[role] = _concept_end(survivors[changes.merged[loser.pk]])
        moves.append((p, ends))
    s.repoint_all(moves, "An end was merged into another concept.")
    for p in s._open(_merge_proposals().filter(_waiting_on_concepts(changes.merged))):
        s.supersede(p, "One of its concepts was merged in another decision.")


def _settle_twins(s: Settler, changes: GraphChanges) -> None:
    """Concepts that gained names: their twin add_concept proposals are superseded, and
    count as resolved to the concept."""
    concepts = Concept.objects.filter(pk__in=changes.named, status=Concept.Status.ACTIVE)
    by_key: dict[str, Concept] = {}
    for concept in concepts.prefetch_related("aliases"):
        for alias in concept.aliases.all():
            by_key.setdefault(keys.concept_dedup_key(alias.name), concept)
    twins = _settled(Settle.NAME).filter(dedup_key__in=by_key)
    for twin in s._open(twins):
        concept = by_key[twin.dedup_key]
        s.supersede(
            twin,
            f'"{twin.payload["name"]}" is already the concept "{concept.name}" (#{concept.pk}).',
            concept=concept,
        )
        changes.resolved.setdefault(twin.pk, concept.pk)


def _rejected_for_good(changes: GraphChanges) -> dict[int, Proposal]:
    """Rejected concept proposals whose name belongs to an active concept now count as
    resolved to it; returns the others (no concept will have their name), by id."""
    dead: dict[int, Proposal] = {}
    for p in Proposal.objects.filter(pk__in=changes.rejected):
        owner = graph_selectors.name_owner(name=p.payload["name"])
        if owner is not None and owner.concept.is_active:
            changes.resolved.setdefault(p.pk, owner.concept_id)
        else:
            dead[p.pk] = p
    return dead


def _repoint_to_resolved(s: Settler, changes: GraphChanges) -> None:
    """Edge proposals waiting for a concept proposal that now stands for a concept are
    re-pointed at the concept (keeping the proposal id on the end)."""
    needed = Proposal.objects.in_bulk(set(changes.resolved))
    resolved_to = Concept.objects.in_bulk(set(changes.resolved.values()))
    needed_by_key = {keys.new_concept_key(p.payload["name"]): p for p in needed.values()}
    waiting = _edge_proposals().filter(
        _waiting_on_names(p.payload["name"] for p in needed.values())
    )
    moves = []
    for p in s._open(waiting):
        ends = {}
        for role in ("source", "target"):
            end = p.payload[role]
            if end.get("concept_id"):
                continue
            need = needed.get(end.get("proposal_id")) or needed_by_key.get(
                keys.new_concept_key(end["name"])
            )
            if need is not None:
                concept = resolved_to[changes.resolved[need.pk]]
                ends[role] = {**_concept_end(concept), "proposal_id": need.pk}
        if ends:
            moves.append((p, ends))
    s.repoint_all(moves, "The concept it needed is in the graph now.")


def _supersede_waiting_on_rejected(s: Settler, dead: dict[int, Proposal]) -> None:
    """Edge proposals waiting for a concept proposal rejected for good close: the concept
    they need will not exist."""
    waiting = _edge_proposals().filter(_waiting_on_names(p.payload["name"] for p in dead.values()))
    names = {keys.new_concept_key(p.payload["name"]): p for p in dead.values()}
    for p in s._open(waiting):
        gone = _rejected_end(p, names)
        if gone is not None:
            s.supersede(
                p,
                f'It needs the concept "{gone.payload["name"]}", which was rejected '
                f"(proposal #{gone.pk}).",
            )


def _rejected_end(p: Proposal, names: dict[str, Proposal]) -> Proposal | None:
    """The rejected concept proposal an end of ``p`` waits for, if any (the source first)."""
    for role in ("source", "target"):
        end = p.payload[role]
        if not end.get("concept_id"):
            gone = names.get(keys.new_concept_key(end["name"]))
            if gone is not None:
                return gone
    return None


def _supersede_on_retired(s: Settler, changes: GraphChanges) -> None:
    """Proposals needing a concept a curator retired close."""
    retired = Concept.objects.in_bulk(changes.retired)
    for p in s._open(_edge_proposals().filter(_waiting_on_concepts(changes.retired))):
        role = _ends_matching(p, lambda e: e.get("concept_id") in changes.retired)[0]
        name = retired[p.payload[role]["concept_id"]].name
        s.supersede(p, f'Its {role} "{name}" was retired.')
    for p in s._open(_merge_proposals().filter(_waiting_on_concepts(changes.retired))):
        s.supersede(p, "One of its concepts was retired.")


def _repoint_to_reopened(s: Settler, changes: GraphChanges) -> None:
    """Concepts taken back by an undo: edge proposals on them wait again for the concept
    proposal the undo reopened; merge proposals involving them close."""
    reopened = Proposal.objects.in_bulk(set(changes.unmade.values()))
    moves = []
    for p in s._open(_edge_proposals().filter(_waiting_on_concepts(changes.unmade))):
        ends = {}
        for role in _ends_matching(p, lambda e: e.get("concept_id") in changes.unmade):
            back = reopened[changes.unmade[p.payload[role]["concept_id"]]]
            ends[role] = _proposal_end(back)
        moves.append((p, ends))
    s.repoint_all(moves, "The concept it used went back to the queue.")
    for p in s._open(_merge_proposals().filter(_waiting_on_concepts(changes.unmade))):
        s.supersede(p, "One of its concepts went back to the queue.")


def _edges_added(changes: GraphChanges) -> list[Edge]:
    """The edges that became active, from the rows in hand, reading only the others."""
    if not changes.edges_added:
        return []
    missing = changes.edges_added - set(changes.edge_rows)
    added = [changes.edge_rows[pk] for pk in changes.edges_added if pk in changes.edge_rows]
    if missing:
        added += list(Edge.objects.filter(pk__in=missing).select_related("relation"))
    return added


def _settle_edge_changes(s: Settler, changes: GraphChanges, added: list[Edge]) -> None:
    """Proposals to retire or update an edge follow the fact: to its newer row when one
    replaced it (a merge moved it, an undo restored it), else they close."""
    successors = {e.supersedes_id: e for e in added if e.supersedes_id and e.is_active}
    if changes.edges_gone:
        successors.update(
            {
                e.supersedes_id: e
                for e in Edge.objects.filter(
                    supersedes_id__in=changes.edges_gone, status=Edge.Status.ACTIVE
                )
            }
        )
    if not (successors or changes.edges_gone):
        return
    for p in s._open(_settled(Settle.EDGE)):
        edge_id = p.payload.get("edge_id")
        if edge_id in successors:
            s.follow_edge(p, successors[edge_id])
        elif edge_id in changes.edges_gone:
            s.supersede(p, f"Edge #{edge_id} is no longer active.")


def _supersede_same_facts(s: Settler, changes: GraphChanges, added: list[Edge]) -> None:
    """An edge in the graph now: the open proposal asking for the same fact closes
    (unless it is one just accepted)."""
    wanted = {}
    # Its inverse twin, by the columns ``rules.fact_keys`` names (the inverse relation,
    # the ends swapped): "B builds on A" closes when "A is a prerequisite for B" is in.
    twins: dict[tuple[int, str, str], Edge] = {}
    for edge in added:
        key = keys.edge_dedup_key(
            keys.concept_key(edge.source_id),
            edge.relation.key,
            keys.concept_key(edge.target_id),
            symmetric=edge.relation.symmetric,
        )
        if key not in changes.closed_keys:
            wanted[key] = edge
        if edge.pk in changes.twinless:
            continue
        for s_id, r_id, t_id in rules.fact_keys(edge.source_id, edge.relation, edge.target_id):
            if r_id != edge.relation_id:
                twins[(r_id, keys.concept_key(s_id), keys.concept_key(t_id))] = edge
    same = Q(dedup_key__in=wanted)
    for r_id, source_key, target_key in twins:
        same |= Q(relation_id=r_id, source_key=source_key, target_key=target_key)
    if wanted or twins:
        for p in s._open(_edge_proposals().filter(same)):
            if p.dedup_key in wanted:
                edge = wanted[p.dedup_key]
                s.supersede(p, f"The same edge is in the graph now (edge #{edge.pk}).")
                continue
            edge = twins[(p.relation_id, p.source_key, p.target_key)]
            s.supersede(
                p,
                f"The same fact is in the graph now, stated the other way round "
                f"(edge #{edge.pk}, {edge.relation.key}).",
            )
