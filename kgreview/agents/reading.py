"""READ one source revision in chunks: from the per-chunk cache where the text is
unchanged, by the extractor where it is new, several chunks at once, within the run's
token budget, renewing the item's claim as chunks finish.

Model calls run in a small thread pool (``KG_LLM_CONCURRENCY``) and touch no database;
every database write (the cache, progress, the budget) happens on the calling thread,
as each chunk finishes, so a worker killed half-way has kept every chunk it paid for.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from construction.protocols import Extractor
from construction.reading import (
    ChunkPlan,
    call_estimate,
    merge_extractions,
    plan_chunks,
    read_in_order,
)
from construction.types import Extraction, LLMUsage, SourceDoc
from kgreview.graph.models import SourceRevision
from kgreview.graph.sources import revision_structure

from .models import AgentRun, AgentRunItem, ChunkExtraction


class BudgetSpent(Exception):
    """The run's token budget would be overspent by the next model call."""


class ClaimLost(Exception):
    """Another worker took the item over (this one outlived its lease)."""


@dataclass(frozen=True)
class Reading:
    extraction: Extraction  # the whole revision, chunks merged
    usage: LLMUsage  # what this reading paid (cached chunks cost nothing)
    chunks: int
    cached: int


def plans_for(revision: SourceRevision, doc: SourceDoc, xkey: str) -> list[ChunkPlan]:
    return plan_chunks(
        doc,
        sections=revision_structure(revision).sections,
        max_tokens=settings.KG_CHUNK_TOKENS,
        overlap_tokens=settings.KG_CHUNK_OVERLAP_TOKENS,
        extractor_key=xkey,
    )


def progress_start(item: AgentRunItem, total: int) -> None:
    AgentRunItem.objects.filter(pk=item.pk).update(chunks_total=total, chunks_done=0)


def read_local(
    plans: Sequence[ChunkPlan], extractor: Extractor, *, vocabulary, lexicon
) -> Extraction:
    """A local extractor reads every chunk now (it is cheap, and deterministic)."""
    readings = read_in_order(
        plans,
        lambda doc, known: extractor.extract(
            doc, vocabulary=vocabulary, lexicon=known, max_edges=settings.KG_MAX_EDGES_PER_CHUNK
        ),
        lexicon,
    )
    return merge_extractions(plans, readings, extractor=extractor.name, model=extractor.model)


def read_remote(
    *,
    item: AgentRunItem,
    run: AgentRun,
    plans: Sequence[ChunkPlan],
    extractor: Extractor,
    xkey: str,
    vocabulary,
    lexicon,
) -> Reading:
    """Every chunk's reading, from the cache or the model; raises the first error a
    chunk met (after keeping what the other chunks in flight paid for)."""
    max_edges = settings.KG_MAX_EDGES_PER_CHUNK
    readings: dict[str, Extraction] = {
        row.key: Extraction.from_json(row.output)
        for row in ChunkExtraction.objects.filter(key__in=[p.key for p in plans])
    }
    by_plan: list[Extraction | None] = [readings.get(p.key) for p in plans]
    cached = sum(r is not None for r in by_plan)
    todo = [i for i, r in enumerate(by_plan) if r is None]
    paid = LLMUsage()
    done = cached
    _progress(item, done)
    error: BaseException | None = None

    def call(plan: ChunkPlan) -> Extraction:
        return extractor.extract(
            plan.doc, vocabulary=vocabulary, lexicon=lexicon, max_edges=max_edges
        )

    pending: dict[Future, tuple[int, int]] = {}
    with ThreadPoolExecutor(max_workers=settings.KG_LLM_CONCURRENCY) as pool:
        queue = list(todo)
        while queue or pending:
            while queue and error is None and len(pending) < settings.KG_LLM_CONCURRENCY:
                index = queue[0]
                estimate = call_estimate(plans[index], max_edges=max_edges)
                if not _reserve(run, estimate):
                    error = BudgetSpent(_budget_words(run, done, len(plans)))
                    break
                queue.pop(0)
                pending[pool.submit(call, plans[index])] = (index, estimate)
            if error is not None:
                queue.clear()
            if not pending:
                break
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                index, estimate = pending.pop(future)
                exc = future.exception()
                if exc is not None:
                    _settle(run, estimate, 0)
                    error = error or exc
                    continue
                reading = future.result()
                _settle(run, estimate, reading.usage.total_tokens or estimate)
                paid += reading.usage
                keep_reading(plans[index].key, xkey, reading, run)
                by_plan[index] = reading
                done += 1
                if not _progress(item, done):
                    error = error or ClaimLost()
    if error is not None:
        # What the chunks that did finish cost is still the run's: the caller records it.
        error.paid = paid  # type: ignore[attr-defined]
        raise error
    read = [r for r in by_plan if r is not None]
    if len(read) != len(plans):  # with no error, every chunk was read
        raise RuntimeError(f"{len(plans) - len(read)} chunks were left unread without an error.")
    extraction = merge_extractions(
        plans, read, extractor=extractor.name, model=extractor.model, usage=paid
    )
    return Reading(extraction=extraction, usage=paid, chunks=len(plans), cached=cached)


def keep_reading(key: str, xkey: str, reading: Extraction, run: AgentRun) -> None:
    """Store a paid reading at once; a concurrent reader of the same chunk may have won."""
    try:
        with transaction.atomic():
            ChunkExtraction.objects.create(
                key=key,
                extractor=xkey[:200],
                output=reading.as_json(),
                llm_usage=reading.usage.as_json(),
                run=run,
            )
    except IntegrityError:
        pass


def _progress(item: AgentRunItem, done: int) -> bool:
    """Record chunks done and renew the item's lease; False if the claim was lost."""
    return bool(
        AgentRunItem.objects.filter(pk=item.pk, claimed_by=item.claimed_by).update(
            chunks_done=done, renewed_at=timezone.now()
        )
    )


def _reserve(run: AgentRun, tokens: int) -> bool:
    """Promise ``tokens`` of the run's budget to one call, atomically; False if that
    would overspend it. With no budget, every call may go."""
    budget = settings.KG_LLM_MAX_TOKENS_PER_RUN
    if not budget:
        return True
    if tokens > budget:
        return False
    return bool(
        AgentRun.objects.filter(pk=run.pk, tokens_reserved__lte=budget - tokens).update(
            tokens_reserved=F("tokens_reserved") + tokens
        )
    )


def _settle(run: AgentRun, promised: int, spent: int) -> None:
    """Replace a call's promise by what it really spent."""
    if not settings.KG_LLM_MAX_TOKENS_PER_RUN or promised == spent:
        return
    AgentRun.objects.filter(pk=run.pk).update(
        tokens_reserved=Greatest(F("tokens_reserved") + (spent - promised), 0)
    )


def _budget_words(run: AgentRun, done: int, total: int) -> str:
    budget = settings.KG_LLM_MAX_TOKENS_PER_RUN
    spent = AgentRun.objects.filter(pk=run.pk).values_list("tokens_reserved", flat=True).first()
    return (
        f"Stopped before overspending: this run may spend {budget:,} model tokens "
        f"(KG_LLM_MAX_TOKENS_PER_RUN) and {spent or 0:,} are spent or promised; the next "
        f"chunk could need more. {done} of {total} chunks of this source are read and "
        "kept, so a new run continues from there without paying for them again."
    )
