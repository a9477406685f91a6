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
from collections import OrderedDict, defaultdict
from dataclasses import replace

from django.conf import settings
from django.db.models import Count, Exists, F, OuterRef

from construction import keys
from construction.cycles import EdgeRecord, find_cycles
from construction.dedupe import ConceptRecord, search_duplicates
from construction.quotes import QuoteFinder, evidence_present
from kgreview.core.tally import tally
from kgreview.graph.models import (
    Concept,
    ConceptAlias,
    ConceptOrder,
    Edge,
    RelationType,
    SourceConcept,
    SourceRevision,
)
from kgreview.review.kinds.invalidate_edge import InvalidateEdgeKind
from kgreview.review.kinds.merge_concepts import MergeConceptsKind
from kgreview.review.models import OPEN_STATUSES, Proposal
from kgreview.review.services import ProposalSpec, proposals_create_many

from .models import AgentRun
from .runs import RunCancelled, agent_run_failed, agent_run_finish, agent_run_step, run_origin

log = logging.getLogger(__name__)

STEPS = ("duplicates", "cycles", "vanished_evidence", "orphans")


def inverse_keys() -> dict[str, str]:
    """Each relation's declared inverse, by key ("A is a prerequisite for B" and "B builds
    on A" state one fact when the vocabulary pairs them: ``RelationType.inverse``)."""
    return dict(
        RelationType.objects.filter(inverse__isnull=False).values_list("key", "inverse__key")
    )


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

#: The skipped blocks a run's stats name (the largest first); the count says how many.
SKIPPED_LISTED = 20


def concept_records() -> list[ConceptRecord]:
    """Every active concept with its names, streamed in id order (a server-side cursor on
    PostgreSQL). Counts and neighbours are read later, for the few concepts whose names
    match another's (``concept_details``)."""
    aliases: dict[int, list[str]] = defaultdict(list)
    canonical: dict[int, str] = {}
    for concept_id, name, kind in (
        ConceptAlias.objects.filter(concept__status=Concept.Status.ACTIVE)
        .order_by()
        .values_list("concept_id", "name", "kind")
        .iterator(chunk_size=20_000)
    ):
        if kind == ConceptAlias.Role.CANONICAL:
            canonical[concept_id] = name
        else:
            aliases[concept_id].append(name)
    records = []
    for concept_id, name in (
        Concept.objects.filter(status=Concept.Status.ACTIVE)
        .order_by("pk")
        .values_list("id", "name")
        .iterator(chunk_size=20_000)
    ):
        records.append(
            ConceptRecord(
                id=concept_id,
                name=canonical.pop(concept_id, name),
                aliases=tuple(aliases.pop(concept_id, ())),
            )
        )
    return records


def concept_details(records: dict[int, ConceptRecord], ids: list[int]) -> dict[int, ConceptRecord]:
    """The records of ``ids`` with their active edges, neighbours and sources counted."""
    neighbours: dict[int, set[int]] = defaultdict(set)
    edges: dict[int, int] = defaultdict(int)
    sources: dict[int, int] = {}
    active = Edge.objects.filter(status=Edge.Status.ACTIVE).order_by()
    for start in range(0, len(ids), 2000):
        chunk = ids[start : start + 2000]
        for s, t in active.filter(source_id__in=chunk).values_list("source_id", "target_id"):
            neighbours[s].add(t)
            edges[s] += 1
        for s, t in active.filter(target_id__in=chunk).values_list("source_id", "target_id"):
            neighbours[t].add(s)
            edges[t] += 1
        sources.update(
            tally(
                SourceConcept.objects.filter(concept_id__in=chunk),
                "concept_id",
                Count("source_id", distinct=True),
            )
        )
    return {
        cid: replace(
            records[cid],
            edge_count=edges.get(cid, 0),
            source_count=sources.get(cid, 0),
            neighbours=frozenset(neighbours.get(cid, ())),
        )
        for cid in ids
        if cid in records
    }


def _concept_names(ids: set[int]) -> dict[int, str]:
    found: dict[int, str] = {}
    wanted = sorted(ids)
    for start in range(0, len(wanted), 5000):
        chunk = wanted[start : start + 5000]
        found.update(Concept.objects.filter(pk__in=chunk).values_list("pk", "name"))
    return found


