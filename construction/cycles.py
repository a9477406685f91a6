"""Cycle search for construction: one bidirectional search, and the cycles of a graph.

``find_chain`` is the one search: a short chain of edges from one node to another,
breadth-first from both ends at once, always widening the smaller frontier (in a mostly
acyclic graph one side is small, so the search stops after touching little of it). The
caller says how to step forwards and backwards, so the same search runs over a
``GraphView`` (``verify.find_cycle``: would a candidate close a cycle with the graph, the
queue and this source's drafts?) and over arrays in memory (``find_cycles`` below).

``find_cycles`` (the self-healing agent): strongly connected components per acyclic
relation (iterative Tarjan, so deep graphs do not overflow the stack), then inside each
component, node by node: find a short cycle through the node (``find_chain`` from it
back to itself), report it, drop its weakest edge, and again until the node lies on no
cycle; the side the last search went through to the end is closed, so it is split off and
searched on its own. The weakest edges reported break every cycle the graph had.
``has_cycle`` asks the same components whether a few pairs hold any cycle (ontology
discovery: does a relation's set of examples order its concepts?).

The database has its own counterpart: acceptance re-checks a cycle under lock against
the topological order kept per acyclic relation (``kgreview.graph.order``), searching
only between the new edge's ends.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["CycleFinding", "EdgeRecord", "find_chain", "find_cycles", "has_cycle"]

N = TypeVar("N", bound=Hashable)  # a node
E = TypeVar("E")  # an edge
# Given a frontier, the edges leaving it (forwards) or entering it (backwards), each as
# (edge, the frontier node, the node at the edge's other end), in the order to try them.
Steps = Callable[[list[N]], Iterable[tuple[E, N, N]]]


def find_chain(
    start: N,
    goal: N,
    forward: Steps[N, E],
    backward: Steps[N, E],
    *,
    max_depth: int | None = None,
    max_nodes: int | None = None,
) -> tuple[list[E] | None, list[N]]:
    """A short chain of edges start -> ... -> goal, and, without one, the closed side.

    Forwards from ``start``, backwards from ``goal``, the smaller frontier first; on a tie
    the side that has cost less so far, so a search along a chain stops at its shorter
    end. The first meeting is kept, so the chain is a shortest one or one edge longer; it
    is simple, as the two trees share no node (but ``start`` when it is ``goal``: then the
    chain is a cycle through it, never empty).

    Without a chain, also returns the side searched to the end: every node reachable from
    ``start`` (or every node reaching ``goal``). That set is closed in its direction, so
    any cycle touching it lies inside it. ``max_depth`` (frontiers widened) and
    ``max_nodes`` (nodes seen on both sides) bound the search; stopped by either, it
    returns no chain and no closed side.
    """
    ahead: dict[N, tuple[E, N] | None] = {start: None}  # node -> (edge, node it came from)
    behind: dict[N, tuple[E, N] | None] = {goal: None}  # node -> (edge, node it leads to)
    forwards, backwards = [start], [goal]
    reached = passed = depth = 0
    while forwards and backwards:
        if max_depth is not None and depth >= max_depth:
            return None, []
        if max_nodes is not None and len(ahead) + len(behind) > max_nodes:
            return None, []
        depth += 1
        nf, nb = len(forwards), len(backwards)
        if nf < nb or (nf == nb and reached <= passed):
            forwards, met = _widen(forward, forwards, ahead, behind)
            reached += len(forwards)
            if met is not None:  # the edge v -> w joins the two trees
                edge, v, w = met
                return _chain(ahead, behind, v, edge, w), []
        else:
            backwards, met = _widen(backward, backwards, behind, ahead)
            passed += len(backwards)
            if met is not None:  # the edge w -> v joins the two trees
                edge, v, w = met
                return _chain(ahead, behind, w, edge, v), []
    if not forwards:
        return None, [n for n in ahead if n != start]
    return None, [n for n in behind if n != goal]


def _widen(
    steps: Steps[N, E],
    frontier: list[N],
    own: dict[N, tuple[E, N] | None],
    other: dict[N, tuple[E, N] | None],
) -> tuple[list[N], tuple[E, N, N] | None]:
    """One side's next frontier, recorded in ``own``; or the first step into ``other``."""
    following: list[N] = []
    for edge, v, w in steps(frontier):
        if w in other:
            return following, (edge, v, w)
        if w not in own:
            own[w] = (edge, v)
            following.append(w)
    return following, None


