"""Ontology discovery, Django side: dropped unknown relations in, add_relation_type out;
and the schema additions the documents that arrived since the last run ask for
(``bootstrap.propose_additions``: new types, patterns, relation types, attributes).

Candidates the construction loop dropped because their relation was not in the
vocabulary are kept (``DroppedCandidate``). When a relation recurs across sources,
``construction.discover`` drafts a relation type; with the openai provider a model names
and describes it. A curator decides. Once accepted, the dropped candidates that used it
are verified again, so the edges they stated reach the queue.
"""

from __future__ import annotations

import logging
from collections import defaultdict

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from construction import keys
from construction.discover import DroppedExample, RelationDraft, discover_relations
from construction.errors import LLMError
from construction.pipeline import process_source
from construction.protocols import Extractor, RelationDescriber
from construction.types import Candidate, Extraction, LLMUsage
from kgreview.graph.models import RelationType
from kgreview.review.kinds.add_relation_type import AddRelationTypeKind
from kgreview.review.models import OPEN_STATUSES, Proposal
from kgreview.review.services import ProposalSpec, proposals_create_many

from . import adapters
from .bootstrap import propose_additions
from .concept_typing import typing_run
from .items import run_stats_merge
from .models import AgentRun, DroppedCandidate
from .persist import persist_result
from .runs import (
    RunCancelled,
    agent_run_create,
    agent_run_failed,
    agent_run_finish,
    agent_run_step,
    construct_mutex_hold,
    run_origin,
)

log = logging.getLogger(__name__)


def dropped_examples() -> list[DroppedExample]:
    """Every candidate dropped for an unknown relation and not yet verified again."""
    rows = (
        DroppedCandidate.objects.filter(reason="unknown_relation", requeued_at__isnull=True)
        .select_related("revision__source")
        .order_by("pk")
    )
    examples = []
    for d in rows.iterator(chunk_size=5000):
        c = d.candidate or {}
        examples.append(
            DroppedExample(
                id=d.pk,
                label=d.relation_label or str(c.get("relation", "")),
                source_slug=d.revision.source.slug,
                revision_id=d.revision_id,
                quote=str(c.get("evidence", ""))[:2000],
                start=None,
                end=None,
                source_name=str(c.get("source", ""))[:200],
                target_name=str(c.get("target", ""))[:200],
            )
        )
    return examples


def _payload(draft: RelationDraft) -> dict:
    return {
        "key": draft.key,
        "label": draft.label,
        "verb": draft.verb,
        "description": draft.description,
        "directed": draft.directed,
        "symmetric": draft.symmetric,
        "acyclic": draft.acyclic,
        "labels": list(draft.labels)[:50],
        "examples": [
            {
                "quote": e.quote or "—",
                "source_slug": e.source_slug,
                "revision_id": e.revision_id,
                "source_name": e.source_name,
                "target_name": e.target_name,
            }
            for e in draft.examples
        ],
    }


def _describe_with_model(
    draft: RelationDraft, extractor: Extractor
) -> tuple[RelationDraft, LLMUsage]:
    """Ask the model for a better name, verb, description and shape; keep ours on failure."""
    if not isinstance(extractor, RelationDescriber):
        return draft, LLMUsage()
    try:
        return extractor.describe_relation(draft)
    except LLMError as exc:
        log.warning("the model could not describe %s: %s", draft.key, exc)
        return draft, LLMUsage()


def discover_run(run: AgentRun, *, provider: str | None = None) -> AgentRun:
    """Aggregate dropped relations and queue add_relation_type proposals for recurring ones."""
    stats: dict = {}
    usage = LLMUsage()
    try:
        agent_run_step(run, done=0, total=3)
        stats["requeued"] = requeue_pending()
        examples = dropped_examples()
        vocabulary = [row.spec for row in adapters.relation_table()]  # retired ones too
        drafts = discover_relations(
            examples,
            vocabulary=vocabulary,
            min_support=settings.KG_DISCOVERY_MIN_SUPPORT,
            min_sources=settings.KG_DISCOVERY_MIN_SOURCES,
        )
        existing = set(RelationType.objects.values_list("key", flat=True))
        decided = set(
            Proposal.objects.filter(
                kind=AddRelationTypeKind.key,
                status__in=(*OPEN_STATUSES, Proposal.Status.REJECTED),
            ).values_list("dedup_key", flat=True)
        )

        def undecided(d: RelationDraft) -> bool:
            return d.key not in existing and keys.relation_type_dedup_key(d.key) not in decided

        fresh = [d for d in drafts if undecided(d)]
        stats.update({"dropped_unknown": len(examples), "drafts": len(drafts)})
        agent_run_step(run, done=1, stats=stats)
        if provider == "openai" and fresh:
            extractor = adapters.extractor_for(provider)  # one client for the whole run
            described = []
            for draft in fresh:
                draft, spent = _describe_with_model(draft, extractor)
                usage = usage + spent
                described.append(draft)
            # The model may have renamed a draft to a type that exists or was decided.
            fresh = [d for d in described if undecided(d)]
        specs = [
            ProposalSpec(
                kind=AddRelationTypeKind.key,
                payload=_payload(d),
                confidence=round(min(0.95, 0.5 + 0.05 * d.support), 3),
                reason=(
                    f'The vocabulary has no "{d.label.lower()}" relation, but lessons state '
                    f"one {d.support} times in {d.sources} sources. {d.description}"
                ),
                dedup_key=keys.relation_type_dedup_key(d.key),
                priority=150,
                origin=run_origin(run),
            )
            for d in fresh
        ]
        outcomes = proposals_create_many(specs)
        stats["relation_proposals"] = sum(1 for o in outcomes if isinstance(o, Proposal))
        agent_run_step(run, done=2, stats=stats)
        # Schema additions the documents that arrived since the last run ask for.
        stats.update(propose_additions(run, since=_last_discovery(run)))
        # Types for the concepts accepted untyped since (any active type that fits).
        typed = typing_run(type_key=None, trigger=run.trigger)
        if typed is not None:
            stats["typing_run"] = typed.pk
        agent_run_step(run, done=3, stats=stats)
    except RunCancelled:
        return agent_run_finish(run, status=AgentRun.Status.CANCELLED, stats=stats, usage=usage)
    except Exception as exc:  # the run says what failed; the worker stays up
        log.exception("discover run %s failed", run.pk)
        return agent_run_failed(run, exc, stats=stats, usage=usage)
    return agent_run_finish(run, status=AgentRun.Status.SUCCEEDED, stats=stats, usage=usage)


