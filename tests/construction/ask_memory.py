"""An in-memory ``GraphReader`` and a small curriculum graph for the ask loop's tests.

An instant is modelled by building one reader per instant: ``curriculum(retired=...)``
leaves out the edges retired by then and marks concepts retired.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

from construction.ask.paths import steps
from construction.ask.types import ConceptFact, EdgeFact, Retrieval, Walk
from construction.resolve import InMemoryConceptIndex
from construction.types import IndexEntry, RelationSpec

VOCABULARY = (
    RelationSpec("prerequisite", "Prerequisite", "is a prerequisite for", "", False, True),
    RelationSpec("builds_on", "Builds on", "builds on", "", False, True),
    RelationSpec("part_of", "Part of", "is part of", "", False, True),
    RelationSpec("contrasts_with", "Contrasts with", "contrasts with", "", True, False),
    RelationSpec("applies_to", "Applies to", "applies to", "", False, False),
    RelationSpec("related", "Related", "is related to", "", True, False),
)
SYMMETRIC = frozenset(spec.key for spec in VOCABULARY if spec.symmetric)


class MemoryReader:
    """A ``GraphReader`` over plain lists: the graph at one instant."""

    def __init__(
        self,
        concepts: Iterable[ConceptFact],
        edges: Iterable[EdgeFact],
        relations: Sequence[RelationSpec] = VOCABULARY,
        types: dict[int, str] | None = None,
    ) -> None:
        self._concepts = {c.concept_id: c for c in concepts}
        self._types = dict(types or {})
        self._edges = sorted(edges, key=lambda e: e.edge_id)
        self._relations = tuple(relations)
        self.calls: list[str] = []

    def relations(self) -> Sequence[RelationSpec]:
        return self._relations

    def concepts(self, ids: Iterable[int]) -> dict[int, ConceptFact]:
        self.calls.append("concepts")
        return {i: self._concepts[i] for i in ids if i in self._concepts}

    def concept_types(self, ids: Iterable[int]) -> dict[int, str | None]:
        self.calls.append("concept_types")
        return {i: self._types.get(i) for i in ids}

    def concepts_of_types(
        self, keys: Sequence[str], *, limit: int
    ) -> tuple[tuple[ConceptFact, ...], bool]:
        found = sorted(
            (c for i, c in self._concepts.items() if c.active and self._types.get(i) in keys),
            key=lambda c: (c.name, c.concept_id),
        )
        return tuple(found[:limit]), len(found) > limit

    def expand(
        self, frontier: Sequence[int], *, walks: Sequence[Walk], limit: int
    ) -> tuple[tuple[EdgeFact, ...], bool]:
        self.calls.append("expand")
        here = set(frontier)
        found = [e for e in self._edges if any(frm in here for frm, _ in steps(e, walks))]
        return tuple(found[:limit]), len(found) > limit

    def path(
        self, start_id: int, goal_id: int, *, walks: Sequence[Walk], max_depth: int
    ) -> tuple[EdgeFact, ...] | None:
        parent: dict[int, EdgeFact | None] = {start_id: None}
        frontier = [start_id]
        for _ in range(max_depth):
            edges, _ = self.expand(frontier, walks=walks, limit=10**9)
            nxt: list[int] = []
            for edge in edges:
                for frm, to in steps(edge, walks):
                    if frm in frontier and to not in parent:
                        parent[to] = edge
                        nxt.append(to)
            if goal_id in parent:
                out: list[EdgeFact] = []
                here = goal_id
                while parent[here] is not None:
                    edge = parent[here]
                    assert edge is not None
                    out.append(edge)
                    here = edge.source_id if edge.target_id == here else edge.target_id
                return tuple(reversed(out))
            frontier = sorted(nxt)
        return None

    def study_order(self, target_id: int, *, limit: int) -> tuple[Retrieval, bool]:
        """The prerequisite / builds_on closure of ``target_id``, foundations first (ties by
        name, then id)."""
        walks = (Walk("prerequisite", "in"), Walk("builds_on", "out"))
        needs: dict[int, set[int]] = {}  # concept -> what it needs, inside the closure
        seen = {target_id}
        frontier = [target_id]
        while frontier and len(seen) < limit:
            edges, _ = self.expand(frontier, walks=walks, limit=10**9)
            nxt = []
            for edge in edges:
                for frm, to in steps(edge, walks):
                    if frm in frontier:
                        needs.setdefault(frm, set()).add(to)
                        if to not in seen:
                            seen.add(to)
                            nxt.append(to)
            frontier = sorted(nxt)
        return Retrieval(order=self._topological(seen - {target_id}, needs)), len(seen) >= limit

    def _topological(self, nodes: set[int], needs: dict[int, set[int]]) -> tuple[int, ...]:
        waiting = {n: {m for m in needs.get(n, ()) if m in nodes} for n in nodes}
        heap = [(self._concepts[n].name, n) for n in nodes if not waiting[n]]
        heapq.heapify(heap)
        order: list[int] = []
        while heap:
            _, n = heapq.heappop(heap)
            order.append(n)
            for m in sorted(nodes):
                if n in waiting[m]:
                    waiting[m].discard(n)
                    if not waiting[m]:
                        heapq.heappush(heap, (self._concepts[m].name, m))
        return tuple(order)


def index_of(concepts: Sequence[tuple[int, str, Sequence[str]]]) -> InMemoryConceptIndex:
    """A name index over (id, canonical name, aliases)."""
    index = InMemoryConceptIndex()
    for concept_id, name, aliases in concepts:
        index.add_name(IndexEntry(name, name, f"c{concept_id}", concept_id=concept_id))
        for alias in aliases:
            index.add_name(
                IndexEntry(alias, name, f"c{concept_id}", concept_id=concept_id, is_canonical=False)
            )
    return index


# --- The sample curriculum -----------------------------------------------------------------

CONCEPTS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (1, "Tokenization", ("tokenisation", "tokenizer")),
    (2, "Embeddings", ("word embeddings", "embedding vectors")),
    (3, "Vector search", ("similarity search",)),
    (4, "Vector databases", ("vector DB", "vector store")),
    (5, "Attention", ("attention mechanism",)),
    (6, "Transformer", ("transformer architecture",)),
    (7, "Positional encoding", ("position embeddings",)),
    (8, "Pretraining", ("pre-training",)),
    (9, "Fine-tuning", ("finetuning",)),
    (10, "Parameter-efficient fine-tuning", ("PEFT",)),
    (11, "LoRA", ("low-rank adaptation",)),
    (12, "RLHF", ("reinforcement learning from human feedback",)),
    (13, "DPO", ("direct preference optimization",)),
    (14, "Alignment", ()),
    (15, "Retrieval-augmented generation", ("RAG",)),
    (16, "Large language model", ("LLM",)),
    (17, "Self-attention", ()),
    (18, "Multi-head attention", ()),
    (19, "Prompt engineering", ()),
    (20, "Linear algebra", ()),
    (21, "Feed-forward network", ("FFN",)),
    (22, "Chunking", ()),
    (23, "Knowledge graph", ()),
    (24, "Agents", ()),
    (25, "Word2vec", ()),
)
# (edge id, source, relation, target): "source relation target"
EDGES: tuple[tuple[int, int, str, int], ...] = (
    (101, 20, "prerequisite", 2),
    (102, 1, "prerequisite", 2),
    (103, 2, "prerequisite", 3),
    (104, 3, "prerequisite", 4),
    (105, 2, "prerequisite", 5),
    (106, 5, "prerequisite", 6),
    (107, 7, "builds_on", 5),
    (108, 6, "prerequisite", 16),
    (109, 8, "builds_on", 6),
    (110, 16, "prerequisite", 9),
    (111, 8, "prerequisite", 9),
    (112, 11, "builds_on", 10),
    (113, 10, "builds_on", 9),
    (114, 20, "prerequisite", 11),
    (115, 9, "prerequisite", 12),
    (116, 3, "prerequisite", 15),
    (117, 15, "builds_on", 16),
    (201, 18, "part_of", 6),
    (202, 17, "part_of", 18),
    (203, 7, "part_of", 6),
    (204, 21, "part_of", 6),
    (205, 10, "part_of", 9),
    (206, 22, "part_of", 15),
    (207, 11, "part_of", 10),
    (301, 9, "contrasts_with", 15),
    (302, 9, "contrasts_with", 19),
    (303, 13, "contrasts_with", 12),
    (401, 12, "applies_to", 14),
    (402, 13, "applies_to", 14),
    (403, 12, "applies_to", 16),
    (501, 24, "related", 15),
    (601, 25, "prerequisite", 2),
)


def edge(edge_id: int, source: int, relation: str, target: int) -> EdgeFact:
    return EdgeFact(
        edge_id=edge_id,
        source_id=source,
        target_id=target,
        relation=relation,
        symmetric=relation in SYMMETRIC,
        quote=f"quote of edge {edge_id}",
        source_slug=f"lesson-{edge_id // 100}",
        revision=1,
    )


def curriculum(
    *,
    without_edges: Iterable[int] = (),
    retired: Iterable[int] = (25,),
    extra: Iterable[tuple[int, int, str, int]] = (),
    relations: Sequence[RelationSpec] = VOCABULARY,
) -> MemoryReader:
    """The curriculum as it stood at some instant: ``without_edges`` retired by then,
    ``retired`` concepts inactive, ``extra`` edges added."""
    gone, off = set(without_edges), set(retired)
    concepts = [ConceptFact(i, name, i not in off) for i, name, _ in CONCEPTS]
    edges = [edge(*e) for e in (*EDGES, *extra) if e[0] not in gone]
    return MemoryReader(concepts, edges, relations)


def curriculum_index() -> InMemoryConceptIndex:
    return index_of(CONCEPTS)


NAMES = {i: name for i, name, _ in CONCEPTS}
