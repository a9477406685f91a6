"""The self-healing agent, Django side: read the graph, ask ``construction``, queue.

Four steps, each ending with a cancel check: duplicate concepts (merge proposals), cycles
in acyclic relations (invalidate the weakest edge), evidence that vanished from its
source (invalidate, unless an equivalent edge still stands on evidence that is there),
and orphan concepts (listed for curators, not proposed). It writes proposals only;
people decide. The pure logic is ``construction.dedupe`` and ``construction.cycles``.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict

from django.db.models import Count, F, Q

from construction import keys
from construction.cycles import EdgeRecord, find_cycles
from construction.dedupe import ConceptRecord, find_duplicates_with_stats
from construction.quotes import QuoteFinder, evidence_present
from kgreview.core.tally import tally
from kgreview.graph.models import Concept, ConceptAlias, Edge, RelationType, SourceConcept
from kgreview.review.models import OPEN_STATUSES, Proposal
from kgreview.review.services import ProposalSpec, proposals_create_many

from .models import AgentRun
from .runs import RunCancelled, agent_run_finish, agent_run_step

log = logging.getLogger(__name__)

STEPS = ("duplicates", "cycles", "vanished_evidence", "orphans")
# "A is a prerequisite for B" and "B builds on A" state one fact (the order of learning).
EQUIVALENT = {"prerequisite": "builds_on", "builds_on": "prerequisite"}


def _known_keys(dedup_keys: list[str]) -> set[str]:
    """Keys already open, or rejected before: neither is proposed again."""
    found: set[str] = set()
    for start in range(0, len(dedup_keys), 5000):
        chunk = dedup_keys[start : start + 5000]
        found |= set(
            Proposal.objects.filter(
                dedup_key__in=chunk, status__in=(*OPEN_STATUSES, Proposal.Status.REJECTED)
            ).values_list("dedup_key", flat=True)
        )
    return found


def _queue(run: AgentRun, specs: list[ProposalSpec]) -> int:
    known = _known_keys([s.dedup_key for s in specs if s.dedup_key])
    fresh = [s for s in specs if s.dedup_key not in known]
    created = 0
    for start in range(0, len(fresh), 1000):
        outcomes = proposals_create_many(fresh[start : start + 1000])
        created += sum(1 for o in outcomes if isinstance(o, Proposal))
    return created


# --- Duplicates -------------------------------------------------------------------------


def concept_records() -> tuple[list[ConceptRecord], dict[int, str]]:
    """Every active concept with its names, edge count, source count and neighbours."""
    names: dict[int, str] = {}
    aliases: dict[int, list[str]] = defaultdict(list)
    for concept_id, name, kind in (
        ConceptAlias.objects.filter(concept__status=Concept.Status.ACTIVE)
        .values_list("concept_id", "name", "kind")
        .iterator(chunk_size=20_000)
    ):
        if kind == ConceptAlias.Kind.CANONICAL:
            names[concept_id] = name
        else:
            aliases[concept_id].append(name)
    for concept_id, name in Concept.objects.filter(status=Concept.Status.ACTIVE).values_list(
        "id", "name"
    ):
        names.setdefault(concept_id, name)
    neighbours: dict[int, set[int]] = defaultdict(set)
    edges: dict[int, int] = defaultdict(int)
    for s, t in (
        Edge.objects.filter(status=Edge.Status.ACTIVE)
        .values_list("source_id", "target_id")
        .iterator(chunk_size=50_000)
    ):
        neighbours[s].add(t)
        neighbours[t].add(s)
        edges[s] += 1
        edges[t] += 1
    sources = tally(SourceConcept.objects, "concept_id", Count("source_id", distinct=True))
    records = [
        ConceptRecord(
            id=cid,
            name=name,
            aliases=tuple(aliases.get(cid, ())),
            edge_count=edges.get(cid, 0),
            source_count=sources.get(cid, 0),
            neighbours=frozenset(neighbours.get(cid, ())),
        )
        for cid, name in names.items()
    ]
    return records, names


def _duplicates(run: AgentRun) -> dict:
    records, names = concept_records()
    candidates, stats = find_duplicates_with_stats(records)
    specs = []
    for c in candidates:
        shared = ", ".join(names.get(i, f"#{i}") for i in c.shared_neighbours[:5])
        reasons = [r for r in c.reasons]
        if c.shared_neighbours and shared:
            reasons.append(f"Shared neighbours: {shared}.")
        specs.append(
            ProposalSpec(
                kind="merge_concepts",
                payload={
                    "survivor_id": c.survivor_id,
                    "loser_id": c.loser_id,
                    "score": round(c.score, 1),
                    "why": " ".join([c.why_survivor, *reasons])[:2000],
                },
                confidence=round(min(1.0, c.score / 100), 3),
                reason=(
                    f'"{names.get(c.loser_id)}" looks like a duplicate of '
                    f'"{names.get(c.survivor_id)}". {c.why_survivor} {" ".join(reasons)}'
                ),
                flags=("duplicate",),
                dedup_key=keys.merge_dedup_key(c.survivor_id, c.loser_id),
                priority=round(c.score),
                agent_run=run,
            )
        )
    created = _queue(run, specs)
    return {
        "concepts": len(records),
        "duplicate_pairs": len(candidates),
        "merge_proposals": created,
        "pairs_compared": stats.get("pairs_compared", 0),
        "oversized_blocks_skipped": stats.get("oversized_blocks_skipped", 0),
    }


# --- Cycles -----------------------------------------------------------------------------


def _cycles(run: AgentRun) -> dict:
    acyclic = set(RelationType.objects.filter(acyclic=True).values_list("key", flat=True))
    relation_keys = dict(RelationType.objects.values_list("id", "key"))
    rows = (
        Edge.objects.filter(status=Edge.Status.ACTIVE, relation__acyclic=True)
        .values_list("id", "source_id", "target_id", "relation_id", "confidence")
        .iterator(chunk_size=50_000)
    )
    edges = [EdgeRecord(i, s, t, relation_keys[r], c) for i, s, t, r, c in rows]
    findings = find_cycles(edges, acyclic=acyclic)
    involved = {e for f in findings for e in f.edge_ids}
    info = {
        e.pk: e
        for e in Edge.objects.filter(pk__in=involved).select_related("source", "target", "relation")
    }
    specs = []
    for finding in findings:
        weakest = info[finding.weakest_edge_id]
        chain = " → ".join(
            [info[finding.edge_ids[0]].source.name]
            + [info[e].target.name for e in finding.edge_ids]
        )
        specs.append(
            ProposalSpec(
                kind="invalidate_edge",
                payload={
                    "edge_id": weakest.pk,
                    "reason_code": "cycle",
                    "cycle_edge_ids": list(finding.edge_ids),
                },
                confidence=round(max(0.5, 1.0 - weakest.confidence / 2), 3),
                reason=(
                    f"These {finding.relation} edges form a cycle: {chain}. Retiring the "
                    f'weakest, "{weakest.source.name}" {weakest.relation.verb} '
                    f'"{weakest.target.name}" (confidence {weakest.confidence:.2f}), breaks it.'
                ),
                flags=("contradiction",),
                dedup_key=keys.invalidation_dedup_key(weakest.pk),
                priority=190,
                agent_run=run,
            )
        )
    return {"cycles": len(findings), "cycle_proposals": _queue(run, specs)}


# --- Vanished evidence ------------------------------------------------------------------


def _vanished(run: AgentRun) -> dict:
    """Active edges whose quote is gone from the current revision of their source."""
    stale = (
        Edge.objects.filter(status=Edge.Status.ACTIVE, evidence_revision__isnull=False)
        .exclude(evidence_revision_id=F("evidence_revision__source__current_revision_id"))
        .select_related(
            "evidence_revision__source__current_revision", "relation", "source", "target"
        )
        .order_by("evidence_revision__source_id", "pk")
    )
    finders: dict[int, QuoteFinder] = {}
    gone: list[Edge] = []
    checked = 0
    for edge in stale.iterator(chunk_size=2000):
        current = edge.evidence_revision.source.current_revision
        if current is None or current.pk == edge.evidence_revision_id:
            continue
        checked += 1
        finder = finders.get(current.pk)
        if finder is None:
            finder = finders[current.pk] = QuoteFinder(current.text)
        if not evidence_present(edge.evidence_quote, finder):
            gone.append(edge)
    supported = _still_supported(gone, finders)
    specs = []
    for edge in gone:
        if edge.pk in supported:
            continue
        revision = edge.evidence_revision
        specs.append(
            ProposalSpec(
                kind="invalidate_edge",
                payload={"edge_id": edge.pk, "reason_code": "evidence_gone"},
                confidence=0.9,
                reason=(
                    f'"{edge.source.name}" {edge.relation.verb} "{edge.target.name}": its '
                    f"evidence, quoted from revision {revision.number} of "
                    f"{revision.source.slug}, no longer appears in revision "
                    f"{revision.source.current_revision.number}, and no other edge stands "
                    "for the same fact."
                ),
                dedup_key=keys.invalidation_dedup_key(edge.pk),
                priority=90,
                agent_run=run,
                document=revision.source,
            )
        )
    return {
        "edges_on_old_revisions": checked,
        "evidence_gone": len(gone),
        "still_supported": len(supported),
        "evidence_proposals": _queue(run, specs),
    }


def _still_supported(gone: list[Edge], finders: dict[int, QuoteFinder]) -> set[int]:
    """Edges whose fact another active edge states on evidence that is still there.

    Support counting: a fact goes only when its last evidence goes. The other edge is the
    equivalent statement (prerequisite A→B and builds-on B→A) or the same symmetric fact.
    ``finders`` holds a ``QuoteFinder`` per current revision already searched; it is
    shared, so each revision's text is normalised once.
    """
    if not gone:
        return set()
    gone_ids = {e.pk for e in gone}
    wanted = Q()
    for e in gone:
        other = EQUIVALENT.get(e.relation.key)
        if other:
            wanted |= Q(source_id=e.target_id, target_id=e.source_id, relation__key=other)
    if not wanted:
        return set()
    twins = (
        Edge.objects.filter(wanted, status=Edge.Status.ACTIVE)
        .exclude(pk__in=gone_ids)
        .select_related("relation", "evidence_revision__source__current_revision")
    )
    alive: set[tuple[int, int, str]] = set()
    for twin in twins:
        revision = twin.evidence_revision
        current = revision.source.current_revision if revision else None
        if revision is None or current is None or revision.pk == current.pk:
            alive.add((twin.target_id, twin.source_id, EQUIVALENT[twin.relation.key]))
            continue
        finder = finders.get(current.pk)
        if finder is None:
            finder = finders[current.pk] = QuoteFinder(current.text)
        if evidence_present(twin.evidence_quote, finder):
            alive.add((twin.target_id, twin.source_id, EQUIVALENT[twin.relation.key]))
    return {e.pk for e in gone if (e.source_id, e.target_id, e.relation.key) in alive}


# --- Orphans ----------------------------------------------------------------------------


def orphan_concepts():
    """Active concepts with no active edge: listed for curators to merge, link or leave."""
    return Concept.objects.filter(status=Concept.Status.ACTIVE).exclude(
        Q(outgoing_edges__status=Edge.Status.ACTIVE) | Q(incoming_edges__status=Edge.Status.ACTIVE)
    )


def _orphans(run: AgentRun) -> dict:
    return {"orphans": orphan_concepts().count()}


def heal_run(run: AgentRun) -> AgentRun:
    """Run the four steps; a cancel between steps stops cleanly with what was found."""
    stats: dict = {}
    steps = [_duplicates, _cycles, _vanished, _orphans]
    try:
        agent_run_step(run, done=0, total=len(steps))
        for done, step in enumerate(steps, start=1):
            started = time.perf_counter()
            stats.update(step(run))
            stats[f"{step.__name__.strip('_')}_s"] = round(time.perf_counter() - started, 3)
            agent_run_step(run, done=done, stats=stats)
    except RunCancelled:
        return agent_run_finish(
            run,
            status=AgentRun.Status.CANCELLED,
            stats=stats,
            error="Cancelled between steps; what was found is queued.",
        )
    except Exception as exc:  # the run records the failure in words; the worker stays up
        log.exception("heal run %s failed", run.pk)
        return agent_run_finish(
            run,
            status=AgentRun.Status.FAILED,
            stats=stats,
            error=f"{exc.__class__.__name__}: {exc}",
        )
    return agent_run_finish(run, status=AgentRun.Status.SUCCEEDED, stats=stats)