def _chain(
    ahead: dict[N, tuple[E, N] | None],
    behind: dict[N, tuple[E, N] | None],
    tail: N,
    bridge: E,
    head: N,
) -> list[E]:
    """start -> ... -> tail (the forward tree), the bridge, head -> ... -> goal."""
    edges: list[E] = []
    step = ahead[tail]
    while step is not None:
        edges.append(step[0])
        step = ahead[step[1]]
    edges.reverse()
    edges.append(bridge)
    step = behind[head]
    while step is not None:
        edges.append(step[0])
        step = behind[step[1]]
    return edges


def has_cycle(pairs: Iterable[tuple[Hashable, Hashable]]) -> bool:
    """Whether directed pairs (a, b) hold a cycle; (a, a) is one of length one."""
    position: dict[Hashable, int] = {}
    edges = [
        EdgeRecord(
            i, position.setdefault(a, len(position)), position.setdefault(b, len(position)), "", 0.0
        )
        for i, (a, b) in enumerate(pairs)
    ]
    if any(e.source_id == e.target_id for e in edges):
        return True
    graph = _Graph(edges)
    return bool(graph.components(list(range(len(graph.node_ids))), 0))


@dataclass(frozen=True, slots=True)
class EdgeRecord:
    """An active edge as the cycle finder needs to know it."""

    id: int
    source_id: int
    target_id: int
    relation: str
    confidence: float


@dataclass(frozen=True)
class CycleFinding:
    """One simple cycle: ``edge_ids[0]`` goes a->b, the next b->c, the last returns to a.

    The cycle starts at its lowest edge id, so the same cycle always reads the same.
    """

    relation: str
    edge_ids: tuple[int, ...]
    weakest_edge_id: int  # lowest confidence; ties: the highest id (newest)


class _Graph:
    """One relation's edges as arrays, with edges switched off as cycles are broken."""

    def __init__(self, edges: list[EdgeRecord]) -> None:
        ids = sorted({e.source_id for e in edges} | {e.target_id for e in edges})
        self.node_ids = ids
        position = {node: i for i, node in enumerate(ids)}
        edges = sorted(edges, key=lambda e: e.id)
        self.edges = edges
        self.src = [position[e.source_id] for e in edges]
        self.dst = [position[e.target_id] for e in edges]
        self.alive = bytearray([1]) * len(edges)
        self.out: list[list[int]] = [[] for _ in ids]
        for index, source in enumerate(self.src):
            self.out[source].append(index)
        # Which component a node belongs to now; only nodes of one label are walked.
        self.label = [0] * len(ids)
        self._index = [-1] * len(ids)
        self._low = [0] * len(ids)
        self._on_stack = bytearray(len(ids))
        self.inc: list[list[int]] = [[] for _ in ids]
        for index, target in enumerate(self.dst):
            self.inc[target].append(index)

    def components(self, nodes: list[int], label: int) -> list[list[int]]:
        """Strongly connected components of size >= 2 among ``nodes`` (iterative Tarjan)."""
        return _Tarjan(self, label).run(nodes)

    def cycle_through(self, start: int, label: int) -> tuple[list[int] | None, list[int]]:
        """A short cycle through ``start`` inside ``label``, as edge positions in order.

        ``find_chain`` from ``start`` back to itself over live edges of the label; without
        a cycle, the side searched to the end (see ``find_chain``).
        """
        out, inc, src, dst = self.out, self.inc, self.src, self.dst
        alive, labels = self.alive, self.label

        def forward(frontier: list[int]) -> Iterator[tuple[int, int, int]]:
            for v in frontier:
                for e in out[v]:
                    w = dst[e]
                    if alive[e] and labels[w] == label:
                        yield e, v, w

        def backward(frontier: list[int]) -> Iterator[tuple[int, int, int]]:
            for v in frontier:
                for e in inc[v]:
                    w = src[e]
                    if alive[e] and labels[w] == label:
                        yield e, v, w

        return find_chain(start, start, forward, backward)


