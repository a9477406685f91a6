"""The topological order of acyclic relations (``kgreview.graph.order``): what a new edge
moves, that every write keeps every active edge running forwards, that cycles are
refused exactly when there is one, and that rows written past the services, data holding
a cycle and the migration's backfill all come out right."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from importlib import import_module
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import call_command
from django.utils import timezone

from kgreview.core.errors import CycleDetected, CycleUnchecked, DuplicateEdge
from kgreview.graph import order, precheck, services
from kgreview.graph.models import ConceptOrder, Edge, RelationType
from kgreview.graph.order import GAP, Placement, place, topological_positions
from kgreview.graph.precheck import Precheck

pytestmark = pytest.mark.django_db


# --- Building an order ------------------------------------------------------------------


def test_topological_positions_put_every_pair_forwards():
    """Each pair runs from a lower position to a higher one, positions GAP apart."""
    pairs = [(5, 9), (1, 5), (1, 9), (9, 3), (7, 3)]
    at = topological_positions(pairs)
    assert at is not None
    assert all(at[a] < at[b] for a, b in pairs)
    assert sorted(at.values()) == [GAP * i for i in range(1, 6)]


def test_topological_positions_find_no_order_for_a_cycle():
    """A cycle anywhere means there is no order at all."""
    assert topological_positions([(1, 2), (2, 3), (3, 1), (4, 5)]) is None


def test_topological_positions_follow_the_ids_the_way_most_pairs_point():
    """Unrelated concepts keep their id order, reversed when most pairs run from a later id
    to an earlier one (as "builds on" does), so new edges shaped like the old need no
    reordering."""
    upwards = topological_positions([(1, 2), (3, 4), (5, 6)])
    downwards = topological_positions([(2, 1), (4, 3), (6, 5)])
    assert upwards is not None and downwards is not None
    assert sorted(upwards, key=upwards.__getitem__) == [1, 2, 3, 4, 5, 6]
    assert sorted(downwards, key=downwards.__getitem__) == [6, 5, 4, 3, 2, 1]


# --- Placing one edge (pure) -----------------------------------------------------------


def _check(**values) -> Precheck:
    return Precheck(existing=None, acyclic=True, **values)


def test_an_edge_that_runs_forwards_moves_nothing():
    """Source before target: nothing to search, nothing to move."""
    assert place(_check(source_at=10, target_at=20), 1, 2) == Placement()


def test_ends_without_a_place_go_next_to_the_other_end():
    """A source new to the relation goes right before its target, a new target right
    after its source (halfway into the gap); two new ends go last."""
    new_source = place(_check(source_at=None, target_at=40, before_target=20), 1, 2)
    new_target = place(_check(source_at=40, target_at=None, after_source=60), 1, 2)
    both = place(_check(source_at=None, target_at=None, lowest=10, highest=90), 1, 2)
    assert new_source.moves == {1: 30} and new_target.moves == {2: 50}
    assert both.moves == {1: 90 + GAP, 2: 90 + 2 * GAP}


def test_a_used_up_gap_sends_a_new_end_to_the_front_or_the_back():
    """No integer left between two neighbours: the new end goes first, or last."""
    tight_before = _check(source_at=None, target_at=41, before_target=40, lowest=10)
    tight_after = _check(source_at=40, target_at=None, after_source=41, highest=90)
    assert place(tight_before, 1, 2).moves == {1: 10 - GAP}
    assert place(tight_after, 1, 2).moves == {2: 90 + GAP}


def test_a_source_nothing_leads_to_moves_before_the_target_without_a_search():
    """Against the order, but nothing leads into the source: it alone moves."""
    check = _check(source_at=50, target_at=20, before_target=10, target_has_out=True)
    assert place(check, 1, 2).moves == {1: 15}


def test_a_target_that_leads_nowhere_moves_after_the_source_without_a_search():
    """Against the order, the target leads nowhere: it alone moves."""
    check = _check(source_at=50, target_at=20, after_source=None, source_has_in=True)
    assert place(check, 1, 2).moves == {2: 50 + GAP}


def _against(**values) -> Precheck:
    """u (1) at 50 after v (2) at 20, both with edges to follow."""
    return _check(
        source_at=50,
        target_at=20,
        lowest=10,
        highest=90,
        source_has_in=True,
        target_has_out=True,
        **values,
    )


def test_concepts_between_the_ends_trade_places():
    """Pearce and Kelly: what leads to the source takes the lowest positions found, what
    the target leads to the rest, each in its old order."""
    check = _against(ahead={2: 20, 3: 30}, behind={1: 50, 4: 40})
    plan = place(check, 1, 2)
    moved = {2: 20, 3: 30, 1: 50, 4: 40} | plan.moves
    assert moved[4] < moved[1] < moved[2] < moved[3]
    assert sorted(moved.values()) == [20, 30, 40, 50] and plan.in_order


def test_a_search_that_reaches_the_source_is_a_cycle():
    """The target leads back to the source: a cycle among the concepts found."""
    plan = place(_against(ahead={2: 20, 3: 30, 1: 50}, behind={1: 50, 3: 30}), 1, 2)
    assert plan.cycle_among == {1, 2, 3} and not plan.moves


def test_a_closed_side_moves_past_the_other_end_when_the_other_is_too_wide(monkeypatch):
    """Only the side that ended within the limit moves, into the gap after the source."""
    monkeypatch.setattr(precheck, "REACH_LIMIT", 2)
    check = _against(ahead={2: 20, 3: 30}, behind={1: 50, 4: 40, 5: 45}, after_source=60)
    plan = place(check, 1, 2)
    assert set(plan.moves) == {2, 3}
    assert 50 < plan.moves[2] < plan.moves[3] < 60


def test_no_room_or_no_closed_side_is_refused_as_unchecked(monkeypatch):
    """Too narrow a gap, or both sides past the limit: not checked, never guessed."""
    monkeypatch.setattr(precheck, "REACH_LIMIT", 2)
    narrow = _against(ahead={2: 20, 3: 30}, behind={1: 50, 4: 40, 5: 45}, after_source=52)
    wide = _against(ahead={2: 20, 3: 30, 6: 35}, behind={1: 50, 4: 40, 5: 45})
    assert place(narrow, 1, 2).unchecked
    assert place(wide, 1, 2).unchecked


def test_an_unordered_relation_is_decided_by_the_searches_alone(monkeypatch):
    """Meeting searches: a cycle; one side seen whole: fine; neither: unchecked."""
    monkeypatch.setattr(precheck, "REACH_LIMIT", 2)
    loose = {"ordered": False, "source_has_in": True, "target_has_out": True}
    met = place(_check(**loose, ahead={2: None, 7: None}, behind={1: None, 7: None}), 1, 2)
    assert met.cycle_among == {1, 2, 7}
    closed = place(_check(**loose, ahead={2: None}, behind={1: None, 3: None, 4: None}), 1, 2)
    assert closed == Placement(in_order=False)
    open_ = place(
        _check(**loose, ahead={2: None, 5: None, 6: None}, behind={1: None, 3: None, 4: None}),
        1,
        2,
    )
    assert open_.unchecked


def test_rows_written_past_the_services_ask_for_a_repair():
    """An ordered relation with stray rows, or a small unordered one, is repaired first."""
    assert place(_check(source_at=10, target_at=20, stray=True), 1, 2).repair
    assert place(_check(ordered=False, small=True), 1, 2).repair
    assert not place(_check(ordered=False, small=True), 1, 2, repaired=True).repair


# --- Every write keeps the order -------------------------------------------------------


def _reaches(active: set[tuple[int, int]], start: int, goal: int) -> bool:
    following = defaultdict(list)
    for a, b in active:
        following[a].append(b)
    seen, stack = {start}, [start]
    while stack:
        for nxt in following[stack.pop()]:
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


def _active(rel) -> set[tuple[int, int]]:
    return set(
        Edge.objects.filter(relation=rel, status="active").values_list("source_id", "target_id")
    )


def _random_writes(f, rel, rng: random.Random, steps: int, *, allow_unchecked=False) -> dict:
    """Random adds, invalidations, direction swaps and restores; after each, the relation
    is in order and each add was refused exactly when it closed a cycle."""
    concepts = [f.concept() for _ in range(14)]
    seen = defaultdict(int)
    for _ in range(steps):
        active = _active(rel)
        roll = rng.random()
        if roll < 0.65 or not active:
            a, b = rng.sample(concepts, 2)
            cycle = _reaches(active, b.pk, a.pk)
            try:
                f.edge(a, b, rel.key)
                seen["added"] += 1
                assert not cycle and (a.pk, b.pk) not in active
            except CycleDetected:
                seen["cycle"] += 1
                assert cycle
            except DuplicateEdge:
                assert (a.pk, b.pk) in active
            except CycleUnchecked:
                assert allow_unchecked
                seen["unchecked"] += 1
        else:
            edge = Edge.objects.filter(relation=rel, status="active").order_by("?").first()
            if roll < 0.8:
                services.edge_invalidate(edge=edge, reason="random", acting_user=None)
                back = Edge.objects.filter(pk=edge.pk)
                if rng.random() < 0.5 and not _reaches(
                    _active(rel), edge.target_id, edge.source_id
                ):
                    services.edge_restore(edge=back.get(), acting_user=None)
            else:
                swapped = not _reaches(
                    active - {(edge.source_id, edge.target_id)}, edge.source_id, edge.target_id
                )
                refusals = (CycleDetected, DuplicateEdge, CycleUnchecked)
                try:
                    services.edge_supersede(
                        edge=edge, source=edge.target, target=edge.source, acting_user=None
                    )
                    assert swapped
                except refusals[: 3 if allow_unchecked else 2] as exc:
                    assert not swapped or isinstance(exc, CycleUnchecked)
        rel.refresh_from_db()
        if rel.ordered:
            assert order.edges_out_of_order(rel.pk) == []
    return seen


def test_every_write_keeps_every_active_edge_running_forwards(f):
    """Adds, invalidations, restores and swapped directions in random order: the order
    holds after each, and a cycle is refused exactly when the edge would close one."""
    rel = f.relation("prerequisite")
    seen = _random_writes(f, rel, random.Random(15), 160)
    assert rel.ordered
    assert seen["added"] > 30 and seen["cycle"] > 5


def test_a_small_search_limit_moves_one_side_or_refuses_in_words(f, monkeypatch):
    """With searches cut short, an accepted edge still keeps the order and a refusal
    never lets a cycle through; what cannot be told is refused, not guessed."""
    monkeypatch.setattr(precheck, "REACH_LIMIT", 2)
    rel = f.relation("builds_on")
    _random_writes(f, rel, random.Random(7), 160, allow_unchecked=True)
    assert rel.ordered


def test_an_unordered_relation_still_refuses_exactly_the_cycles(f, monkeypatch):
    """Without an order (and too big to rebuild inline) the bounded searches decide."""
    monkeypatch.setattr(precheck, "INLINE_REBUILD", 0)
    rel = f.relation("part_of")
    first = f.edge(f.concept(), f.concept(), "part_of")  # an empty relation is ordered at once
    RelationType.objects.filter(pk=rel.pk).update(ordered=False)
    rel.refresh_from_db()
    seen = _random_writes(f, rel, random.Random(3), 120)
    assert not RelationType.objects.get(pk=rel.pk).ordered
    assert seen["cycle"] > 3
    assert not Edge.objects.filter(relation=rel, pk__gt=first.pk, in_order=True).exists()


def test_a_forward_edge_on_a_deep_chain_visits_no_concept(f, django_assert_max_num_queries):
    """The regression of issue 15: the check walked everything downstream of the target.
    On a 120-long chain, adding an edge that runs forwards searches nothing, one against
    the order searches only what lies between its ends, and a concept new to the relation
    is placed beside its neighbour, so its later edges there stay short."""
    rel = f.relation("prerequisite")
    chain = [f.concept() for _ in range(120)]
    for a, b in zip(chain, chain[1:], strict=False):
        f.edge(a, b)
    forwards = precheck.edge_precheck(relation=rel, source_id=chain[0].pk, target_id=chain[60].pk)
    assert forwards.ahead == {} and forwards.behind == {}
    side = f.concept()
    f.edge(chain[50], side)  # placed right after chain[50]
    against = precheck.edge_precheck(relation=rel, source_id=side.pk, target_id=chain[50].pk)
    assert set(against.ahead) == {chain[50].pk, side.pk}  # a cycle, seen at once
    with pytest.raises(CycleDetected):
        f.edge(side, chain[50])
    nearby = precheck.edge_precheck(relation=rel, source_id=chain[53].pk, target_id=side.pk)
    assert len(nearby.ahead) + len(nearby.behind) <= 6
    with django_assert_max_num_queries(8):
        f.edge(chain[53], side)
    with django_assert_max_num_queries(8):
        f.edge(chain[0], chain[119])
    with pytest.raises(CycleDetected, match="would close a cycle"):
        f.edge(chain[119], chain[0])
    assert order.edges_out_of_order(rel.pk) == []


def test_a_backwards_edge_reorders_only_what_lies_between_its_ends(f):
    """B is placed before A; adding A -> B moves B (and what it leads to) after A and
    leaves everything else where it was."""
    rel = f.relation("prerequisite")
    b, b2, x, a0, a = (f.concept(n) for n in ("B", "B2", "X", "A0", "A"))
    f.edge(b, b2)
    f.edge(a0, a)
    f.edge(x, f.concept("Y"))
    before = dict(ConceptOrder.objects.filter(relation=rel).values_list("concept_id", "position"))
    assert before[b.pk] < before[a.pk]
    f.edge(a, b)
    after = dict(ConceptOrder.objects.filter(relation=rel).values_list("concept_id", "position"))
    assert after[a0.pk] < after[a.pk] < after[b.pk] < after[b2.pk]
    assert after[x.pk] == before[x.pk]
    assert order.edges_out_of_order(rel.pk) == []


def test_a_merge_and_its_undo_keep_the_order(f):
    """Edges moved onto the survivor and brought back by the unmerge stay in order; a
    merge that would close a cycle is still refused whole."""
    rel = f.relation("prerequisite")
    a, b, c, d, e = (f.concept(n) for n in "ABCDE")
    f.edge(a, b)
    f.edge(c, d)
    f.edge(d, e)
    services.concept_merge(loser=e, survivor=a, acting_user=None)  # d -> a, ahead of a -> b
    assert order.edges_out_of_order(rel.pk) == []
    services.concept_unmerge(loser=e, acting_user=None)
    assert order.edges_out_of_order(rel.pk) == []
    with pytest.raises(CycleDetected, match="would create a prerequisite cycle: C → D → C"):
        services.concept_merge(loser=e, survivor=c, acting_user=None)  # d -> e becomes d -> c
    assert Edge.objects.filter(source=d, target=e, status="active").exists()


def test_a_relation_type_made_later_starts_with_an_empty_order(f):
    """A new acyclic relation is ordered from the start and its edges keep it."""
    rel = services.relation_type_create(
        key="depends_on", label="Depends on", verb="depends on", acyclic=True, acting_user=None
    )
    assert rel.ordered
    a, b, c = (f.concept() for _ in range(3))
    f.edge(a, b, "depends_on")
    f.edge(b, c, "depends_on")
    with pytest.raises(CycleDetected):
        f.edge(c, a, "depends_on")
    assert order.edges_out_of_order(rel.pk) == []
    assert set(Edge.objects.filter(relation=rel).values_list("in_order", flat=True)) == {True}


# --- Rows written past the services, data with a cycle, the backfill ----------------------


def _raw_edge(a, b, rel) -> Edge:
    """An edge written without the services, as a bulk copy or legacy data would be."""
    now = timezone.now()
    return Edge.objects.create(
        source=a,
        target=b,
        relation=rel,
        confidence=0.5,
        reason="Raw.",
        valid_at=now,
        recorded_at=now,
    )


def test_rows_written_past_the_services_are_taken_into_the_order(f):
    """A raw row running against the order is found by the next write, which rebuilds the
    (small) relation's order; a cycle through the raw row is refused."""
    rel = f.relation("prerequisite")
    a, b, c = (f.concept(n) for n in "ABC")
    f.edge(a, b)
    raw = _raw_edge(c, a, rel)
    assert not raw.in_order
    f.edge(f.concept("D"), c)
    assert Edge.objects.get(pk=raw.pk).in_order
    assert order.edges_out_of_order(rel.pk) == []
    with pytest.raises(CycleDetected, match="C → A → B → C"):
        f.edge(b, c)


