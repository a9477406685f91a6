"""SEARCH, VERIFY and CONSTRUCT for one source revision, after READ.

``process_source`` is a pure function of its inputs: the extraction, the vocabulary, the
concept index and a read-only view of the graph and the queue. It returns proposal
drafts and dropped candidates; the caller decides how to persist them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .keys import concept_dedup_key, invalidation_dedup_key, relation_key
from .protocols import GraphView
from .quotes import QuoteFinder, evidence_present, quote_key
from .resolve import OverlayIndex, resolve_name
from .sentences import sentences
from .text import name_key, name_keys
from .types import (
    ActiveEvidence,
    Candidate,
    ConceptDraft,
    ConceptMention,
    Conflict,
    Dropped,
    EdgeDraft,
    Extraction,
    IndexEntry,
    InvalidationDraft,
    Link,
    RelationSpec,
    Resolution,
    SourceDoc,
    SourceResult,
    Span,
)
from .verify import (
    SourceState,
    dedup_key_for,
    find_conflicts,
    is_existing_edge,
    match_relation,
    vocabulary_lookup,
)

# Further places stating the same edge kept on one proposal: enough to show it is said
# throughout a document, few enough to fit on a card.
MAX_SUPPORT = 5


@dataclass
class _Pending:
    """A draft being assembled; frozen into an EdgeDraft once the source is done."""

    source: Resolution
    target: Resolution
    spec: RelationSpec
    candidate: Candidate
    span: Span
    flags: set[str]
    conflicts: list[Conflict]
    dedup_key: str
    support: list[Span] = field(default_factory=list)


@dataclass
class _NewConcept:
    resolution: Resolution
    aliases: list[str] = field(default_factory=list)
    confidence: float = 0.0
    uses: int = 0


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


def _first_sentence_naming(
    doc: SourceDoc, spans: Sequence[tuple[int, int, bool]], names: Sequence[str]
) -> Span | None:
    """The first sentence of the text that names the concept, as evidence for adding it."""
    lowered = [n.casefold() for n in names if n]
    patterns = None
    for start, end, _ in spans:
        chunk = doc.text[start:end]
        folded = chunk.casefold()
        if not any(n in folded for n in lowered):
            continue
        if patterns is None:
            patterns = [
                re.compile(r"(?<!\w)" + re.escape(n) + r"(?!\w)", re.IGNORECASE) for n in names if n
            ]
        if any(p.search(chunk) for p in patterns):
            return Span(start=start, end=end, quote=chunk)
    return None


def process_source(
    *,
    doc: SourceDoc,
    extraction: Extraction,
    vocabulary: Sequence[RelationSpec],
    index,
    graph: GraphView,
    gate: float,
    active_evidence: Sequence[ActiveEvidence] = (),
) -> SourceResult:
    """Turn one extraction into proposal drafts and dropped candidates."""
    table = vocabulary_lookup(vocabulary)
    mentions = _mention_table(extraction.concepts)
    overlay = OverlayIndex(index)
    state = SourceState()
    dropped: list[Dropped] = [
        Dropped(candidate=r.raw, reason="invalid", detail=r.error) for r in extraction.rejected
    ]
    pending: list[_Pending] = []
    new_concepts: dict[str, _NewConcept] = {}
    names: dict[str, str] = {}
    flag_existing: list[tuple[int, str, str]] = []
    grounded: set[int] = set()

    def resolve(name: str) -> Resolution | None:
        resolution = resolve_name(name, overlay, mention=_mention_for(name, mentions))
        if resolution is not None and resolution.is_new and resolution.key not in names:
            # Later mentions in this source (by any of its names) find the same concept.
            entry = IndexEntry(
                name=resolution.canonical, canonical=resolution.canonical, key=resolution.key
            )
            keys: list[str] = []
            for item in (resolution.canonical, *resolution.aliases):
                keys += [key for key in name_keys(item) if key not in keys]
            overlay.add(entry, keys=keys)
        return resolution

    finder = QuoteFinder(doc.text)
    resolved: list[tuple[Candidate, dict, RelationSpec, Span, Resolution, Resolution, str]] = []
    for candidate in extraction.candidates:
        raw = candidate.as_json()
        spec = match_relation(candidate.relation, table)
        if spec is None:
            dropped.append(
                Dropped(
                    candidate=raw,
                    reason="unknown_relation",
                    detail=relation_key(candidate.relation),
                )
            )
            continue
        confidence = candidate.confidence
        if not isinstance(confidence, int | float) or not math.isfinite(confidence):
            dropped.append(Dropped(candidate=raw, reason="invalid", detail="confidence"))
            continue
        if not 0.0 <= confidence <= 1.0:
            dropped.append(
                Dropped(candidate=raw, reason="invalid", detail=f"confidence {confidence}")
            )
            continue
        span = finder.find(candidate.evidence, within=candidate.window)
        if span is None:
            dropped.append(
                Dropped(
                    candidate=raw,
                    reason="evidence_not_found",
                    detail=f"not in revision {doc.revision_number} of {doc.slug}",
                )
            )
            continue
        source = resolve(candidate.source)
        target = resolve(candidate.target)
        if source is None or target is None:
            which = "source" if source is None else "target"
            dropped.append(
                Dropped(candidate=raw, reason="unresolvable", detail=f"{which} name is unusable")
            )
            continue
        if source.key == target.key:
            dropped.append(
                Dropped(
                    candidate=raw,
                    reason="self_loop",
                    detail=f'both ends resolve to "{source.canonical}"',
                )
            )
            continue
        if spec.symmetric and target.key < source.key:
            source, target = target, source
        names.setdefault(source.key, source.canonical)
        names.setdefault(target.key, target.canonical)
        dedup = dedup_key_for(spec, source.key, target.key)
        resolved.append((candidate, raw, spec, span, source, target, dedup))

    vanished = _vanished(doc, finder, active_evidence)
    # Every remaining question is about these endpoints and keys: let the graph view
    # answer them from a few batched reads.
    graph.prepare(
        node_keys={k for item in resolved for k in (item[4].key, item[5].key)},
        dedup_keys={item[6] for item in resolved}
        | {invalidation_dedup_key(item.edge_id) for item in vanished},
    )
    drafted: dict[str, _Pending] = {}
    for candidate, raw, spec, span, source, target, dedup in resolved:
        confidence = candidate.confidence
        if dedup in state.seen_keys:
            first = drafted.get(dedup)
            if (
                first is not None
                and len(first.support) < MAX_SUPPORT
                and all(span.start != s.start for s in (first.span, *first.support))
            ):
                # Stated again elsewhere in the document: one proposal, more support.
                first.support.append(span)
                continue
            dropped.append(
                Dropped(candidate=raw, reason="duplicate", detail="repeated in this source")
            )
            continue
        open_id = graph.open_proposal(dedup)
        if open_id is not None:
            dropped.append(
                Dropped(candidate=raw, reason="duplicate", detail=f"proposal #{open_id}")
            )
            continue
        existing = is_existing_edge(
            graph=graph, spec=spec, source_key=source.key, target_key=target.key
        )
        if existing is not None:
            dropped.append(
                Dropped(candidate=raw, reason="existing_edge", detail=f"edge #{existing.id}")
            )
            continue
        rejected = graph.rejected_quotes(dedup)
        if rejected and quote_key(span.quote) in rejected:
            dropped.append(
                Dropped(
                    candidate=raw,
                    reason="previously_rejected",
                    detail="rejected before with the same evidence",
                )
            )
            continue
        conflicts = list(
            find_conflicts(
                graph=graph,
                state=state,
                spec=spec,
                source_key=source.key,
                target_key=target.key,
                names=names,
            )
        )
        flags: set[str] = set()
        if confidence < gate:
            flags.add("below_gate")
        if source.concept_id is None or target.concept_id is None:
            flags.add("new_concept")
        if rejected:
            flags.add("previously_rejected")
        if conflicts:
            flags.add("contradiction")
        for conflict in conflicts:
            for link in conflict.links:
                if link.kind == "proposal":
                    flag_existing.append((link.id, dedup, conflict.explanation))
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
        state.seen_keys.add(dedup)
        state.links.append(Link("draft", len(pending), source.key, spec.key, target.key))
        pending.append(
            _Pending(
                source=source,
                target=target,
                spec=spec,
                candidate=candidate,
                span=span,
                flags=flags,
                conflicts=conflicts,
                dedup_key=dedup,
            )
        )
        drafted[dedup] = pending[-1]
        for end in (source, target):
            if end.concept_id is not None:
                grounded.add(end.concept_id)
            elif end.is_new:
                record = new_concepts.setdefault(end.key, _NewConcept(resolution=end))
                record.aliases += [a for a in end.aliases if a not in record.aliases]
                if end.name != record.resolution.canonical and end.name not in record.aliases:
                    record.aliases.append(end.name)
                record.confidence = max(record.confidence, confidence)
                record.uses += 1

    spans = sentences(doc.text) if new_concepts else []
    concepts = tuple(_concept_draft(doc, spans, record) for record in new_concepts.values())
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
        for p in pending
    )
    invalidations = tuple(_invalidations(doc, graph, vanished))
    return SourceResult(
        concepts=concepts,
        edges=edges,
        invalidations=invalidations,
        dropped=tuple(dropped),
        flag_existing=tuple(flag_existing),
        grounded_concepts=tuple(sorted(grounded)),
    )


def _concept_draft(doc: SourceDoc, spans, record: _NewConcept) -> ConceptDraft:
    res = record.resolution
    canonical_key = name_key(res.canonical)
    aliases = []
    for alias in record.aliases:
        if name_key(alias) != canonical_key and alias not in aliases:
            aliases.append(alias)
    span = _first_sentence_naming(doc, spans, [res.canonical, *aliases])
    uses = "edge" if record.uses == 1 else "edges"
    return ConceptDraft(
        key=res.key,
        name=res.canonical,
        aliases=tuple(aliases),
        description=res.description,
        confidence=round(record.confidence, 3),
        reason=(
            f'"{res.canonical}" is named in "{doc.title}" and is an end of '
            f"{record.uses} proposed {uses}; no concept in the graph matches it."
        ),
        evidence=span,
        dedup_key=concept_dedup_key(res.canonical),
    )


def _vanished(
    doc: SourceDoc, finder: QuoteFinder, active: Sequence[ActiveEvidence]
) -> list[ActiveEvidence]:
    """Active edges quoting an earlier revision whose quote this revision no longer has."""
    return [
        item
        for item in active
        if item.revision_number < doc.revision_number and not evidence_present(item.quote, finder)
    ]


def _invalidations(doc: SourceDoc, graph: GraphView, vanished: Sequence[ActiveEvidence]):
    for item in vanished:
        dedup = invalidation_dedup_key(item.edge_id)
        if graph.open_proposal(dedup) is not None:
            continue
        yield InvalidationDraft(
            edge_id=item.edge_id,
            reason=(
                f"{item.description}: its evidence, quoted from revision "
                f"{item.revision_number} of {doc.slug}, no longer appears in revision "
                f"{doc.revision_number}."
            ),
            confidence=0.9,
            dedup_key=dedup,
        )
