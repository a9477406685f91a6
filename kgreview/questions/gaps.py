"""The "missing link" search for a failing competency question.

For each gap of a failing result (two concepts a missing link would join), the current
revisions of the active sources are searched for sentences that name both ends, by name
or alias (``construction.gaps``). Those sentences, per source, are read by the
configured extractor (offline or openai) as one short document, and what it drafts goes
through the same loop as construction (``construction.pipeline.process_source``: the
same resolution, verification, evidence and gate rules) against the whole revision, so
a quote's offsets point into the revision's text. Of what survives, only edges joining
the gap's two ends whose quote names both are kept, and queued as proposals through the
agents' ``persist_result``, linked to the question. A twin of an open proposal collapses
into it as usual (by dedup key); the open twin is then linked to the question too.

The search is one ``AgentRun`` of the ``gaps`` agent, its params naming the question and
the result. It is the agents' own work: not audited (the run is the record), and it
holds the ``construct`` mutex while it reads the index and writes, like construction.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from django.conf import settings
from django.db import transaction
from django.db.models import F, Max

from construction.gaps import (
    keyed_sentences,
    mentions_both,
    name_patterns,
    sentences_mentioning_both,
)
from construction.protocols import Extractor
from construction.reading import cache_key
from construction.types import Extraction, LLMUsage, SourceDoc, SourceResult
from kgreview.agents import adapters
from kgreview.agents.models import AgentRun, ChunkExtraction
from kgreview.agents.persist import persist_result
from kgreview.agents.reading import keep_reading
from kgreview.agents.runs import agent_run_failed, agent_run_finish, construct_mutex_hold
from kgreview.agents.selectors import mined_sources
from kgreview.graph.models import ConceptAlias, SourceRevision
from kgreview.review.kinds.add_edge import AddEdgeKind
from kgreview.review.models import OPEN_STATUSES, Proposal

from .models import GapProposal, QuestionResult

log = logging.getLogger(__name__)

# Sentences read per source and gap: enough to find a link stated a few times, few
# enough that one model call reads them all.
MAX_SENTENCES = 12


@dataclass(frozen=True)
class _Side:
    concept_id: int
    name: str
    patterns: tuple[tuple[str, ...], ...]


def _sides(gap: dict) -> tuple[_Side, _Side]:
    ids = [int(i) for i in gap["ends"]]
    names: dict[int, list[str]] = {i: [] for i in ids}
    for concept_id, alias in ConceptAlias.objects.filter(concept_id__in=ids).values_list(
        "concept_id", "name"
    ):
        names[concept_id].append(alias)
    a, b = ids
    return (
        _Side(a, gap["names"][0], name_patterns([gap["names"][0], *names[a]])),
        _Side(b, gap["names"][1], name_patterns([gap["names"][1], *names[b]])),
    )


def _revisions():
    """The current revision of every source the agents mine (``mined_sources``: a text
    submitted with a proposal is evidence for it only, and never searched here)."""
    return (
        SourceRevision.objects.filter(
            source__in=mined_sources(), source__current_revision_id=F("pk")
        )
        .select_related("source")
        .order_by("source__slug")
    )


def _excerpt(revision: SourceRevision, mentions) -> SourceDoc:
    """The sentences naming both ends, as one short document to read."""
    return SourceDoc(
        slug=revision.source.slug,
        revision_id=revision.pk,
        revision_number=revision.number,
        title=revision.title or revision.source.title,
        text="\n\n".join(m.text for m in mentions),
    )


def _read(doc: SourceDoc, extractor: Extractor, run: AgentRun, *, lexicon) -> Extraction:
    """What the extractor drafts from the excerpt; a model's reading is cached (by the
    excerpt's text and the extractor) so a search repeated is never paid twice."""
    vocabulary = adapters.vocabulary()
    max_edges = settings.KG_MAX_EDGES_PER_CHUNK
    if extractor.local:
        return extractor.extract(doc, vocabulary=vocabulary, lexicon=lexicon, max_edges=max_edges)
    xkey = adapters.extractor_key(extractor)
    key = cache_key(doc, f"{xkey}|gap")
    row = ChunkExtraction.objects.filter(key=key).first()
    if row is not None:
        return Extraction.from_json(row.output)
    reading = extractor.extract(doc, vocabulary=vocabulary, lexicon=lexicon, max_edges=max_edges)
    keep_reading(key, f"{xkey}|gap", reading, run)
    return reading


