"""SEARCH, VERIFY and CONSTRUCT for one source revision, after READ.

``process_source`` is a pure function of its inputs: the extraction, the vocabulary, the
concept index and a read-only view of the graph and the queue. It returns proposal
drafts and dropped candidates; the caller decides how to persist them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .definitions import Definition, definitions, with_definitions
from .drafts import (
    NewConcept,
    alias_drafts,
    concept_draft,
    invalidation_drafts,
    vanished_evidence,
)
from .keys import invalidation_dedup_key, relation_key
from .protocols import ConceptIndex, GraphView
from .quotes import QuoteFinder, quote_key
from .resolve import OverlayIndex, resolve_name
from .sentences import sentences
from .text import name_keys
from .types import (
    ActiveEvidence,
    Candidate,
    ConceptMention,
    Conflict,
    Dropped,
    DropReason,
    EdgeDraft,
    Extraction,
    Link,
    Ontology,
    RelationSpec,
    Resolution,
    SourceDoc,
    SourceResult,
    Span,
)
from .verify import (
    PATTERN_FLAG,
    SourceState,
    dedup_keys_for,
    find_conflicts,
    is_existing_edge,
    match_relation,
    pattern_break,
    vocabulary_lookup,
)

# Further places stating the same edge kept on one proposal: enough to show it is said
# throughout a document, few enough to fit on a card.
MAX_SUPPORT = 5
#: A candidate kept without a quote (``process_source(evidence_optional=True)``).
NO_EVIDENCE_FLAG = "no_evidence"


@dataclass
class _Pending:
    """A draft being assembled; frozen into an EdgeDraft once the source is done."""

    source: Resolution
    target: Resolution
    spec: RelationSpec
    candidate: Candidate
    span: Span | None
    flags: set[str]
    conflicts: list[Conflict]
    dedup_key: str
    support: list[Span] = field(default_factory=list)


def _mention_table(mentions: Sequence[ConceptMention]) -> dict[str, ConceptMention]:
    table: dict[str, ConceptMention] = {}
    for mention in mentions:
        for name in [mention.name, *mention.aliases]:
            for key in name_keys(name):
                table.setdefault(key, mention)
    return table


def _mention_for(name: str, table: dict[str, ConceptMention]) -> ConceptMention | None:
    for key in name_keys(name):
        if key in table:
            return table[key]
    return None


@dataclass(frozen=True)
class _Found:
    """A candidate SEARCH kept: its relation, its quote in this revision, its two ends.

    The value passed from SEARCH to VERIFY and CONSTRUCT; ``source`` and ``target`` are
    already in key order for a symmetric relation.
    """

    candidate: Candidate
    raw: dict
    spec: RelationSpec
    span: Span | None
    source: Resolution
    target: Resolution
    dedup_key: str
    # Its own key first, then its inverse twin's (``verify.dedup_keys_for``).
    dedup_keys: tuple[str, ...] = ()


@dataclass
class _Drafting:
    """One source's work in progress: what every stage reads and adds to."""

    doc: SourceDoc
    graph: GraphView
    gate: float
    mentions: dict[str, ConceptMention]
    overlay: OverlayIndex
    defined: tuple[Definition, ...] = ()
    ontology: Ontology = field(default_factory=Ontology)
    # A candidate with no quote is kept, flagged ``no_evidence`` (a submitter's, through
    # the API); the agents' own reading always quotes.
    evidence_optional: bool = False
    state: SourceState = field(default_factory=SourceState)
    dropped: list[Dropped] = field(default_factory=list)
    pending: list[_Pending] = field(default_factory=list)
    drafted: dict[str, _Pending] = field(default_factory=dict)  # dedup key -> first draft
    new_concepts: dict[str, NewConcept] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # concept key -> display name
    flag_existing: list[tuple[int, str, str]] = field(default_factory=list)
    grounded: set[int] = field(default_factory=set)

    def drop(
        self, raw: dict, reason: DropReason, detail: str, *, twin_of: int | None = None
    ) -> None:
        self.dropped.append(Dropped(candidate=raw, reason=reason, detail=detail, twin_of=twin_of))

    def resolve(self, name: str) -> Resolution | None:
        """An endpoint name's concept; a new one is findable by later mentions in this
        source (by any of its names)."""
        resolution = resolve_name(name, self.overlay, mention=_mention_for(name, self.mentions))
        if resolution is not None and resolution.is_new and resolution.key not in self.names:
            self.overlay.remember(resolution)
        return resolution


