"""The construction loop's view of the graph: a walk beyond the prepared concepts."""

from __future__ import annotations

import pytest

from construction import keys
from kgreview.agents.adapters import DbGraphView

pytestmark = pytest.mark.django_db


def test_a_walk_beyond_the_prepared_concepts_reads_edges_and_proposals_once(
    f, django_assert_num_queries
):
    """Both kinds of link leaving an unprepared concept in one query; asked again, none."""
    a, b, c, d = (f.concept(n) for n in ("Alpha", "Beta", "Gamma", "Delta"))
    f.edge(a, b)
    edge = f.edge(b, c)
    proposal = f.edge_proposal(b, d)
    f.edge(b, d, "related")
    view = DbGraphView()
    view.prepare(node_keys=[keys.concept_key(a.pk)], dedup_keys=[])
    with django_assert_num_queries(1):
        links = view.successors("prerequisite", [keys.concept_key(b.pk)])
    assert {(x.kind, x.id) for x in links} == {("edge", edge.pk), ("proposal", proposal.pk)}
    with django_assert_num_queries(0):
        again = view.successors("prerequisite", [keys.concept_key(b.pk)])
    assert again == links
    with django_assert_num_queries(1):
        back = view.predecessors("prerequisite", [keys.concept_key(c.pk)])
    assert [(x.kind, x.id) for x in back] == [("edge", edge.pk)]
