"""Inverse twins: "A is a prerequisite for B" and "B builds on A" state one fact
(``graph.rules.fact_keys``), so the queue holds one of them, accepting the second is
refused in words naming the first, whichever path accepts it, and settling the queue
closes the open twin of an edge just accepted."""

from __future__ import annotations

import pytest
from django.utils import timezone

from kgreview.core.errors import DomainError, DuplicateProposal
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph
from kgreview.graph.models import Edge, RelationType
from kgreview.review.decide import bulk, decisions, mend, undo
from kgreview.review.decide.ends import EndChoice
from kgreview.review.kinds.add_edge import EdgeEdits
from kgreview.review.services import ProposalSpec, proposals_create_many
from tests.review.conftest import assert_queue_decidable, card, reload

pytestmark = pytest.mark.django_db

QUOTE = "Before learning vector search you should understand embeddings."


@pytest.fixture
def ends(f):
    """Retrieval-augmented generation (RAG) and GraphRAG, with a lesson to quote."""
    return f.concept("Retrieval-augmented generation"), f.concept("GraphRAG"), f.lesson(slug="g")


def _unpaired() -> None:
    """Declare no pair, as a graph did before (its twins queued then stay queued)."""
    RelationType.objects.filter(key__in=["prerequisite", "builds_on"]).update(inverse=None)


def _pair() -> None:
    graph.relation_type_pair(
        relation=RelationType.objects.get(key="prerequisite"),
        inverse=RelationType.objects.get(key="builds_on"),
        acting_user=None,
    )


def test_the_starting_vocabulary_pairs_prerequisite_and_builds_on(db):
    """The data migration declares the pair both ways round."""
    pre = RelationType.objects.select_related("inverse").get(key="prerequisite")
    builds = RelationType.objects.select_related("inverse").get(key="builds_on")
    assert pre.inverse == builds and builds.inverse == pre
    assert not RelationType.objects.filter(symmetric=True, inverse__isnull=False).exists()


# --- The queue ---------------------------------------------------------------------------


def test_a_twin_is_not_queued_while_its_inverse_waits(f, ends):
    """The open-proposal lookup asks for the twin's key too, and says which one waits."""
    rag, graphrag, doc = ends
    first = f.edge_proposal(rag, graphrag, "prerequisite", doc=doc)
    with pytest.raises(DuplicateProposal, match=rf"proposal #{first.pk}") as refused:
        f.edge_proposal(graphrag, rag, "builds_on", doc=doc)
    assert "same fact" in str(refused.value) and refused.value.proposal_id == first.pk


def test_an_unrelated_edge_between_the_same_ends_is_queued(f, ends):
    """Only the inverse with the ends swapped is a twin: "GraphRAG is a prerequisite for
    RAG" or "RAG builds on GraphRAG" are other facts."""
    rag, graphrag, doc = ends
    f.edge_proposal(rag, graphrag, "prerequisite", doc=doc)
    other = f.edge_proposal(rag, graphrag, "builds_on", doc=doc)
    assert other.pk and other.status == "pending"


def test_a_batch_queues_one_of_two_twins_and_reports_the_other(f, ends):
    """Two twins in one batch of an agent: the second comes back as a duplicate."""
    rag, graphrag, doc = ends

    def spec(src, dst, rel):
        return ProposalSpec(
            kind="add_edge",
            payload={
                "source": {"name": src.name, "concept_id": src.pk, "match": "exact", "score": 100},
                "target": {"name": dst.name, "concept_id": dst.pk, "match": "exact", "score": 100},
                "relation": rel,
            },
            confidence=0.9,
            reason="Stated.",
            evidence=f.evidence(doc.current_revision, QUOTE),
        )

    made = proposals_create_many(
        [spec(rag, graphrag, "prerequisite"), spec(graphrag, rag, "builds_on")]
    )
    assert made[0].pk and isinstance(made[1], DuplicateProposal)
    assert "earlier in this batch" in str(made[1])


def test_a_symmetric_relation_keeps_its_ends_in_one_key(f, ends):
    """A symmetric relation is its own inverse: the swapped pair has the same key."""
    rag, graphrag, doc = ends
    f.edge_proposal(rag, graphrag, "related", doc=doc)
    with pytest.raises(DuplicateProposal):
        f.edge_proposal(graphrag, rag, "related", doc=doc)


# --- Accepting ---------------------------------------------------------------------------


