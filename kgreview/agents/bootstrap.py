"""Bootstrap an ontology from the corpus, and the additions new documents ask for.

The sources' current revisions are cut into chunks (``construction.chunks``), a sample
of each document's chunks is read (``construction.ontology``: offline by the linguistic
pipeline, or by a model), and what the ontology lacks is queued as proposals:
``add_concept_type`` (with its parent), ``add_relation_type`` (with its patterns),
``add_relation_pattern`` and ``add_attribute``, each with its own quotes and its support
in its description. Nothing is applied until a curator accepts it. An item the graph
has (retired too) is never proposed; one already open is not proposed twice; one a
curator rejected comes back only with a quote it did not have (new evidence). Besides
the documents, the graph's own accepted edges are read: an open relation whose typed
edges join the same two types again is proposed that pattern (``with_usage``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from construction import keys
from construction.chunks import chunk_document
from construction.ontology import (
    AttributeDraft,
    DocChunk,
    KnownOntology,
    KnownType,
    OntologyDraft,
    PatternDraft,
    Quote,
    RelationTypeDraft,
    TypeDraft,
)
from construction.ontology.draft import additions
from construction.ontology.usage import UsedGroup, group_key, patterns_in_use
from construction.types import LLMUsage
from kgreview.graph.models import ConceptType, Edge, Source, SourceRevision
from kgreview.graph.ontology import Attribute, RelationPattern
from kgreview.graph.sources import revision_structure
from kgreview.review.kinds import KINDS
from kgreview.review.kinds.add_attribute import AddAttributeKind
from kgreview.review.kinds.add_concept_type import AddConceptTypeKind
from kgreview.review.kinds.add_relation_pattern import AddRelationPatternKind
from kgreview.review.kinds.add_relation_type import AddRelationTypeKind
from kgreview.review.models import OPEN_STATUSES, Proposal
from kgreview.review.services import ProposalSpec, proposals_create_many

from . import adapters
from .models import AgentRun
from .runs import RunCancelled, agent_run_failed, agent_run_finish, agent_run_step, run_origin
from .selectors import mined_sources

log = logging.getLogger(__name__)

ADD_CONCEPT_TYPE = AddConceptTypeKind.key
ADD_RELATION_TYPE = AddRelationTypeKind.key
ADD_RELATION_PATTERN = AddRelationPatternKind.key
ADD_ATTRIBUTE = AddAttributeKind.key
DEFAULT_SAMPLE = 8  # chunks per document when not told


# --- What the graph has -----------------------------------------------------------------------


def known_ontology() -> KnownOntology:
    """The graph's types, relations, patterns and attributes, retired ones included."""
    types = tuple(
        KnownType(t.key, t.label, t.parent.key if t.parent else "", t.active)
        for t in ConceptType.objects.select_related("parent").order_by("key")
    )
    relations = tuple(row.spec for row in adapters.relation_table())
    patterns = frozenset(
        RelationPattern.objects.values_list("relation__key", "domain__key", "range__key")
    )
    attributes = frozenset(Attribute.objects.values_list("concept_type__key", "key"))
    return KnownOntology(types, relations, patterns, attributes)


# --- The corpus ---------------------------------------------------------------------------------


def sample(chunks: Sequence, n: int | None) -> list:
    """``n`` chunks spread evenly over the document (all of them when ``n`` is None)."""
    if n is None or n >= len(chunks):
        return list(chunks)
    if n <= 0:
        return []
    step = len(chunks) / n
    return [chunks[int(i * step)] for i in range(n)]


def corpus_chunks(
    *, slugs: Sequence[str] | None = None, sample_chunks: int | None = DEFAULT_SAMPLE
) -> list[DocChunk]:
    """The chunks read from the current revision of each source the agents mine
    (``selectors.mined_sources``), or of the active sources named."""
    if slugs:
        sources = Source.objects.filter(
            status=Source.Status.ACTIVE, current_revision__isnull=False, slug__in=list(slugs)
        )
    else:
        sources = mined_sources()
    out: list[DocChunk] = []
    for source in sources.order_by("slug"):
        revision = SourceRevision.objects.get(pk=source.current_revision_id)
        sections = revision_structure(revision).sections
        chunks = chunk_document(revision.text, sections=sections)
        for c in sample(chunks, sample_chunks):
            out.append(
                DocChunk(
                    slug=source.slug,
                    revision_id=revision.pk,
                    title=revision.title or source.title,
                    text=c.text,
                    offset=c.start,
                    section=c.section,
                    index=c.index,
                )
            )
    return out


