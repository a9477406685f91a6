"""Reads for agent runs, their results, and worker liveness."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from construction.formats import SUBMITTED_MEDIA_TYPE, VOCABULARY_MEDIA_TYPES
from kgreview.graph.models import Concept, ConceptAlias, Edge, Source, SourceRevision
from kgreview.graph.sources import place_of
from kgreview.review.kinds import kind_of
from kgreview.review.models import Proposal

from .models import AgentRun, AgentRunItem, DroppedCandidate, WorkerHeartbeat


def mined_sources():
    """The sources the agents read when no one names which: active, with text, and
    neither a vocabulary kept by an import (``ontology_import``: statements, not prose)
    nor a text submitted with a proposal (``submissions``: evidence for the proposals
    submitted with it only). Every reading of "every source" asks here: construct (the
    command's --all, the schedule, Run now), bootstrap, discover's additions and the
    competency questions' gap searches. A run a curator starts on sources by name reads
    what it names."""
    return Source.objects.filter(
        status=Source.Status.ACTIVE, current_revision__isnull=False
    ).exclude(current_revision__media_type__in=(*VOCABULARY_MEDIA_TYPES, SUBMITTED_MEDIA_TYPE))


@dataclass(frozen=True)
class WorkerStatus:
    alive: bool
    last_seen: datetime | None
    hostname: str

    @property
    def seconds_ago(self) -> int | None:
        if self.last_seen is None:
            return None
        return max(0, int((timezone.now() - self.last_seen).total_seconds()))


def worker_status() -> WorkerStatus:
    """Whether any worker ran the heartbeat task recently enough to count as alive."""
    beat = WorkerHeartbeat.objects.order_by("-last_seen").first()
    if beat is None:
        return WorkerStatus(alive=False, last_seen=None, hostname="")
    fresh = timezone.now() - beat.last_seen <= timedelta(seconds=settings.KG_WORKER_STALE_SECONDS)
    return WorkerStatus(alive=fresh, last_seen=beat.last_seen, hostname=beat.hostname)


@dataclass(frozen=True)
class BeatStatus:
    alive: bool
    last_seen: datetime | None

    @property
    def seconds_ago(self) -> int | None:
        if self.last_seen is None:
            return None
        return max(0, int((timezone.now() - self.last_seen).total_seconds()))


def beat_status(worker: WorkerStatus | None = None) -> BeatStatus:
    """Whether beat is sending the schedules: the newest schedule's last run (beat writes
    it back to the database every few minutes) or a worker's heartbeat (a task only beat
    sends), whichever is later, at most ``KG_BEAT_STALE_SECONDS`` ago."""
    from django_celery_beat.models import PeriodicTask

    last = PeriodicTask.objects.aggregate(last=Max("last_run_at"))["last"]
    worker = worker if worker is not None else worker_status()
    if worker.last_seen is not None and (last is None or worker.last_seen > last):
        last = worker.last_seen
    if last is None:
        return BeatStatus(alive=False, last_seen=None)
    fresh = timezone.now() - last <= timedelta(seconds=settings.KG_BEAT_STALE_SECONDS)
    return BeatStatus(alive=fresh, last_seen=last)


def proposal_json(
    proposal: Proposal,
    edges: dict[int, Edge],
    names=None,
    revisions: dict[int, SourceRevision] | None = None,
) -> dict:
    """A proposal in the command-line contract's shape.

    Its source, target and relation are what its kind names (``Kind.named_ends``). Its
    evidence carries its page (None for unpaged formats) and heading path; a kind that
    keeps ``support`` (an edge's further places in the same revision that state it, []
    when none) lists them there too, each with its page and heading path.
    ``revisions`` shares one revision object per id across a report, so a long
    document's structure is parsed once, not once per quote.
    """
    kind = kind_of(proposal)
    source, target, relation = kind.named_ends(proposal, edges, names or {})
    evidence = None
    revision = proposal.evidence_revision if proposal.evidence_revision_id else None
    if revision is not None:
        if revisions is not None:
            revision = revisions.setdefault(revision.pk, revision)
        evidence = {
            "source": revision.source.slug,
            "revision": revision.number,
            "start": proposal.evidence_start,
            "end": proposal.evidence_end,
            "quote": proposal.evidence_quote,
            **place_of(revision, proposal.evidence_start).as_json(),
        }
        support = kind.support(proposal.payload)
        if support is not None:
            evidence["support"] = [
                {
                    "start": item["start"],
                    "end": item["end"],
                    "quote": item["quote"],
                    **place_of(revision, item["start"]).as_json(),
                }
                for item in support
            ]
    return {
        "id": proposal.pk,
        "kind": proposal.kind,
        "status": proposal.status,
        "source": source,
        "target": target,
        "relation": relation,
        "confidence": proposal.confidence,
        "reason": proposal.reason,
        "evidence": evidence,
        "flags": proposal.flags,
    }


def item_progress(item: AgentRunItem) -> dict:
    """One source of a construction run: its status and how many of its chunks are read
    (``cached``: how many of them came from the per-chunk cache, at no cost)."""
    return {
        "source": item.source.slug,
        "status": item.status,
        "chunks_done": item.chunks_done,
        "chunks_total": item.chunks_total,
        "chunks_cached": (item.stats or {}).get("chunks_cached", 0),
    }


def token_use(run: AgentRun) -> dict:
    """Model tokens: ``used`` by the sources finished so far, ``reserved`` spent or promised
    to calls in flight against ``budget`` (None: no limit), and whether the budget
    ``stopped`` the run."""
    return {
        "used": (run.llm_usage or {}).get("total_tokens", 0),
        "reserved": run.tokens_reserved,
        "budget": settings.KG_LLM_MAX_TOKENS_PER_RUN or None,
        "stopped": bool((run.stats or {}).get("budget_stop")),
    }


def run_report(run: AgentRun) -> dict:
    """What a run did, in the shape ``manage.py construct --json`` prints."""
    proposals = list(
        Proposal.objects.filter(origin__agent_run=run)
        .select_related("evidence_revision__source")
        .order_by("pk")
    )
    # The edges and concepts the proposals' kinds name, each read once for the report.
    edge_ids = {i for p in proposals for i in kind_of(p).edge_ids(p.payload)}
    edges = {
        e.pk: e
        for e in Edge.objects.filter(pk__in=edge_ids).select_related("source", "target", "relation")
    }
    concept_ids = {i for p in proposals for i in kind_of(p).concepts_named(p.payload)}
    names = dict(Concept.objects.filter(pk__in=concept_ids).values_list("pk", "name"))
    dropped = (
        DroppedCandidate.objects.filter(run=run).select_related("revision__source").order_by("pk")
    )
    items = list(run.items.select_related("source").order_by("pk"))
    revisions: dict[int, SourceRevision] = {}
    return {
        "run": {
            "id": run.pk,
            "agent": run.agent,
            "trigger": run.trigger,
            "status": run.status,
            "provider": run.provider,
            "model": run.model,
            "progress": {"done": run.progress_done, "total": run.progress_total},
            "started_at": run.started_at.isoformat() if run.started_at else None,
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            **run.stats,
            "llm": run.llm_usage,
            "tokens": token_use(run),
            "errors": [
                {"source": i.source.slug, "error": i.error} for i in items if i.status == "failed"
            ],
            "source_progress": [item_progress(i) for i in items],
        },
        "proposals": [proposal_json(p, edges, names, revisions) for p in proposals],
        "dropped": [
            {
                "source_slug": d.revision.source.slug,
                "candidate": d.candidate,
                "reason": d.reason,
            }
            for d in dropped
        ],
    }


def concept_names_for_evaluation() -> dict[int, tuple[str, ...]]:
    """Every name of every concept (merged names included), for matching gold edges."""
    names: dict[int, list[str]] = {}
    for concept_id, name in ConceptAlias.objects.values_list("concept_id", "name"):
        names.setdefault(concept_id, []).append(name)
    return {k: tuple(v) for k, v in names.items()}


@dataclass
class UnknownRelation:
    """A relation label the extractor found outside the vocabulary, waiting for discovery."""

    label: str
    candidates: int
    sources: int
    example: str


def unknown_relations(limit: int = 30) -> list[UnknownRelation]:
    """Dropped labels not yet covered by an accepted type, most frequent first (two queries)."""
    from django.db.models import Count, Min

    waiting = DroppedCandidate.objects.filter(
        reason="unknown_relation", requeued_at__isnull=True
    ).exclude(relation_label="")
    rows = list(
        waiting.values("relation_label")
        .annotate(
            n=Count("id"),
            sources=Count("revision__source", distinct=True),
            first=Min("id"),
        )
        .order_by("-n", "relation_label")[:limit]
    )
    quotes = dict(
        DroppedCandidate.objects.filter(pk__in=[r["first"] for r in rows]).values_list(
            "pk", "candidate__evidence"
        )
    )
    return [
        UnknownRelation(
            label=r["relation_label"],
            candidates=r["n"],
            sources=r["sources"],
            example=str(quotes.get(r["first"]) or "")[:300],
        )
        for r in rows
    ]
