"""Accepting edge and concept proposals as one set: a thousand in a few statements.

One locking read of the proposals, one of the concept proposals they need, one of their
ends; concepts, decisions and edges written with bulk inserts; one settling of the queue
for the whole batch. The rules are those of ``decisions`` (the same refusals, in the
same words); what they cannot decide cheaply for a whole set (a cycle in an acyclic
relation) is checked edge by edge against the graph as the batch writes it. This is the
one place that works on the two kinds decided as a set together (an edge with the
concept proposals it needs), so it speaks of them by name.

Locking: the proposals of the batch are locked in id order first, then the concept
proposals they need, then (per acyclic relation) the relation row, as ``edge_add`` does.

It is a little over 400 lines on purpose: ``bulk_accept`` is one algorithm in steps
(lock, resolve, check, write concepts, edges, decisions, close, settle), kept in one place
so its locking order reads from top to bottom.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import F
from django.utils import timezone

from kgreview.graph import bulk as graph_bulk
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, Edge, RelationType, SourceRevision

from .changes import GraphChanges
from .decisions import can_decide_kind
from .ends import retired_name_words
from .kinds import kind_of
from .models import Decision, Proposal
from .reconcile import reconcile
from .services import lock_proposals


class Slow(Exception):
    """The set-based path cannot take this batch (a race on a name or an edge): the caller
    falls back to deciding the proposals one by one."""


def _stale(words: str) -> str:
    return f"Cannot apply it as it stands: {words}"


def _already(proposal: Proposal, names: dict[int, str]) -> str:
    when = timezone.localtime(proposal.decided_at).strftime("%Y-%m-%d %H:%M")
    who = "the system"
    if proposal.decided_by_id is not None:
        who = names.get(proposal.decided_by_id, who)
    return f"Proposal #{proposal.pk} was already {proposal.status} by {who} at {when}."


def _user_names(proposals) -> dict[int, str]:
    ids = {p.decided_by_id for p in proposals if p.decided_by_id}
    if not ids:
        return {}
    User = get_user_model()
    return dict(User.objects.filter(pk__in=ids).values_list("pk", User.USERNAME_FIELD))


def screen(ids, proposals, reviewer, result) -> list[Proposal]:
    """Refuse what cannot be decided at all; return the open proposals, in the given order."""
    closed = [p for p in proposals.values() if not p.is_open]
    names = _user_names(closed)
    out = []
    for pid in ids:
        p = proposals.get(pid)
        if p is None:
            result.refuse(pid, f"There is no proposal #{pid}.")
        elif not p.is_open:
            result.refuse(pid, _already(p, names))
        elif not can_decide_kind(reviewer, p.kind):
            result.refuse(pid, f"Only curators decide {p.get_kind_display().lower()} proposals.")
        else:
            out.append(p)
    return out


# An end of an edge in the batch: a concept id, or a concept to create ("new", proposal id).
_End = int | tuple[str, int]


class _Ends:
    """What each concept proposal of the batch stands for: a concept id, a concept to
    create (``("new", proposal id)``), or a refusal in words."""

    def __init__(self) -> None:
        self.stands: dict[int, _End] = {}
        self.refused: dict[int, str] = {}
        # proposal -> names to add to the existing concept it is accepted as
        self.reuse_aliases: dict[int, list[str]] = {}
        self.reactivate: dict[int, int] = {}  # proposal -> its own retired concept

    def concept_id(self, pk: int) -> int:
        """The concept proposal ``pk`` stands for, once the batch's new concepts are made."""
        stands = self.stands[pk]
        if not isinstance(stands, int):
            raise RuntimeError(f"Proposal #{pk} stands for a concept not made yet.")
        return stands


def _resolve_concept_proposals(needed: dict[int, Proposal]) -> _Ends:
    ends = _Ends()
    open_ = {p.pk for p in needed.values() if p.is_open}
    owners = graph_selectors.concepts_for_names(p.payload["name"] for p in needed.values())
    for p in needed.values():
        name = p.payload["name"]
        owner = owners.get(name)
        if p.pk in open_:
            if owner is None:
                ends.stands[p.pk] = ("new", p.pk)
            elif owner.status == Concept.Status.RETIRED:
                if p.concept_id == owner.pk:
                    ends.stands[p.pk] = owner.pk
                    ends.reactivate[p.pk] = owner.pk
                else:
                    ends.refused[p.pk] = retired_name_words(name, owner)
            else:
                ends.stands[p.pk] = owner.pk
                ends.reuse_aliases[p.pk] = [name, *p.payload.get("aliases", [])]
            continue
        concept = None
        if p.concept_id:
            concept = Concept.objects.filter(pk=p.concept_id).first()
        concept = concept or owner
        if concept is None:
            ends.refused[p.pk] = (
                f'The concept "{name}" was {p.status} (proposal #{p.pk}); '
                "edit the proposal to use another concept, or reject it."
            )
        elif not concept.is_active:
            ends.refused[p.pk] = graph.inactive_words(concept)
        else:
            ends.stands[p.pk] = concept.pk
    return ends