def draft_ontology(
    chunks: Sequence[DocChunk], *, provider: str, known: KnownOntology
) -> OntologyDraft:
    """What the chunks ask for that ``known`` lacks, read offline or by a model (the
    active relations are read; retired ones are only never proposed again)."""
    vocabulary = adapters.vocabulary()
    if provider == "openai":
        from construction.ontology.model import ModelBootstrap
        from kgreview.core.llm import client_settings

        drafted = ModelBootstrap(**client_settings()).bootstrap(chunks, known=known)
        return additions(drafted, known)
    from construction.ontology import bootstrap_offline

    return bootstrap_offline(chunks, vocabulary=vocabulary, known=known)


def edges_in_use() -> list[UsedGroup]:
    """The active edges of active relations whose two concepts have active types, grouped
    by relation and types in one streaming pass (a few quotes kept per group)."""
    rows = (
        Edge.objects.filter(
            status=Edge.Status.ACTIVE,
            relation__active=True,
            source__type__active=True,
            target__type__active=True,
        )
        .order_by("pk")
        .values_list(
            "relation__key",
            "is_symmetric",
            "source__type__key",
            "target__type__key",
            "source__name",
            "target__name",
            "evidence_revision_id",
            "evidence_revision__source__slug",
            "evidence_start",
            "evidence_end",
            "evidence_quote",
        )
    )
    groups: dict[tuple[str, str, str], UsedGroup] = {}
    for relation, symmetric, domain, range_, src, dst, rev, slug, start, end, text in rows.iterator(
        chunk_size=2000
    ):
        key = group_key(relation, domain, range_, symmetric)
        group = groups.setdefault(key, UsedGroup(*key, symmetric=symmetric))
        quote = Quote(slug, rev, start, end, text, name=src, other=dst) if rev and text else None
        group.add(quote)
    return list(groups.values())


def with_usage(draft: OntologyDraft, known: KnownOntology) -> OntologyDraft:
    """The draft and the patterns the graph's accepted edges ask for (``construction.
    ontology.usage``), but for those the documents drafted already."""
    drafted = {(p.relation_key, p.domain_key, p.range_key) for p in draft.patterns}
    used = [
        p
        for p in patterns_in_use(edges_in_use(), known)
        if (p.relation_key, p.domain_key, p.range_key) not in drafted
    ]
    return replace(draft, patterns=(*draft.patterns, *used)) if used else draft


# --- Proposals ----------------------------------------------------------------------------------


def _examples(quotes: Sequence[Quote], **names: str) -> list[dict]:
    out = []
    for q in quotes:
        example: dict = {"quote": q.quote or "—", "source_slug": q.source_slug}
        if q.revision_id:
            example["revision_id"] = q.revision_id
        if q.start is not None and q.end is not None:
            example["start"], example["end"] = q.start, q.end
        for field, attr in names.items():
            example[field] = str(getattr(q, attr))[:200]
        out.append(example)
    return out


def _support(n: int, sources: int) -> str:
    return f"Support: {n} in {sources} source{'s' if sources != 1 else ''}."


def type_spec(t: TypeDraft) -> tuple[str, dict, str]:
    payload = {
        "key": t.key,
        "label": t.label[:100],
        "description": f"{t.description} {_support(t.support, t.sources)}"[:5000],
        "parent_key": t.parent_key,
        "examples": _examples(t.quotes, concept_name="name"),
    }
    reason = f"Concepts of the documents are {t.label.lower()}s. {_support(t.support, t.sources)}"
    return ADD_CONCEPT_TYPE, payload, reason


