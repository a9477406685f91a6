"""Drafts folded together, and the additions a draft makes to an ontology.

``fold_drafts`` merges drafts read apart (one per chunk, one per document): a type's
labels folded by their words (singular, case, spacing: ``text.name_key``) and by
spelling (rapidfuzz, ``FOLD_SCORE``), support summed, quotes kept and spread over
sources. ``additions`` leaves out what the graph has already, retired items included,
and anything that leans on a type neither known nor drafted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace

from ..keys import relation_key
from ..relations import normalise_label
from ..text import name_key
from .types import (
    AttributeDraft,
    KnownOntology,
    OntologyDraft,
    PatternDraft,
    Quote,
    RelationTypeDraft,
    TypeDraft,
)

FOLD_SCORE = 92  # rapidfuzz ratio at which two type labels are one


def spread_quotes(quotes: Sequence[Quote], limit: int) -> tuple[Quote, ...]:
    """Up to ``limit`` quotes, one per source in turn, no sentence twice."""
    by_source: dict[str, list[Quote]] = defaultdict(list)
    for q in quotes:
        by_source[q.source_slug].append(q)
    picked: list[Quote] = []
    seen: set[str] = set()
    depth = 0
    while len(picked) < limit and any(depth < len(v) for v in by_source.values()):
        for slug in sorted(by_source):
            queue = by_source[slug]
            if depth < len(queue) and len(picked) < limit:
                q = queue[depth]
                said = " ".join(q.quote.split()).casefold()
                if said not in seen:
                    seen.add(said)
                    picked.append(q)
        depth += 1
    return tuple(picked)


def _same_label(a: str, b: str) -> bool:
    if name_key(a) == name_key(b):
        return True
    from rapidfuzz import fuzz

    return len(a) > 5 and fuzz.ratio(name_key(a), name_key(b)) >= FOLD_SCORE


def fold_types(types: Sequence[TypeDraft], *, limit: int = 5) -> list[TypeDraft]:
    """One draft per type, whichever spelling each reading gave it."""
    folded: list[TypeDraft] = []
    renamed: dict[str, str] = {}
    for t in sorted(types, key=lambda t: (-t.support, t.key)):
        into = next(
            (i for i, f in enumerate(folded) if f.key == t.key or _same_label(f.label, t.label)),
            None,
        )
        if into is None:
            folded.append(t)
            continue
        f = folded[into]
        renamed[t.key] = f.key
        folded[into] = replace(
            f,
            parent_key=f.parent_key or t.parent_key,
            description=f.description or t.description,
            support=f.support + t.support,
            sources=max(f.sources, t.sources),
            members=tuple(dict.fromkeys((*f.members, *t.members)))[:12],
            labels=tuple(dict.fromkeys((*f.labels, t.label, *t.labels))),
            quotes=spread_quotes((*f.quotes, *t.quotes), limit),
        )
    return [replace(t, parent_key=renamed.get(t.parent_key, t.parent_key)) for t in folded]


def fold_drafts(drafts: Sequence[OntologyDraft], *, limit: int = 5) -> OntologyDraft:
    """Drafts read apart, as one."""
    types = fold_types([t for d in drafts for t in d.types], limit=limit)
    known_keys = {t.key for t in types}
    rename: dict[str, str] = {}
    for t in types:
        for label in t.labels:
            rename[relation_key(label)] = t.key

    def key(k: str) -> str:
        return k if k in known_keys else rename.get(k, k)

    patterns: dict[tuple[str, str, str], PatternDraft] = {}
    for d in drafts:
        for p in d.patterns:
            p = replace(p, domain_key=key(p.domain_key), range_key=key(p.range_key))
            at = (p.relation_key, p.domain_key, p.range_key)
            old = patterns.get(at)
            patterns[at] = (
                p
                if old is None
                else replace(
                    old,
                    support=old.support + p.support,
                    sources=max(old.sources, p.sources),
                    quotes=spread_quotes((*old.quotes, *p.quotes), limit),
                )
            )
    relations: dict[str, RelationTypeDraft] = {}
    for d in drafts:
        for r in d.relation_types:
            r = replace(r, patterns=tuple((key(a), key(b)) for a, b in r.patterns))
            meaning = normalise_label(r.key) or r.key
            was = relations.get(meaning)
            relations[meaning] = (
                r
                if was is None
                else replace(
                    was,
                    support=was.support + r.support,
                    sources=max(was.sources, r.sources),
                    patterns=tuple(dict.fromkeys((*was.patterns, *r.patterns))),
                    labels=tuple(dict.fromkeys((*was.labels, r.label, *r.labels))),
                    quotes=spread_quotes((*was.quotes, *r.quotes), limit),
                )
            )
    attributes: dict[tuple[str, str], AttributeDraft] = {}
    for d in drafts:
        for a in d.attributes:
            a = replace(a, type_key=key(a.type_key))
            old_a = attributes.get((a.type_key, a.key))
            attributes[(a.type_key, a.key)] = (
                a
                if old_a is None
                else replace(
                    old_a,
                    datatype=old_a.datatype if old_a.datatype == a.datatype else "string",
                    support=old_a.support + a.support,
                    sources=max(old_a.sources, a.sources),
                    quotes=spread_quotes((*old_a.quotes, *a.quotes), limit),
                )
            )
    return OntologyDraft(
        types=tuple(types),
        relation_types=tuple(sorted(relations.values(), key=lambda r: (-r.support, r.key))),
        patterns=tuple(
            sorted(patterns.values(), key=lambda p: (-p.support, p.relation_key, p.domain_key))
        ),
        attributes=tuple(attributes.values()),
        chunks_read=sum(d.chunks_read for d in drafts),
        skipped=tuple(s for d in drafts for s in d.skipped),
        usage=sum((d.usage for d in drafts), start=drafts[0].usage.__class__())
        if drafts
        else OntologyDraft().usage,
    )


def additions(draft: OntologyDraft, known: KnownOntology) -> OntologyDraft:
    """Only what ``known`` lacks: never a change to an item it has (retired included)."""
    known_words = {name_key(t.label) for t in known.types}
    known_words |= {name_key(t.key.replace("_", " ")) for t in known.types}
    known_keys = known.type_keys()
    types = [
        t
        for t in draft.types
        if t.key not in known_keys
        and name_key(t.label) not in known_words
        and not any(name_key(label) in known_words for label in t.labels)
    ]
    # A type drafted under a known label is the known type in the draft's patterns.
    by_words = {name_key(t.label): t.key for t in known.types}
    by_words |= {name_key(t.key.replace("_", " ")): t.key for t in known.types}
    rename = {
        t.key: by_words[name_key(t.label)]
        for t in draft.types
        if t.key not in known_keys and name_key(t.label) in by_words
    }
    typed = known_keys | {t.key for t in types}

    def key(k: str) -> str:
        return rename.get(k, k)

    types = [
        replace(t, parent_key=key(t.parent_key) if key(t.parent_key) in typed else "")
        for t in types
    ]
    known_relations = {s.key for s in known.relations}
    known_meanings = {normalise_label(n) for s in known.relations for n in (s.key, s.verb)}
    relation_types = []
    for r in draft.relation_types:
        if r.key in known_relations or normalise_label(r.key) in known_meanings:
            continue
        shapes = tuple((key(a), key(b)) for a, b in r.patterns)
        relation_types.append(
            replace(r, patterns=tuple(p for p in shapes if p[0] in typed and p[1] in typed))
        )
    patterns = []
    for p in draft.patterns:
        p = replace(p, domain_key=key(p.domain_key), range_key=key(p.range_key))
        if p.relation_key not in known_relations or p.domain_key not in typed:
            continue
        if p.range_key not in typed:
            continue
        if (p.relation_key, p.domain_key, p.range_key) in known.patterns:
            continue
        patterns.append(p)
    attributes = [
        replace(a, type_key=key(a.type_key))
        for a in draft.attributes
        if key(a.type_key) in typed and (key(a.type_key), a.key) not in known.attributes
    ]
    return replace(
        draft,
        types=tuple(types),
        relation_types=tuple(relation_types),
        patterns=tuple(patterns),
        attributes=tuple(attributes),
    )
