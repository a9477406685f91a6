"""Bulk decisions, set-based: a thousand proposals in a few statements, not a thousand calls.

Accepting edge and concept proposals, and rejecting any proposal, is done for the whole
selection at once: one locking read of the proposals, one of the concept proposals they
need, one of their ends; concepts, decisions and edges written with bulk inserts; one
settling of the queue for the whole batch. The rules are those of ``decisions`` (the same
refusals, in the same words); what they cannot decide cheaply for a whole set (a cycle
in an acyclic relation) is checked edge by edge against the graph as the batch writes it.

Other kinds (merges, invalidations, updates, relation types, concept corrections) and
edges whose end is a bare new name go through ``decisions.proposal_accept`` one by one.
Locking: the proposals of the batch are locked in id order first, then the concept
proposals they need, then (per acyclic relation) the relation row, as ``edge_add`` does.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import F, Max, OuterRef, Subquery
from django.db.models.functions import Lower
from django.utils import timezone

from construction.text import name_key
from kgreview.core.errors import StateConflict
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph
from kgreview.graph.models import (
    Concept,
    ConceptAlias,
    Edge,
    RelationType,
    SourceConcept,
    SourceRevision,
)

from .models import Decision, Proposal
from .reconcile import GraphChanges, reconcile

FAST_ACCEPT = frozenset({"add_edge", "add_concept"})


class Slow(Exception):
    """The set-based path cannot take this batch (a race on a name or an edge): the caller
    falls back to deciding the proposals one by one."""


def _stale(words: str) -> str:
    return f"Cannot apply it as it stands: {words}"


def _already(proposal: Proposal, names: dict[int, str]) -> str:
    when = timezone.localtime(proposal.decided_at).strftime("%Y-%m-%d %H:%M")
    who = names.get(proposal.decided_by_id, "the system")
    return f"Proposal #{proposal.pk} was already {proposal.status} by {who} at {when}."


def _lock(ids) -> dict[int, Proposal]:
    rows = Proposal.objects.select_for_update(of=("self",)).filter(pk__in=list(ids)).order_by("pk")
    return {p.pk: p for p in rows}


def _user_names(proposals) -> dict[int, str]:
    from django.contrib.auth import get_user_model

    ids = {p.decided_by_id for p in proposals if p.decided_by_id}
    if not ids:
        return {}
    User = get_user_model()
    return dict(User.objects.filter(pk__in=ids).values_list("pk", User.USERNAME_FIELD))


def _screen(ids, proposals, reviewer, result, can_decide_kind) -> list[Proposal]:
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


class _Ends:
    """What each concept proposal of the batch stands for: a concept id, a concept to
    create (``("new", proposal id)``), or a refusal in words."""

    def __init__(self) -> None:
        self.stands: dict[int, int | tuple[str, int]] = {}
        self.refused: dict[int, str] = {}
        self.reuse_aliases: dict[
            int, list[str]
        ] = {}  # proposal -> names to add to a reused concept
        self.reactivate: dict[int, int] = {}  # proposal -> its own retired concept


def _resolve_concept_proposals(needed: dict[int, Proposal]) -> _Ends:
    ends = _Ends()
    open_ = {p.pk for p in needed.values() if p.is_open}
    names = {p.payload["name"] for p in needed.values()}
    owners = {
        a.lname: a
        for a in ConceptAlias.objects.select_related("concept")
        .annotate(lname=Lower("name"))
        .filter(lname__in=[graph_selectors.clean_name(n).lower() for n in names])
    }
    by_key: dict[str, ConceptAlias] = {}
    for a in (
        ConceptAlias.objects.select_related("concept")
        .filter(key__in=[name_key(n)[:200] for n in names])
        .order_by("kind", "pk")
    ):
        by_key.setdefault(a.key, a)

    def owner_of(name: str) -> Concept | None:
        alias = owners.get(graph_selectors.clean_name(name).lower())
        if alias is None:
            alias = by_key.get(name_key(name)[:200])
        return alias.concept if alias is not None else None

    for p in needed.values():
        name = p.payload["name"]
        owner = owner_of(name)
        if p.pk in open_:
            if owner is None:
                ends.stands[p.pk] = ("new", p.pk)
            elif owner.status == Concept.Status.RETIRED:
                if p.concept_id == owner.pk:
                    ends.stands[p.pk] = owner.pk
                    ends.reactivate[p.pk] = owner.pk
                else:
                    ends.refused[p.pk] = (
                        f'"{name}" names the concept "{owner.name}", which a curator retired; '
                        "a curator can reactivate it from its page, or reject this proposal."
                    )
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


def bulk_accept(*, reviewer, proposal_ids, note, batch, result, can_decide_kind) -> list[int]:
    """Accept the edge and concept proposals among ``proposal_ids`` as one set; returns
    the ids left for the one-by-one path. Runs inside the caller's transaction; raises
    ``Slow`` when a race makes the set-based writes impossible."""
    proposals = _lock(proposal_ids)
    open_ = _screen(proposal_ids, proposals, reviewer, result, can_decide_kind)
    slow = [
        p.pk
        for p in open_
        if p.kind not in FAST_ACCEPT
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
    needed.update(_lock(wanted - set(proposals)))
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
    planned: list[tuple[Proposal, object, object, RelationType]] = []
    for p in edges_items:
        relation = relations.get(p.relation_id) or by_key.get(p.payload["relation"])
        words = ""
        if relation is None:
            words = f'The relation "{p.payload["relation"]}" does not exist.'
        elif not relation.active:
            words = _stale(f'The relation "{relation.key}" was retired; choose an active relation.')
        ids = []
        for role in ("source", "target"):
            end = p.payload[role]
            if end.get("concept_id"):
                ids.append(end["concept_id"])
            else:
                pid = end["proposal_id"]
                if pid in ends.refused:
                    words = words or _stale(ends.refused[pid])
                ids.append(ends.stands.get(pid))
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
        if words:
            result.refuse(p.pk, words)
        else:
            planned.append((p, ids[0], ids[1], relation))

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
    made = _create_concepts(to_create)
    for p, concept in zip(to_create, made, strict=True):
        ends.stands[p.pk] = concept.pk
        concepts[concept.pk] = concept
    changes = GraphChanges()
    created_ids = {c.pk for c in made}
    alias_ids: dict[int, list[int]] = {}
    for pk, names in ends.reuse_aliases.items():
        if pk not in used:
            continue
        concept = concepts.get(ends.stands[pk]) or Concept.objects.get(pk=ends.stands[pk])
        alias_ids[pk] = [
            graph.concept_add_alias(concept=concept, name=n).pk
            for n in dict.fromkeys(names)
            if graph_selectors.name_owner(name=n) is None
        ]
    for pk, cid in ends.reactivate.items():
        if pk in used:
            graph.concept_reactivate(concept=Concept.objects.get(pk=cid))
            created_ids.add(cid)

    # Edges: acyclic ones one by one (each checked against what the batch wrote so far),
    # the others in one insert.
    now = timezone.now()
    locked_relations: set[int] = set()
    new_edges: list[tuple[Proposal, Edge]] = []
    later: list[tuple[Proposal, Edge]] = []
    for p, s, t, relation in survivors:
        s = ends.stands[s[1]] if isinstance(s, tuple) else s
        t = ends.stands[t[1]] if isinstance(t, tuple) else t
        row = Edge(
            source_id=s,
            target_id=t,
            relation=relation,
            is_symmetric=relation.symmetric,
            weight=p.payload.get("weight", 1.0),
            confidence=p.confidence,
            reason=p.reason or "Accepted by a reviewer.",
            evidence_revision_id=p.evidence_revision_id,
            evidence_start=p.evidence_start,
            evidence_end=p.evidence_end,
            evidence_quote=p.evidence_quote,
            valid_at=now,
            recorded_at=now,
            proposal=p,
            decided_by=reviewer,
        )
        if relation.acyclic:
            if relation.pk not in locked_relations:
                RelationType.objects.select_for_update().filter(pk=relation.pk).first()
                locked_relations.add(relation.pk)
            existing, cycle = graph_selectors.edge_precheck(
                relation=relation, source_id=s, target_id=t
            )
            if existing is not None:
                result.refuse(
                    p.pk, _stale(f"This edge is already in the graph (edge #{existing}).")
                )
                continue
            if cycle:
                result.refuse(p.pk, _stale(_cycle_words(relation, s, t)))
                continue
            row.save(force_insert=True)
            new_edges.append((p, row))
        else:
            later.append((p, row))
    if later:
        made_edges = Edge.objects.bulk_create([row for _, row in later])
        if any(e.pk is None for e in made_edges):
            raise Slow("edge ids not returned")
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
    # The edges point at the decisions that made them (rows written moments ago): one
    # UPDATE, each edge finding its decision by its proposal.
    for p, edge in new_edges:
        edge.decision = decision_of[p.pk]
    if new_edges:
        Edge.objects.filter(pk__in=[edge.pk for _, edge in new_edges]).update(
            decision_id=Subquery(
                Decision.objects.filter(
                    batch=batch, proposal_id=OuterRef("proposal_id"), caused_by__isnull=True
                ).values("pk")[:1]
            )
        )

    # The proposals: closed as accepted, concept proposals linked to their concepts.
    stamp = timezone.now()
    closed = []
    for pk in decision_of:
        p = needed.get(pk) or proposals[pk]
        p.status = Proposal.Status.ACCEPTED
        p.decided_at = stamp
        p.decided_by = reviewer
        p.version += 1
        p.updated_at = stamp
        if p.kind == "add_concept":
            p.concept_id = ends.stands[p.pk]
        closed.append(p)
    Proposal.objects.filter(pk__in=[p.pk for p in closed]).update(
        status=Proposal.Status.ACCEPTED,
        decided_at=stamp,
        decided_by=reviewer,
        version=F("version") + 1,
        updated_at=stamp,
    )
    Proposal.objects.bulk_update([p for p in closed if p.kind == "add_concept"], ["concept"])
    _ground(closed, new_edges, ends)
    if any(p.kind == "add_concept" for p in closed):
        graph.name_index_changed()

    for p in closed:
        if p.kind == "add_concept":
            changes.named.add(p.concept_id)
            changes.resolved[p.pk] = p.concept_id
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
    after = {"status": "accepted"}
    if p.kind == "add_concept":
        cid = ends.stands[p.pk]
        after.update(concept_id=cid, created=cid in created)
        if p.pk in alias_ids:
            after["aliases_added"] = alias_ids[p.pk]
    return after


def _create_concepts(proposals: list[Proposal]) -> list[Concept]:
    """New concepts for these proposals, with their canonical names and free aliases."""
    if not proposals:
        return []
    rows = []
    for p in proposals:
        name = graph_selectors.clean_name(p.payload["name"])
        if not name or len(name) > graph.NAME_MAX:
            raise Slow("an unusual name")
        rows.append(Concept(name=name, description=p.payload.get("description", "").strip()))
    try:
        with transaction.atomic():
            made = Concept.objects.bulk_create(rows)
            if any(c.pk is None for c in made):
                raise Slow("concept ids not returned")
            wanted_aliases: dict[str, tuple[Concept, str]] = {}
            for p, concept in zip(proposals, made, strict=True):
                wanted_aliases.setdefault(
                    concept.name.lower(), (concept, "canonical", concept.name)
                )
                for alias in p.payload.get("aliases", []):
                    alias = graph_selectors.clean_name(alias)
                    if alias and len(alias) <= graph.NAME_MAX:
                        wanted_aliases.setdefault(alias.lower(), (concept, "alias", alias))
            taken = set(
                ConceptAlias.objects.annotate(lname=Lower("name"))
                .filter(lname__in=list(wanted_aliases))
                .values_list("lname", flat=True)
            )
            ConceptAlias.objects.bulk_create(
                [
                    ConceptAlias(concept=c, name=n, kind=kind, key=name_key(n)[:200])
                    for lname, (c, kind, n) in wanted_aliases.items()
                    if lname not in taken or kind == "canonical"
                ]
            )
    except IntegrityError as exc:
        raise Slow("a name was taken meanwhile") from exc
    return made


def _cycle_words(relation: RelationType, source_id: int, target_id: int) -> str:
    path = graph_selectors.relation_path(relation=relation, start_id=target_id, goal_id=source_id)
    names = graph_selectors.concept_names([source_id, target_id, *(path or [])])
    chain = " → ".join(names.get(i, f"#{i}") for i in [*(path or [target_id]), target_id])
    return (
        f'"{names.get(source_id)}" {relation.verb} "{names.get(target_id)}" would close a cycle: '
        f"{chain}."
    )


def _ground(closed: list[Proposal], new_edges, ends: _Ends) -> None:
    rows: dict[tuple[int, int], int] = {}
    for p, edge in new_edges:
        if p.document_id and p.evidence_revision_id:
            for cid in (edge.source_id, edge.target_id):
                rows[(p.document_id, cid)] = p.evidence_revision_id
    for p in closed:
        if p.kind == "add_concept" and p.document_id and p.evidence_revision_id:
            rows[(p.document_id, p.concept_id)] = p.evidence_revision_id
    if rows:
        SourceConcept.objects.bulk_create(
            [SourceConcept(source_id=s, concept_id=c, revision_id=r) for (s, c), r in rows.items()],
            update_conflicts=True,
            unique_fields=["source", "concept"],
            update_fields=["revision"],
        )


def bulk_reject(
    *, reviewer, proposal_ids, reason_code: str, note: str, batch, result, can_decide_kind
) -> None:
    """Reject every open proposal of the selection the reviewer may decide, as one set."""
    proposals = _lock(proposal_ids)
    open_ = _screen(proposal_ids, proposals, reviewer, result, can_decide_kind)
    if not open_:
        return
    rows = Decision.objects.bulk_create(
        [
            Decision(
                proposal=p,
                user=reviewer,
                action=Decision.Action.REJECT,
                reason_code=reason_code,
                note=note.strip(),
                before={"status": p.status},
                after={"status": "rejected"},
                proposal_version=p.version,
                batch=batch,
            )
            for p in open_
        ]
    )
    stamp = timezone.now()
    for p in open_:
        p.status = Proposal.Status.REJECTED
        p.decided_at = stamp
        p.decided_by = reviewer
        p.version += 1
        p.updated_at = stamp
    Proposal.objects.filter(pk__in=[p.pk for p in open_]).update(
        status=Proposal.Status.REJECTED,
        decided_at=stamp,
        decided_by=reviewer,
        version=F("version") + 1,
        updated_at=stamp,
    )
    changes = GraphChanges(rejected={p.pk for p in open_ if p.kind == "add_concept"})
    if changes.rejected:
        graph.name_index_changed()
    settled = reconcile(
        changes,
        user=reviewer,
        batch=batch,
        cause=rows[0],
        why=f"(Settled by the bulk reject of decision #{rows[0].pk}.)",
    )
    for p in open_:
        result.accept(p.pk)
    result.extra_settled += len(settled)


# --- Undoing a batch ----------------------------------------------------------------------

UNDOABLE_AT_ONCE = {
    (Decision.Action.ACCEPT, "add_edge"),
    (Decision.Action.ACCEPT, "add_concept"),
    (Decision.Action.REJECT, None),
    (Decision.Action.SUPERSEDE, None),
}


def bulk_undo(decisions: list[Decision], *, reviewer, undo_batch, gate: float):
    """Undo a bulk batch as one set: its accepted edges invalidated in one statement, the
    concepts made for them retired, every proposal reopened, the undo decisions written
    in bulk. Returns (undo decisions, graph changes). Raises ``Slow`` for what the
    one-by-one path must do (edits, other kinds, aliases added to reused concepts, a
    proposal that cannot go back because the same change is waiting again)."""
    for d in decisions:
        kind = (d.action, d.proposal.kind)
        if kind not in UNDOABLE_AT_ONCE and (d.action, None) not in UNDOABLE_AT_ONCE:
            raise Slow("a kind undone one by one")
        if d.action == Decision.Action.ACCEPT and (d.after or {}).get("aliases_added"):
            raise Slow("aliases to take back")
    ids = sorted({d.proposal_id for d in decisions})
    proposals = _lock(ids)
    latest = dict(
        Decision.objects.filter(proposal_id__in=ids)
        .values("proposal_id")
        .annotate(last=Max("id"))
        .values_list("proposal_id", "last")
    )
    now = timezone.now()
    doing: list[Decision] = []
    for d in decisions:
        p = proposals[d.proposal_id]
        if d.action == Decision.Action.SUPERSEDE:
            if p.status == Proposal.Status.SUPERSEDED and latest[p.pk] == d.pk:
                doing.append(d)
            continue
        if latest[p.pk] != d.pk or p.status not in ("accepted", "rejected"):
            raise StateConflict(
                f"Proposal #{p.pk} was decided again since; undo the later decision."
            )
        doing.append(d)
    accepts = [d.pk for d in doing if d.action == Decision.Action.ACCEPT]
    edges = list(Edge.objects.filter(decision_id__in=accepts))
    for edge in edges:
        if not edge.is_active:
            raise StateConflict(
                f"Edge #{edge.pk} made by this decision was {edge.status} since; "
                "it can no longer be undone from here."
            )

    # The undo decisions: one per decision the reviewer took, the rest caused by the first.
    primary = [d for d in doing if d.caused_by_id is None]
    rest = [d for d in doing if d.caused_by_id is not None]

    def undo_row(d: Decision, cause=None) -> Decision:
        p = proposals[d.proposal_id]
        return Decision(
            proposal=p,
            user=reviewer,
            action=Decision.Action.UNDO,
            note=f"Undoes {d.get_action_display().lower()} #{d.pk}.",
            before={"status": p.status},
            after={"status": "pending"},
            proposal_version=p.version,
            undoes=d,
            batch=undo_batch,
            caused_by=cause,
        )

    rows = Decision.objects.bulk_create([undo_row(d) for d in primary])
    first = rows[0] if rows else None
    rows += Decision.objects.bulk_create([undo_row(d, first) for d in rest])
    changes = GraphChanges()

    if edges:
        why = f"Undone by {reviewer.get_username()} (the bulk undo of decision #{first.pk})."
        Edge.objects.filter(pk__in=[e.pk for e in edges]).update(
            status=Edge.Status.INVALIDATED,
            invalid_at=now,
            invalidated_by=reviewer,
            invalidation_reason=why,
            invalidation_decision_id=Subquery(
                Decision.objects.filter(batch=undo_batch, undoes_id=OuterRef("decision_id")).values(
                    "pk"
                )[:1]
            ),
        )
        changes.edges_gone |= {e.pk for e in edges}

    # Concepts the batch made go back, with no edges left (else the undo is refused).
    made: dict[int, int] = {}
    for d in doing:
        p = proposals[d.proposal_id]
        accepted_concept = d.action == Decision.Action.ACCEPT and p.kind == "add_concept"
        if accepted_concept and p.concept_id and (d.after or {}).get("created", True):
            made[p.concept_id] = p.pk
    if made:
        concepts = Concept.objects.select_for_update().in_bulk(list(made))
        for concept in concepts.values():
            if not concept.is_active:
                raise StateConflict(f'"{concept.name}" is {concept.status}, not active.')
        for cid, n in graph_selectors.active_edge_counts(list(made)).items():
            if n:
                raise StateConflict(
                    f'"{concepts[cid].name}" is an end of {n} active edge(s); '
                    "undo or invalidate them first.",
                    concept_id=cid,
                )
        Concept.objects.filter(pk__in=list(made)).update(
            status=Concept.Status.RETIRED, retired_at=now, updated_at=now
        )
        changes.unmade.update(made)

    # Every proposal back in the queue (held below the gate); twins lose their link.
    back = [proposals[d.proposal_id] for d in doing]
    twins = [
        p.pk
        for d, p in zip(doing, back, strict=True)
        if d.action == Decision.Action.SUPERSEDE and p.kind == "add_concept"
    ]
    common = {
        "decided_at": None,
        "decided_by": None,
        "version": F("version") + 1,
        "updated_at": now,
    }
    pks = [p.pk for p in back]
    try:
        with transaction.atomic():
            Proposal.objects.filter(pk__in=pks, confidence__lt=gate).update(
                status=Proposal.Status.HELD, **common
            )
            Proposal.objects.filter(pk__in=pks, confidence__gte=gate).update(
                status=Proposal.Status.PENDING, **common
            )
            if twins:
                Proposal.objects.filter(pk__in=twins).update(concept=None)
    except IntegrityError as exc:
        raise Slow("the same change is waiting again") from exc
    if made or any(p.kind == "add_concept" for p in back):
        graph.name_index_changed()
    return rows, changes
