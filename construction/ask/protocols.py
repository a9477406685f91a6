"""What the ask loop needs from outside: a reader of the graph at one instant, a
concept index to find names in questions, and a planner and a critic (offline rules
or an OpenAI-compatible model) behind one interface each.

The Django side implements ``GraphReader`` over the database (``kgreview.graph.asking``);
tests implement it in memory. Every read is bounded by ``limit`` and reports truncation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from ..types import IndexEntry, LLMUsage, RelationSpec
from .types import ConceptFact, EdgeFact, Plan, Retrieval, Verdict, Walk


class GraphReader(Protocol):
    """The graph as it stood at one instant (or now). Bound to that instant when made."""

    def relations(self) -> Sequence[RelationSpec]:
        """The relation types in use (active, or all of them for a past instant)."""

    def concepts(self, ids: Iterable[int]) -> dict[int, ConceptFact]:
        """Names and status of these concepts at the instant; unknown ids are left out."""

    def expand(
        self, frontier: Sequence[int], *, walks: Sequence[Walk], limit: int
    ) -> tuple[tuple[EdgeFact, ...], bool]:
        """One hop: the edges (ascending id) that step from a frontier concept along
        ``walks``, at most ``limit``, and whether there were more."""

    def path(
        self, start_id: int, goal_id: int, *, walks: Sequence[Walk], max_depth: int
    ) -> tuple[EdgeFact, ...] | None:
        """A shortest chain of edges from start to goal along ``walks`` within
        ``max_depth`` hops (in walking order), or None. Ties break by concept, then edge id."""

    def concept_types(self, ids: Iterable[int]) -> dict[int, str | None]:
        """Each concept's type key at the instant (None: untyped then); asked only for a
        question that names a type."""

    def concepts_of_types(
        self, keys: Sequence[str], *, limit: int
    ) -> tuple[tuple[ConceptFact, ...], bool]:
        """The concepts active at the instant whose type then was one of ``keys``, by
        name, at most ``limit``, and whether there were more."""

    def study_order(self, target_id: int, *, limit: int) -> tuple[Retrieval, bool]:
        """Everything ``target_id`` needs (prerequisite / builds_on closure) as a
        ``Retrieval`` whose ``order`` is a valid study order, foundations first, and
        whether the closure was cut at ``limit`` concepts."""


class NameIndex(Protocol):
    """Concept names and aliases, keyed by ``construction.text.name_key`` (the
    resolver's ``ConceptIndex`` without the writes)."""

    def exact(self, key: str) -> IndexEntry | None: ...

    def fuzzy(self, key: str, *, acronyms: Iterable[str] = ()) -> tuple[IndexEntry, float] | None:
        """A name ``key`` stands for by likeness; ``acronyms`` are the key's words the
        question wrote as acronyms (an acronym never stands for another one)."""
        ...

    @property
    def max_words(self) -> int: ...


class Planner(Protocol):
    """PLAN: reads a question into a ``Plan``; concepts are always found through the
    index, never invented."""

    name: str

    def plan(
        self, question: str, *, index: NameIndex, vocabulary: Sequence[RelationSpec]
    ) -> tuple[Plan, LLMUsage]: ...


class Critic(Protocol):
    """CRITIQUE: judges a retrieval against its plan. The offline checks always run
    first (ends reached, relations as planned, no retired concept on a path); a model
    critic may only add words or ask for a refinement, never accept a broken chain."""

    name: str

    def critique(
        self, plan: Plan, retrieval: Retrieval, *, names: dict[int, str], round: int
    ) -> tuple[Verdict, LLMUsage]: ...
