"""Proposals others submit (a script, another annotation tool, an agent through the API or
MCP): each item goes through the pipeline the construct agent's candidates go through,
and comes back ``queued``, ``merged`` into an open proposal, or ``dropped`` with its
reason in words.

The rules are the agents' own, called, never copied: an edge is one candidate for
``construction.pipeline.process_source`` (its ends resolved to concepts or open concept
proposals, its relation in the vocabulary, its quote found in the revision, the
confidence gate, dedup against open and rejected proposals, contradictions flagged on
both sides), written by ``persist.persist_submitted``; a concept is resolved by
``construction.resolve.resolve_name`` and drafted by ``construction.drafts.concept_draft``;
an alias is drafted as the agents draft the names a document defines
(``construction.drafts``). Queueing itself is ``review.services``: held below the gate,
refused when the same change is already open.

Evidence is a quote in a revision the graph holds (a source by slug, its current
revision or a numbered one), a quote in a text submitted with it (stored as a source
of its own, ``submitted-…``), a quote from a URL (stored the same way, the URL as its
origin: the quote is what a reviewer reads), or none (the proposal is flagged
``no_evidence``).

A submitted text is evidence for the proposals submitted with it, nothing more: its
revision is kept under ``SUBMITTED_MEDIA_TYPE``, which the agents' every-source readings
leave out (``selectors.mined_sources``); only a run a curator starts on that source by
name reads it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction

from construction import keys
from construction.drafts import NewConcept, concept_draft
from construction.formats import SUBMITTED_MEDIA_TYPE
from construction.pipeline import NO_EVIDENCE_FLAG, process_source
from construction.quotes import quote_key
from construction.resolve import resolve_name
from construction.sentences import sentences
from construction.text import name_key
from construction.types import AliasDraft, Candidate, Extraction, SourceDoc, SourceResult, Span
from kgreview.core.errors import DuplicateProposal
from kgreview.graph.models import Edge, Source, SourceRevision
from kgreview.graph.services import Evidence
from kgreview.graph.sources import source_import
from kgreview.review.kinds.add_alias import AddAliasKind
from kgreview.review.kinds.add_concept import AddConceptKind
from kgreview.review.kinds.add_edge import AddEdgeKind
from kgreview.review.kinds.invalidate_edge import InvalidateEdgeKind
from kgreview.review.models import Proposal, ProposalOrigin
from kgreview.review.services import ProposalSpec, proposal_add_names, proposals_create_many

from . import adapters
from .persist import persist_submitted
from .runs import construct_mutex_hold
from .submission_items import (
    Batch,
    Outcome,
    Submission,
    SubmittedEvidence,
    drop_outcome,
    dropped,
    duplicate,
    merged,
    pipeline_drop,
    queued,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User

#: The kinds a submitter may propose.
KINDS = (AddConceptKind.key, AddEdgeKind.key, InvalidateEdgeKind.key, AddAliasKind.key)
#: The slug prefix of the sources that hold submitted texts and quotes from URLs.
SUBMITTED_PREFIX = "submitted-"


def submissions_queue(
    *,
    acting_user: User | None,
    proposer: ProposalOrigin,
    label: str,
    items: Sequence[Submission],
) -> list[Outcome]:
    """Check and queue each submitted item as the construct agent's candidates are; one
    ``Outcome`` per item, in order.

    One transaction holding the ``construct`` mutex (as every writer of proposals from
    a reading does), so the checks of this batch and an agent's never interleave; an
    item sees the proposals the items before it queued (a second item naming the same
    new concept waits for the first's proposal; a repeated item is merged into it).
    ``proposer`` is the origin the review card shows (``label`` names the submitter on
    the sources its texts create); ``acting_user`` is recorded as the proposals'
    ``created_by`` and on the submitted sources' revisions. An error in the graph's
    state raises and nothing of the batch is kept.
    """
    with transaction.atomic():
        construct_mutex_hold()
        relations = adapters.relation_table()
        batch = Batch(
            acting_user=acting_user,
            proposer=proposer,
            label=label,
            relations=relations,
            vocabulary=adapters.vocabulary(relations),
            ontology=adapters.ontology(),
        )
        outcomes: dict[int, Outcome] = {}
        run: list[tuple[int, Submission]] = []
        run_revision: SourceRevision | None = None
        for index, item in enumerate(items):
            if item.kind not in KINDS:
                outcomes[index] = dropped(
                    "invalid", f'"{item.kind}" is not a kind one may propose here.'
                )
                continue
            revision: SourceRevision | None = None
            if item.evidence is not None:
                found = _revision(batch, item.evidence)
                if isinstance(found, Outcome):
                    outcomes[index] = found
                    continue
                revision = found
            if item.kind == AddEdgeKind.key:
                # Edges in a row quoting one revision are read as one source is read.
                if run and _pk(revision) != _pk(run_revision):
                    outcomes.update(_edges(batch, run, run_revision))
                    run = []
                run.append((index, item))
                run_revision = revision
                continue
            if run:
                outcomes.update(_edges(batch, run, run_revision))
                run = []
            outcomes[index] = _one(batch, item, revision)
        if run:
            outcomes.update(_edges(batch, run, run_revision))
        return [outcomes[index] for index in range(len(items))]


def _pk(revision: SourceRevision | None) -> int | None:
    return revision.pk if revision is not None else None


def _one(batch: Batch, item: Submission, revision: SourceRevision | None) -> Outcome:
    if item.kind == AddConceptKind.key:
        return _concept(batch, item, revision)
    if item.kind == AddAliasKind.key:
        return _alias(batch, item, revision)
    return _invalidation(batch, item, revision)


# --- Evidence --------------------------------------------------------------------------


def _revision(batch: Batch, evidence: SubmittedEvidence) -> SourceRevision | Outcome:
    """The revision the quote is to be found in: the named one, or a source made for a
    submitted text or a URL's quote."""
    if evidence.source:
        memo = (evidence.source, evidence.revision)
        if memo not in batch.named:
            batch.named[memo] = _named(evidence)
        return batch.named[memo]
    if evidence.text:
        return _submitted(batch, text=evidence.text, title=evidence.title, origin="")
    if evidence.url:
        return _submitted(batch, text=evidence.quote, title=evidence.title, origin=evidence.url)
    return dropped("invalid", "Evidence names a source, a text or a URL with its quote.")


def _named(evidence: SubmittedEvidence) -> SourceRevision | Outcome:
    """A revision of a source the graph holds, by slug and number (its current one when
    no number is given)."""
    source = Source.objects.filter(slug=evidence.source).first()
    if source is None:
        return dropped("unknown_source", f'The graph holds no source "{evidence.source}".')
    if evidence.revision is None:
        revision = source.current_revision
        if revision is None:
            return dropped("unknown_source", f'The source "{source.slug}" has no text yet.')
    else:
        revision = SourceRevision.objects.filter(source=source, number=evidence.revision).first()
        if revision is None:
            return dropped(
                "unknown_source",
                f'The source "{source.slug}" has no revision {evidence.revision}.',
            )
    revision.source = source
    return revision


def _submitted(batch: Batch, *, text: str, title: str, origin: str) -> SourceRevision:
    """The revision holding a submitted text (or a URL's quote, with the URL as its
    origin): a source of its own, named by the content's hash, so the same text sent
    twice is one source, and a submission never revises a source the agents read."""
    memo = (text, title, origin)
    if memo in batch.submitted:
        return batch.submitted[memo]
    digest = hashlib.sha256("\x00".join((origin, text)).encode("utf-8")).hexdigest()
    slug = f"{SUBMITTED_PREFIX}{'url-' if origin else ''}{digest[:20]}"
    said = f"submitted through the API by {batch.label}"
    made = source_import(
        slug=slug,
        title=title or (f"Quoted from {origin}" if origin else f"Text {said}"),
        text=text,
        origin=(f"{origin} ({said})" if origin else said)[:1000],
        media_type=SUBMITTED_MEDIA_TYPE,
        text_format=SourceRevision.TextFormat.PLAIN,
        acting_user=batch.acting_user,
    )
    revision = made.revision
    revision.source = made.source
    batch.submitted[memo] = revision
    return revision


def _doc(revision: SourceRevision | None) -> SourceDoc:
    if revision is None:  # nothing quoted: an empty document, where nothing is found
        return SourceDoc(slug="", revision_id=0, revision_number=0, title="", text="")
    return adapters.source_doc(revision)


def _span(batch: Batch, revision: SourceRevision, quote: str) -> Span | None:
    doc = adapters.source_doc(revision)
    return batch.facts_of(revision, doc).finder.find(quote)


def _not_found(revision: SourceRevision) -> Outcome:
    return pipeline_drop(
        "evidence_not_found", f'not in revision {revision.number} of "{revision.source.slug}"'
    )


# --- Kinds -----------------------------------------------------------------------------


def _edges(
    batch: Batch, run: list[tuple[int, Submission]], revision: SourceRevision | None
) -> dict[int, Outcome]:
    """Edges in a row that quote one revision (or none): read by the construct pipeline
    in one call, as the candidates of one source are, and written as one source's are
    (one insert; contradictions among them linked). Each item's outcome by its index: its
    draft's proposal (the candidate is the draft's, by identity), its drop (matched by
    the candidate it was made from), or, for a fact stated again with another quote,
    the proposal the quote was added to as support."""
    doc = _doc(revision)
    facts = batch.facts_of(revision, doc) if revision is not None else None
    candidates = [
        Candidate(
            source=item.source,
            target=item.target,
            relation=item.relation,
            confidence=item.confidence,
            reason=item.reason,
            evidence=item.evidence.quote if item.evidence is not None else "",
        )
        for _, item in run
    ]
    result = process_source(
        doc=doc,
        facts=facts,
        extraction=Extraction(concepts=(), candidates=tuple(candidates)),
        vocabulary=batch.vocabulary,
        index=adapters.INDEX_CACHE.get(),
        graph=adapters.DbGraphView(batch.relations),
        gate=settings.KG_CONFIDENCE_GATE,
        ontology=batch.ontology,  # type: ignore[arg-type]
        evidence_optional=revision is None,
    )
    # What the document defines for other concepts is the agents' inference, not asked.
    result = replace(result, aliases=())
    written = persist_submitted(
        proposer=batch.proposer, created_by=batch.acting_user, revision=revision, result=result
    )
    index_of = {id(c): index for c, (index, _) in zip(candidates, run, strict=True)}
    out: dict[int, Outcome] = {}
    # Each draft's outcome, with what a later item stating the same fact would match:
    # the candidate as said, and where its quote and its support stand.
    drafted: list[tuple[str, set[int], Outcome]] = []
    for draft, made in zip(result.edges, written.edges, strict=True):
        outcome = duplicate(made) if isinstance(made, DuplicateProposal) else _edge_queued(made)
        out[index_of[id(draft.candidate)]] = outcome
        starts = {span.start for span in (draft.evidence, *draft.support) if span is not None}
        drafted.append((_said(draft.candidate.as_json()), starts, outcome))
    left: dict[str, list[int]] = {}
    for candidate, (index, _) in zip(candidates, run, strict=True):
        if index not in out:
            left.setdefault(_said(candidate.as_json()), []).append(index)
    finder = facts.finder if facts is not None else None

    def stated_before(candidate: dict) -> Outcome | None:
        """The outcome of the draft an item repeats: the same words, or the same quote."""
        said = _said(candidate)
        quote = candidate.get("evidence") or ""
        span = finder.find(quote) if finder is not None and quote else None
        for words, starts, outcome in drafted:
            if words == said or (span is not None and span.start in starts):
                return outcome
        return None

    for drop in result.dropped:
        waiting = left.get(_said(drop.candidate))
        if not waiting:
            continue
        index = waiting.pop(0)
        first = stated_before(drop.candidate) if drop.reason == "duplicate" else None
        if first is not None and first.proposal_id is not None and drop.twin_of is None:
            out[index] = merged(
                first.proposal_id,
                f"Stated earlier in this batch, as proposal #{first.proposal_id}.",
            )
        else:
            out[index] = drop_outcome(drop.reason, drop.detail, drop.twin_of)
    for candidate, (index, _) in zip(candidates, run, strict=True):
        if index in out:
            continue
        # Neither drafted nor dropped: the same fact with another quote, which the
        # pipeline keeps on the first draft as further support.
        first = stated_before(candidate.as_json())
        if first is not None and first.proposal_id is not None:
            out[index] = merged(
                first.proposal_id,
                f"Stated earlier in this batch: its quote is kept on proposal "
                f"#{first.proposal_id} as further support.",
            )
        else:
            out[index] = pipeline_drop("duplicate", "repeated in this batch")
    return out


def _said(candidate: dict) -> str:
    return json.dumps(candidate, sort_keys=True, default=str)


def _edge_queued(proposal: Proposal) -> Outcome:
    # The concept proposals its new ends wait for (queued now, or open already).
    ends = (proposal.payload["source"], proposal.payload["target"])
    return queued(proposal, waits_for=[e["proposal_id"] for e in ends if e.get("proposal_id")])


def _concept(batch: Batch, item: Submission, revision: SourceRevision | None) -> Outcome:
    """A new concept: its name resolved as an edge's end is (a concept or an open
    proposal of one already answering to it stands for it), drafted as the agents draft
    one, with the submitter's quote, reason and confidence."""
    index = adapters.INDEX_CACHE.get()
    resolution = resolve_name(item.name, index)
    if resolution is None:
        return pipeline_drop("unresolvable", f'"{item.name}" cannot be a concept\'s name')
    if resolution.concept_id is not None:
        return dropped(
            "existing_concept",
            f'The graph already has "{resolution.canonical}" (concept '
            f"#{resolution.concept_id}), matched {resolution.match}; propose an alias for "
            "it instead.",
        )
    if resolution.proposal_id is not None:
        return merged(
            resolution.proposal_id,
            f'"{resolution.canonical}" is already proposed as proposal #{resolution.proposal_id}.',
        )
    span = None
    if revision is not None:
        assert item.evidence is not None
        span = _span(batch, revision, item.evidence.quote)
        if span is None:
            return _not_found(revision)
    dedup = keys.concept_dedup_key(resolution.canonical)
    rejected = adapters.DbGraphView(batch.relations).rejected_quotes(dedup)
    if span is not None and quote_key(span.quote) in rejected:
        return pipeline_drop("previously_rejected", "rejected before with the same evidence")
    doc = _doc(revision)
    record = NewConcept(
        resolution=replace(resolution, description=item.description or resolution.description),
        aliases=[a for a in item.aliases if a.strip()],
        confidence=item.confidence,
        uses=0,
    )
    draft = concept_draft(doc, sentences(doc.text) if revision is not None else [], record)
    draft = replace(draft, evidence=span, reason=item.reason, defined=())
    written = persist_submitted(
        proposer=batch.proposer,
        created_by=batch.acting_user,
        revision=revision,
        result=SourceResult(concepts=(draft,), edges=(), invalidations=(), dropped=()),
        flags=_flags(span, rejected),
    )
    proposal = written.concepts[draft.key]
    if draft.key in written.merged_concepts:
        return merged(
            proposal.pk, f'"{draft.name}" is already proposed as proposal #{proposal.pk}.'
        )
    return queued(proposal)


def _alias(batch: Batch, item: Submission, revision: SourceRevision | None) -> Outcome:
    """One more name for a concept the graph or the queue knows by an exact name (never a
    fuzzy likeness, as the agents' alias drafts): an ``add_alias`` proposal for a concept;
    for an open concept proposal, the name joins it."""
    index = adapters.INDEX_CACHE.get()
    entry = index.exact(name_key(item.concept)) if name_key(item.concept) else None
    if entry is None:
        return dropped(
            "unresolvable",
            f'Neither the graph nor the queue has a concept called "{item.concept}".',
        )
    alias_key = name_key(item.alias)
    if not alias_key:
        return pipeline_drop("unresolvable", f'"{item.alias}" cannot be a name')
    owner = index.exact(alias_key)
    if owner is not None:
        which = (
            f"concept #{owner.concept_id}"
            if owner.concept_id is not None
            else f"proposal #{owner.proposal_id}"
        )
        return dropped(
            "existing_name", f'"{item.alias}" is already a name of "{owner.canonical}" ({which}).'
        )
    span = None
    if revision is not None:
        assert item.evidence is not None
        span = _span(batch, revision, item.evidence.quote)
        if span is None:
            return _not_found(revision)
    if entry.concept_id is None:
        assert entry.proposal_id is not None
        if span is None or revision is None:
            return dropped(
                "invalid",
                f'"{entry.canonical}" is only proposed (proposal #{entry.proposal_id}): a name '
                "joins a proposed concept with the sentence that defines it; send a quote.",
            )
        proposal_add_names(
            proposal_id=entry.proposal_id,
            defined=[
                {
                    "alias": item.alias,
                    "quote": span.quote,
                    "start": span.start,
                    "end": span.end,
                    "revision_id": revision.pk,
                }
            ],
        )
        return merged(
            entry.proposal_id,
            f'The name joins the open proposal #{entry.proposal_id} of "{entry.canonical}".',
        )
    dedup = keys.alias_dedup_key(entry.concept_id, item.alias)
    rejected = adapters.DbGraphView(batch.relations).rejected_quotes(dedup)
    if span is not None and quote_key(span.quote) in rejected:
        return pipeline_drop("previously_rejected", "rejected before with the same evidence")
    draft = AliasDraft(
        name=entry.canonical,
        alias=item.alias,
        evidence=span,  # type: ignore[arg-type]  # None: flagged no_evidence below
        confidence=item.confidence,
        reason=item.reason,
        dedup_key=dedup,
        concept_id=entry.concept_id,
    )
    written = persist_submitted(
        proposer=batch.proposer,
        created_by=batch.acting_user,
        revision=revision,
        result=SourceResult(concepts=(), edges=(), invalidations=(), dropped=(), aliases=(draft,)),
        flags=_flags(span, rejected),
    )
    outcome = written.aliases[0]
    if isinstance(outcome, DuplicateProposal):
        return duplicate(outcome)
    return queued(outcome)


def _invalidation(batch: Batch, item: Submission, revision: SourceRevision | None) -> Outcome:
    """Retire an active edge: refused when it is not active, merged into an open
    proposal to retire it, dropped when rejected before with the same quote."""
    edge = Edge.objects.filter(pk=item.edge_id).first() if item.edge_id is not None else None
    if edge is None:
        return dropped("unknown_edge", f"The graph has no edge #{item.edge_id}.")
    if edge.status != Edge.Status.ACTIVE:
        return dropped("inactive_edge", f"The edge #{edge.pk} is not active ({edge.status}).")
    span = None
    if revision is not None:
        assert item.evidence is not None
        span = _span(batch, revision, item.evidence.quote)
        if span is None:
            return _not_found(revision)
    dedup = keys.invalidation_dedup_key(edge.pk)
    rejected = adapters.DbGraphView(batch.relations).rejected_quotes(dedup)
    if span is not None and quote_key(span.quote) in rejected:
        return pipeline_drop("previously_rejected", "rejected before with the same evidence")
    spec = ProposalSpec(
        kind=InvalidateEdgeKind.key,
        payload={"edge_id": edge.pk, "reason_code": "other"},
        confidence=item.confidence,
        reason=item.reason,
        evidence=(
            Evidence(revision=revision, start=span.start, end=span.end, quote=span.quote)
            if span is not None and revision is not None
            else None
        ),
        flags=_flags(span, rejected),
        dedup_key=dedup,
        priority=round(item.confidence * 100),
        origin=batch.proposer,
        created_by=batch.acting_user,
        document=revision.source if revision is not None else None,
    )
    (outcome,) = proposals_create_many([spec])
    if isinstance(outcome, DuplicateProposal):
        return duplicate(outcome)
    return queued(outcome)


def _flags(span: Span | None, rejected: set[str]) -> tuple[str, ...]:
    """The flags the pipeline gives a draft beyond its own: ``no_evidence`` without a
    quote, ``previously_rejected`` when rejected before with other evidence."""
    flags = [NO_EVIDENCE_FLAG] if span is None else []
    if rejected:
        flags.append("previously_rejected")
    return tuple(flags)
