"""Ontology discovery's pure logic: relation labels the vocabulary lacks, drafted as types.

Candidates dropped as ``unknown_relation`` carry the extractor's own label ("is an
alternative to", "alternatives", "can replace"). Labels are normalised (snake_case, no
leading auxiliaries or articles, one inflection per verb) and merged by meaning through a
small hand-written synonym table; a meaning that recurs often enough, in enough sources,
becomes a ``RelationDraft`` with a guessed shape (symmetric? acyclic?) explained in its
description. Curators decide; nothing here touches the vocabulary.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from .cycles import has_cycle
from .keys import relation_key
from .relations import NOUNS, normalise_label
from .text import name_key
from .types import RelationSpec

__all__ = ["DroppedExample", "RelationDraft", "discover_relations", "normalise_label"]

KEY_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,63}$")

# Meanings where "A r B" says the same as "B r A".
SYMMETRIC = frozenset(
    {
        "alternative_to",
        "similar_to",
        "equivalent_to",
        "compared_with",
        "complements",
        "competes_with",
        "conflicts_with",
        "combined_with",
        "trades_off_against",
        "differs_from",
        "orthogonal_to",
        "contrasts_with",
        "related_to",
    }
)
# Meanings that order concepts (in time, in dependency, in a hierarchy): a chain of them
# looping back is a contradiction, so such a relation may be marked acyclic.
ORDERING = frozenset(
    {
        "precedes",
        "follows",
        "replaces",
        "depends_on",
        "derived_from",
        "extends",
        "kind_of",
        "example_of",
        "part_of",
        "prerequisite_for",
        "builds_on",
        "generalizes",
        "specializes",
        "refines",
        "underlies",
    }
)
ADJECTIVES = frozenset(
    {
        "similar",
        "equivalent",
        "analogous",
        "comparable",
        "complementary",
        "orthogonal",
        "prior",
        "identical",
        "dependent",
        "specific",
        "central",
        "essential",
        "necessary",
        "sensitive",
        "distinct",
        "different",
        "independent",
        "compatible",
        "relevant",
        "useful",
        "vulnerable",
        "robust",
        "akin",
    }
)
# A few verbs read better spelled out than derived from the key.
VERB_PHRASES = {
    "part_of": "is part of",
    "kind_of": "is a kind of",
    "example_of": "is an example of",
    "equivalent_to": "is equivalent to",
    "same_as": "is the same as",
}


@dataclass(frozen=True)
class DroppedExample:
    """A candidate the loop dropped because its relation is not in the vocabulary."""

    id: int
    label: str  # the raw relation label the extractor gave, e.g. "is_an_alternative_to"
    source_slug: str
    revision_id: int
    quote: str
    start: int | None
    end: int | None
    source_name: str  # endpoint names as the extractor gave them
    target_name: str


@dataclass(frozen=True)
class RelationDraft:
    """A relation type the vocabulary lacks, as an ``add_relation_type`` proposal needs it."""

    key: str  # snake_case, [a-z][a-z0-9_]{0,63}
    label: str  # "Alternative to"
    verb: str  # "is an alternative to" ("source <verb> target")
    description: str
    directed: bool
    symmetric: bool
    acyclic: bool
    examples: tuple[DroppedExample, ...]  # up to max_examples, spread over sources
    support: int  # how many dropped candidates used it
    sources: int  # in how many sources
    labels: tuple[str, ...]  # the raw labels merged into it


def _valid_key(key: str) -> str:
    key = key[:64].rstrip("_")
    if key and not key[0].isalpha():
        key = ("r_" + key)[:64].rstrip("_")
    return key if KEY_PATTERN.match(key) else ""


def _verb(key: str) -> str:
    """How "source <verb> target" reads for a meaning key."""
    if key in VERB_PHRASES:
        return VERB_PHRASES[key]
    words = key.split("_")
    head = words[0]
    phrase = " ".join(words)
    if head in NOUNS:
        article = "an" if head[0] in "aeiou" else "a"
        return f"is {article} {phrase}"
    if head in ADJECTIVES or (head.endswith("ed") and len(words) > 1):
        return f"is {phrase}"
    return phrase


def _spread(examples: list[DroppedExample], limit: int) -> tuple[DroppedExample, ...]:
    """Up to ``limit`` examples, one per source in turn, so many sources are shown.

    Sources in order of their first example, examples in id order; a quote already shown
    is passed over while there are others.
    """
    by_source: dict[str, list[DroppedExample]] = defaultdict(list)
    for example in sorted(examples, key=lambda e: e.id):
        by_source[example.source_slug].append(example)
    queues = list(by_source.values())
    picked: list[DroppedExample] = []
    shown: set[str] = set()
    for allow_repeats in (False, True):
        depth = 0
        while len(picked) < limit and any(depth < len(q) for q in queues):
            for queue in queues:
                if len(picked) >= limit:
                    break
                if depth < len(queue):
                    example = queue[depth]
                    quote = " ".join(example.quote.split()).casefold()
                    if example in picked or (quote in shown and not allow_repeats):
                        continue
                    picked.append(example)
                    shown.add(quote)
            depth += 1
    return tuple(picked)


def _names_of_pair(examples: list[DroppedExample], pair: tuple[str, str]) -> tuple[str, str]:
    """The names as written of the first example about ``pair`` (name keys)."""
    for e in sorted(examples, key=lambda e: e.id):
        if {name_key(e.source_name), name_key(e.target_name)} == set(pair):
            return e.source_name, e.target_name
    return pair


def _describe(
    verb: str,
    *,
    support: int,
    sources: int,
    symmetric: bool,
    both_ways: tuple[str, str] | None,
    shape: str,
) -> str:
    count = (
        f"{support} statement{'s' if support != 1 else ''} in "
        f"{sources} source{'s' if sources != 1 else ''}"
    )
    first = f"Sources say one concept {verb} another ({count})."
    if symmetric:
        why = (
            f'the examples state it both ways round ("{both_ways[0]}" and "{both_ways[1]}")'
            if both_ways
            else f'"A {verb} B" also reads as "B {verb} A"'
        )
        return f"{first} Symmetric: {why}."
    return f"{first} {shape}"


def discover_relations(
    dropped: Sequence[DroppedExample],
    *,
    vocabulary: Sequence[RelationSpec],
    min_support: int = 3,
    min_sources: int = 2,
    max_examples: int = 5,
) -> list[RelationDraft]:
    """Relation types the dropped candidates ask for, most supported first.

    Labels that mean a term the vocabulary has (by key, label or verb, retired terms
    included) are skipped; so are negated labels. A draft needs ``min_support``
    candidates from ``min_sources`` distinct sources.
    """
    known_raw: set[str] = set()
    known: set[str] = set()
    for spec in vocabulary:
        for name in (spec.key, spec.label, spec.verb):
            raw = relation_key(name)
            if raw:
                known_raw.add(raw)
                known.add(normalise_label(name) or raw)
    groups: dict[str, list[DroppedExample]] = defaultdict(list)
    for example in dropped:
        if relation_key(example.label) in known_raw:
            continue
        meaning = _valid_key(normalise_label(example.label))
        if meaning and meaning not in known:
            groups[meaning].append(example)

    drafts: list[RelationDraft] = []
    for key, examples in groups.items():
        slugs = {e.source_slug for e in examples}
        if len(examples) < min_support or len(slugs) < min_sources:
            continue
        verb = _verb(key)
        pairs = {
            (name_key(e.source_name), name_key(e.target_name))
            for e in examples
            if name_key(e.source_name) and name_key(e.target_name)
        }
        both_ways = sorted((a, b) for a, b in pairs if a < b and (b, a) in pairs)
        ordering = key in ORDERING
        # An ordering stated both ways round is a contradiction in the examples, not a
        # sign of symmetry: it keeps its direction and loses acyclicity instead.
        symmetric = key in SYMMETRIC or (bool(both_ways) and not ordering)
        cyclic = has_cycle(pairs)
        acyclic = not symmetric and ordering and not cyclic
        if acyclic:
            shape = (
                f'Directed and acyclic: it orders concepts ("A {verb} B" does not mean '
                f'"B {verb} A"), so a chain of it may not loop back, and no example does.'
            )
        elif ordering:
            shape = (
                f'Directed ("A {verb} B" does not mean "B {verb} A"). Not marked acyclic: '
                "although it orders concepts, the examples already form a cycle."
            )
        else:
            shape = f'Directed: "A {verb} B" does not mean "B {verb} A".'
        raw_labels = Counter(e.label for e in examples)
        drafts.append(
            RelationDraft(
                key=key,
                label=key.replace("_", " ").capitalize(),
                verb=verb,
                description=_describe(
                    verb,
                    support=len(examples),
                    sources=len(slugs),
                    symmetric=symmetric,
                    both_ways=_names_of_pair(examples, both_ways[0])
                    if both_ways and key not in SYMMETRIC
                    else None,
                    shape=shape,
                ),
                directed=not symmetric,
                symmetric=symmetric,
                acyclic=acyclic,
                examples=_spread(examples, max_examples),
                support=len(examples),
                sources=len(slugs),
                labels=tuple(sorted(raw_labels, key=lambda lab: (-raw_labels[lab], lab))),
            )
        )
    drafts.sort(key=lambda d: (-d.support, d.key))
    return drafts
