"""One annotated text (``construction.annotations``) as what construct's loop reads: an
``Extraction`` whose concepts are the labelled spans and whose candidates are the
labelled relations, mapped to the graph's relations. The loop (``pipeline.process_source``)
then resolves, verifies and dedups them as it does a reader's; ``pinned`` puts each
draft's evidence back on the very characters the annotator marked and adds a concept
draft for each labelled span no relation uses. Pure Python, no Django.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .annotations import TOOLS, AnnotatedText, AnnotationMap, Problem, cleaned
from .drafts import NewConcept
from .keys import concept_dedup_key
from .protocols import ConceptIndex, GraphView
from .quotes import quote_key
from .resolve import OverlayIndex, resolve_name
from .text import normal_name
from .types import (
    Candidate,
    ConceptDraft,
    ConceptMention,
    Dropped,
    Extraction,
    SourceResult,
    Span,
)

__all__ = ["Planned", "pinned", "plan_text"]


@dataclass(frozen=True)
class Labelled:
    """A labelled span kept: its concept mention, where it is, what label it had."""

    mention: ConceptMention
    span: Span
    label: str


@dataclass
class Planned:
    """An annotated text ready for the loop: its stored text, its extraction, the exact
    span of each candidate, what was left out (in words) and the labels with no mapping."""

    text: str
    extraction: Extraction
    labelled: list[Labelled] = field(default_factory=list)
    spans: dict[Candidate, Span] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    unmapped: dict[str, int] = field(default_factory=dict)


def plan_text(
    item: AnnotatedText, mapping: AnnotationMap, *, tool: str, confidence: float
) -> Planned | Problem:
    """The plan for one annotated text, or why none can be made."""
    try:
        text, where = cleaned(item.text, [o for e in item.entities for o in (e.start, e.end)])
    except ValueError as exc:
        return Problem(item.where, f"left out: {exc}")
    if not text.strip():
        return Problem(item.where, "left out: the text is empty")
    plan = Planned(text=text, extraction=Extraction(concepts=(), candidates=()))
    tool_words = TOOLS.get(tool, tool)
    by_id: dict[str, Labelled] = {}
    for entity in item.entities:
        place = f"{item.where}, span {entity.id}"
        if mapping.entities is not None and entity.label not in mapping.entities:
            plan.unmapped[f"span label “{entity.label}”"] = (
                plan.unmapped.get(f"span label “{entity.label}”", 0) + 1
            )
            plan.problems.append(
                Problem(
                    place,
                    f'left out: its label "{entity.label}" has no mapping '
                    '(add it to the mapping file\'s "entities")',
                )
            )
            continue
        lo, hi = where[entity.start], where[entity.end]
        name = normal_name(text[lo:hi])
        if not name:
            plan.problems.append(Problem(place, "left out: it marks no words"))
            continue
        type_key = (mapping.entities or {}).get(entity.label, "")
        labelled = Labelled(
            ConceptMention(name=name, type_key=type_key), Span(lo, hi, text[lo:hi]), entity.label
        )
        by_id[entity.id] = labelled
        plan.labelled.append(labelled)
    candidates: list[Candidate] = []
    for relation in item.relations:
        place = f"{item.where}, relation {relation.id}"
        key = mapping.relations.get(relation.label)
        if key is None:
            words = f"relation label “{relation.label}”"
            plan.unmapped[words] = plan.unmapped.get(words, 0) + 1
            plan.problems.append(
                Problem(
                    place,
                    f'left out: its label "{relation.label}" has no mapping '
                    '(add it to the mapping file\'s "relations")',
                )
            )
            continue
        ends = by_id.get(relation.from_id), by_id.get(relation.to_id)
        if ends[0] is None or ends[1] is None:
            missing = relation.from_id if ends[0] is None else relation.to_id
            plan.problems.append(
                Problem(
                    place,
                    f"left out: it joins span {missing}, which was left out or is not in this text",
                )
            )
            continue
        lo = min(ends[0].span.start, ends[1].span.start)
        hi = max(ends[0].span.end, ends[1].span.end)
        candidate = Candidate(
            source=ends[0].mention.name,
            target=ends[1].mention.name,
            relation=key,
            confidence=confidence,
            reason=(
                f'{item.annotator} labelled "{relation.label}" from "{ends[0].mention.name}" '
                f'to "{ends[1].mention.name}" in {tool_words}.'
            ),
            evidence=text[lo:hi],
            window=(lo, hi),
        )
        plan.spans.setdefault(candidate, Span(lo, hi, text[lo:hi]))
        candidates.append(candidate)
    plan.extraction = Extraction(
        concepts=tuple(x.mention for x in plan.labelled),
        candidates=tuple(candidates),
        extractor=f"annotations:{tool}",
    )
    return plan


def pinned(
    result: SourceResult,
    plan: Planned,
    *,
    index: ConceptIndex,
    graph: GraphView,
    annotator: str,
    tool: str,
    confidence: float,
) -> SourceResult:
    """The loop's result with every quote on the annotated characters: an edge's on the
    span from its first end to its last, a new concept's on its first labelled span; a
    concept draft for each labelled span no kept edge names (resolved the loop's way: a
    name the graph or the queue knows is not proposed again, one rejected with this
    quote neither). Nothing of the text's own (aliases it defines, evidence it lost)."""
    tool_words = TOOLS.get(tool, tool)
    edges = tuple(
        replace(draft, evidence=plan.spans.get(draft.candidate, draft.evidence), support=())
        for draft in result.edges
    )
    overlay = OverlayIndex(index)
    first: dict[str, tuple[Labelled, NewConcept]] = {}
    grounded = set(result.grounded_concepts)
    dropped = list(result.dropped)
    for labelled in plan.labelled:
        res = resolve_name(labelled.mention.name, overlay, mention=labelled.mention)
        if res is None:
            dropped.append(Dropped({"span": labelled.mention.name}, "unresolvable", "no name"))
        elif res.concept_id is not None:
            grounded.add(res.concept_id)
        elif res.proposal_id is not None:
            dropped.append(
                Dropped(
                    {"span": labelled.mention.name},
                    "duplicate",
                    f"proposal #{res.proposal_id}",
                    twin_of=res.proposal_id,
                )
            )
        elif res.key not in first:
            # Later spans find it by any of its names, as the loop's ends do.
            overlay.remember(res)
            first[res.key] = (labelled, NewConcept(resolution=res, confidence=confidence))
    concepts: list[ConceptDraft] = []
    drafted: set[str] = set()
    for draft in result.concepts:
        drafted.add(draft.key)
        marked = first[draft.key][0] if draft.key in first else None
        concepts.append(
            replace(draft, evidence=marked.span, reason=_reason(marked, annotator, tool_words))
            if marked is not None
            else draft
        )
    for key, (labelled, record) in first.items():
        if key in drafted:
            continue
        name = record.resolution.canonical
        dedup = concept_dedup_key(name)
        if quote_key(labelled.span.quote) in graph.rejected_quotes(dedup):
            dropped.append(
                Dropped({"span": name}, "previously_rejected", "rejected before with this quote")
            )
            continue
        concepts.append(
            ConceptDraft(
                key=key,
                name=name,
                aliases=(),
                description="",
                confidence=confidence,
                reason=_reason(labelled, annotator, tool_words),
                evidence=labelled.span,
                dedup_key=dedup,
                type_key=labelled.mention.type_key,
            )
        )
    return replace(
        result,
        concepts=tuple(concepts),
        edges=edges,
        invalidations=(),
        aliases=(),
        dropped=tuple(dropped),
        grounded_concepts=tuple(sorted(grounded)),
    )


def _reason(labelled: Labelled, annotator: str, tool_words: str) -> str:
    label = f'"{labelled.label}"' if labelled.label else "a span"
    return f'{annotator} labelled "{labelled.mention.name}" as {label} in {tool_words}.'