def _anchored(extraction: Extraction, mentions) -> Extraction:
    """Each candidate's quote is looked for first in the sentence it came from."""
    out = []
    for candidate in extraction.candidates:
        window = next(
            (
                (m.start, m.end)
                for m in mentions
                if " ".join(candidate.evidence.split()) in " ".join(m.text.split())
            ),
            None,
        )
        out.append(replace(candidate, window=window))
    return replace(extraction, candidates=tuple(out))


def _joins(draft, a: _Side, b: _Side) -> bool:
    ends = {draft.source.concept_id, draft.target.concept_id}
    return ends == {a.concept_id, b.concept_id} and mentions_both(
        draft.evidence.quote, a.patterns, b.patterns
    )


def _kept(result: SourceResult, a: _Side, b: _Side) -> tuple[SourceResult, int]:
    """Only edges joining the gap's two ends whose quote names both; how many others
    were left out."""
    edges = tuple(d for d in result.edges if _joins(d, a, b))
    keys = {d.dedup_key for d in edges}
    kept = SourceResult(
        concepts=(),
        edges=edges,
        invalidations=(),
        dropped=(),
        flag_existing=tuple(f for f in result.flag_existing if f[1] in keys),
        grounded_concepts=(),
    )
    return kept, len(result.edges) - len(edges)


@dataclass
class _Tally:
    sentences: int = 0
    sources: int = 0
    proposals: int = 0
    twins: int = 0
    off_gap: int = 0
    usage: LLMUsage = field(default_factory=LLMUsage)

    def as_stats(self) -> dict:
        return {
            "sentences": self.sentences,
            "sources_read": self.sources,
            "proposals": self.proposals,
            "twins": self.twins,
            "off_gap": self.off_gap,
        }


def _twins(result: SourceResult, a: _Side, b: _Side) -> set[int]:
    """Open edge proposals joining the two ends that a candidate duplicated: the loop
    drops such a twin and names the open proposal, which stands for it."""
    ids = {d.twin_of for d in result.dropped if d.twin_of is not None}
    if not ids:
        return set()
    ends = (a.concept_id, b.concept_id)
    return set(
        Proposal.objects.filter(
            pk__in=ids,
            kind=AddEdgeKind.key,
            status__in=OPEN_STATUSES,
            source_concept_id__in=ends,
            target_concept_id__in=ends,
        ).values_list("pk", flat=True)
    )


def _dropped_counts(result: SourceResult, counts: dict) -> None:
    for d in result.dropped:
        counts[d.reason] = counts.get(d.reason, 0) + 1


def _search_revision(
    revision, keyed, a: _Side, b: _Side, *, run, extractor, question_id, tally, dropped
):
    mentions = sentences_mentioning_both(
        revision.text, a.patterns, b.patterns, limit=MAX_SENTENCES, keyed=keyed
    )
    if not mentions:
        return
    tally.sentences += len(mentions)
    tally.sources += 1
    excerpt = _excerpt(revision, mentions)
    # A model reads outside any transaction; a local extractor reads under the lock,
    # against the same index SEARCH uses (as construction does).
    remote = (
        None
        if extractor.local
        else _read(excerpt, extractor, run, lexicon=adapters.INDEX_CACHE.get())
    )
    with transaction.atomic():
        construct_mutex_hold()
        index = adapters.INDEX_CACHE.get()
        extraction = remote or _read(excerpt, extractor, run, lexicon=index)
        tally.usage += extraction.usage if remote is not None else LLMUsage()
        relations = adapters.relation_table()
        result = _process(revision, _anchored(extraction, mentions), relations, index)
        _dropped_counts(result, dropped)
        kept, off_gap = _kept(result, a, b)
        tally.off_gap += off_gap
        twins = _twins(result, a, b)
        tally.twins += len(twins)
        if kept.edges:
            persist_result(run=run, revision=revision, result=kept)
        keys = [d.dedup_key for d in kept.edges]
        new = Proposal.objects.filter(
            origin__agent_run=run, dedup_key__in=keys, status__in=OPEN_STATUSES
        ).values_list("pk", flat=True)
        fresh = set(new)
        tally.proposals += len(fresh)
        # The first question whose search found a proposal keeps it: a proposal already
        # linked to another question is left as it is.
        GapProposal.objects.bulk_create(
            [GapProposal(question_id=question_id, proposal_id=pk) for pk in sorted(fresh | twins)],
            ignore_conflicts=True,
        )


