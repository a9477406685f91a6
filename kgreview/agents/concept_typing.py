"""Types for the concepts the graph has, queued as ``set_concept_type`` proposals with the
quote that shows them: never given silently.

Two agents propose them, both for **untyped** concepts only. A type someone already
gave a concept (a reviewer accepting its proposal, a curator's correction) outweighs a
reader's sign (a head noun, a heading), and changing it may break the relation patterns
its edges were accepted under; so a concept typed differently is left to a curator's
``update_concept``, and the queue is not filled with second guesses.

- Construct: the reader types each concept it drafts (``add_concept.type_key``). When the
  name resolves to a concept the graph has, the draft is dropped as a duplicate, and so
  would the type be. ``typed_in`` reads, outside any transaction, the typed mentions of
  the reading and the first sentence of the revision naming each; ``queue_typed``,
  inside construct's transaction, resolves them to known untyped concepts and queues the
  type with that sentence as its quote, under the construct run.
- A type accepted (``review.signals.ontology_accepted`` with ``type_key``, a Celery task),
  and every discovery run for all the active types (a concept accepted after its type
  was): ``typing_run`` looks, in one pass, at the quotes stored about every active
  untyped concept (its active edges' and its proposals' evidence, with the heading path
  each sits under when the revision keeps its structure) and asks
  ``construction.ontology.typing.types_that_fit`` which ones the new type, or a type
  below it, fits; each gets one proposal quoting the text that names it, under a run of
  the "Concept typing" agent.

A type a reviewer rejected for a concept is not proposed again with the same quote; a
new quote queues it again, flagged ``previously_rejected``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q

from construction.drafts import first_sentence_naming
from construction.ontology import KnownType
from construction.ontology.typing import Quoted, Untyped, types_below, types_that_fit
from construction.quotes import quote_key
from construction.resolve import resolve_name
from construction.sentences import sentences
from construction.types import Extraction, SourceDoc, Span
from kgreview.core.errors import DuplicateProposal
from kgreview.graph.models import Concept, ConceptAlias, ConceptType, Edge, SourceRevision
from kgreview.graph.name_index import id_chunks
from kgreview.graph.services import Evidence
from kgreview.review.kinds.set_concept_type import SetConceptTypeKind
from kgreview.review.models import OPEN_STATUSES, Proposal
from kgreview.review.services import ProposalSpec, proposals_create_many

from .models import AgentRun
from .runs import (
    RunCancelled,
    agent_run_create,
    agent_run_failed,
    agent_run_finish,
    agent_run_step,
    run_origin,
)

log = logging.getLogger(__name__)

# The quotes read per concept: enough to find the one that shows its type.
QUOTES_PER_CONCEPT = 12
# Confidence of a type a reader gave a concept it drafted, and of one found from the
# quotes stored about it (a head noun or a heading is a weaker sign than a reading).
READ_CONFIDENCE = 0.7
FOUND_CONFIDENCE = 0.6


@dataclass(frozen=True)
class TypedMention:
    """A concept the reader typed, with the first sentence of the revision naming it."""

    name: str
    names: tuple[str, ...]
    type_key: str
    span: Span


@dataclass(frozen=True)
class _Found:
    """One proposal to queue: the concept, the type, the quote and why."""

    concept: Concept
    type_key: str
    evidence: Evidence
    reason: str
    confidence: float


# --- Construct ------------------------------------------------------------------------


def typed_in(doc: SourceDoc, extraction: Extraction) -> list[TypedMention]:
    """The reading's typed concepts, each with the first sentence naming it (outside any
    transaction: it reads the text only)."""
    mentions = [m for m in extraction.concepts if m.type_key]
    if not mentions:
        return []
    spans = sentences(doc.text)
    out = []
    for m in mentions:
        names = (m.name, *m.aliases)
        span = first_sentence_naming(doc, spans, names)
        if span is not None:
            out.append(TypedMention(name=m.name, names=names, type_key=m.type_key, span=span))
    return out


def queue_typed(
    *, run: AgentRun, revision: SourceRevision, typed: list[TypedMention], index, stats: dict
) -> None:
    """Queue a ``set_concept_type`` for each typed mention whose name resolves (exactly,
    or by an alias) to an active untyped concept, with the sentence naming it; counted
    in ``stats["proposals"]`` as ``persist_result`` counts the others."""
    if not typed:
        return
    wanted: dict[int, TypedMention] = {}
    for t in typed:
        res = resolve_name(t.name, index)
        if res is not None and res.concept_id is not None and res.match in ("exact", "alias"):
            wanted.setdefault(res.concept_id, t)
    if not wanted:
        return
    concepts = Concept.objects.filter(
        pk__in=list(wanted), status=Concept.Status.ACTIVE, type__isnull=True
    )
    active = set(ConceptType.objects.filter(active=True).values_list("key", flat=True))
    found = [
        _Found(
            concept=c,
            type_key=wanted[c.pk].type_key,
            evidence=Evidence(
                revision=revision,
                start=wanted[c.pk].span.start,
                end=wanted[c.pk].span.end,
                quote=wanted[c.pk].span.quote,
            ),
            reason=(
                f'The reader typed "{wanted[c.pk].name}" as {wanted[c.pk].type_key} '
                f'in "{revision.title or revision.source.title}"; the graph has it untyped.'
            ),
            confidence=READ_CONFIDENCE,
        )
        for c in concepts
        if wanted[c.pk].type_key in active
    ]
    _queue(run, found, stats)


# --- A type accepted --------------------------------------------------------------------


def type_accepted_run(*, type_key: str) -> AgentRun | None:
    """Propose the type just accepted (or one below it) for the active untyped concepts
    it fits (``typing_run``)."""
    return typing_run(type_key=type_key, trigger=AgentRun.Trigger.TYPE_ACCEPTED)


def typing_run(*, type_key: str | None, trigger: str) -> AgentRun | None:
    """Propose ``type_key`` (or a type below it; None: any active type) for the active
    untyped concepts it fits, from the quotes stored about them; None when no such type
    is active or no concept is untyped. The discover agent asks for every type, so a
    concept accepted after its type was is typed on the next discovery. One run of the
    "Concept typing" agent records what it queued."""
    types = tuple(
        KnownType(key, label, parent or "", active)
        for key, label, parent, active in ConceptType.objects.values_list(
            "key", "label", "parent__key", "active"
        )
    )
    if type_key is None:
        wanted = {t.key for t in types if t.active}
    else:
        wanted = types_below(types, type_key)
    if not wanted:
        return None
    untyped = dict(
        Concept.objects.filter(status=Concept.Status.ACTIVE, type__isnull=True).values_list(
            "pk", "name"
        )
    )
    if not untyped:
        return None
    chunks = list(id_chunks(untyped))
    run = agent_run_create(
        agent=AgentRun.Agent.TYPING,
        trigger=trigger,
        params={"type": type_key or "", "untyped": len(untyped)},
        total=len(chunks),
    )
    stats: dict = {"proposals": {}, "fits": 0}
    try:
        for done, chunk in enumerate(chunks, start=1):
            fits, places = _fits(chunk, untyped, types, wanted)
            stats["fits"] += len(fits)
            with transaction.atomic():
                _queue(run, _found(fits, places), stats)
            agent_run_step(run, done=done, stats=stats)  # progress; a curator may stop it
    except RunCancelled:
        return agent_run_finish(run, status=AgentRun.Status.CANCELLED, stats=stats)
    except Exception as exc:  # the run says what failed; the worker stays up
        log.exception("typing run %s failed", run.pk)
        return agent_run_failed(run, exc, stats=stats)
    return agent_run_finish(run, status=AgentRun.Status.SUCCEEDED, stats=stats)


# (revision id, start, end, quote) of a stored quote
_Place = tuple[int, int, int, str]


def _fits(chunk: list[int], untyped: dict[int, str], types, wanted):
    """The fits among one chunk of untyped concepts, and the stored quote each quotes
    (four queries: names, edges' quotes, proposals' quotes, revisions' structure)."""
    names: dict[int, list[str]] = defaultdict(list)
    for concept_id, name in ConceptAlias.objects.filter(
        concept__in=chunk, kind=ConceptAlias.Role.ALIAS
    ).values_list("concept_id", "name"):
        names[concept_id].append(name)
    places: dict[int, list[_Place]] = defaultdict(list)
    ids = set(chunk)
    for ends, place in _stored_quotes(chunk):
        for concept_id in {e for e in ends if e in ids}:
            if len(places[concept_id]) < QUOTES_PER_CONCEPT and place not in places[concept_id]:
                places[concept_id].append(place)
    sections = _sections({p[0] for found in places.values() for p in found})
    concepts = [
        Untyped(
            concept_id=pk,
            names=(untyped[pk], *names[pk]),
            quotes=tuple(Quoted(p[3], _path(sections.get(p[0], []), p[1])) for p in places[pk]),
        )
        for pk in chunk
        if places[pk]
    ]
    return types_that_fit(concepts, types, wanted), places


def _stored_quotes(chunk: list[int]) -> Iterable[tuple[tuple, _Place]]:
    """The quotes of the chunk's concepts' active edges, then of their proposals."""
    columns = ("evidence_revision_id", "evidence_start", "evidence_end", "evidence_quote")
    edges = (
        Edge.objects.filter(
            Q(source__in=chunk) | Q(target__in=chunk),
            status=Edge.Status.ACTIVE,
            evidence_revision__isnull=False,
        )
        .order_by("pk")
        .values_list("source_id", "target_id", *columns)
    )
    for source, target, *place in edges:
        yield (source, target), tuple(place)
    proposals = (
        Proposal.objects.filter(
            Q(source_concept__in=chunk) | Q(target_concept__in=chunk) | Q(concept__in=chunk),
            evidence_revision__isnull=False,
        )
        .exclude(status=Proposal.Status.REJECTED)
        .order_by("pk")
        .values_list("source_concept_id", "target_concept_id", "concept_id", *columns)
    )
    for source, target, concept, *place in proposals:
        yield (source, target, concept), tuple(place)


def _sections(revision_ids: set[int]) -> dict[int, list[dict]]:
    """The sections each revision keeps in its structure (none for one that keeps none)."""
    if not revision_ids:
        return {}
    return {
        pk: list((structure or {}).get("sections") or [])
        for pk, structure in SourceRevision.objects.filter(pk__in=revision_ids).values_list(
            "pk", "structure"
        )
    }


def _path(sections: list[dict], at: int) -> tuple[str, ...]:
    """The heading path of the innermost section holding offset ``at``."""
    best: dict | None = None
    for s in sections:
        inside = s.get("start", 0) <= at < s.get("end", 0)
        if inside and (best is None or s.get("level", 0) >= best.get("level", 0)):
            best = s
    return tuple(best.get("path") or ()) if best else ()


def _found(fits, places: dict[int, list[_Place]]) -> list[_Found]:
    """The fits as proposals to queue: their concepts and revisions read at once."""
    if not fits:
        return []
    concepts = Concept.objects.in_bulk([f.concept_id for f in fits])
    chosen = {f.concept_id: places[f.concept_id][f.quote] for f in fits}
    revisions = SourceRevision.objects.select_related("source").in_bulk(
        {p[0] for p in chosen.values()}
    )
    out = []
    for f in fits:
        revision_id, start, end, quote = chosen[f.concept_id]
        out.append(
            _Found(
                concept=concepts[f.concept_id],
                type_key=f.type_key,
                evidence=Evidence(
                    revision=revisions[revision_id], start=start, end=end, quote=quote
                ),
                reason=f"A quote stored about it names it, and {f.sign}.",
                confidence=FOUND_CONFIDENCE,
            )
        )
    return out


# --- Queuing ------------------------------------------------------------------------------


def _queue(run: AgentRun, found: list[_Found], stats: dict) -> None:
    """Queue each found type, unless it is open already or a reviewer rejected it for
    that concept with the same quote (a new quote is flagged ``previously_rejected``)."""
    if not found:
        return
    kind = SetConceptTypeKind()  # its dedup key, read before anything is written
    payloads = {
        f.concept.pk: {
            "concept_id": f.concept.pk,
            "concept_name": f.concept.name,
            "type_key": f.type_key,
            "type_from": "",
        }
        for f in found
    }
    keys = {f.concept.pk: kind.dedup_key(payloads[f.concept.pk]) for f in found}
    rejected: dict[str, set[str]] = defaultdict(set)
    queued = set()  # open already: a second pass leaves them as they are
    for dedup, status, quote in Proposal.objects.filter(
        dedup_key__in=set(keys.values()),
        status__in=(Proposal.Status.REJECTED, *OPEN_STATUSES),
    ).values_list("dedup_key", "status", "evidence_quote"):
        if status == Proposal.Status.REJECTED:
            rejected[dedup].add(quote_key(quote))
        else:
            queued.add(dedup)
    specs = []
    for f in found:
        dedup = keys[f.concept.pk]
        if dedup in queued:
            continue
        if quote_key(f.evidence.quote) in rejected.get(dedup, ()):
            stats.setdefault("rejected_before", 0)
            stats["rejected_before"] += 1
            continue
        specs.append(
            ProposalSpec(
                kind=SetConceptTypeKind.key,
                payload=payloads[f.concept.pk],
                confidence=f.confidence,
                reason=f.reason,
                evidence=f.evidence,
                flags=("previously_rejected",) if dedup in rejected else (),
                priority=round(f.confidence * 100),
                origin=run_origin(run),
                document=f.evidence.revision.source,
            )
        )
    for outcome in proposals_create_many(specs):
        if not isinstance(outcome, DuplicateProposal):
            slot = stats["proposals"].setdefault(outcome.kind, {})
            slot[outcome.status] = slot.get(outcome.status, 0) + 1