def skipped_in_words(key: str) -> str:
    """A skipped block's key (``DuplicateSearch.skipped``) as a reader says it: the names
    it gathered."""
    kind, _, rest = key.partition(":")
    if kind == "w":
        return f'names with the words "{rest}"'
    if kind in ("p", "q"):
        head, _, bucket = rest.partition(":")
        low = 4 * int(bucket) - (2 if kind == "q" else 0) if bucket.isdigit() else 0
        return f'names of {max(low, 1)}–{low + 3} letters beginning "{head}"'
    if kind == "a":
        return f'abbreviations "{rest}" and names with those initials'
    if kind == "compact":
        return f'names written "{rest}" without spaces'
    return f'names "{rest}"'


def skipped_blocks_in_words(stats: dict) -> str:
    """What a heal run's stats say of the name blocks it did not compare, in a sentence
    for the run's page; empty when it compared every block."""
    count = stats.get("oversized_blocks_skipped") or 0
    if not count:
        return ""
    listed = [b for b in stats.get("skipped_blocks") or [] if isinstance(b, dict)]
    bound = stats.get("max_block")
    over = f" over {bound:,} names" if isinstance(bound, int) else ""
    were = "name block" + (f"{over} was" if count == 1 else f"s{over} were")
    parts = [f"{b.get('words', b.get('key', '?'))} ({b.get('names', 0):,} names)" for b in listed]
    more = count - len(parts)
    tail = f", and {more:,} more" if parts and more > 0 else ""
    what = f": {'; '.join(parts)}{tail}" if parts else ""
    return (
        f"{count:,} {were} not compared, so duplicates among their names can only be "
        f"found through other blocks (KG_HEAL_MAX_BLOCK){what}."
    )


def _duplicates(run: AgentRun) -> dict:
    max_block = settings.KG_HEAL_MAX_BLOCK
    records = concept_records()
    concepts = len(records)

    def details(ids: list[int]) -> dict[int, ConceptRecord]:
        wanted = set(ids)
        return concept_details({r.id: r for r in records if r.id in wanted}, ids)

    found = search_duplicates(records, max_block=max_block, details=details)
    records.clear()
    candidates = found.candidates
    names = _concept_names(
        {c.survivor_id for c in candidates}
        | {c.loser_id for c in candidates}
        | {i for c in candidates for i in c.shared_neighbours[:5]}
    )
    specs = []
    for c in candidates:
        shared = ", ".join(names.get(i, f"#{i}") for i in c.shared_neighbours[:5])
        reasons = [r for r in c.reasons]
        if c.shared_neighbours and shared:
            reasons.append(f"Shared neighbours: {shared}.")
        specs.append(
            ProposalSpec(
                kind=MergeConceptsKind.key,
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
                origin=run_origin(run),
            )
        )
    created = _queue(run, specs)
    return {
        "concepts": concepts,
        "duplicate_pairs": len(candidates),
        "merge_proposals": created,
        "pairs_compared": found.stats.get("pairs_compared", 0),
        "max_block": max_block,
        "oversized_blocks_skipped": found.stats.get("oversized_blocks_skipped", 0),
        "skipped_blocks": [
            {"key": key, "names": size, "words": skipped_in_words(key)}
            for key, size in found.skipped[:SKIPPED_LISTED]
        ],
    }


# --- Cycles -----------------------------------------------------------------------------