def test_a_cycle_among_raw_rows_leaves_the_relation_unordered_and_still_checked(f):
    """No order exists over a cycle: the relation is marked unordered, a new cycle is
    still refused by the searches, and once the cycle is invalidated the command orders
    the relation again."""
    rel = f.relation("prerequisite")
    a, b, c, d = (f.concept(n) for n in "ABCD")
    _raw_edge(a, b, rel)
    closing = _raw_edge(b, a, rel)
    f.edge(c, d)
    rel.refresh_from_db()
    assert not rel.ordered
    with pytest.raises(CycleDetected, match="D → C"):
        f.edge(d, c)
    services.edge_invalidate(edge=closing, reason="Breaks the cycle.", acting_user=None)
    out = StringIO()
    call_command("order_relations", "prerequisite", "--json", stdout=out)
    assert json.loads(out.getvalue()) == {"ordered": {"prerequisite": True}}
    assert RelationType.objects.get(pk=rel.pk).ordered
    assert order.edges_out_of_order(rel.pk) == []


def test_stray_rows_in_a_large_relation_mark_it_unordered(f, monkeypatch):
    """Too many edges to rebuild inside a decision: the relation is checked without an
    order from then on, and still refuses a cycle through the stray row."""
    monkeypatch.setattr(precheck, "INLINE_REBUILD", 1)
    rel = f.relation("prerequisite")
    a, b, c = (f.concept(n) for n in "ABC")
    f.edge(a, b)
    _raw_edge(b, c, rel)
    f.edge(a, f.concept("D"))
    assert not RelationType.objects.get(pk=rel.pk).ordered
    with pytest.raises(CycleDetected, match="A → B → C → A"):
        f.edge(c, a)


