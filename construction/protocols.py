"""The loop's edges: what it needs from the outside world, as Protocols.

The Django side implements ``ConceptIndex`` and ``GraphView`` over the database; tests
implement them in memory. ``Extractor`` has two implementations here: offline rules and
an OpenAI-compatible model; the model is also a ``RelationDescriber``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .types import Extraction, IndexEntry, Link, LLMUsage, RelationSpec, SourceDoc

if TYPE_CHECKING:
    from .discover import RelationDraft


class ConceptIndex(Protocol):
    """Every name the graph and the open queue know, for resolving endpoint names."""

    def exact(self, key: str) -> IndexEntry | None:
        """The entry whose normalised name key is ``key``."""

    def fuzzy(self, key: str, *, acronyms: Iterable[str] = ()) -> tuple[IndexEntry, float] | None:
        """The entry ``key`` stands for by another order, plural, spelling or a misspelt
        word (above the index's threshold), with its score (0..100). ``acronyms``: words
        of the key the name wrote as acronyms; two names whose acronyms differ never match."""

    def add(self, entry: IndexEntry, *, keys: Iterable[str], names: Iterable[str] = ()) -> None:
        """Make a concept proposed earlier in this run findable by later sources (by
        ``keys``, made from ``names``)."""


class Lexicon(Protocol):
    """Known names an extractor may look for in a text (a view of the index)."""

    def lookup(self, key: str) -> IndexEntry | None: ...

    @property
    def max_words(self) -> int: ...


class GraphView(Protocol):
    """Read-only questions about active edges and open proposals."""

    def prepare(self, *, node_keys: Iterable[str], dedup_keys: Iterable[str]) -> None:
        """A hint: the questions that follow are about these endpoints and dedup keys.

        A database-backed view loads them in a few queries instead of one per question.
        """

    def successors(self, relation: str, keys: Sequence[str]) -> list[Link]:
        """Active edges and open add_edge proposals of ``relation`` leaving ``keys``."""

    def predecessors(self, relation: str, keys: Sequence[str]) -> list[Link]:
        """Active edges and open add_edge proposals of ``relation`` entering ``keys``."""

    def between(self, a: str, b: str) -> list[Link]:
        """Active edges and open add_edge proposals joining a and b, either direction."""

    def open_proposal(self, dedup_key: str) -> int | None:
        """The open proposal with this dedup key, if any."""

    def rejected_quotes(self, dedup_key: str) -> set[str]:
        """Normalised evidence quotes of rejected proposals with this dedup key."""


class Extractor(Protocol):
    """READ: drafts concepts and candidate edges for one source revision.

    ``name`` and ``model`` identify it in a run's record and in the cache key of its
    readings. ``local``: cheap and deterministic (the offline rules), so a caller may read
    inside a transaction and need not cache what it read; a model extractor is not local,
    its calls are made outside any transaction and each paid chunk is kept at once.
    """

    name: str
    model: str
    local: bool

    def extract(
        self,
        doc: SourceDoc,
        *,
        vocabulary: Sequence[RelationSpec],
        lexicon: Lexicon,
        max_edges: int,
    ) -> Extraction: ...


@runtime_checkable
class RelationDescriber(Protocol):
    """An extractor that can also name a relation the vocabulary lacks (a model can; the
    offline rules cannot, so discovery keeps its own draft)."""

    def describe_relation(self, draft: RelationDraft) -> tuple[RelationDraft, LLMUsage]:
        """A better label, verb, description and shape for ``draft``, and what it cost."""
        ...