def bulk_accept(*, reviewer, proposal_ids, note, batch, result) -> list[int]:
    """Accept the edge and concept proposals among ``proposal_ids`` as one set; returns
    the ids left for the one-by-one path. Runs inside the caller's transaction; raises
    ``Slow`` when a race makes the set-based writes impossible."""
    proposals = lock_proposals(proposal_ids)
    open_ = screen(proposal_ids, proposals, reviewer, result)
    slow = [
        p.pk
        for p in open_
        if not kind_of(p).decided_as_a_set
        or (
            p.kind == "add_edge"
            and any(
                not p.payload[r].get("concept_id") and not p.payload[r].get("proposal_id")
                for r in ("source", "target")
            )
        )
    ]
    fast = [p for p in open_ if p.pk not in set(slow)]
    if not fast:
        return slow
    edges_items = [p for p in fast if p.kind == "add_edge"]
    concept_items = [p for p in fast if p.kind == "add_concept"]

    # The concept proposals the edges need, locked after the batch's own rows.
    wanted = {
        p.payload[r]["proposal_id"]
        for p in edges_items
        for r in ("source", "target")
        if not p.payload[r].get("concept_id")
    }
    needed = {p.pk: p for p in concept_items}
    needed.update(lock_proposals(wanted - set(proposals)))
    needed.update({pk: proposals[pk] for pk in wanted if pk in proposals})
    ends = _resolve_concept_proposals(needed)
    for p in concept_items:
        if p.pk in ends.refused:
            result.refuse(p.pk, _stale(ends.refused[p.pk]))

    # Check every edge without writing: relation, ends, loops, evidence, duplicates.
    relations = {r.pk: r for r in RelationType.objects.all()}
    by_key = {r.key: r for r in relations.values()}
    concept_ids = {
        p.payload[r]["concept_id"]
        for p in edges_items
        for r in ("source", "target")
        if p.payload[r].get("concept_id")
    } | {v for v in ends.stands.values() if isinstance(v, int)}
    concepts = Concept.objects.in_bulk(concept_ids)
    revisions = SourceRevision.objects.select_related("source").in_bulk(
        {p.evidence_revision_id for p in fast if p.evidence_revision_id}
    )
    for p in fast:  # each revision read once, not once per proposal quoting it
        if p.evidence_revision_id:
            p.evidence_revision = revisions[p.evidence_revision_id]
    planned: list[tuple[Proposal, _End, _End, RelationType]] = []
    for p in edges_items:
        relation = relations.get(p.relation_id) or by_key.get(p.payload["relation"])
        words = ""
        if relation is None:
            words = f'The relation "{p.payload["relation"]}" does not exist.'
        elif not relation.active:
            words = _stale(f'The relation "{relation.key}" was retired; choose an active relation.')
        ids: list[_End | None] = []
        for role in ("source", "target"):
            end = p.payload[role]
            if end.get("concept_id"):
                ids.append(end["concept_id"])
            else:
                pid = end["proposal_id"]
                stands = ends.stands.get(pid)
                if stands is None:  # refused, or no such proposal
                    missing = f"There is no proposal #{pid}."
                    words = words or _stale(ends.refused.get(pid, missing))
                ids.append(stands)
        for cid in ids:
            if isinstance(cid, int) and not words:
                concept = concepts.get(cid)
                if concept is None:
                    words = _stale(f"There is no concept #{cid}.")
                elif not concept.is_active:
                    words = _stale(graph.inactive_words(concept))
        if not words and ids[0] == ids[1]:
            words = "Both ends are now the same concept; an edge cannot loop."
        if not words and p.evidence_revision_id:
            revision = revisions[p.evidence_revision_id]
            if revision.text[p.evidence_start : p.evidence_end] != p.evidence_quote:
                words = _stale(
                    f"The quoted evidence does not match revision {revision.number} of "
                    f"{revision.source.slug} at {p.evidence_start}..{p.evidence_end}."
                )
        source, target = ids
        if words or relation is None or source is None or target is None:
            result.refuse(p.pk, words)  # each missing part gave its words above
        else:
            planned.append((p, source, target, relation))

    # Facts the graph already holds, and repeats within the batch.
    known = [(s, r, t) for _, s, t, r in planned if isinstance(s, int) and isinstance(t, int)]
    held: dict[tuple[int, int, int], int] = {}
    if known:
        rows = Edge.objects.filter(
            status=Edge.Status.ACTIVE,
            source_id__in={s for s, _, _ in known} | {t for _, _, t in known},
            target_id__in={s for s, _, _ in known} | {t for _, _, t in known},
            relation_id__in={r.pk for _, r, _ in known},
        ).values_list("pk", "source_id", "relation_id", "target_id")
        for pk, s, r, t in rows:
            held[(s, r, t)] = pk
            if relations[r].symmetric:
                held[(t, r, s)] = pk
    seen: dict[tuple, int] = {}
    survivors = []
    for p, s, t, relation in planned:
        fact = (s, relation.pk, t)
        if fact in held:
            result.refuse(
                p.pk,
                _stale(f"This edge is already in the graph (edge #{held[fact]})."),
            )
            continue
        twin = seen.get(fact) or (seen.get((t, relation.pk, s)) if relation.symmetric else None)
        if twin is not None:
            result.refuse(p.pk, f"The same edge is accepted earlier in this batch (#{twin}).")
            continue
        seen[fact] = p.pk
        survivors.append((p, s, t, relation))

    # Concepts: the ones the surviving edges and concept items need, made in bulk.
    used = {
        p.payload[r]["proposal_id"]
        for p, _, _, _ in survivors
        for r in ("source", "target")
        if not p.payload[r].get("concept_id")
    } | {p.pk for p in concept_items if p.pk not in ends.refused}
    accepted_concepts = [needed[pk] for pk in sorted(used) if needed[pk].is_open]
    to_create = [p for p in accepted_concepts if ends.stands.get(p.pk) == ("new", p.pk)]
    made = graph_bulk.concepts_create_many(
        [
            (p.payload["name"], p.payload.get("description", ""), p.payload.get("aliases", []))
            for p in to_create
        ]
    )
    for p, concept in zip(to_create, made, strict=True):
        ends.stands[p.pk] = concept.pk
        concepts[concept.pk] = concept
    changes = GraphChanges()
    created_ids = {c.pk for c in made}
    alias_ids: dict[int, list[int]] = {}
    for pk, names in ends.reuse_aliases.items():
        if pk not in used:
            continue
        cid = ends.concept_id(pk)
        concept = concepts.get(cid) or Concept.objects.get(pk=cid)
        alias_ids[pk] = [
            graph.concept_add_alias(
                concept=concept, name=n, acting_user=reviewer, decision=graph.DECIDING
            ).pk
            for n in dict.fromkeys(names)
            if graph_selectors.name_owner(name=n) is None
        ]
    for pk, cid in ends.reactivate.items():
        if pk in used:
            concepts[cid] = graph.concept_reactivate(
                concept=Concept.objects.get(pk=cid), acting_user=reviewer, decision=graph.DECIDING
            )
            created_ids.add(cid)

    # Edges: acyclic ones one by one (each checked against what the batch wrote so far),
    # the others in one insert.
    now = timezone.now()
    new_edges: list[tuple[Proposal, Edge]] = []
    later: list[tuple[Proposal, Edge]] = []
    checked: list[tuple[Proposal, Edge, Concept, Concept]] = []
    for p, s_end, t_end, relation in survivors:
        s = ends.concept_id(s_end[1]) if isinstance(s_end, tuple) else s_end
        t = ends.concept_id(t_end[1]) if isinstance(t_end, tuple) else t_end
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
            proposal=p,
            decided_by=reviewer,
        )
        if relation.acyclic:
            checked.append((p, row, concepts[s], concepts[t]))
        else:
            later.append((p, row))
    refusals = graph_bulk.edges_add_checked([(row, a, b) for _, row, a, b in checked])
    for (p, row, _, _), refusal in zip(checked, refusals, strict=True):
        if refusal is None:
            new_edges.append((p, row))
        else:
            result.refuse(p.pk, _stale(str(refusal)))
    made_edges = graph_bulk.edges_insert([row for _, row in later])
    new_edges += list(zip([p for p, _ in later], made_edges, strict=True))

    # Decisions: one per proposal decided, the concept proposals caused by their edges.
    accepted_edges = {p.pk: edge for p, edge in new_edges}
    primaries = [
        p for p in fast if p.pk in accepted_edges or (p.kind == "add_concept" and p.pk in used)
    ]
    order = {pk: i for i, pk in enumerate(proposal_ids)}
    primaries.sort(key=lambda p: order[p.pk])
    primary_rows = Decision.objects.bulk_create(
        [
            Decision(
                proposal=p,
                user=reviewer,
                action=Decision.Action.ACCEPT,
                note=note.strip(),
                before={"status": p.status},
                after=_after(p, ends, created_ids, alias_ids),
                proposal_version=p.version,
                batch=batch,
            )
            for p in primaries
        ]
    )
    decision_of = {d.proposal_id: d for d in primary_rows}
    cause_of: dict[int, Decision] = {}
    for p, _, _, _ in survivors:
        if p.pk not in accepted_edges:
            continue
        for r in ("source", "target"):
            pid = p.payload[r].get("proposal_id")
            if pid and not p.payload[r].get("concept_id"):
                cause_of.setdefault(pid, decision_of[p.pk])
    consequences = [
        Decision(
            proposal=c,
            user=reviewer,
            action=Decision.Action.ACCEPT,
            note=f"Accepted with edge proposal #{cause_of[c.pk].proposal_id}, which needs it.",
            before={"status": c.status},
            after=_after(c, ends, created_ids, alias_ids),
            proposal_version=c.version,
            batch=batch,
            caused_by=cause_of[c.pk],
        )
        for c in accepted_concepts
        if c.pk in cause_of and c.pk not in decision_of
    ]
    consequence_rows = Decision.objects.bulk_create(consequences)
    for d in consequence_rows:
        decision_of[d.proposal_id] = d
    if any(c.pk not in decision_of for c in accepted_concepts):
        raise Slow("a concept would be made for no decision")
    # The edges point at the decisions that made them (rows written moments ago).
    for p, edge in new_edges:
        edge.decision = decision_of[p.pk]
    graph_bulk.edges_link_decisions({edge.pk: decision_of[p.pk].pk for p, edge in new_edges})

    # The proposals: closed as accepted, concept proposals linked to their concepts.
    closed = [needed.get(pk) or proposals[pk] for pk in decision_of]
    for p in closed:
        if p.kind == "add_concept":
            p.concept_id = ends.concept_id(p.pk)
    close_all(closed, Proposal.Status.ACCEPTED, reviewer)
    Proposal.objects.bulk_update([p for p in closed if p.kind == "add_concept"], ["concept"])
    _ground(closed, new_edges)
    if any(p.kind == "add_concept" for p in closed):
        graph.name_index_changed()

    for p in closed:
        if p.kind == "add_concept":
            changes.named.add(ends.concept_id(p.pk))
            changes.resolved[p.pk] = ends.concept_id(p.pk)
    changes.edges_added |= {edge.pk for _, edge in new_edges}
    first = primary_rows[0] if primary_rows else None
    settled = reconcile(
        changes,
        user=reviewer,
        batch=batch,
        cause=first,
        why=f"(Settled by the bulk accept{f' of decision #{first.pk}' if first else ''}.)",
    )
    also: dict[int, list[tuple[int, str]]] = {}
    asked = set(proposal_ids)
    for c in accepted_concepts:
        if c.pk in cause_of and c.pk not in asked:
            also.setdefault(cause_of[c.pk].proposal_id, []).append((c.pk, c.payload["name"]))
    for p in primaries:
        result.accept(p.pk, also=also.get(p.pk, []))
    result.extra_settled += len(settled)
    return slow