def _cycle_edges(relation: RelationType) -> list[EdgeRecord]:
    """The active edges of an acyclic relation that a cycle could run through.

    With the relation's topological order (``graph.order``) that is few of them: every
    edge written by the graph services runs forwards in it, so a cycle holds at least one
    edge written past them that runs backwards (or touches a concept without a place).
    Going round a cycle, the forward edges climb the order and those edges come back
    down, so the whole cycle lies inside the span they cover: only edges with both ends
    inside such a span are read (``_spans``). Without an order, every edge is read.
    """
    active = Edge.objects.filter(relation=relation, status=Edge.Status.ACTIVE).order_by()
    if not relation.ordered:
        rows = active.values_list("id", "source_id", "target_id", "confidence")
        return [
            EdgeRecord(i, s, t, relation.key, c) for i, s, t, c in rows.iterator(chunk_size=50_000)
        ]
    strays = list(
        active.filter(in_order=False).values_list("id", "source_id", "target_id", "confidence")
    )
    if not strays:
        return []
    ends = {s for _, s, _, _ in strays} | {t for _, _, t, _ in strays}
    at: dict[int, int] = {}
    placed = ConceptOrder.objects.filter(relation=relation)
    wanted = sorted(ends)
    for start in range(0, len(wanted), 5000):
        chunk = wanted[start : start + 5000]
        at.update(placed.filter(concept_id__in=chunk).values_list("concept_id", "position"))
    edges = {i: EdgeRecord(i, s, t, relation.key, c) for i, s, t, c in strays}
    for low, high in _spans(strays, at):
        span = placed.filter(position__range=(low, high)).values("concept_id")
        inside = (
            active.filter(source_id__in=span, target_id__in=span)
            .values_list("id", "source_id", "target_id", "confidence")
            .iterator(chunk_size=50_000)
        )
        for i, s, t, c in inside:
            edges.setdefault(i, EdgeRecord(i, s, t, relation.key, c))
    return list(edges.values())


def _spans(strays: list[tuple], at: dict[int, int]) -> list[tuple[int, int]]:
    """The spans of the order (merged) that a cycle through ``strays`` can lie in: from
    target to source of each edge that runs backwards; for concepts without a place,
    joined by strays, from the lowest to the highest place of the concepts they touch."""
    spans: list[tuple[int, int]] = []
    parent: dict[int, int] = {}

    def root(c: int) -> int:
        while parent.setdefault(c, c) != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    for _, s, t, _ in strays:
        if s in at and t in at:
            if at[s] >= at[t]:
                spans.append((at[t], at[s]))
        elif s not in at and t not in at:
            parent[root(s)] = root(t)
    touched: dict[int, list[int]] = defaultdict(list)
    for _, s, t, _ in strays:
        if (s in at) != (t in at):
            free, other = (t, s) if s in at else (s, t)
            touched[root(free)].append(at[other])
    spans.extend((min(p), max(p)) for p in touched.values())
    spans.sort()
    merged: list[tuple[int, int]] = []
    for low, high in spans:
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


def _cycles(run: AgentRun) -> dict:
    edges: list[EdgeRecord] = []
    acyclic = list(RelationType.objects.filter(acyclic=True).order_by("pk"))
    for relation in acyclic:
        edges.extend(_cycle_edges(relation))
    findings = find_cycles(edges, acyclic=[r.key for r in acyclic])
    read = len(edges)
    del edges
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
                kind=InvalidateEdgeKind.key,
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
                origin=run_origin(run),
            )
        )
    return {
        "cycles": len(findings),
        "cycle_proposals": _queue(run, specs),
        "cycle_edges_read": read,
    }


# --- Vanished evidence ------------------------------------------------------------------


class _Finders:
    """A ``QuoteFinder`` per current revision, made on first use, the last few kept (the
    stale edges come source by source, so each text is normalised about once)."""

    KEEP = 8

    def __init__(self) -> None:
        self._kept: OrderedDict[int, QuoteFinder] = OrderedDict()

    def __call__(self, revision_id: int) -> QuoteFinder:
        finder = self._kept.get(revision_id)
        if finder is None:
            text = SourceRevision.objects.values_list("text", flat=True).get(pk=revision_id)
            finder = self._kept[revision_id] = QuoteFinder(text)
            if len(self._kept) > self.KEEP:
                self._kept.popitem(last=False)
        else:
            self._kept.move_to_end(revision_id)
        return finder