@dataclass(frozen=True)
class DocumentFacts:
    """What ``process_source`` reads off the document's text alone (the names it defines,
    where each quote can be found): linear in its length, so a caller that holds a lock
    for ``process_source`` works it out beforehand, outside the lock."""

    defined: tuple[Definition, ...]
    finder: QuoteFinder


def document_facts(doc: SourceDoc) -> DocumentFacts:
    return DocumentFacts(defined=definitions(doc.text), finder=QuoteFinder(doc.text))


def process_source(
    *,
    doc: SourceDoc,
    extraction: Extraction,
    vocabulary: Sequence[RelationSpec],
    index: ConceptIndex,
    graph: GraphView,
    gate: float,
    active_evidence: Sequence[ActiveEvidence] = (),
    facts: DocumentFacts | None = None,
    ontology: Ontology | None = None,
    evidence_optional: bool = False,
) -> SourceResult:
    """Turn one extraction into proposal drafts and dropped candidates.

    First DEFINE (``construction.definitions``): the names the document defines join
    the extractor's concept mentions, whatever extractor read it, so an end named by
    either name resolves to one concept. In stages: SEARCH checks each candidate on its
    own (relation, confidence, quote) and resolves its ends (``_search``, giving a
    ``_Found``); the graph view is then told every question to come; VERIFY weighs each
    found candidate against this source, the queue and the graph (``_repeated``,
    ``_verify``); CONSTRUCT drafts it (``_construct``); and the drafts become the
    source's result (``_result``, with the names the document defines for concepts
    already known), with the invalidations of edges whose evidence this revision no
    longer has. ``ontology``: the types and relation patterns; a candidate whose ends'
    types break its relation's patterns is held, flagged ``pattern_violation``.
    ``evidence_optional``: a candidate without a quote (an empty ``evidence``) is kept,
    flagged ``no_evidence``, instead of dropped (what others submit through the API may
    state a fact without quoting a source).
    """
    facts = facts or document_facts(doc)
    defined = facts.defined
    work = _Drafting(
        doc=doc,
        graph=graph,
        gate=gate,
        mentions=_mention_table(with_definitions(extraction.concepts, defined)),
        overlay=OverlayIndex(index),
        defined=defined,
        ontology=ontology or Ontology(),
        evidence_optional=evidence_optional,
    )
    for rejected in extraction.rejected:
        work.drop(rejected.raw, "invalid", rejected.error)
    table = vocabulary_lookup(vocabulary)
    finder = facts.finder
    found = [
        item
        for item in (_search(work, table, finder, c) for c in extraction.candidates)
        if item is not None
    ]
    vanished = vanished_evidence(doc, finder, active_evidence)
    # Every remaining question is about these endpoints and keys: let the graph view
    # answer them from a few batched reads.
    graph.prepare(
        node_keys={k for item in found for k in (item.source.key, item.target.key)},
        dedup_keys={key for item in found for key in item.dedup_keys}
        | {invalidation_dedup_key(item.edge_id) for item in vanished},
    )
    for item in found:
        if _repeated(work, item):
            continue
        verdict = _verify(work, item)
        if verdict is not None:
            _construct(work, item, *verdict)
    return _result(work, vanished)