def relation_type_spec(r: RelationTypeDraft) -> tuple[str, dict, str]:
    payload = {
        "key": r.key,
        "label": r.label,
        "verb": r.verb,
        "description": f"{r.description} {_support(r.support, r.sources)}"[:5000],
        "directed": not r.symmetric,
        "symmetric": r.symmetric,
        "acyclic": r.acyclic,
        "labels": list(r.labels)[:50],
        "examples": _examples(r.quotes, source_name="name", target_name="other"),
        "patterns": [{"domain_key": d, "range_key": g} for d, g in r.patterns],
    }
    reason = (
        f'The vocabulary has no "{r.label.lower()}" relation, but the documents state one '
        f"in its cue words. {_support(r.support, r.sources)}"
    )
    return ADD_RELATION_TYPE, payload, reason


def pattern_spec(p: PatternDraft) -> tuple[str, dict, str]:
    payload = {
        "relation_key": p.relation_key,
        "domain_key": p.domain_key,
        "range_key": p.range_key,
        "description": f"{p.description} {_support(p.support, p.sources)}"[:5000],
        "examples": _examples(p.quotes, source_name="name", target_name="other"),
    }
    where = f"in {p.support} accepted edges" if p.from_graph else "in the documents"
    reason = (
        f"{p.relation_key} joins {_a(p.domain_key)} to {_a(p.range_key)} {where}. "
        f"{_support(p.support, p.sources)}"
    )
    return ADD_RELATION_PATTERN, payload, reason


def attribute_spec(a: AttributeDraft) -> tuple[str, dict, str]:
    payload = {
        "type_key": a.type_key,
        "key": a.key,
        "label": a.label,
        "datatype": a.datatype,
        "description": f"{a.description} {_support(a.support, a.sources)}"[:5000],
        "examples": _examples(a.quotes, concept_name="name", value="value"),
    }
    reason = f"The documents give a {a.type_key}'s {a.label.lower()}. " + _support(
        a.support, a.sources
    )
    return ADD_ATTRIBUTE, payload, reason


def draft_specs(draft: OntologyDraft) -> list[tuple[str, dict, str, int]]:
    """(kind, payload, reason, support) for every item of the draft."""
    out = [(*type_spec(t), t.support) for t in draft.types]
    out += [(*relation_type_spec(r), r.support) for r in draft.relation_types]
    out += [(*pattern_spec(p), p.support) for p in draft.patterns]
    out += [(*attribute_spec(a), a.support) for a in draft.attributes]
    return out


def dedup_key(kind: str, payload: dict) -> str:
    if kind == ADD_RELATION_TYPE:
        return keys.relation_type_dedup_key(payload["key"])
    return KINDS[kind].dedup_key(payload)


def _quotes_of(payload: dict) -> set[tuple[str, str]]:
    return {
        (e.get("source_slug", ""), " ".join(str(e.get("quote", "")).split()))
        for e in payload.get("examples", [])
    }


def fresh_specs(
    drafted: Sequence[tuple[str, dict, str, int]], *, run: AgentRun
) -> tuple[list[ProposalSpec], dict[str, int]]:
    """The proposals to queue: kinds this graph knows, none open already, none rejected
    unless with a quote the rejected one did not have."""
    held: dict[str, int] = {"open": 0, "rejected": 0, "unknown_kind": 0}
    wanted = []
    for kind, payload, reason, support in drafted:
        if kind not in KINDS:
            held["unknown_kind"] += 1
            continue
        fields = KINDS[kind].schema.model_fields
        payload = {k: v for k, v in payload.items() if k in fields}  # a field not yet known
        wanted.append((kind, payload, reason, support, dedup_key(kind, payload)))
    earlier: dict[str, list[Proposal]] = {}
    for p in Proposal.objects.filter(
        dedup_key__in=[w[4] for w in wanted],
        status__in=(*OPEN_STATUSES, Proposal.Status.REJECTED),
    ).only("dedup_key", "status", "payload"):
        earlier.setdefault(p.dedup_key, []).append(p)
    specs = []
    for kind, payload, reason, support, dedup in wanted:
        before = earlier.get(dedup, [])
        if any(p.status in OPEN_STATUSES for p in before):
            held["open"] += 1
            continue
        rejected = [p for p in before if p.status == Proposal.Status.REJECTED]
        if rejected:
            seen = set().union(*(_quotes_of(p.payload) for p in rejected))
            if _quotes_of(payload) <= seen:
                held["rejected"] += 1
                continue
        specs.append(
            ProposalSpec(
                kind=kind,
                payload=payload,
                confidence=round(min(0.95, 0.6 + 0.03 * support), 3),
                reason=reason,
                dedup_key=dedup,
                priority=150,
                origin=run_origin(run),
            )
        )
    return specs, held


