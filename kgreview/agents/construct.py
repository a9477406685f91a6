"""Construction runs: choose the sources, then read one source of a run and queue what
survives, in one transaction.

READ may call a model for seconds, so it happens outside any transaction and its output
is stored at once; everything written from it for one source (proposals, dropped
candidates, the extraction record) is one transaction that holds the ``construct`` mutex.
Claims, leases and the run's counters are in ``items``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from construction.errors import ExtractionFailed, LLMTransientError
from construction.pipeline import document_facts, process_source
from construction.protocols import Extractor
from construction.types import Extraction, LLMUsage
from kgreview.graph.models import Source

from . import adapters, attribute_values, concept_typing, reading
from .items import (
    ClaimHeartbeat,
    construct_run_close,
    item_claim,
    item_finish,
    item_release,
    run_stats_empty,
    run_stop_for_budget,
)
from .models import AgentRun, AgentRunItem, ExtractionRecord
from .persist import persist_result
from .runs import construct_mutex_hold, run_start_record
from .selectors import mined_sources

if TYPE_CHECKING:
    from django.contrib.auth.models import User

log = logging.getLogger(__name__)


def sources_to_construct(extractor: Extractor) -> list[Source]:
    """Active sources whose current revision this extractor has not read yet."""
    key = adapters.extractor_key(extractor)
    done = ExtractionRecord.objects.filter(
        extractor=key, status=ExtractionRecord.Status.DONE
    ).values("revision_id")
    return list(readable_sources().exclude(current_revision_id__in=done).order_by("slug"))


def readable_sources():
    """The sources a run over every source reads (``selectors.mined_sources``: neither a
    vocabulary nor a text submitted with a proposal)."""
    return mined_sources()


@transaction.atomic
def construct_run_create(
    *,
    sources: Iterable[Source] | None = None,
    provider: str | None = None,
    trigger: str = AgentRun.Trigger.CLI,
    acting_user: User | None = None,
    params: dict | None = None,
) -> AgentRun:
    """A queued construction run with one item per source that has text.

    ``sources=None`` means every active source. The extractor is built now so a bad
    provider fails here, before anything is queued. ``acting_user`` is the curator who
    asked for the run (audited) or ``None`` for the system (a schedule, the command line).
    """
    extractor = adapters.extractor_for(provider)
    if sources is None:
        chosen = list(readable_sources().order_by("slug").only("pk", "current_revision_id"))
    else:
        chosen = [s for s in sources if s.current_revision_id is not None]
    run = AgentRun.objects.create(
        agent=AgentRun.Agent.CONSTRUCT,
        trigger=trigger,
        provider=extractor.name,
        model=extractor.model,
        params=params or {},
        requested_by=acting_user
        if acting_user is not None and acting_user.is_authenticated
        else None,
        progress_total=len(chosen),
        stats=run_stats_empty(len(chosen)),
        llm_usage=LLMUsage().as_json(),
    )
    AgentRunItem.objects.bulk_create(
        [AgentRunItem(run=run, source=s, revision_id=s.current_revision_id) for s in chosen]
    )
    if not chosen:
        construct_run_close(run)
    run_start_record(
        run,
        acting_user=acting_user,
        after={
            "provider": run.provider,
            "sources": len(chosen),
            "every_source": sources is None,
        },
    )
    return run


def construct_item_run(
    *,
    item_id: int,
    claim: str,
    extractor: Extractor | None = None,
    reverify: bool = False,
    final_attempt: bool = True,
) -> AgentRunItem:
    """Read one source of a run and queue what survives, in one short transaction.

    READ happens outside any transaction (a model's calls take seconds, a long source
    read by the offline reader minutes); a model's output is stored at once, so a crash
    afterwards never pays for the same call twice.
    A revision already read by this extractor costs nothing: the item is ``unchanged``.
    A failed READ fails this item with the error in words; nothing is written for it.
    ``LLMTransientError`` is re-raised for a retry unless this is the final attempt.
    The agent's own work: not audited (the run and its items are the record).
    """
    item = item_claim(item_id, claim)
    if item is None:
        return AgentRunItem.objects.get(pk=item_id)
    run = item.run
    if run.cancel_requested:
        with transaction.atomic():
            item_finish(item, status=AgentRunItem.Status.CANCELLED, error="Run was cancelled.")
        return item
    try:
        with ClaimHeartbeat(item):  # a dead worker's item is visibly stale within minutes
            return _construct_item(item, run, extractor, reverify, final_attempt)
    except LLMTransientError:
        raise
    except Exception as exc:  # any bug or outage fails this source, not the whole run
        log.exception("construct failed for %s in run %s", item.source.slug, run.pk)
        with transaction.atomic():
            item_finish(
                item,
                status=AgentRunItem.Status.FAILED,
                error=f"Internal error ({exc.__class__.__name__}): {exc}",
            )
        return item


def _construct_item(
    item, run, extractor: Extractor | None, reverify, final_attempt
) -> AgentRunItem:
    started = time.perf_counter()
    extractor = extractor or adapters.extractor_for(run.provider)
    xkey = adapters.extractor_key(extractor)
    revision = item.source.current_revision
    revision.source = item.source
    if item.revision_id != revision.pk:
        AgentRunItem.objects.filter(pk=item.pk).update(revision=revision)
    record = ExtractionRecord.objects.filter(revision=revision, extractor=xkey).first()
    if record is not None and record.status == ExtractionRecord.Status.DONE and not reverify:
        with transaction.atomic():
            item_finish(item, status=AgentRunItem.Status.UNCHANGED, stats={}, usage={})
        return item

    relations = adapters.relation_table()
    vocabulary = adapters.vocabulary(relations)
    doc = adapters.source_doc(revision)
    plans = reading.plans_for(revision, doc, xkey)
    reading.progress_start(item, len(plans))
    usage = LLMUsage()
    local = extractor.local
    extraction = None
    read_stats: dict = {"chunks": len(plans)}
    if record is not None and not (local and reverify):
        extraction = Extraction.from_json(record.output)
    elif local:
        # Read outside any transaction too: a long source takes minutes, and on SQLite a
        # transaction holds the one write lock for all of it (nobody could log in or
        # decide). Only the checks and writes below hold the lock, briefly. A local
        # reading is read again when asked to verify again: it costs nothing, and what
        # it reads depends on the graph (the concept types it types concepts with).
        extraction = reading.read_local(
            plans, extractor, vocabulary=vocabulary, lexicon=adapters.INDEX_CACHE.get()
        )
        if record is not None:
            ExtractionRecord.objects.filter(pk=record.pk).update(output=extraction.as_json())
    else:
        # Model calls take seconds: make them outside any transaction, and keep each
        # paid chunk at once, so a crash afterwards never pays for it twice.
        try:
            read = reading.read_remote(
                item=item,
                run=run,
                plans=plans,
                extractor=extractor,
                xkey=xkey,
                vocabulary=vocabulary,
                lexicon=adapters.INDEX_CACHE.get(),
            )
        except reading.ClaimLost:
            return item  # another worker took it over; its outcome is the item's
        except LLMTransientError as exc:
            if not final_attempt:
                item_release(item, str(exc))
                raise
            with transaction.atomic():
                item_finish(
                    item, status=AgentRunItem.Status.FAILED, error=str(exc), usage=_paid(exc)
                )
            return item
        except (ExtractionFailed, reading.BudgetSpent) as exc:
            with transaction.atomic():
                if isinstance(exc, reading.BudgetSpent):
                    run_stop_for_budget(run, str(exc))
                item_finish(
                    item, status=AgentRunItem.Status.FAILED, error=str(exc), usage=_paid(exc)
                )
            return item
        extraction, usage = read.extraction, read.usage
        read_stats["chunks_cached"] = read.cached
        record = _store_extraction(revision, xkey, extraction, run)

    facts = document_facts(doc)  # the text's own work, outside the lock as well
    stated = attribute_values.stated_in(revision)  # values the text states, outside it too
    typed = concept_typing.typed_in(doc, extraction)  # the types it read, with their quotes
    with transaction.atomic():
        construct_mutex_hold()
        index = adapters.INDEX_CACHE.get()  # again: what others wrote while we read
        result = process_source(
            doc=doc,
            facts=facts,
            extraction=extraction,
            vocabulary=vocabulary,
            index=index,
            graph=adapters.DbGraphView(relations),
            gate=settings.KG_CONFIDENCE_GATE,
            active_evidence=adapters.active_evidence(revision),
            ontology=adapters.ontology(),
        )
        stats = persist_result(run=run, revision=revision, result=result)
        attribute_values.queue_stated(run=run, revision=revision, stated=stated, stats=stats)
        concept_typing.queue_typed(
            run=run, revision=revision, typed=typed, index=index, stats=stats
        )
        stats["candidates"] = len(extraction.candidates) + len(extraction.rejected)
        stats["duration_s"] = round(time.perf_counter() - started, 4)
        stats.update(read_stats)
        if record is None:
            _store_extraction(revision, xkey, extraction, run, done=True)
        elif record.status != ExtractionRecord.Status.DONE:
            ExtractionRecord.objects.filter(pk=record.pk).update(
                status=ExtractionRecord.Status.DONE, updated_at=timezone.now()
            )
        AgentRunItem.objects.filter(pk=item.pk).update(chunks_done=len(plans))
        item_finish(item, status=AgentRunItem.Status.DONE, stats=stats, usage=usage.as_json())
    return item


def _paid(exc: Exception) -> dict:
    """What the chunks read before an error cost (kept: they are not paid again)."""
    return getattr(exc, "paid", LLMUsage()).as_json()


def _store_extraction(revision, xkey, extraction, run, *, done=False) -> ExtractionRecord:
    status = ExtractionRecord.Status.DONE if done else ExtractionRecord.Status.EXTRACTED
    try:
        with transaction.atomic():
            return ExtractionRecord.objects.create(
                revision=revision,
                extractor=xkey,
                status=status,
                output=extraction.as_json(),
                llm_usage=extraction.usage.as_json(),
                run=run,
            )
    except IntegrityError:
        record = ExtractionRecord.objects.get(revision=revision, extractor=xkey)
        if done and record.status != status:
            ExtractionRecord.objects.filter(pk=record.pk).update(status=status)
        return record
