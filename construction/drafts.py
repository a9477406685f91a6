"""The drafts a source yields besides its edges: new concepts and invalidations.

A new concept is an end of a drafted edge that no concept in the graph or the queue
matches; its evidence is the first sentence of the text that names it. An invalidation
is an active edge quoting an earlier revision whose quote this one no longer has (the
rule is ``quotes.evidence_present``), unless one is already proposed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from .keys import concept_dedup_key, invalidation_dedup_key
from .protocols import GraphView
from .quotes import QuoteFinder, evidence_present
from .text import name_key
from .types import ActiveEvidence, ConceptDraft, InvalidationDraft, Resolution, SourceDoc, Span


@dataclass
class NewConcept:
    """A new concept as the source's drafts use it: how sure, how often, other names."""

    resolution: Resolution
    aliases: list[str] = field(default_factory=list)
    confidence: float = 0.0
    uses: int = 0


def first_sentence_naming(
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


def concept_draft(
    doc: SourceDoc, spans: Sequence[tuple[int, int, bool]], record: NewConcept
) -> ConceptDraft:
    """The proposal to add a new concept, with the first sentence naming it as evidence."""
    res = record.resolution
    canonical_key = name_key(res.canonical)
    aliases = []
    for alias in record.aliases:
        if name_key(alias) != canonical_key and alias not in aliases:
            aliases.append(alias)
    span = first_sentence_naming(doc, spans, [res.canonical, *aliases])
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


def vanished_evidence(
    doc: SourceDoc, finder: QuoteFinder, active: Sequence[ActiveEvidence]
) -> list[ActiveEvidence]:
    """Active edges quoting an earlier revision whose quote this revision no longer has."""
    return [
        item
        for item in active
        if item.revision_number < doc.revision_number and not evidence_present(item.quote, finder)
    ]


def invalidation_drafts(
    doc: SourceDoc, graph: GraphView, vanished: Sequence[ActiveEvidence]
) -> Iterator[InvalidationDraft]:
    """An invalidation per vanished quote whose edge has none open yet."""
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
