"""In-memory stand-ins for the loop's Protocols, for tests of the pure package."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from construction.resolve import InMemoryConceptIndex
from construction.types import Extraction, IndexEntry, Link, RelationSpec

VOCABULARY = [
    RelationSpec("prerequisite", "Prerequisite", "is a prerequisite for", "", False, True),
    RelationSpec("builds_on", "Builds on", "builds on", "", False, True),
    RelationSpec("part_of", "Part of", "is part of", "", False, True),
    RelationSpec("contrasts_with", "Contrasts with", "contrasts with", "", True, False),
    RelationSpec("applies_to", "Applies to", "applies to", "", False, False),
    RelationSpec("related", "Related", "is related to", "", True, False),
]


@dataclass
class MemoryGraph:
    """Active edges and open proposals as plain lists."""

    links: list[Link] = field(default_factory=list)
    open: dict[str, int] = field(default_factory=dict)
    rejected: dict[str, set[str]] = field(default_factory=dict)

    def prepare(self, *, node_keys, dedup_keys) -> None:
        self.prepared = (set(node_keys), set(dedup_keys))

    def successors(self, relation: str, keys: Sequence[str]) -> list[Link]:
        wanted = set(keys)
        return [x for x in self.links if x.relation == relation and x.source_key in wanted]

    def predecessors(self, relation: str, keys: Sequence[str]) -> list[Link]:
        wanted = set(keys)
        return [x for x in self.links if x.relation == relation and x.target_key in wanted]

    def between(self, a: str, b: str) -> list[Link]:
        return [x for x in self.links if {x.source_key, x.target_key} == {a, b}]

    def open_proposal(self, dedup_key: str) -> int | None:
        return self.open.get(dedup_key)

    def rejected_quotes(self, dedup_key: str) -> set[str]:
        return self.rejected.get(dedup_key, set())


def index_of(*concepts: tuple[int, str, Sequence[str]]) -> InMemoryConceptIndex:
    """An index of (id, canonical name, aliases)."""
    index = InMemoryConceptIndex()
    for concept_id, name, aliases in concepts:
        index.add_name(
            IndexEntry(name=name, canonical=name, key=f"c{concept_id}", concept_id=concept_id)
        )
        for alias in aliases:
            index.add_name(
                IndexEntry(
                    name=alias,
                    canonical=name,
                    key=f"c{concept_id}",
                    concept_id=concept_id,
                    is_canonical=False,
                )
            )
    return index


class ScriptedExtractor:
    """An Extractor that returns a fixed extraction (READ is tested elsewhere)."""

    name = "scripted"
    model = "test"
    local = True

    def __init__(self, extraction: Extraction) -> None:
        self.extraction = extraction
        self.calls = 0

    def extract(self, doc, *, vocabulary, lexicon, max_edges) -> Extraction:
        self.calls += 1
        return self.extraction