def test_accepting_the_twin_of_an_edge_is_refused_naming_that_edge(f, ends, reviewer):
    """The issue's case, in the words it asks for: the edge that states it, by number."""
    rag, graphrag, doc = ends
    p = f.edge_proposal(graphrag, rag, "builds_on", doc=doc)
    edge = f.edge(rag, graphrag, "prerequisite")
    with pytest.raises(DomainError) as refused:
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    words = str(refused.value)
    assert (
        f'"GraphRAG" builds on "Retrieval-augmented generation": "Retrieval-augmented '
        f'generation" is a prerequisite for "GraphRAG" already states this (edge #{edge.pk}).'
    ) in words
    assert Edge.objects.filter(relation__key="builds_on").count() == 0


def test_the_card_of_a_twin_says_which_edge_states_it(f, ends, reviewer):
    """Its blockers name the edge, and its side names it with a link."""
    rag, graphrag, doc = ends
    p = f.edge_proposal(graphrag, rag, "builds_on", doc=doc)
    edge = f.edge(rag, graphrag, "prerequisite")
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
        page = card(reviewer, p, **headers)
        assert "already states this" in page and f"edge #{edge.pk}" in page
        assert "The same fact" in page


def test_the_card_names_an_open_twin_queued_before_the_pair(f, ends, reviewer):
    """Twins queued before the pair was declared: each card names the other."""
    rag, graphrag, doc = ends
    _unpaired()
    first = f.edge_proposal(rag, graphrag, "prerequisite", doc=doc)
    second = f.edge_proposal(graphrag, rag, "builds_on", doc=doc)
    _pair()
    page = card(reviewer, second)
    assert f"proposal #{first.pk}" in page and "Also waiting as" in page
    page = card(reviewer, first, HTTP_HX_REQUEST="true")
    assert f"proposal #{second.pk}" in page


def test_accepting_one_twin_supersedes_the_other_with_the_reason(f, ends, reviewer):
    """Reconcile closes the open twin, as it closes an exact one; undo reopens it."""
    rag, graphrag, doc = ends
    _unpaired()
    first = f.edge_proposal(rag, graphrag, "prerequisite", doc=doc)
    second = f.edge_proposal(graphrag, rag, "builds_on", doc=doc)
    _pair()
    out = decisions.proposal_accept(proposal_id=first.pk, acting_user=reviewer)
    edge = out.edges[0]
    assert reload(second).status == "superseded"
    note = reload(second).decisions.last().note
    assert "stated the other way round" in note and f"edge #{edge.pk}" in note
    assert_queue_decidable()
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    assert reload(second).status == "pending" and reload(first).status == "pending"


def test_bulk_accept_refuses_a_twin_of_an_edge_in_the_same_words(f, ends, reviewer):
    rag, graphrag, doc = ends
    p = f.edge_proposal(graphrag, rag, "builds_on", doc=doc)
    edge = f.edge(rag, graphrag, "prerequisite")
    result = bulk.proposals_bulk_decide(acting_user=reviewer, proposal_ids=[p.pk], action="accept")
    assert result.done == []
    ((pk, words),) = result.refused
    assert pk == p.pk and f"already states this (edge #{edge.pk})" in words


def test_bulk_accept_of_two_twins_accepts_one(f, ends, reviewer):
    """Two twins inside one batch: the first is accepted, the second refused in words."""
    rag, graphrag, doc = ends
    _unpaired()
    first = f.edge_proposal(rag, graphrag, "prerequisite", doc=doc)
    second = f.edge_proposal(graphrag, rag, "builds_on", doc=doc)
    _pair()
    result = bulk.proposals_bulk_decide(
        acting_user=reviewer, proposal_ids=[first.pk, second.pk], action="accept"
    )
    assert result.done == [first.pk]
    ((pk, words),) = result.refused
    assert pk == second.pk and "stated the other way round" in words
    assert graph_selectors.edges_active().count() == 1
    assert reload(second).status in {"pending", "superseded"}


def _row(src, dst, rel):
    now = timezone.now()
    row = graph.edge_row(
        source_id=src.pk,
        target_id=dst.pk,
        relation=rel,
        weight=1.0,
        confidence=0.9,
        reason="Stated.",
        evidence=None,
        valid_at=now,
        recorded_at=now,
    )
    return row, src, dst


