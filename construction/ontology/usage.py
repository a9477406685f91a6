"""Relation patterns the graph already uses: what reviewers accepted, read back as a
draft. An open relation (no pattern) whose accepted edges join the same two types again
and again is proposed that pattern, quoting the edges' own evidence, so a curator can
close the relation to what the team has been doing. A reading of the documents finds few
statements with both ends typed (evaluation/ontology/README.md); the graph's accepted
edges are typed once their concepts are, and each was a person's decision.

A group is left out when the relation has that pattern already (or had it: a retired
pattern is never proposed again), when an existing pattern of the relation covers it (a
subtype satisfies its parent), when a broader group of the same relation is proposed too
(its subtypes' edges count toward it), or when fewer than ``min_support`` edges use it.
A symmetric relation's pair is read either way round.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .types import KnownOntology, PatternDraft, Quote

MIN_SUPPORT = 2  # edges of one relation between the same two types before it is proposed
EXAMPLES = 3  # quotes kept per proposed pattern


@dataclass
class UsedGroup:
    """The active edges of one relation from one type to another: how many, from how many
    sources, and the first few quotes (each naming its edge's two concepts)."""

    relation_key: str
    domain_key: str
    range_key: str
    symmetric: bool = False
    count: int = 0
    sources: set[str] = field(default_factory=set)
    examples: list[Quote] = field(default_factory=list)

    def add(self, quote: Quote | None) -> None:
        """One more edge, with its quote when it has one."""
        self.count += 1
        if quote is not None:
            self.sources.add(quote.source_slug)
            if len(self.examples) < EXAMPLES:
                self.examples.append(quote)


def group_key(relation: str, domain: str, range_: str, symmetric: bool) -> tuple[str, str, str]:
    """A group's key; a symmetric relation's pair in one order."""
    if symmetric and range_ < domain:
        domain, range_ = range_, domain
    return relation, domain, range_


def _ancestors(known: KnownOntology) -> dict[str, tuple[str, ...]]:
    """Each type's key -> itself and the keys above it, nearest first."""
    parent = {t.key: t.parent_key for t in known.types}
    out: dict[str, tuple[str, ...]] = {}
    for key in parent:
        chain, seen = [key], {key}
        while parent.get(chain[-1]) and parent[chain[-1]] not in seen:
            chain.append(parent[chain[-1]])
            seen.add(chain[-1])
        out[key] = tuple(chain)
    return out


def patterns_in_use(
    groups: Iterable[UsedGroup], known: KnownOntology, *, min_support: int = MIN_SUPPORT
) -> tuple[PatternDraft, ...]:
    """The patterns the graph's typed edges ask for that ``known`` lacks (module doc)."""
    ancestry = _ancestors(known)

    def up(key: str) -> tuple[str, ...]:
        return ancestry.get(key, (key,))

    def admits(over: tuple[str, str], pair: tuple[str, str], symmetric: bool) -> bool:
        pairs = (pair, pair[::-1]) if symmetric else (pair,)
        return any(over[0] in up(p[0]) and over[1] in up(p[1]) for p in pairs)

    by_key: dict[tuple[str, str, str], UsedGroup] = {}
    for g in groups:
        key = group_key(g.relation_key, g.domain_key, g.range_key, g.symmetric)
        if key in by_key:  # the same symmetric pair the other way round: one group
            same = by_key[key]
            same.count += g.count
            same.sources |= g.sources
            same.examples = (same.examples + g.examples)[:EXAMPLES]
        else:
            by_key[key] = UsedGroup(*key, g.symmetric, g.count, set(g.sources), list(g.examples))
    existing: dict[str, list[tuple[str, str]]] = {}
    for relation, domain, range_ in known.patterns:
        existing.setdefault(relation, []).append((domain, range_))
    # Each group's edges count toward it and toward every broader group of its relation.
    support: dict[tuple[str, str, str], list[UsedGroup]] = {}
    for key, g in by_key.items():
        for other in by_key:
            if other[0] == key[0] and admits((other[1], other[2]), key[1:], g.symmetric):
                support.setdefault(other, []).append(g)
    kept = {}
    for key, members in support.items():
        pair, symmetric = (key[1], key[2]), by_key[key].symmetric
        if sum(m.count for m in members) < min_support or key in known.patterns:
            continue
        if any(admits(over, pair, symmetric) for over in existing.get(key[0], [])):
            continue
        kept[key] = members
    drafts = []
    for key, members in sorted(kept.items()):
        symmetric = by_key[key].symmetric
        if any(o != key and o[0] == key[0] and admits(o[1:], key[1:], symmetric) for o in kept):
            continue  # a broader pattern of the relation is proposed, counting these edges
        drafts.append(_draft(key, members))
    return tuple(drafts)


def _draft(key: tuple[str, str, str], members: list[UsedGroup]) -> PatternDraft:
    """The pattern, its support (edges, and the sources they were accepted on) and the
    first quotes, its own group's first."""
    members = sorted(members, key=lambda g: (g.domain_key, g.range_key) != key[1:])
    return PatternDraft(
        relation_key=key[0],
        domain_key=key[1],
        range_key=key[2],
        support=sum(g.count for g in members),
        sources=len(set().union(*(g.sources for g in members))),
        description="Edges the reviewers accepted already join these types.",
        quotes=tuple(q for g in members for q in g.examples)[:EXAMPLES],
        from_graph=True,
    )
