"""The values that flow between the stages. All frozen: a stage never edits its input."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# --- Input ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    """A heading of a document and the stretch of text it governs.

    ``path`` is the heading path, outermost first (("Routing", "OSPF")); ``start`` is the
    offset of the heading itself in the document text, ``end`` (exclusive) where the next
    heading of the same or a higher level begins, or the end of the text.
    """

    path: tuple[str, ...]
    start: int
    end: int
    level: int

    def as_json(self) -> dict:
        return {"path": list(self.path), "start": self.start, "end": self.end, "level": self.level}

    @classmethod
    def from_json(cls, data: dict) -> Section:
        return cls(
            path=tuple(data["path"]),
            start=int(data["start"]),
            end=int(data["end"]),
            level=int(data["level"]),
        )


@dataclass(frozen=True)
class SourceDoc:
    """One source revision (or one chunk of it) as the agent reads it.

    For a chunk of a long document, ``text`` is the chunk's text and ``section`` the
    heading path where it begins; ``title`` stays the document's title.
    """

    slug: str
    revision_id: int
    revision_number: int
    title: str
    text: str
    section: tuple[str, ...] = ()
    # For a chunk: the (name, other name) pairs the document defines up to the chunk's
    # end (``construction.definitions``), so a model names things the document's way.
    defined: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class RelationSpec:
    """A term of the active vocabulary, as the agent needs to know it."""

    key: str
    label: str
    verb: str
    description: str
    symmetric: bool
    acyclic: bool
    # The key of the relation stating the same facts with the ends swapped ("" for none;
    # a symmetric relation is its own inverse and names none here).
    inverse: str = ""


@dataclass(frozen=True)
class Ontology:
    """The concept types and relation patterns, as verify needs them: a candidate whose
    ends' types fit none of its relation's patterns is held (``verify.pattern_break``).

    ``parents``: type key -> its parent's key (a subtype satisfies its parent);
    ``patterns``: relation key -> its active (domain, range) type pairs (none: open);
    ``concept_types``: concept id -> its type's key (untyped concepts left out);
    ``proposal_types``: open concept proposal id -> the type it proposes.
    """

    parents: dict[str, str | None] = field(default_factory=dict)
    patterns: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    concept_types: dict[int, str] = field(default_factory=dict)
    proposal_types: dict[int, str] = field(default_factory=dict)

    def line(self, type_key: str) -> set[str]:
        """The type and every type above it (none for an untyped end)."""
        line: set[str] = set()
        at: str | None = type_key or None
        while at is not None and at not in line:
            line.add(at)
            at = self.parents.get(at)
        return line


# --- READ -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConceptMention:
    """A concept the extractor found: a name, other names for it, a short description."""

    name: str
    aliases: tuple[str, ...] = ()
    description: str = ""
    # The name is written exactly as the text writes it (an identifier, a command):
    # a new concept keeps its case ("setval", not "Setval").
    verbatim: bool = False
    # The key of the graph's concept type that fits it ("" when none does or is known).
    type_key: str = ""


@dataclass(frozen=True)
class Candidate:
    """A drafted edge, exactly as the extractor produced it (names, not concepts yet)."""

    source: str
    target: str
    relation: str
    confidence: float
    reason: str
    evidence: str
    # The chunk of the revision it was read from (start, end offsets): its quote is
    # looked for there first. None when the revision was read whole.
    window: tuple[int, int] | None = None

    def as_json(self) -> dict:
        data = {
            "source": self.source,
            "target": self.target,
            "relation": self.relation,
            "confidence": self.confidence,
            "reason": self.reason,
            "evidence": self.evidence,
        }
        if self.window is not None:
            data["window"] = list(self.window)
        return data


@dataclass(frozen=True)
class Rejected:
    """Something the extractor produced that could not even be read as a candidate."""

    raw: dict
    error: str


@dataclass(frozen=True)
class LLMUsage:
    calls: int = 0
    retries: int = 0
    validation_retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: LLMUsage) -> LLMUsage:
        return LLMUsage(*(getattr(self, f) + getattr(other, f) for f in self.__dataclass_fields__))

    def as_json(self) -> dict[str, int]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


@dataclass(frozen=True)
class Extraction:
    """What READ returns for one source revision."""

    concepts: tuple[ConceptMention, ...]
    candidates: tuple[Candidate, ...]
    rejected: tuple[Rejected, ...] = ()
    usage: LLMUsage = field(default_factory=LLMUsage)
    extractor: str = ""
    model: str = ""

    def as_json(self) -> dict:
        return {
            "concepts": [
                {
                    "name": c.name,
                    "aliases": list(c.aliases),
                    "description": c.description,
                    **({"verbatim": True} if c.verbatim else {}),
                }
                for c in self.concepts
            ],
            "edges": [c.as_json() for c in self.candidates],
            "rejected": [{"raw": r.raw, "error": r.error} for r in self.rejected],
            "usage": self.usage.as_json(),
            "extractor": self.extractor,
            "model": self.model,
        }

    @classmethod
    def from_json(cls, data: dict) -> Extraction:
        return cls(
            concepts=tuple(
                ConceptMention(
                    name=c["name"],
                    aliases=tuple(c.get("aliases") or ()),
                    description=c.get("description") or "",
                    verbatim=c.get("verbatim") is True,
                )
                for c in data.get("concepts", ())
            ),
            candidates=tuple(
                Candidate(**{**e, "window": tuple(e["window"]) if e.get("window") else None})
                for e in data.get("edges", ())
            ),
            rejected=tuple(
                Rejected(raw=r["raw"], error=r["error"]) for r in data.get("rejected", ())
            ),
            usage=LLMUsage(**data.get("usage", {})),
            extractor=data.get("extractor", ""),
            model=data.get("model", ""),
        )


# --- SEARCH -----------------------------------------------------------------------------

MatchKind = Literal["exact", "alias", "fuzzy", "new"]


@dataclass(frozen=True)
class IndexEntry:
    """A name the graph (or the queue) already knows, and what it points at.

    ``key`` identifies the endpoint across stages: ``c<id>`` for a concept,
    ``n:<name key>`` for a concept that is only proposed so far.
    """

    name: str
    canonical: str
    key: str
    concept_id: int | None = None
    proposal_id: int | None = None
    is_canonical: bool = True


@dataclass(frozen=True)
class Resolution:
    """How one endpoint name was resolved: to a known concept, or to a new one."""

    name: str
    key: str
    canonical: str
    match: MatchKind
    score: float | None = None
    concept_id: int | None = None
    proposal_id: int | None = None
    matched_name: str | None = None
    aliases: tuple[str, ...] = ()
    description: str = ""
    type_key: str = ""  # a new concept's type, as the reader typed it

    @property
    def is_new(self) -> bool:
        return self.concept_id is None and self.proposal_id is None


# --- VERIFY -----------------------------------------------------------------------------

DropReason = Literal[
    "unknown_relation",
    "self_loop",
    "evidence_not_found",
    "duplicate",
    "existing_edge",
    "previously_rejected",
    "unresolvable",
    "invalid",
]
DROP_REASONS: tuple[str, ...] = (
    "unknown_relation",
    "self_loop",
    "evidence_not_found",
    "duplicate",
    "existing_edge",
    "previously_rejected",
    "unresolvable",
    "invalid",
)


@dataclass(frozen=True)
class Span:
    """Offsets into the original revision text; ``text[start:end] == quote``."""

    start: int
    end: int
    quote: str


@dataclass(frozen=True)
class Link:
    """An edge-like fact the graph or the queue holds: an active edge or an open proposal."""

    kind: Literal["edge", "proposal", "draft"]
    id: int
    source_key: str
    relation: str
    target_key: str


@dataclass(frozen=True)
class Conflict:
    """Why a candidate contradicts something, and what it contradicts."""

    rule: Literal["cycle", "opposed_relation"]
    links: tuple[Link, ...]
    explanation: str

    def as_json(self) -> dict:
        return {
            "rule": self.rule,
            "explanation": self.explanation,
            "links": [
                {
                    "kind": link.kind,
                    "id": link.id,
                    "source": link.source_key,
                    "relation": link.relation,
                    "target": link.target_key,
                }
                for link in self.links
            ],
        }


@dataclass(frozen=True)
class Dropped:
    """A candidate that will not reach the queue, with exactly one reason code."""

    candidate: dict
    reason: DropReason
    detail: str = ""
    # For a duplicate of an open proposal: that proposal, which stands for the candidate.
    twin_of: int | None = None

    def as_json(self, source_slug: str) -> dict:
        return {
            "source_slug": source_slug,
            "candidate": self.candidate,
            "reason": self.reason,
            "detail": self.detail,
        }


# --- CONSTRUCT --------------------------------------------------------------------------


@dataclass(frozen=True)
class DefinedName:
    """A name the document defines for a concept, with the sentence that defines it."""

    alias: str
    span: Span


@dataclass(frozen=True)
class ConceptDraft:
    """An ``add_concept`` proposal to be written."""

    key: str
    name: str
    aliases: tuple[str, ...]
    description: str
    confidence: float
    reason: str
    evidence: Span | None
    dedup_key: str
    # The aliases the document defines, each with its sentence (they are in ``aliases``).
    defined: tuple[DefinedName, ...] = ()
    type_key: str = ""  # the graph's concept type the reader gave it, if any


@dataclass(frozen=True)
class AliasDraft:
    """A name the document defines for a concept the graph has (an ``add_alias``
    proposal) or the queue proposes (added to that open proposal), which lacks it."""

    name: str  # the concept's name
    alias: str
    evidence: Span
    confidence: float
    reason: str
    dedup_key: str
    concept_id: int | None = None
    proposal_id: int | None = None


@dataclass(frozen=True)
class EdgeDraft:
    """An ``add_edge`` proposal to be written."""

    source: Resolution
    target: Resolution
    relation: str
    confidence: float
    reason: str
    evidence: Span | None  # None only for a submitted candidate kept without a quote
    flags: tuple[str, ...]
    conflicts: tuple[Conflict, ...]
    dedup_key: str
    candidate: Candidate
    # Other places in the same revision that state the same edge (a long document
    # repeats itself across chunks): shown on the card as further support.
    support: tuple[Span, ...] = ()


@dataclass(frozen=True)
class InvalidationDraft:
    """An ``invalidate_edge`` proposal: the edge's quote vanished from its source."""

    edge_id: int
    reason: str
    confidence: float
    dedup_key: str


@dataclass(frozen=True)
class ActiveEvidence:
    """An active edge whose evidence quotes an older revision of the source being read."""

    edge_id: int
    quote: str
    revision_number: int
    description: str


@dataclass(frozen=True)
class SourceResult:
    """Everything CONSTRUCT decided for one source revision."""

    concepts: tuple[ConceptDraft, ...]
    edges: tuple[EdgeDraft, ...]
    invalidations: tuple[InvalidationDraft, ...]
    dropped: tuple[Dropped, ...]
    # Open proposals a new draft contradicts, to be flagged too and linked back to it:
    # (existing proposal id, dedup key of the new draft, explanation).
    flag_existing: tuple[tuple[int, str, str], ...] = ()
    # Existing concepts the source grounds (resolved endpoints).
    grounded_concepts: tuple[int, ...] = ()
    # Names the source defines for concepts the graph or the queue already has.
    aliases: tuple[AliasDraft, ...] = ()