@pytest.mark.parametrize("acyclic", [True, False])
def test_the_set_writer_refuses_twins(f, ends, acyclic):
    """``graph.bulk.edges_add_checked`` holds every row to the rule, for an acyclic pair
    (admitted against its order) and a plain one: a twin of the graph and a twin within
    the set, each refused naming the edge that states it."""
    from kgreview.graph.bulk import edges_add_checked

    rag, graphrag, _ = ends
    third = f.concept("Knowledge graphs")
    if acyclic:
        pre, builds = (RelationType.objects.get(key=k) for k in ("prerequisite", "builds_on"))
    else:
        pre = graph.relation_type_create(key="uses", label="Uses", verb="uses", acting_user=None)
        builds = graph.relation_type_create(
            key="used_by", label="Used by", verb="is used by", inverse=pre, acting_user=None
        )
    edge = f.edge(rag, graphrag, pre.key)
    out = edges_add_checked(
        [
            _row(graphrag, rag, builds),
            _row(third, graphrag, pre),
            _row(graphrag, third, builds),
        ]
    )
    assert f"already states this (edge #{edge.pk})" in str(out[0])
    assert out[1] is None
    assert "already states this" in str(out[2]) and "Knowledge graphs" in str(out[2])
    assert Edge.objects.filter(relation=builds).count() == 0


def test_editing_an_edge_into_a_twin_is_refused(f, ends, reviewer):
    """Edit-accept: swapping a proposal's direction and relation into the twin of an
    edge is refused in the rule book's words."""
    rag, graphrag, doc = ends
    edge = f.edge(rag, graphrag, "prerequisite")
    p = f.edge_proposal(rag, graphrag, "builds_on", doc=doc)
    with pytest.raises(DomainError, match=rf"already states this \(edge #{edge.pk}\)"):
        decisions.proposal_edit_accept(
            proposal_id=p.pk, acting_user=reviewer, edits=EdgeEdits(swap_direction=True)
        )
    assert reload(p).status == "pending"


def test_adding_the_twin_of_an_edge_by_hand_is_refused(f, ends, reviewer):
    rag, graphrag, _ = ends
    edge = f.edge(rag, graphrag, "prerequisite")
    with pytest.raises(DomainError, match=rf"already states this \(edge #{edge.pk}\)"):
        mend.edge_add_by_hand(
            acting_user=reviewer,
            source=EndChoice(concept_id=graphrag.pk),
            target=EndChoice(concept_id=rag.pk),
            relation="builds_on",
            note="Obvious.",
        )
    assert graph_selectors.edges_active().count() == 1


def test_adding_by_hand_supersedes_an_agents_open_twin(f, ends, reviewer):
    """Mending is decided at once: an agent's open twin is settled, not a refusal."""
    rag, graphrag, doc = ends
    p = f.edge_proposal(graphrag, rag, "builds_on", doc=doc)
    out = mend.edge_add_by_hand(
        acting_user=reviewer,
        source=EndChoice(concept_id=rag.pk),
        target=EndChoice(concept_id=graphrag.pk),
        relation="prerequisite",
        note="Obvious.",
    )
    assert reload(p).status == "superseded"
    assert f"edge #{out.edges[0].pk}" in reload(p).decisions.last().note
    assert_queue_decidable()


def test_the_graph_service_refuses_a_twin_edge(f, ends):
    """The single service (``edge_create``) asks the same rule."""
    rag, graphrag, _ = ends
    edge = f.edge(rag, graphrag, "prerequisite")
    with pytest.raises(DomainError, match=rf"already states this \(edge #{edge.pk}\)"):
        f.edge(graphrag, rag, "builds_on")
    f.edge(graphrag, rag, "applies_to")  # no inverse declared: another fact


def test_a_merge_that_makes_two_open_twins_supersedes_the_later(f, ends, curator):
    """ "Graph-RAG builds on RAG" re-pointed onto GraphRAG by a merge is the twin of the
    open "RAG is a prerequisite for GraphRAG": it closes with the reason."""
    rag, graphrag, doc = ends
    dup = f.concept("Graph-RAG")
    first = f.edge_proposal(rag, graphrag, "prerequisite", doc=doc)
    second = f.edge_proposal(dup, rag, "builds_on", doc=doc)
    mend.concepts_merge_by_hand(
        acting_user=curator, loser_id=dup.pk, survivor_id=graphrag.pk, note="One concept."
    )
    assert reload(first).status == "pending"
    assert reload(second).status == "superseded"
    note = reload(second).decisions.last().note
    assert f"proposal #{first.pk}" in note and "other way round" in note
    assert_queue_decidable()
