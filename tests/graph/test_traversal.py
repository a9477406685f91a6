"""Recursive-SQL walks: neighbourhoods, shortest paths and learning paths (both databases)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from kgreview.graph import learning, services, traversal
from kgreview.graph.models import Edge, RelationType

pytestmark = pytest.mark.django_db


def rid(key: str) -> int:
    return RelationType.objects.get(key=key).pk


def raw_edge(src, dst, key: str = "prerequisite") -> Edge:
    """An edge row written straight to the table, as legacy data or a bad import would,
    bypassing the cycle check of the services."""
    now = timezone.now()
    return Edge.objects.create(
        source=src,
        target=dst,
        relation=RelationType.objects.get(key=key),
        confidence=0.7,
        reason="Imported.",
        valid_at=now,
        recorded_at=now,
    )


def chain(f, *names: str, rel: str = "prerequisite"):
    concepts = [f.concept(n) for n in names]
    edges = [f.edge(a, b, rel) for a, b in zip(concepts, concepts[1:], strict=False)]
    return concepts, edges


def test_ball_counts_distance_along_the_chosen_direction(f):
    """out walks source→target, in the reverse, both either way."""
    (a, b, c, d), _ = chain(f, "A", "B", "C", "D")
    out = traversal.ball(start_id=b.pk, depth=5, direction="out")
    assert out.distance == {b.pk: 0, c.pk: 1, d.pk: 2}
    inn = traversal.ball(start_id=c.pk, depth=5, direction="in")
    assert inn.distance == {c.pk: 0, b.pk: 1, a.pk: 2}
    both = traversal.ball(start_id=b.pk, depth=1, direction="both")
    assert both.distance == {b.pk: 0, a.pk: 1, c.pk: 1}


def test_ball_stops_at_the_depth_bound(f):
    """Nothing beyond depth is returned."""
    (a, b, c, d), _ = chain(f, "A", "B", "C", "D")
    assert set(traversal.ball(start_id=a.pk, depth=2, direction="out").distance) == {
        a.pk,
        b.pk,
        c.pk,
    }


def test_ball_keeps_the_shortest_distance_when_two_routes_meet(f):
    """A concept reached in one and in two steps is at distance one."""
    a, b, c = f.concept("A"), f.concept("B"), f.concept("C")
    f.edge(a, b)
    f.edge(b, c)
    f.edge(a, c)
    assert traversal.ball(start_id=a.pk, depth=3, direction="out").distance[c.pk] == 1


def test_symmetric_edges_are_walked_both_ways_in_every_direction(f):
    """A related B is reachable from B with direction=out, though stored A→B."""
    a, b = f.concept("A"), f.concept("B")
    f.edge(a, b, "related")
    assert b.pk in traversal.ball(start_id=a.pk, depth=1, direction="out").distance
    assert a.pk in traversal.ball(start_id=b.pk, depth=1, direction="out").distance
    assert a.pk in traversal.ball(start_id=b.pk, depth=1, direction="in").distance


def test_relation_filter_keeps_only_those_types(f):
    """A walk restricted to prerequisite ignores applies_to edges."""
    a, b, c = f.concept("A"), f.concept("B"), f.concept("C")
    f.edge(a, b)
    f.edge(b, c, "applies_to")
    found = traversal.ball(
        start_id=a.pk, depth=3, direction="out", relation_ids=[rid("prerequisite")]
    )
    assert set(found.distance) == {a.pk, b.pk}


def test_ball_ends_on_a_cyclic_graph(f):
    """applies_to may form cycles; the walk still ends, each concept once."""
    a, b, c = f.concept("A"), f.concept("B"), f.concept("C")
    f.edge(a, b, "applies_to")
    f.edge(b, c, "applies_to")
    f.edge(c, a, "applies_to")
    found = traversal.ball(start_id=a.pk, depth=6, direction="both")
    assert found.distance == {a.pk: 0, b.pk: 1, c.pk: 1}


def test_ball_says_when_it_was_truncated(f):
    """A hub with more neighbours than the limit returns the nearest ones and says so."""
    hub = f.concept("Hub")
    for i in range(6):
        f.edge(hub, f.concept(f"Leaf {i}"), "applies_to")
    found = traversal.ball(start_id=hub.pk, depth=1, direction="out", limit=4)
    assert found.truncated is True
    assert len(found.distance) == 4 and found.distance[hub.pk] == 0
    assert traversal.ball(start_id=hub.pk, depth=1, direction="out", limit=7).truncated is False


def test_ball_as_of_reads_the_past(f):
    """An edge recorded later is absent; one invalidated since is present."""
    (a, b, c), (ab, bc) = chain(f, "A", "B", "C")
    Edge.objects.filter(pk=ab.pk).update(
        recorded_at=ab.recorded_at - timedelta(hours=2), valid_at=ab.valid_at - timedelta(hours=2)
    )
    then = timezone.now() - timedelta(hours=1)
    services.edge_invalidate(edge=Edge.objects.get(pk=ab.pk), reason="Wrong.", acting_user=None)
    assert set(traversal.ball(start_id=a.pk, depth=3, direction="out", at=then).distance) == {
        a.pk,
        b.pk,
    }
    assert set(traversal.ball(start_id=a.pk, depth=3, direction="out").distance) == {a.pk}


def test_edges_within_is_the_induced_subgraph(f):
    """Only edges with both ends in the set."""
    (a, b, c), (ab, bc) = chain(f, "A", "B", "C")
    assert list(traversal.edges_within(node_ids=[a.pk, b.pk])) == [ab]


def test_shortest_path_prefers_the_shorter_route(f):
    """Two routes from A to E: the two-step one wins over the four-step one."""
    (a, b, c, d, e), _ = chain(f, "A", "B", "C", "D", "E")
    shortcut_mid = f.concept("M")
    f.edge(a, shortcut_mid)
    f.edge(shortcut_mid, e)
    hops = traversal.shortest_path(start_id=a.pk, goal_id=e.pk, direction="out", max_depth=6)
    assert [h.to_id for h in hops] == [shortcut_mid.pk, e.pk]


@pytest.mark.parametrize("length", [1, 2, 3, 4, 5])
def test_shortest_path_finds_chains_of_every_length_up_to_max_depth(f, length):
    """Odd and even lengths meet in the middle correctly, hop by hop."""
    names = [f"N{i}" for i in range(length + 1)]
    concepts, edges = chain(f, *names)
    hops = traversal.shortest_path(
        start_id=concepts[0].pk, goal_id=concepts[-1].pk, direction="out", max_depth=5
    )
    assert [h.edge_id for h in hops] == [e.pk for e in edges]
    assert [h.from_id for h in hops] == [c.pk for c in concepts[:-1]]


def test_shortest_path_respects_max_depth_and_direction(f):
    """Too long → None; against the edges → None unless both."""
    (a, b, c, d), _ = chain(f, "A", "B", "C", "D")
    assert traversal.shortest_path(start_id=a.pk, goal_id=d.pk, max_depth=2) is None
    assert traversal.shortest_path(start_id=d.pk, goal_id=a.pk, max_depth=6) is None
    back = traversal.shortest_path(start_id=d.pk, goal_id=a.pk, direction="both", max_depth=6)
    assert [h.to_id for h in back] == [c.pk, b.pk, a.pk]


def test_shortest_path_to_itself_is_empty_and_ends_on_cycles(f):
    """Start equals goal → no hops; a cycle without the goal → None, promptly."""
    a, b, c, z = f.concept("A"), f.concept("B"), f.concept("C"), f.concept("Z")
    f.edge(a, b, "applies_to")
    f.edge(b, c, "applies_to")
    f.edge(c, a, "applies_to")
    assert traversal.shortest_path(start_id=a.pk, goal_id=a.pk) == []
    assert traversal.shortest_path(start_id=a.pk, goal_id=z.pk, max_depth=6) is None


def orders() -> dict[int, str]:
    return {rid("prerequisite"): "source_first", rid("builds_on"): "target_first"}


def test_learning_path_puts_every_need_before_what_needs_it(f):
    """A diamond: both middles come after the base and before the target."""
    base, left, right, top = (f.concept(n) for n in ("Base", "Left", "Right", "Top"))
    f.edge(base, left)
    f.edge(base, right)
    f.edge(left, top)
    f.edge(right, top)
    lp = learning.learning_path(target_id=top.pk, relations=orders())
    assert lp.ok
    pos = {n: i for i, n in enumerate(lp.order)}
    assert pos[base.pk] < pos[left.pk] < pos[top.pk]
    assert pos[base.pk] < pos[right.pk] < pos[top.pk]
    assert lp.level == {base.pk: 0, left.pk: 1, right.pk: 1, top.pk: 2}


def test_learning_path_orders_ties_by_level_then_name(f):
    """Concepts ready together come foundations first, then alphabetically."""
    top = f.concept("Top")
    zed, alpha = f.concept("Zed"), f.concept("Alpha")
    deep = f.concept("Deep")
    f.edge(zed, top)
    f.edge(alpha, top)
    f.edge(deep, alpha)
    names = {c.pk: c.name for c in (top, zed, alpha, deep)}
    lp = learning.learning_path(target_id=top.pk, relations=orders(), names=names)
    assert [names[n] for n in lp.order] == ["Deep", "Zed", "Alpha", "Top"]


def test_learning_path_reads_builds_on_as_target_first(f):
    """ "RAG builds on vector search": vector search is studied before RAG."""
    vs, rag = f.concept("Vector search"), f.concept("RAG")
    f.edge(rag, vs, "builds_on")
    lp = learning.learning_path(target_id=rag.pk, relations=orders())
    assert lp.order == [vs.pk, rag.pk]


def test_learning_path_ignores_relations_not_asked_for(f):
    """With prerequisite alone, builds_on edges do not add needs."""
    vs, rag = f.concept("Vector search"), f.concept("RAG")
    f.edge(rag, vs, "builds_on")
    lp = learning.learning_path(target_id=rag.pk, relations={rid("prerequisite"): "source_first"})
    assert lp.order == [rag.pk]


def test_learning_path_names_a_cycle_in_legacy_rows_and_blocks_what_waits_on_it(f):
    """A prerequisite cycle (planted past the services' check) is named edge by edge;
    concepts after it are blocked, concepts before it still ordered."""
    root, a, b, c, top = (f.concept(n) for n in ("Root", "A", "B", "C", "Top"))
    f.edge(root, a)
    ab = f.edge(a, b)
    bc = f.edge(b, c)
    ca = raw_edge(c, a)
    f.edge(c, top)
    lp = learning.learning_path(target_id=top.pk, relations=orders())
    assert not lp.ok
    assert {e.edge_id for e in lp.cycle} == {ab.pk, bc.pk, ca.pk}
    # Read forwards: each edge's 'after' is the next edge's 'before'.
    for first, second in zip(lp.cycle, lp.cycle[1:] + lp.cycle[:1], strict=True):
        assert first.after_id == second.before_id
    assert lp.order == [root.pk]
    assert lp.blocked == [top.pk]


def test_learning_path_as_of_uses_the_needs_of_that_time(f):
    """A need added later is not part of the earlier path."""
    a, b = f.concept("A"), f.concept("B")
    then = timezone.now()
    f.edge(a, b)
    assert learning.learning_path(target_id=b.pk, relations=orders(), at=then).order == [b.pk]
    assert learning.learning_path(target_id=b.pk, relations=orders()).order == [a.pk, b.pk]


def test_study_edges_says_when_the_closure_was_capped(f):
    """A closure larger than the limit is flagged as truncated."""
    (n0, *rest), _ = chain(f, "N0", "N1", "N2", "N3", "N4")
    edges, truncated = learning.study_edges(target_id=rest[-1].pk, relations=orders(), limit=2)
    assert truncated is True
    _edges, truncated = learning.study_edges(target_id=rest[-1].pk, relations=orders())
    assert truncated is False


# --- Bounded by concepts (issue 15) --------------------------------------------------------


def test_closure_lists_the_target_then_its_needs_nearest_first(f):
    """The nearest needs come first, so a cut keeps what is closest to the target."""
    (n0, n1, n2, n3), _ = chain(f, "N0", "N1", "N2", "N3")
    nodes, truncated = learning.closure(target_id=n3.pk, relations=orders())
    assert nodes == [n3.pk, n2.pk, n1.pk, n0.pk] and truncated is False
    nodes, truncated = learning.closure(target_id=n3.pk, relations=orders(), limit=2)
    assert nodes == [n3.pk, n2.pk] and truncated is True


def test_closure_with_a_depth_keeps_the_needs_that_many_steps_away(f):
    """depth=2 stops two steps before the target; a diamond's concept counts once."""
    (n0, n1, n2, n3), _ = chain(f, "N0", "N1", "N2", "N3")
    side = f.concept("Side")
    f.edge(side, n2)
    f.edge(n0, side)
    nodes, truncated = learning.closure(target_id=n3.pk, relations=orders(), depth=2)
    assert set(nodes) == {n3.pk, n2.pk, n1.pk, side.pk} and truncated is False
    assert len(nodes) == len(set(nodes))


def test_learning_path_within_a_depth_orders_only_those_needs(f):
    """A learning path of depth 1 holds the target and its direct needs, in order."""
    (n0, n1, n2), _ = chain(f, "N0", "N1", "N2")
    lp = learning.learning_path(target_id=n2.pk, relations=orders(), depth=1)
    assert lp.order == [n1.pk, n2.pk] and not lp.truncated


def test_learning_path_over_its_limit_says_it_was_cut_and_keeps_a_valid_order(f, settings):
    """Cut at KG_LEARNING_PATH_LIMIT: truncated, the nearest concepts, still in order."""
    settings.KG_LEARNING_PATH_LIMIT = 3
    (n0, n1, n2, n3), _ = chain(f, "N0", "N1", "N2", "N3")
    lp = learning.learning_path(target_id=n3.pk, relations=orders())
    assert lp.truncated is True
    assert lp.order == [n1.pk, n2.pk, n3.pk]


def test_ball_on_a_hub_returns_the_nearest_concepts_whatever_the_depth(f):
    """A deep walk from a hub stops at the limit, nearest first, and says it was cut."""
    hub = f.concept("Hub")
    spokes = [f.concept(f"Spoke {i}") for i in range(6)]
    for s in spokes:
        f.edge(hub, s, "related")
    far = f.concept("Far")
    f.edge(spokes[0], far, "related")
    found = traversal.ball(start_id=hub.pk, depth=6, direction="both", limit=4)
    assert found.truncated is True
    assert found.distance[hub.pk] == 0
    assert len(found.distance) == 4
    assert far.pk not in found.distance
    assert set(found.distance.values()) == {0, 1}


def test_walks_read_the_relations_shape_once_per_process(f, django_assert_num_queries):
    """After the vocabulary was read by a committed transaction, a walk is one query."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from kgreview.graph import vocabulary

    a, b = f.concept("A"), f.concept("B")
    f.edge(a, b, "related")
    vocabulary.forget()
    related = [rid("related")]
    with CaptureQueriesContext(connection) as first:
        traversal.ball(start_id=a.pk, depth=2, direction="out", relation_ids=related)
    assert any("relationtype" in q["sql"].lower() for q in first.captured_queries)
    # The test's transaction never commits; remember what a committed one would.
    vocabulary._remember(vocabulary.shapes(related))
    with django_assert_num_queries(1):
        found = traversal.ball(start_id=a.pk, depth=2, direction="out", relation_ids=related)
    assert b.pk in found.distance  # a symmetric relation is still walked both ways
    with django_assert_num_queries(1):
        back = traversal.ball(start_id=b.pk, depth=1, direction="out", relation_ids=related)
    assert a.pk in back.distance


@pytest.mark.django_db(transaction=True)
def test_a_shape_read_in_a_transaction_that_rolls_back_is_not_remembered():
    """A relation type created and rolled back never existed: its id is not cached;
    one read outside a transaction is."""
    from django.db import transaction

    from kgreview.graph import vocabulary

    vocabulary.forget()
    kept = RelationType.objects.create(key="teaches", label="Teaches", verb="teaches")
    assert vocabulary.shapes([kept.pk])[kept.pk].key == "teaches"
    assert kept.pk in vocabulary._SHAPES
    try:
        with transaction.atomic():
            made = RelationType.objects.create(
                key="mentors", label="Mentors", verb="mentors", symmetric=True, directed=False
            )
            assert vocabulary.shapes([made.pk])[made.pk].symmetric is True
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    assert made.pk not in vocabulary._SHAPES


@pytest.mark.postgres
def test_a_deep_walk_from_a_hub_reads_only_what_its_limit_needs(f, on_postgres):
    """PostgreSQL stops the recursion at the LIMIT: the walk produces at most
    (limit + 1) × (depth + 1) rows however many concepts lie within reach."""
    import json

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    hub = f.concept("Hub")
    ring = [f.concept(f"Ring {i}") for i in range(60)]
    for i, c in enumerate(ring):
        f.edge(hub, c, "related")
        f.edge(c, ring[(i + 1) % len(ring)], "related")
    with CaptureQueriesContext(connection) as ctx:
        traversal.ball(start_id=hub.pk, depth=6, direction="both", limit=5)
    walk = ctx.captured_queries[-1]["sql"]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + walk)
        plan = cursor.fetchone()[0]
    plan = plan if isinstance(plan, list) else json.loads(plan)

    def rows_of(node, kind):
        found = [node["Actual Rows"]] if node.get("Node Type") == kind else []
        for child in node.get("Plans", ()):
            found += rows_of(child, kind)
        return found

    (produced,) = rows_of(plan[0]["Plan"], "Recursive Union")
    assert produced <= (5 + 1) * (6 + 1)
