"""The offline extractor under test: its vocabulary, a dict lexicon, and how tests read
its candidates."""

from __future__ import annotations

from dataclasses import dataclass, field

from construction.offline import OfflineExtractor
from construction.text import name_key, split_abbreviation
from construction.types import Extraction, IndexEntry, RelationSpec, SourceDoc

VOCABULARY = (
    RelationSpec("prerequisite", "Prerequisite", "is a prerequisite for", "", False, True),
    RelationSpec("builds_on", "Builds on", "builds on", "", False, True),
    RelationSpec("part_of", "Part of", "is part of", "", False, True),
    RelationSpec("contrasts_with", "Contrasts with", "contrasts with", "", True, False),
    RelationSpec("applies_to", "Applies to", "applies to", "", False, False),
    RelationSpec("related", "Related", "is related to", "", True, False),
)
SYMMETRIC = {"contrasts_with", "related"}
DISCOVERY = {"alternative_to", "replaces", "mitigates", "causes", "evaluated_with"}


@dataclass
class DictLexicon:
    """The smallest Lexicon: a dict from name key to entry, counting its lookups."""

    names: dict[str, str] = field(default_factory=dict)  # name or alias -> canonical
    lookups: int = 0

    def __post_init__(self) -> None:
        self.entries = {}
        for name, canonical in self.names.items():
            self.entries[name_key(name)] = IndexEntry(
                name=name, canonical=canonical, key=f"n:{name_key(canonical)}"
            )

    def lookup(self, key: str) -> IndexEntry | None:
        self.lookups += 1
        return self.entries.get(key)

    @property
    def max_words(self) -> int:
        return max((len(k.split()) for k in self.entries), default=0)


def extract(
    text: str,
    *,
    lexicon: DictLexicon | None = None,
    vocabulary: tuple[RelationSpec, ...] = VOCABULARY,
    max_edges: int = 20,
    title: str = "",
) -> Extraction:
    doc = SourceDoc(slug="t", revision_id=1, revision_number=1, title=title, text=text)
    return OfflineExtractor().extract(
        doc, vocabulary=vocabulary, lexicon=lexicon or DictLexicon(), max_edges=max_edges
    )


def keys(name: str) -> set[str]:
    long, short = split_abbreviation(name)
    return {k for k in (name_key(name), name_key(long), name_key(short or "")) if k}


def has(result: Extraction, source: str, relation: str, target: str) -> bool:
    """Whether an edge is among the candidates, names compared by key (and abbreviation)."""
    for c in result.candidates:
        if c.relation != relation:
            continue
        forward = name_key(source) in keys(c.source) and name_key(target) in keys(c.target)
        backward = name_key(target) in keys(c.source) and name_key(source) in keys(c.target)
        if forward or (relation in SYMMETRIC and backward):
            return True
    return False


def triples(result: Extraction) -> set[tuple[str, str, str]]:
    return {(name_key(c.source), c.relation, name_key(c.target)) for c in result.candidates}