def test_the_search_limit_refuses_in_words_when_neither_side_ends(f, monkeypatch):
    """An unordered relation whose ends both reach past the limit: refused, saying why."""
    monkeypatch.setattr(precheck, "INLINE_REBUILD", 0)
    monkeypatch.setattr(precheck, "REACH_LIMIT", 2)
    rel = f.relation("prerequisite")
    hub_in, hub_out = f.concept("In"), f.concept("Out")
    for _ in range(3):
        f.edge(f.concept(), hub_in)
        f.edge(hub_out, f.concept())
    RelationType.objects.filter(pk=rel.pk).update(ordered=False)
    with pytest.raises(CycleUnchecked, match="could not be checked for a cycle"):
        f.edge(hub_in, hub_out)
    assert not Edge.objects.filter(source=hub_in, target=hub_out).exists()


def test_the_migration_builds_the_orders_and_marks_a_cyclic_relation_unordered(f):
    """The backfill: every acyclic relation's order from its active edges, its rows marked
    in order; one holding a cycle gets none; other relations' rows are in order."""
    pre, part = f.relation("prerequisite"), f.relation("part_of")
    a, b, c = (f.concept(n) for n in "ABC")
    f.edge(a, b)
    f.edge(b, c)
    f.edge(a, c, "related")
    _raw_edge(a, b, part)
    _raw_edge(b, a, part)
    ConceptOrder.objects.all().delete()
    Edge.objects.update(in_order=False)

    import_module("kgreview.graph.migrations.0012_concept_order").build_orders(apps, None)

    assert RelationType.objects.get(pk=pre.pk).ordered
    assert not RelationType.objects.get(pk=part.pk).ordered
    assert order.edges_out_of_order(pre.pk) == []
    assert set(Edge.objects.exclude(relation=part).values_list("in_order", flat=True)) == {True}
    assert set(Edge.objects.filter(relation=part).values_list("in_order", flat=True)) == {False}


def test_the_check_command_reports_edges_out_of_order(f):
    """``order_relations --check`` names nothing on a graph the services wrote, and exits
    1 when an ordered relation has an edge running against its order."""
    rel = f.relation("prerequisite")
    a, b = f.concept("A"), f.concept("B")
    f.edge(a, b)
    out = StringIO()
    call_command("order_relations", "prerequisite", "--check", "--json", stdout=out)
    assert json.loads(out.getvalue()) == {"out_of_order": {"prerequisite": []}}
    raw = _raw_edge(b, f.concept("C"), rel)
    with pytest.raises(SystemExit):
        call_command("order_relations", "prerequisite", "--check", stdout=StringIO())
    assert order.edges_out_of_order(rel.pk) == [raw.pk]
