"""Each serializer's answer, built from real rows, holds to its published schema,
including the edge cases: a retired or merged concept, an edge without evidence, a quote
on a page of a PDF under a heading path, a missing path and a cycle."""

from __future__ import annotations

import pytest
from django.utils import timezone

from kgreview.api import schemas as s
from kgreview.api import serializers as out
from kgreview.graph import history, learning, search, traversal
from kgreview.graph.models import Concept, Edge, RelationType
from kgreview.graph.selectors import concept_names, edges_active
from kgreview.graph.sources import RevisionPlaces
from tests.paged import OSPF_QUOTE, pdf

pytestmark = pytest.mark.django_db


@pytest.fixture
def rows(f):
    """A PDF-quoted edge (page 2, Routing › OSPF), a Markdown-quoted one, an edge without
    evidence, and a retired concept beside them."""
    ls, ospf, vs = f.concept("Link-state routing"), f.concept("OSPF"), f.concept("Vector search")
    lesson = f.lesson("vectors").current_revision
    emb = f.concept("Embeddings")
    retired = f.concept("Old idea")
    Concept.objects.filter(pk=retired.pk).update(
        status=Concept.Status.RETIRED, retired_at=timezone.now()
    )
    retired.refresh_from_db()
    return {
        "ls": ls,
        "ospf": ospf,
        "vs": vs,
        "emb": emb,
        "retired": retired,
        "pdf": f.edge(ls, ospf, evidence=f.evidence(pdf(), OSPF_QUOTE)),
        "md": f.edge(
            emb,
            vs,
            evidence=f.evidence(
                lesson, "Before learning vector search you should understand embeddings."
            ),
        ),
        "bare": f.edge(ospf, vs, "related"),
    }


def test_concept_ref_fits_its_schema(rows):
    """A reference is an id and a name, for a retired concept too."""
    body = out.concept_ref(rows["retired"])
    assert s.ConceptRef.model_validate(body).name == "Old idea"


def test_relation_out_fits_its_schema_now_and_at_an_instant(rows):
    """Every relation type, live or at a past instant (when each listed one was active)."""
    RelationType.objects.filter(key="related").update(active=False, retired_at=timezone.now())
    for relation in RelationType.objects.order_by("key"):
        now = s.RelationOut.model_validate(out.relation_out(relation, at=None))
        then = s.RelationOut.model_validate(out.relation_out(relation, at=timezone.now()))
        assert now.active == relation.active and then.active is True
    prerequisite = out.relation_out(RelationType.objects.get(key="prerequisite"), at=None)
    assert prerequisite["study_order"] == learning.STUDY_ORDER["prerequisite"]


def test_search_out_fits_its_schema_with_a_retired_hit_and_with_none(rows):
    """Hits carry each concept's status; an empty search is an empty list."""
    hits = search.concept_search(q="Old idea", limit=5, at=None)
    body = s.SearchOut.model_validate(out.search_out(query="Old idea", at=None, hits=hits))
    assert body.query == "Old idea"
    empty = out.search_out(query="zzzz", at=timezone.now(), hits=[])
    assert s.SearchOut.model_validate(empty).results == []


def test_edge_rows_fit_the_schema_with_and_without_evidence(rows):
    """The PDF quote is on page 2 under Routing › OSPF, the Markdown one has no page and
    its headings, the bare edge has no evidence."""
    by_id = out.edges_by_id([rows["pdf"].pk, rows["md"].pk, rows["bare"].pk])
    for body in by_id.values():
        s.EdgeOut.model_validate(body)
    pdf_evidence = s.EdgeOut.model_validate(by_id[rows["pdf"].pk]).evidence
    assert (pdf_evidence.page, pdf_evidence.section) == (2, ["Routing", "OSPF"])
    assert by_id[rows["md"].pk]["evidence"]["page"] is None
    assert by_id[rows["bare"].pk]["evidence"] is None


def test_edge_out_reads_one_row_with_a_known_place(rows):
    """``edge_out`` builds one ``EdgeOut`` from a values row whose revision is known."""
    (row,) = Edge.objects.filter(pk=rows["pdf"].pk).values(*out.EDGE_VALUES)
    places = RevisionPlaces()
    places.load([row["evidence_revision_id"]])
    assert s.EdgeOut.model_validate(out.edge_out(row, places)).evidence.page == 2


def test_concept_detail_out_fits_its_schema_for_live_retired_and_merged(rows):
    """A live concept with edges both ways; a retired one with none; a merged one that
    names where it went."""
    ospf = rows["ospf"]
    edges = out.edge_rows(edges_active().filter(pk__in=[rows["pdf"].pk, rows["bare"].pk]))
    body = s.ConceptDetailOut.model_validate(
        out.concept_detail_out(ospf, at=None, existed=True, edges=edges)
    )
    assert [e.id for e in body.incoming] == [rows["pdf"].pk]
    assert [e.id for e in body.outgoing] == [rows["bare"].pk]
    retired = s.ConceptDetailOut.model_validate(
        out.concept_detail_out(rows["retired"], at=None, existed=False, edges=[])
    )
    assert retired.status == "retired" and retired.merged_into is None
    twin = rows["emb"]
    Concept.objects.filter(pk=twin.pk).update(
        status=Concept.Status.MERGED, merged_into=rows["vs"], merged_at=timezone.now()
    )
    twin = Concept.objects.select_related("merged_into").get(pk=twin.pk)
    merged = s.ConceptDetailOut.model_validate(
        out.concept_detail_out(twin, at=timezone.now(), existed=False, edges=[])
    )
    assert merged.merged_into.id == rows["vs"].pk


