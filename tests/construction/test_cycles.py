"""Cycles in acyclic relations: findings, their weakest edges, and the search itself."""

from __future__ import annotations

import random

from construction.cycles import CycleFinding, EdgeRecord, find_chain, find_cycles, has_cycle


def edge(eid, source, target, confidence=0.9, relation="prerequisite"):
    return EdgeRecord(eid, source, target, relation, confidence)


# --- Cycles -------------------------------------------------------------------------------


def test_self_loop_is_a_cycle_of_length_one():
    """An edge from a concept to itself is reported on its own."""
    assert find_cycles([edge(4, 1, 1, 0.8)], acyclic={"prerequisite"}) == [
        CycleFinding("prerequisite", (4,), 4)
    ]


def test_two_and_three_cycles_are_found_in_order():
    """A 2-cycle and a 3-cycle: edges listed head to tail, starting at the lowest id."""
    edges = [
        edge(1, 1, 2),
        edge(2, 2, 1, 0.5),
        edge(7, 10, 11),
        edge(5, 11, 12, 0.3),
        edge(6, 12, 10),
    ]
    assert find_cycles(edges, acyclic={"prerequisite"}) == [
        CycleFinding("prerequisite", (1, 2), 2),
        CycleFinding("prerequisite", (5, 6, 7), 5),
    ]


def test_two_cycles_sharing_their_weakest_edge_need_one_finding():
    """Removing the shared weak edge breaks both cycles: one finding."""
    edges = [edge(1, 1, 2, 0.2), edge(2, 2, 3), edge(3, 3, 1), edge(4, 2, 1)]
    findings = find_cycles(edges, acyclic={"prerequisite"})
    assert len(findings) == 1
    assert findings[0].weakest_edge_id == 1


def test_two_cycles_sharing_a_strong_edge_need_two_findings():
    """With the shared edge strong, each cycle gives up its own weakest edge."""
    edges = [edge(1, 1, 2, 0.99), edge(2, 2, 3, 0.5), edge(3, 3, 1), edge(4, 2, 1, 0.4)]
    findings = find_cycles(edges, acyclic={"prerequisite"})
    assert findings == [
        CycleFinding("prerequisite", (1, 2, 3), 2),
        CycleFinding("prerequisite", (1, 4), 4),
    ]


def test_weakest_edge_ties_go_to_the_newest():
    """Equal confidences: the highest id (newest edge) is the weakest."""
    edges = [edge(3, 1, 2, 0.6), edge(9, 2, 3, 0.6), edge(5, 3, 1, 0.6)]
    [finding] = find_cycles(edges, acyclic={"prerequisite"})
    assert finding.edge_ids == (3, 9, 5)
    assert finding.weakest_edge_id == 9


def test_relations_not_marked_acyclic_are_ignored():
    """Cycles of related / contrasts_with are fine; relations are not mixed."""
    edges = [
        edge(1, 1, 2, relation="related"),
        edge(2, 2, 1, relation="related"),
        edge(3, 1, 2, relation="prerequisite"),
        edge(4, 2, 1, relation="builds_on"),
    ]
    assert find_cycles(edges, acyclic={"prerequisite", "builds_on"}) == []
    assert len(find_cycles(edges, acyclic=["related"])) == 1


def test_large_dag_has_no_findings():
    """100,000 edges in topological order: nothing to report."""
    rng = random.Random(3)
    edges = []
    while len(edges) < 100_000:
        a = rng.randrange(30_000)
        b = a + 1 + rng.randrange(300)
        edges.append(edge(len(edges) + 1, a, b, rng.random()))
    assert find_cycles(edges, acyclic={"prerequisite"}) == []