class _Tarjan:
    """One run of Tarjan's algorithm over the live edges inside one label, iteratively (a
    list of nodes being walked, each with the rest of its edges) so deep graphs do not
    overflow the stack. The per-node arrays are the graph's, reused from run to run."""

    def __init__(self, graph: _Graph, label: int) -> None:
        self.graph = graph
        self.label = label
        self.counter = 0
        self.stack: list[int] = []
        self.found: list[list[int]] = []

    def run(self, nodes: list[int]) -> list[list[int]]:
        index = self.graph._index
        for v in nodes:
            index[v] = -1
        for root in nodes:
            if index[root] == -1:
                self._walk_from(root)
        return self.found

    def _enter(self, v: int) -> tuple[int, Iterator[int]]:
        """Number ``v``, put it on the stack, and start on its edges."""
        graph = self.graph
        graph._index[v] = graph._low[v] = self.counter
        self.counter += 1
        self.stack.append(v)
        graph._on_stack[v] = 1
        return v, iter(graph.out[v])

    def _walk_from(self, root: int) -> None:
        index, low = self.graph._index, self.graph._low
        work = [self._enter(root)]
        while work:
            v, edges = work[-1]
            w = self._next_unvisited(v, edges)
            if w is not None:
                work.append(self._enter(w))
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                component = self._pop_component(v)
                if len(component) > 1:
                    self.found.append(component)

    def _next_unvisited(self, v: int, edges: Iterator[int]) -> int | None:
        """The next node ``v`` leads to that is not numbered yet; on the way, lower
        ``v``'s low-link by the nodes it leads to that are still on the stack."""
        graph = self.graph
        index, low, on_stack = graph._index, graph._low, graph._on_stack
        for e in edges:
            if not graph.alive[e]:
                continue
            w = graph.dst[e]
            if graph.label[w] != self.label:
                continue
            if index[w] == -1:
                return w
            if on_stack[w] and index[w] < low[v]:
                low[v] = index[w]
        return None

    def _pop_component(self, v: int) -> list[int]:
        """The nodes above and including ``v`` on the stack: ``v``'s component."""
        component = []
        while True:
            w = self.stack.pop()
            self.graph._on_stack[w] = 0
            component.append(w)
            if w == v:
                return component


def _finding(relation: str, cycle: list[EdgeRecord]) -> CycleFinding:
    lowest = min(range(len(cycle)), key=lambda i: cycle[i].id)
    ordered = cycle[lowest:] + cycle[:lowest]
    weakest = min(cycle, key=lambda e: (e.confidence, -e.id))
    return CycleFinding(relation, tuple(e.id for e in ordered), weakest.id)


def find_cycles(edges: Sequence[EdgeRecord], *, acyclic: Iterable[str]) -> list[CycleFinding]:
    """Cycles in the acyclic relations, each with the edge whose removal breaks it.

    Only relations named in ``acyclic`` are looked at. Self-loops are cycles of length
    one. Each reported cycle is one simple cycle of the graph as it stands after the
    weakest edges of the earlier findings are removed, so the reported weakest edges
    together break every cycle. Ordered by relation, then by edge ids.
    """
    wanted = set(acyclic)
    by_relation: dict[str, list[EdgeRecord]] = defaultdict(list)
    for e in edges:
        if e.relation in wanted:
            by_relation[e.relation].append(e)
    findings: list[CycleFinding] = []
    for relation in sorted(by_relation):
        findings.extend(_relation_cycles(relation, by_relation[relation]))
    findings.sort(key=lambda f: (f.relation, f.edge_ids))
    return findings


def _relation_cycles(relation: str, edges: list[EdgeRecord]) -> list[CycleFinding]:
    graph = _Graph(edges)
    found: list[CycleFinding] = []
    for index, e in enumerate(graph.edges):
        if e.source_id == e.target_id:
            found.append(CycleFinding(relation, (e.id,), e.id))
            graph.alive[index] = 0
    # Labels partition the nodes so that every cycle lies inside one label: first the
    # strongly connected components, then the pieces they fall into as edges go.
    next_label = 1
    work: list[tuple[int, list[int]]] = []
    for component in graph.components(list(range(len(graph.node_ids))), 0):
        for v in component:
            graph.label[v] = next_label
        work.append((next_label, sorted(component)))
        next_label += 1
    while work:
        label, nodes = work.pop()
        for start in nodes:
            if graph.label[start] != label:
                continue
            while True:
                cycle, closed = graph.cycle_through(start, label)
                if cycle is None:
                    break
                found.append(_finding(relation, [graph.edges[i] for i in cycle]))
                weakest = min(cycle, key=lambda i: (graph.edges[i].confidence, -graph.edges[i].id))
                graph.alive[weakest] = 0
            # ``start`` lies on no cycle any more. The side searched to the end is closed
            # (nothing in it leads out of it, or nothing outside leads into it), so its
            # cycles are its own: it becomes a label of its own, checked on its own.
            graph.label[start] = -1
            if closed:
                for v in closed:
                    graph.label[v] = next_label
                work.append((next_label, sorted(closed)))
                next_label += 1
    return found