def _vanished(run: AgentRun) -> dict:
    """Active edges whose quote is gone from the current revision of their source."""
    stale = (
        Edge.objects.filter(status=Edge.Status.ACTIVE, evidence_revision__isnull=False)
        .exclude(evidence_revision_id=F("evidence_revision__source__current_revision_id"))
        .filter(evidence_revision__source__current_revision__isnull=False)
        .order_by("evidence_revision__source_id", "pk")
        .values_list("pk", "evidence_quote", "evidence_revision__source__current_revision_id")
    )
    finders = _Finders()
    gone: list[int] = []
    checked = 0
    for pk, quote_, current in stale.iterator(chunk_size=5000):
        checked += 1
        if not evidence_present(quote_, finders(current)):
            gone.append(pk)
    specs: list[ProposalSpec] = []
    supported = 0
    for start in range(0, len(gone), 1000):
        chunk = list(
            Edge.objects.filter(pk__in=gone[start : start + 1000])
            .select_related(
                "relation", "source", "target", "evidence_revision__source__current_revision"
            )
            .defer(
                "evidence_revision__text",
                "evidence_revision__structure",
                "evidence_revision__source__current_revision__text",
                "evidence_revision__source__current_revision__structure",
            )
            .order_by("pk")
        )
        kept = _still_supported(chunk, finders)
        supported += len(kept)
        specs.extend(_evidence_spec(run, edge) for edge in chunk if edge.pk not in kept)
    return {
        "edges_on_old_revisions": checked,
        "evidence_gone": len(gone),
        "still_supported": supported,
        "evidence_proposals": _queue(run, specs),
    }


def _evidence_spec(run: AgentRun, edge: Edge) -> ProposalSpec:
    revision = edge.evidence_revision
    assert revision is not None  # only edges with evidence are checked
    current = revision.source.current_revision
    return ProposalSpec(
        kind=InvalidateEdgeKind.key,
        payload={"edge_id": edge.pk, "reason_code": "evidence_gone"},
        confidence=0.9,
        reason=(
            f'"{edge.source.name}" {edge.relation.verb} "{edge.target.name}": its '
            f"evidence, quoted from revision {revision.number} of "
            f"{revision.source.slug}, no longer appears in revision "
            f"{current.number if current else '?'}, and no other edge stands for the same fact."
        ),
        dedup_key=keys.invalidation_dedup_key(edge.pk),
        priority=90,
        origin=run_origin(run),
        document=revision.source,
    )


def _still_supported(gone: list[Edge], finders: _Finders) -> set[int]:
    """Edges whose fact another active edge states on evidence that is still there.

    Support counting: a fact goes only when its last evidence goes. The other edge is the
    equivalent statement (prerequisite A→B and builds-on B→A) or the same symmetric fact.
    """
    if not gone:
        return set()
    gone_ids = {e.pk for e in gone}
    equivalent = inverse_keys()
    wanted = {
        (e.target_id, e.source_id, equivalent[e.relation.key])
        for e in gone
        if e.relation.key in equivalent
    }
    if not wanted:
        return set()
    # The concepts of every wanted statement, in two lists: a few more rows than wanted
    # come back and are left out below, where a thousand OR'd pairs would slow the plan.
    twins = (
        Edge.objects.filter(
            status=Edge.Status.ACTIVE,
            relation__key__in=sorted({w[2] for w in wanted}),
            source_id__in=sorted({w[0] for w in wanted}),
            target_id__in=sorted({w[1] for w in wanted}),
        )
        .exclude(pk__in=gone_ids)
        .values_list(
            "source_id",
            "target_id",
            "relation__key",
            "evidence_revision_id",
            "evidence_quote",
            "evidence_revision__source__current_revision_id",
        )
    )
    alive: set[tuple[int, int, str]] = set()
    for source_id, target_id, key, revision, quote_, current in twins:
        if (source_id, target_id, key) not in wanted:
            continue
        if (
            revision is None
            or current is None
            or revision == current
            or evidence_present(quote_, finders(current))
        ):
            alive.add((target_id, source_id, equivalent[key]))
    return {e.pk for e in gone if (e.source_id, e.target_id, e.relation.key) in alive}


# --- Orphans ----------------------------------------------------------------------------


def orphan_concepts():
    """Active concepts with no active edge: listed for curators to merge, link or leave.

    Two NOT EXISTS side by side, which the database answers as two anti-joins on the
    edges' indexes (one NOT over both took seconds at 500,000 concepts)."""
    active = Edge.objects.filter(status=Edge.Status.ACTIVE)
    return (
        Concept.objects.filter(status=Concept.Status.ACTIVE)
        .exclude(Exists(active.filter(source_id=OuterRef("pk"))))
        .exclude(Exists(active.filter(target_id=OuterRef("pk"))))
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
        return agent_run_failed(run, exc, stats=stats)
    return agent_run_finish(run, status=AgentRun.Status.SUCCEEDED, stats=stats)