def queue_draft(draft: OntologyDraft, *, run: AgentRun) -> dict[str, int]:
    """Queue the draft's items as proposals; the counts by kind and what was held back."""
    specs, held = fresh_specs(draft_specs(draft), run=run)
    made: dict[str, int] = {}
    for outcome in proposals_create_many(specs):
        if isinstance(outcome, Proposal):
            made[outcome.kind] = made.get(outcome.kind, 0) + 1
    return {
        **{f"queued_{k}": n for k, n in made.items()},
        **{f"held_{k}": n for k, n in held.items()},
    }


# --- Additions as documents arrive (the discover agent) ---------------------------------------

ARRIVALS_MAX = 25  # the newest sources one discover run reads for additions


def arrived_since(since) -> list[str]:
    """The slugs of the sources the agents mine (``selectors.mined_sources``) whose
    current revision came after ``since`` (every one when None), newest first, at most
    ``ARRIVALS_MAX``."""
    sources = mined_sources()
    if since is not None:
        sources = sources.filter(current_revision__created_at__gt=since)
    return list(
        sources.order_by("-current_revision__created_at", "slug").values_list("slug", flat=True)[
            :ARRIVALS_MAX
        ]
    )


def propose_additions(run: AgentRun, *, since) -> dict[str, int]:
    """Read the documents that arrived since ``since`` and queue the additions they ask
    for (new types, relation types, patterns, attributes; never a change to what
    exists), with their support and quotes. Offline: the same reading as bootstrap; the
    patterns the graph's accepted edges ask for are looked for even when none arrived."""
    slugs = arrived_since(since)
    known = known_ontology()
    drafted = OntologyDraft()
    if slugs:
        chunks = corpus_chunks(slugs=slugs, sample_chunks=DEFAULT_SAMPLE)
        drafted = draft_ontology(chunks, provider="offline", known=known)
    counts = queue_draft(with_usage(drafted, known), run=run)
    return {"additions_sources": len(slugs), **{f"additions_{k}": n for k, n in counts.items()}}


# --- The run ------------------------------------------------------------------------------------


def bootstrap_run(run: AgentRun) -> AgentRun:
    """Read the corpus, draft the ontology it asks for, queue what the graph lacks.

    The run's ``params`` say what to read: ``sources`` (slugs; none: every active
    source) and ``sample_chunks`` (per document; None: all); its ``provider`` how."""
    params = run.params or {}
    sources = params.get("sources") or None
    sample_chunks = params.get("sample_chunks", DEFAULT_SAMPLE)
    provider = run.provider or "offline"
    stats: dict = {}
    usage = LLMUsage()
    try:
        agent_run_step(run, done=0, total=3)
        chunks = corpus_chunks(slugs=sources, sample_chunks=sample_chunks)
        stats.update({"sources": len({c.slug for c in chunks}), "chunks": len(chunks)})
        agent_run_step(run, done=1, stats=stats)
        known = known_ontology()
        draft = with_usage(draft_ontology(chunks, provider=provider, known=known), known)
        usage = draft.usage
        stats.update({f"drafted_{k}": v for k, v in draft.summary().items()})
        if draft.skipped:
            stats["skipped_chunks"] = [f"{c}: {why}"[:300] for c, why in draft.skipped[:20]]
        agent_run_step(run, done=2, stats=stats)
        stats.update(queue_draft(draft, run=run))
        agent_run_step(run, done=3, stats=stats)
    except RunCancelled:
        return agent_run_finish(run, status=AgentRun.Status.CANCELLED, stats=stats, usage=usage)
    except Exception as exc:  # the run says what failed; the worker stays up
        log.exception("bootstrap run %s failed", run.pk)
        return agent_run_failed(run, exc, stats=stats, usage=usage)
    status = AgentRun.Status.PARTIAL if draft.skipped else AgentRun.Status.SUCCEEDED
    return agent_run_finish(run, status=status, stats=stats, usage=usage)


def _a(word: str) -> str:
    """A type's key with its article: "a setting", "an argument"."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"