def test_very_long_cycle_does_not_overflow_the_stack():
    """One cycle through 50,000 concepts is found without recursion."""
    n = 50_000
    edges = [edge(i + 1, i, (i + 1) % n, 0.9) for i in range(n)]
    edges[1234] = edge(1235, 1234, 1235, 0.1)
    [finding] = find_cycles(edges, acyclic={"prerequisite"})
    assert len(finding.edge_ids) == n
    assert finding.edge_ids[0] == 1
    assert finding.weakest_edge_id == 1235


def _check_findings(edges, findings):
    by_id = {e.id: e for e in edges}
    removed = set()
    for f in findings:
        chain = [by_id[i] for i in f.edge_ids]
        nodes = [e.source_id for e in chain]
        assert len(set(nodes)) == len(nodes)  # simple
        for a, b in zip(chain, chain[1:] + chain[:1], strict=True):
            assert a.target_id == b.source_id
        weakest = min(chain, key=lambda e: (e.confidence, -e.id))
        assert f.weakest_edge_id == weakest.id
        assert weakest.id not in removed
        removed.add(weakest.id)
    return removed


def _is_acyclic(edges):
    successors = {}
    indegree = {}
    for e in edges:
        successors.setdefault(e.source_id, []).append(e.target_id)
        indegree[e.target_id] = indegree.get(e.target_id, 0) + 1
        indegree.setdefault(e.source_id, 0)
    ready = [n for n, d in indegree.items() if d == 0]
    seen = 0
    while ready:
        node = ready.pop()
        seen += 1
        for nxt in successors.get(node, ()):
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
    return seen == len(indegree)


def test_weakest_edges_break_every_cycle_of_random_graphs():
    """On random tangles findings are simple cycles whose weakest edges leave a DAG."""
    for seed in range(30):
        rng = random.Random(seed)
        n = rng.randrange(3, 40)
        edges = [
            edge(i + 1, rng.randrange(n), rng.randrange(n), round(rng.random(), 1))
            for i in range(rng.randrange(n, 4 * n))
        ]
        findings = find_cycles(edges, acyclic={"prerequisite"})
        removed = _check_findings(edges, findings)
        assert _is_acyclic([e for e in edges if e.id not in removed])


# --- The search -------------------------------------------------------------------------


def _steps(pairs):
    """``find_chain``'s two step functions over directed pairs (the pair is the edge)."""

    def forward(frontier):
        return [((a, b), a, b) for a, b in pairs if a in frontier]

    def backward(frontier):
        return [((a, b), b, a) for a, b in pairs if b in frontier]

    return forward, backward


def test_find_chain_returns_a_shortest_chain_from_start_to_goal():
    """Two ways from a to e: the shorter one is taken, edge by edge in order."""
    pairs = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("a", "x"), ("x", "e")]
    assert find_chain("a", "e", *_steps(pairs)) == ([("a", "x"), ("x", "e")], [])


def test_find_chain_through_a_node_back_to_itself_is_a_cycle():
    pairs = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]
    chain, _ = find_chain("b", "b", *_steps(pairs))
    assert chain == [("b", "c"), ("c", "a"), ("a", "b")]


def test_find_chain_without_a_chain_returns_the_closed_side():
    """Nothing leads from a to z: a's side is searched to the end first (it is smaller),
    and what it reached is closed: no edge leaves it."""
    pairs = [("a", "b"), ("x1", "z"), ("x2", "z"), ("x3", "z"), ("y", "x1")]
    chain, closed = find_chain("a", "z", *_steps(pairs))
    assert chain is None and closed == ["b"]


def test_find_chain_stops_at_its_depth_bound():
    pairs = [(i, i + 1) for i in range(10)]
    assert find_chain(0, 10, *_steps(pairs), max_depth=4) == (None, [])
    assert len(find_chain(0, 10, *_steps(pairs), max_depth=10)[0]) == 10


def test_has_cycle_on_pairs():
    assert has_cycle([("a", "a")])
    assert has_cycle([("a", "b"), ("b", "c"), ("c", "a")])
    assert not has_cycle([("a", "b"), ("b", "c"), ("a", "c")])
    assert not has_cycle([])