def test_neighbours_out_fits_its_schema(rows):
    """The ball around OSPF with the edges among its concepts."""
    ospf = rows["ospf"]
    found = traversal.ball(
        start_id=ospf.pk, depth=2, direction="both", relation_ids=[], at=None, limit=10
    )
    edges = traversal.edges_within(node_ids=found.distance, relation_ids=[], at=None)
    body = s.NeighboursOut.model_validate(
        out.neighbours_out(
            center=ospf,
            existed=True,
            depth=2,
            direction="both",
            relations=[],
            at=None,
            found=found,
            names=concept_names(found.distance),
            edges=out.edge_rows(edges.order_by("pk")),
        )
    )
    assert body.nodes[0].id == ospf.pk and body.nodes[0].distance == 0
    assert {e.id for e in body.edges} >= {rows["pdf"].pk, rows["bare"].pk}


def test_path_out_fits_its_schema_found_and_not(rows):
    """A path of two hops, along and against nothing; and none within reach."""
    ls, vs = rows["ls"], rows["vs"]
    hops = traversal.shortest_path(
        start_id=ls.pk, goal_id=vs.pk, direction="both", relation_ids=[], at=None, max_depth=4
    )
    common = {"max_depth": 4, "direction": "both", "relations": [], "at": None}
    found = s.PathOut.model_validate(
        out.path_out(
            start=ls,
            goal=vs,
            hops=hops,
            edges=out.edges_by_id(h.edge_id for h in hops),
            names=concept_names([ls.pk] + [h.to_id for h in hops]),
            **common,
        )
    )
    assert found.found and found.length == 2 and found.message.endswith("2 steps.")
    missing = s.PathOut.model_validate(
        out.path_out(start=ls, goal=rows["retired"], hops=None, edges={}, names={}, **common)
    )
    assert not missing.found and missing.length is None and missing.hops == []


def test_learning_path_out_fits_its_schema_in_order_and_in_a_cycle(rows, f):
    """A study order for OSPF; then, with builds_on one way and prerequisite the other,
    a cycle of needs named with its edges."""
    via = ["prerequisite", "builds_on"]
    relations = {r.key: r.pk for r in RelationType.objects.filter(key__in=via)}
    orders = {relations[k]: learning.STUDY_ORDER[k] for k in via}
    keys = {relations[k]: k for k in via}

    def path_of(target):
        result = learning.learning_path(
            target_id=target.pk, relations=orders, at=None, name_lookup=concept_names
        )
        cycle_edges = out.edges_by_id(e.edge_id for e in result.cycle) if result.cycle else {}
        return s.LearningPathOut.model_validate(
            out.learning_path_out(
                target=target, via=via, at=None, result=result, keys=keys, cycle_edges=cycle_edges
            )
        )

    ordered = path_of(rows["ospf"])
    assert ordered.ok and ordered.cycle is None
    assert [st.concept.id for st in ordered.steps] == [rows["ls"].pk, rows["ospf"].pk]
    assert ordered.steps[1].needs[0].relation == "prerequisite"
    # "OSPF builds on link-state routing" read backwards: OSPF first, yet OSPF needs it.
    f.edge(rows["ls"], rows["ospf"], "builds_on")
    cyclic = path_of(rows["ospf"])
    assert not cyclic.ok and len(cyclic.cycle.edges) == 2
    assert "cycle" in cyclic.cycle.message


def test_explain_out_fits_its_schema_with_paged_evidence_and_without(rows, f):
    """An accepted proposal's edge quoting page 2 of a PDF, with its agent and trail;
    and a bare edge with neither evidence nor proposal."""
    from kgreview.review.decide import decisions

    doc = f.lesson("explained")
    p = f.edge_proposal(rows["emb"], rows["ls"], doc=doc)
    decisions.proposal_accept(proposal_id=p.pk, acting_user=f.user("rita", role="reviewer"))
    accepted = Edge.objects.get(provenance__proposal=p)

    def explain(edge_id):
        edge = Edge.objects.select_related(*out.EXPLAIN_RELATED).get(pk=edge_id)
        return s.ExplainOut.model_validate(out.edge_explanation(edge, at=None))

    paged = explain(rows["pdf"].pk)
    assert (paged.evidence.page, paged.evidence.section) == (2, ["Routing", "OSPF"])
    assert paged.evidence.in_current_revision and paged.proposal is None
    decided = explain(accepted.pk)
    assert decided.proposal.id == p.pk and [t.action for t in decided.trail] == ["accept"]
    bare = explain(rows["bare"].pk)
    assert bare.evidence is None and bare.edge.evidence is None and bare.trail == []


def test_diff_out_fits_its_schema_with_added_invalidated_and_merged(rows, f):
    """A diff naming an added and an invalidated edge and a merged concept."""
    from kgreview.graph import services

    since = timezone.now()
    services.edge_invalidate(edge=rows["bare"], reason="Too vague.", acting_user=None)
    added = f.edge(rows["ls"], rows["vs"], "related")
    Concept.objects.filter(pk=rows["emb"].pk).update(
        status=Concept.Status.MERGED, merged_into=rows["vs"], merged_at=timezone.now()
    )
    d = history.graph_diff(since=since, until=timezone.now(), limit=50)
    rows_by_id = out.edges_by_id(
        [e.pk for e in (*d.added, *d.invalidated)]
        + [e.pk for pair in d.superseded for e in pair if e is not None]
    )
    body = s.DiffOut.model_validate(out.diff_out(d, rows_by_id))
    assert [e.id for e in body.invalidated] == [rows["bare"].pk]
    assert body.concepts_merged[0].into.id == rows["vs"].pk
    assert [e.id for e in body.added] == [added.pk] and body.counts.added == 1