def _search(
    work: _Drafting, table: dict[str, RelationSpec], finder: QuoteFinder, candidate: Candidate
) -> _Found | None:
    """SEARCH: a known relation, a usable confidence, the quote in this revision, and two
    distinct ends; else the candidate is dropped with its reason."""
    raw = candidate.as_json()
    spec = match_relation(candidate.relation, table)
    if spec is None:
        work.drop(raw, "unknown_relation", relation_key(candidate.relation))
        return None
    confidence = candidate.confidence
    if not isinstance(confidence, int | float) or not math.isfinite(confidence):
        work.drop(raw, "invalid", "confidence")
        return None
    if not 0.0 <= confidence <= 1.0:
        work.drop(raw, "invalid", f"confidence {confidence}")
        return None
    unquoted = work.evidence_optional and not candidate.evidence.strip()
    span = None if unquoted else finder.find(candidate.evidence, within=candidate.window)
    if span is None and not unquoted:
        doc = work.doc
        work.drop(raw, "evidence_not_found", f"not in revision {doc.revision_number} of {doc.slug}")
        return None
    source = work.resolve(candidate.source)
    target = work.resolve(candidate.target)
    if source is None or target is None:
        which = "source" if source is None else "target"
        work.drop(raw, "unresolvable", f"{which} name is unusable")
        return None
    if source.key == target.key:
        work.drop(raw, "self_loop", f'both ends resolve to "{source.canonical}"')
        return None
    if spec.symmetric and target.key < source.key:
        source, target = target, source
    work.names.setdefault(source.key, source.canonical)
    work.names.setdefault(target.key, target.canonical)
    dedup = dedup_keys_for(spec, source.key, target.key)
    return _Found(candidate, raw, spec, span, source, target, dedup[0], dedup)


def _repeated(work: _Drafting, item: _Found) -> bool:
    """Whether this source drafted the edge already: another place stating it becomes
    support of the first draft (a few at most), else the candidate is dropped."""
    # Its own key or its inverse twin's: "B builds on A" after "A is a prerequisite
    # for B" states the same fact again.
    seen = next((k for k in item.dedup_keys if k in work.state.seen_keys), None)
    if seen is None:
        return False
    first = work.drafted.get(seen)
    span = item.span
    if (
        span is not None
        and first is not None
        and first.span is not None
        and len(first.support) < MAX_SUPPORT
        and all(span.start != s.start for s in (first.span, *first.support))
    ):
        # Stated again elsewhere in the document: one proposal, more support.
        first.support.append(span)
    else:
        work.drop(item.raw, "duplicate", "repeated in this source")
    return True


def _verify(work: _Drafting, item: _Found) -> tuple[set[str], list[Conflict]] | None:
    """VERIFY against the queue and the graph: the draft's flags and contradictions, or
    None when it is dropped (already proposed, already an edge, rejected with this very
    quote)."""
    graph = work.graph
    open_id = next(
        (found for key in item.dedup_keys if (found := graph.open_proposal(key)) is not None),
        None,
    )
    if open_id is not None:
        work.drop(item.raw, "duplicate", f"proposal #{open_id}", twin_of=open_id)
        return None
    source, target = item.source, item.target
    existing = is_existing_edge(
        graph=graph, spec=item.spec, source_key=source.key, target_key=target.key
    )
    if existing is not None:
        work.drop(item.raw, "existing_edge", f"edge #{existing.id}")
        return None
    rejected = set().union(*(graph.rejected_quotes(key) for key in item.dedup_keys))
    if rejected and item.span is not None and quote_key(item.span.quote) in rejected:
        work.drop(item.raw, "previously_rejected", "rejected before with the same evidence")
        return None
    conflicts = list(
        find_conflicts(
            graph=graph,
            state=work.state,
            spec=item.spec,
            source_key=source.key,
            target_key=target.key,
            names=work.names,
        )
    )
    flags: set[str] = set()
    if item.candidate.confidence < work.gate:
        flags.add("below_gate")
    if source.concept_id is None or target.concept_id is None:
        flags.add("new_concept")
    if rejected:
        flags.add("previously_rejected")
    if item.span is None:
        flags.add(NO_EVIDENCE_FLAG)
    if conflicts:
        flags.add("contradiction")
    if pattern_break(work.ontology, item.spec, _type_of(work, source), _type_of(work, target)):
        flags.add(PATTERN_FLAG)
    return flags, conflicts


