"""The values of ontology bootstrap: chunks in, drafts out. All frozen."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..types import LLMUsage, RelationSpec

DATATYPES = ("string", "integer", "decimal", "boolean", "date", "uri")


@dataclass(frozen=True)
class DocChunk:
    """A stretch of one source revision: ``offset`` is where ``text`` starts in it."""

    slug: str
    revision_id: int
    title: str
    text: str
    offset: int = 0
    section: tuple[str, ...] = ()
    index: int = 0  # the chunk's number in its document

    @property
    def id(self) -> str:
        return f"{self.slug}#{self.index}"


@dataclass(frozen=True)
class Quote:
    """One piece of evidence: the verbatim sentence, where it is, and what it names."""

    source_slug: str
    revision_id: int
    start: int | None
    end: int | None
    quote: str
    name: str = ""  # the concept it shows (a type's member, a pattern's source, ...)
    other: str = ""  # a pattern's target
    value: str = ""  # an attribute's value


@dataclass(frozen=True)
class KnownType:
    key: str
    label: str
    parent_key: str = ""
    active: bool = True


@dataclass(frozen=True)
class KnownOntology:
    """What the graph has already (retired items included: never proposed again)."""

    types: tuple[KnownType, ...] = ()
    relations: tuple[RelationSpec, ...] = ()
    patterns: frozenset[tuple[str, str, str]] = frozenset()  # (relation, domain, range)
    attributes: frozenset[tuple[str, str]] = frozenset()  # (type key, attribute key)

    def type_keys(self) -> set[str]:
        return {t.key for t in self.types}


@dataclass(frozen=True)
class TypeDraft:
    key: str
    label: str
    parent_key: str = ""
    description: str = ""
    support: int = 0
    sources: int = 0
    members: tuple[str, ...] = ()  # example concepts of the type
    labels: tuple[str, ...] = ()  # the labels folded into it
    quotes: tuple[Quote, ...] = ()


@dataclass(frozen=True)
class PatternDraft:
    relation_key: str
    domain_key: str
    range_key: str
    support: int = 0
    sources: int = 0
    description: str = ""
    quotes: tuple[Quote, ...] = ()
    # Read from the graph's accepted edges (``usage``), not from the documents' text.
    from_graph: bool = False


@dataclass(frozen=True)
class RelationTypeDraft:
    key: str
    label: str
    verb: str
    description: str = ""
    symmetric: bool = False
    acyclic: bool = False
    patterns: tuple[tuple[str, str], ...] = ()  # (domain, range)
    support: int = 0
    sources: int = 0
    labels: tuple[str, ...] = ()
    quotes: tuple[Quote, ...] = ()


@dataclass(frozen=True)
class AttributeDraft:
    type_key: str
    key: str
    label: str
    datatype: str
    description: str = ""
    support: int = 0
    sources: int = 0
    quotes: tuple[Quote, ...] = ()


@dataclass(frozen=True)
class OntologyDraft:
    """A drafted ontology (or the additions to one)."""

    types: tuple[TypeDraft, ...] = ()
    relation_types: tuple[RelationTypeDraft, ...] = ()
    patterns: tuple[PatternDraft, ...] = ()
    attributes: tuple[AttributeDraft, ...] = ()
    chunks_read: int = 0
    # (chunk id, why) for each chunk skipped softly: a model that never answered validly.
    skipped: tuple[tuple[str, str], ...] = ()
    usage: LLMUsage = field(default_factory=LLMUsage)

    @property
    def is_empty(self) -> bool:
        return not (self.types or self.relation_types or self.patterns or self.attributes)

    def summary(self) -> dict[str, int]:
        return {
            "types": len(self.types),
            "relation_types": len(self.relation_types),
            "patterns": len(self.patterns),
            "attributes": len(self.attributes),
            "chunks_read": self.chunks_read,
            "chunks_skipped": len(self.skipped),
        }