def _process(revision, extraction, relations, index) -> SourceResult:
    from construction.pipeline import process_source

    revision_doc = adapters.source_doc(revision)
    return process_source(
        doc=revision_doc,
        extraction=extraction,
        vocabulary=adapters.vocabulary(relations),
        index=index,
        graph=adapters.DbGraphView(relations),
        gate=settings.KG_CONFIDENCE_GATE,
        ontology=adapters.ontology(),
    )


def _searched_already(searches, result: QuestionResult) -> bool:
    """The same gaps were searched, successfully, since the newest source revision
    arrived: the sources hold nothing new to find (a daily run does not search again)."""
    newest = SourceRevision.objects.aggregate(at=Max("created_at"))["at"]
    recent = searches.filter(
        params__question_id=result.question_id, status=AgentRun.Status.SUCCEEDED
    )
    if newest is not None:
        recent = recent.filter(created_at__gte=newest)
    return any(run.params.get("gaps") == result.gaps for run in recent.order_by("-pk")[:5])


def gap_run_for(result: QuestionResult, *, trigger: str) -> AgentRun | None:
    """The gap search's run for this result: a new queued one, or None when one was
    made already (a search is done once per result, whichever worker asks)."""
    with transaction.atomic():
        construct_mutex_hold()
        searches = AgentRun.objects.filter(agent=AgentRun.Agent.GAPS)
        if searches.filter(params__result_id=result.pk).exists():
            return None
        if _searched_already(searches, result):
            return None
        extractor = adapters.extractor_for(None)
        return AgentRun.objects.create(
            agent=AgentRun.Agent.GAPS,
            trigger=trigger,
            provider=extractor.name,
            model=extractor.model,
            params={
                "question_id": result.question_id,
                "result_id": result.pk,
                "gaps": result.gaps,
            },
            progress_total=len(result.gaps),
            stats={},
            llm_usage=LLMUsage().as_json(),
        )


def gap_search(*, run: AgentRun, extractor: Extractor | None = None) -> AgentRun:
    """Search the sources for the gaps the run names and queue what survives.

    A finished run is returned as it is. Any failure fails the run in words.
    """
    if run.is_finished:
        return run
    extractor = extractor or adapters.extractor_for(run.provider or None)
    question_id = run.params["question_id"]
    tally, dropped = _Tally(), dict[str, int]()
    try:
        sides = [_sides(gap) for gap in run.params.get("gaps", [])]
        for revision in _revisions():
            keyed = keyed_sentences(revision.text)  # once per revision, for every gap
            for a, b in sides:
                _search_revision(
                    revision,
                    keyed,
                    a,
                    b,
                    run=run,
                    extractor=extractor,
                    question_id=question_id,
                    tally=tally,
                    dropped=dropped,
                )
    except Exception as exc:  # any outage or bug fails this search, in words
        log.exception("gap search %s failed", run.pk)
        stats = {**tally.as_stats(), "dropped": dropped}
        return agent_run_failed(run, exc, stats=stats, usage=tally.usage)
    return agent_run_finish(
        run,
        status=AgentRun.Status.SUCCEEDED,
        stats={**tally.as_stats(), "dropped": dropped, "words": gap_words(tally)},
        usage=tally.usage,
    )


def gap_words(tally: _Tally) -> str:
    """What a search found, in words (twins said so)."""
    if not tally.sentences:
        return "No sentence of the current sources names both ends."
    words = (
        f"{tally.sentences} sentence{'s' if tally.sentences != 1 else ''} in "
        f"{tally.sources} source{'s' if tally.sources != 1 else ''} name both ends; "
    )
    if tally.proposals:
        words += f"{tally.proposals} new proposal{'s' if tally.proposals != 1 else ''} queued"
    else:
        words += "no new proposal"
    if tally.twins:
        words += (
            f"; {tally.twins} already waiting in the queue (twins collapse into the open "
            "proposal, now linked to the question)"
        )
    return words + "."