def _last_discovery(run: AgentRun):
    """When the last finished discovery before ``run`` started (None: never)."""
    last = (
        AgentRun.objects.filter(
            agent=AgentRun.Agent.DISCOVER,
            status__in=(AgentRun.Status.SUCCEEDED, AgentRun.Status.PARTIAL),
            trigger__in=(AgentRun.Trigger.SCHEDULE, AgentRun.Trigger.MANUAL, AgentRun.Trigger.CLI),
        )
        .exclude(pk=run.pk)
        .order_by("-started_at")
        .first()
    )
    return last.started_at if last is not None else None


def requeue_dropped_for(*, relation_key: str) -> int:
    """Verify again, as if just extracted, every dropped candidate the new type covers.

    Idempotent: candidates are marked when verified again, and the queue's dedup keys
    keep a second pass from proposing anything twice. Returns the number of proposals.
    """
    relation = RelationType.objects.filter(key=relation_key, active=True).first()
    if relation is None:
        return 0
    accepted = (
        Proposal.objects.filter(
            kind=AddRelationTypeKind.key, status=Proposal.Status.ACCEPTED, payload__key=relation_key
        )
        .order_by("-decided_at")
        .first()
    )
    labels = set(accepted.payload.get("labels") or []) if accepted else set()
    labels.add(relation_key)
    dropped = list(
        DroppedCandidate.objects.filter(
            reason="unknown_relation", relation_label__in=labels, requeued_at__isnull=True
        )
        .select_related("revision__source")
        .order_by("revision_id", "pk")
    )
    if not dropped:
        return 0
    run = agent_run_create(
        agent=AgentRun.Agent.DISCOVER,
        trigger=AgentRun.Trigger.REQUEUE,
        params={"relation": relation_key, "dropped": len(dropped)},
    )
    by_revision: dict[int, list[DroppedCandidate]] = defaultdict(list)
    for d in dropped:
        by_revision[d.revision_id].append(d)
    stats: dict = {"proposals": {}, "dropped": {}}
    agent_run_step(run, done=0, total=len(by_revision))
    # The relation table is read once: the type just accepted is in it, and a requeue
    # does not change the vocabulary.
    relations = adapters.relation_table()
    vocabulary = adapters.vocabulary(relations)
    for done, rows in enumerate(by_revision.values(), start=1):
        revision = rows[0].revision
        candidates = []
        for d in rows:
            c = d.candidate
            candidates.append(
                Candidate(
                    source=str(c.get("source", "")),
                    target=str(c.get("target", "")),
                    relation=relation_key,
                    confidence=float(c.get("confidence", 0.7)),
                    reason=str(c.get("reason", "")),
                    evidence=str(c.get("evidence", "")),
                )
            )
        with transaction.atomic():
            construct_mutex_hold()
            result = process_source(
                doc=adapters.source_doc(revision),
                extraction=Extraction(concepts=(), candidates=tuple(candidates)),
                vocabulary=vocabulary,
                index=adapters.INDEX_CACHE.get(),
                graph=adapters.DbGraphView(relations),
                gate=settings.KG_CONFIDENCE_GATE,
                ontology=adapters.ontology(),
            )
            part = persist_result(run=run, revision=revision, result=result)
            DroppedCandidate.objects.filter(pk__in=[d.pk for d in rows]).update(
                requeued_at=timezone.now()
            )
        stats = run_stats_merge(stats, part)
        agent_run_step(run, done=done, stats=stats)
    agent_run_finish(run, status=AgentRun.Status.SUCCEEDED, stats=stats)
    return sum(n for by_status in stats["proposals"].values() for n in by_status.values())


def requeue_pending() -> int:
    """Candidates covered by an accepted type but never verified again (the queue was down
    when the type was accepted): verify them now. Returns the proposals made."""
    made = 0
    active = set(RelationType.objects.filter(active=True).values_list("key", flat=True))
    labels = set(
        DroppedCandidate.objects.filter(reason="unknown_relation", requeued_at__isnull=True)
        .values_list("relation_label", flat=True)
        .distinct()
    )
    accepted = Proposal.objects.filter(
        kind=AddRelationTypeKind.key, status=Proposal.Status.ACCEPTED
    )
    covered = {key for key in active if key in labels}
    for proposal in accepted:
        key = proposal.payload.get("key")
        if key in active and labels & set(proposal.payload.get("labels") or []):
            covered.add(key)
    for key in sorted(covered):
        made += requeue_dropped_for(relation_key=key)
    return made
