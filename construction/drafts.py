"""The drafts a source yields besides its edges: new concepts, aliases and invalidations.

A new concept is an end of a drafted edge that no concept in the graph or the queue
matches; it carries the names the document defines for it, and its evidence is the
first sentence defining it, else the first naming it. An alias draft is a name the
document defines for a concept the graph or the queue has by the other name. An invalidation
is an active edge quoting an earlier revision whose quote this one no longer has (the
rule is ``quotes.evidence_present``), unless one is already proposed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from .definitions import Definition
from .keys import alias_dedup_key, concept_dedup_key, invalidation_dedup_key
from .protocols import ConceptIndex, GraphView
from .quotes import QuoteFinder, evidence_present, quote_key
from .text import name_key
from .types import (
    ActiveEvidence,
    AliasDraft,
    ConceptDraft,
    DefinedName,
    IndexEntry,
    InvalidationDraft,
    Resolution,
    SourceDoc,
    Span,
)


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
    """The first sentence of the text that names the concept, as evidence for adding it:
    as written, in the plural, or with inline markup among its words ("The `tar`
    archive" names "tar archive"). A sentence of prose first; a heading or a code
    listing (a command's synopsis) only when no sentence names it."""
    words = [n.casefold().split() for n in names if n.strip()]
    patterns = [_naming(name) for name in words]
    fallback: Span | None = None
    for start, end, heading in spans:
        chunk = doc.text[start:end]
        plain = _UNMARKED.sub("", chunk).casefold()
        if not any(all(w in plain for w in name) for name in words):
            continue
        if any(p.search(chunk) for p in patterns):
            if not heading and not chunk.lstrip().startswith(("```", "~~~")):
                return Span(start=start, end=end, quote=chunk)
            fallback = fallback or Span(start=start, end=end, quote=chunk)
    return fallback


_UNMARKED = re.compile(r"[`*_]")


def _naming(words: Sequence[str]) -> re.Pattern[str]:
    """A name's words in a sentence: markup and spaces between them, a plural ending."""
    between = r"[`*_]*\s+[`*_]*"
    body = between.join(re.escape(w) for w in words)
    return re.compile(r"(?<!\w)" + body + r"(?:e?s)?(?!\w)", re.IGNORECASE)


def concept_draft(
    doc: SourceDoc,
    spans: Sequence[tuple[int, int, bool]],
    record: NewConcept,
    found: Sequence[Definition] = (),
) -> ConceptDraft:
    """The proposal to add a new concept. Each alias the document defines (``found``)
    carries the sentence defining it; the evidence is the first such sentence, else the
    first sentence naming the concept."""
    res = record.resolution
    canonical_key = name_key(res.canonical)
    aliases: list[str] = []
    for alias in record.aliases:
        if name_key(alias) != canonical_key and alias not in aliases:
            aliases.append(alias)
    defined = defined_names(found, [res.canonical, *aliases])
    aliases += [d.alias for d in defined if d.alias not in aliases]
    if defined:
        span: Span | None = min((d.span for d in defined), key=lambda s: s.start)
    else:
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
        defined=tuple(defined),
        type_key=res.type_key,
    )


def defined_names(found: Sequence[Definition], names: Sequence[str]) -> list[DefinedName]:
    """The names ``found`` defines for a concept known by ``names`` (its canonical name
    first), each with its first defining sentence: the other names of a definition of
    any of them, and those of its names a definition gives it."""
    keys = [k for k in (name_key(n) for n in names) if k]
    out: list[DefinedName] = []
    taken = {keys[0]} if keys else set()
    for item in found:
        pair = item.names()
        pair_keys = [name_key(n) for n in pair]
        if not any(k in keys for k in pair_keys):
            continue
        span = Span(start=item.start, end=item.end, quote=item.quote)
        for name, key in zip(pair, pair_keys, strict=True):
            if key not in taken:
                taken.add(key)
                out.append(DefinedName(alias=name, span=span))
    return out


def alias_drafts(
    found: Sequence[Definition], index: ConceptIndex, graph: GraphView
) -> list[AliasDraft]:
    """Names the document defines for concepts the graph or the queue already knows by
    the other name (an exact key, never a fuzzy likeness), which they lack: one draft
    per concept and name, with the first sentence defining it. A name another concept
    already answers to, or one rejected before with the same sentence, is left out."""
    out: list[AliasDraft] = []
    seen: set[tuple[str, str]] = set()
    for item in found:
        for known, alias in (item.names(), item.names()[::-1]):
            entry = index.exact(name_key(known))
            alias_key = name_key(alias)
            if entry is None or (entry.key, alias_key) in seen:
                continue
            seen.add((entry.key, alias_key))
            if index.exact(alias_key) is not None:
                continue  # this concept's name already, or another concept's
            draft = _alias_draft(item, entry, alias, graph)
            if draft is not None:
                out.append(draft)
    return out


def _alias_draft(
    item: Definition, entry: IndexEntry, alias: str, graph: GraphView
) -> AliasDraft | None:
    span = Span(start=item.start, end=item.end, quote=item.quote)
    abbreviation = item.how in ("long (short)", "short (long)", "i.e.")
    dedup = (
        alias_dedup_key(entry.concept_id, alias)
        if entry.concept_id is not None
        else f"alias-of-proposal:{entry.proposal_id}|{name_key(alias)}"
    )
    if entry.concept_id is not None and quote_key(item.quote) in graph.rejected_quotes(dedup):
        return None
    return AliasDraft(
        name=entry.canonical,
        alias=alias,
        evidence=span,
        confidence=0.9 if abbreviation else 0.8,
        reason=f'The document defines "{alias}" as another name for "{entry.canonical}".',
        dedup_key=dedup,
        concept_id=entry.concept_id,
        proposal_id=entry.proposal_id if entry.concept_id is None else None,
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