def _type_of(work: _Drafting, end: Resolution) -> str:
    """An end's type: a known concept's, the one an open concept proposal proposes, or
    the one the extractor gave a new name's mention ("" when none says)."""
    ontology = work.ontology
    if end.concept_id is not None:
        return ontology.concept_types.get(end.concept_id, "")
    if end.proposal_id is not None:
        return ontology.proposal_types.get(end.proposal_id, "")
    mention = _mention_for(end.name, work.mentions) or _mention_for(end.canonical, work.mentions)
    return str(getattr(mention, "type_key", "") or "")


def _construct(work: _Drafting, item: _Found, flags: set[str], conflicts: list[Conflict]) -> None:
    """CONSTRUCT: the draft, its contradictions told to the other side (an open proposal
    is flagged, an earlier draft of this source gets the conflict too), and its new ends
    recorded as concepts to propose."""
    source, target, spec, dedup = item.source, item.target, item.spec, item.dedup_key
    pending = work.pending
    for conflict in conflicts:
        for link in conflict.links:
            if link.kind == "proposal":
                work.flag_existing.append((link.id, dedup, conflict.explanation))
            elif link.kind == "draft":
                other = pending[link.id]
                other.flags.add("contradiction")
                other.conflicts.append(
                    Conflict(
                        rule=conflict.rule,
                        links=(Link("draft", len(pending), source.key, spec.key, target.key),),
                        explanation=conflict.explanation,
                    )
                )
    work.state.seen_keys.update(item.dedup_keys)
    work.state.links.append(Link("draft", len(pending), source.key, spec.key, target.key))
    pending.append(
        _Pending(
            source=source,
            target=target,
            spec=spec,
            candidate=item.candidate,
            span=item.span,
            flags=flags,
            conflicts=conflicts,
            dedup_key=dedup,
        )
    )
    work.drafted.update(dict.fromkeys(item.dedup_keys, pending[-1]))
    for end in (source, target):
        if end.concept_id is not None:
            work.grounded.add(end.concept_id)
        elif end.is_new:
            record = work.new_concepts.setdefault(end.key, NewConcept(resolution=end))
            record.aliases += [a for a in end.aliases if a not in record.aliases]
            if end.name != record.resolution.canonical and end.name not in record.aliases:
                record.aliases.append(end.name)
            record.confidence = max(record.confidence, item.candidate.confidence)
            record.uses += 1


def _result(work: _Drafting, vanished: Sequence[ActiveEvidence]) -> SourceResult:
    """The source's drafts, frozen: new concepts (each with the first sentence naming it),
    edges, invalidations, drops, flags on open proposals and the concepts it grounds."""
    doc = work.doc
    spans = sentences(doc.text) if work.new_concepts else []
    concepts = tuple(
        concept_draft(doc, spans, record, work.defined) for record in work.new_concepts.values()
    )
    edges = tuple(
        EdgeDraft(
            source=p.source,
            target=p.target,
            relation=p.spec.key,
            confidence=p.candidate.confidence,
            reason=p.candidate.reason.strip() or f'Stated in "{doc.title}".',
            evidence=p.span,
            flags=tuple(sorted(p.flags)),
            conflicts=tuple(p.conflicts),
            dedup_key=p.dedup_key,
            candidate=p.candidate,
            support=tuple(sorted(p.support, key=lambda span: span.start)),
        )
        for p in work.pending
    )
    invalidations = tuple(invalidation_drafts(doc, work.graph, vanished))
    return SourceResult(
        concepts=concepts,
        edges=edges,
        invalidations=invalidations,
        dropped=tuple(work.dropped),
        flag_existing=tuple(work.flag_existing),
        grounded_concepts=tuple(sorted(work.grounded)),
        aliases=tuple(alias_drafts(work.defined, work.overlay.base, work.graph)),
    )