def _after(p: Proposal, ends: _Ends, created: set[int], alias_ids: dict[int, list[int]]) -> dict:
    after: dict[str, object] = {"status": "accepted"}
    if p.kind == "add_concept":
        cid = ends.concept_id(p.pk)
        after.update(concept_id=cid, created=cid in created)
        if p.pk in alias_ids:
            after["aliases_added"] = alias_ids[p.pk]
    return after


def _ground(closed: list[Proposal], new_edges) -> None:
    rows: dict[tuple[int, int], int] = {}
    for p, edge in new_edges:
        if p.document_id and p.evidence_revision_id:
            for cid in (edge.source_id, edge.target_id):
                rows[(p.document_id, cid)] = p.evidence_revision_id
    for p in closed:
        if p.kind == "add_concept" and p.document_id and p.evidence_revision_id and p.concept_id:
            rows[(p.document_id, p.concept_id)] = p.evidence_revision_id
    graph_bulk.sources_ground(rows)


def close_all(proposals: list[Proposal], status: str, reviewer) -> None:
    """Close the (locked) proposals with one UPDATE, and say so on the objects in hand."""
    stamp = timezone.now()
    for p in proposals:
        p.status, p.decided_at, p.decided_by = status, stamp, reviewer
        p.version += 1
        p.updated_at = stamp
    Proposal.objects.filter(pk__in=[p.pk for p in proposals]).update(
        status=status,
        decided_at=stamp,
        decided_by=reviewer,
        version=F("version") + 1,
        updated_at=stamp,
    )
