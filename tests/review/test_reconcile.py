"""The queue stays decidable: every way the graph changes under an open proposal settles it.

After every scenario the whole queue is checked: no open proposal has a blocker (an end
that is retired, merged, rejected or missing; a fact already in the graph) and no open
concept proposal names a concept that already exists.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, Edge
from kgreview.review.decide import bulk, decisions, mend, undo
from kgreview.review.decide.blockers import (
    proposal_blockers,
)
from kgreview.review.decide.decisions import EdgeEdits, ProposalStale
from kgreview.review.decide.ends import EndChoice
from kgreview.review.models import Decision, Proposal
from kgreview.review.services import proposal_create
from tests.review.conftest import assert_queue_decidable, reload

pytestmark = pytest.mark.django_db


def end(p: Proposal, role: str) -> dict:
    return reload(p).payload[role]


# --- twins after an edit ----------------------------------------------------------------


def test_edit_naming_a_pending_concept_accepts_that_proposal_instead_of_a_twin(f, reviewer):
    """Typing "Queries" where "Queries" waits as a concept proposal accepts that proposal,
    and the other edges waiting for it now point at the concept."""
    doc = f.lesson()
    queries = f.concept_proposal("Queries", doc=doc)
    waiting = f.edge_proposal(queries, f.concept("Vector search"), doc=doc)
    p = f.edge_proposal(f.concept("Embeddings"), f.concept("Rerankers"), doc=doc)
    out = decisions.proposal_edit_accept(
        proposal_id=p.pk, acting_user=reviewer, edits=EdgeEdits(target=EndChoice(name="queries"))
    )
    (edge,) = out.edges
    assert edge.target.name == "Queries" and reload(queries).status == "accepted"
    assert reload(queries).concept == edge.target
    assert out.also_decided == [queries]
    source = end(waiting, "source")
    assert source["concept_id"] == edge.target.pk and source["match"] == "exact"
    assert reload(waiting).source_key == f"c{edge.target.pk}"
    assert Concept.objects.filter(name__iexact="queries").count() == 1
    assert_queue_decidable()
    decisions.proposal_accept(proposal_id=waiting.pk, acting_user=reviewer)
    assert_queue_decidable()


def test_a_concept_made_by_another_route_supersedes_its_twin_and_repoints_its_edges(
    f, curator, reviewer
):
    """Renaming a concept to "Cross-encoder" settles the pending "cross-encoders" proposal:
    superseded, linked to the concept; the edges that needed it now use the concept."""
    doc = f.lesson()
    twin = f.concept_proposal("Cross-encoders", doc=doc)
    e1 = f.edge_proposal(twin, f.concept("Rerankers"), doc=doc)
    e2 = f.edge_proposal(f.concept("Embeddings"), twin, "builds_on", doc=doc)
    ce = f.concept("CE model")
    out = mend.concept_update_by_hand(acting_user=curator, concept_id=ce.pk, name="Cross-encoder")
    twin = reload(twin)
    assert twin.status == "superseded" and twin.concept == ce
    assert "already the concept" in twin.decisions.get(action="supersede").note
    assert end(e1, "source")["concept_id"] == ce.pk and end(e2, "target")["concept_id"] == ce.pk
    assert {d.action for d in out.settled} == {"supersede", "reresolve"}
    assert all(d.caused_by == out.decision and d.user == curator for d in out.settled)
    assert_queue_decidable()
    decisions.proposal_accept(proposal_id=e1.pk, acting_user=reviewer)
    decisions.proposal_accept(proposal_id=e2.pk, acting_user=reviewer)
    assert graph_selectors.edges_active().filter(source=ce).count() == 1
    assert_queue_decidable()


def test_editing_only_the_relation_when_the_end_concept_already_exists_accepts(f, reviewer):
    """The end waits for a "Tokenization" proposal, but the concept exists (made before the
    settling rule, or by a race): the edit reuses it instead of failing on the name."""
    doc = f.lesson()
    tok = f.concept_proposal("Tokenization", doc=doc)
    p = f.edge_proposal(tok, f.concept("Transformers"), doc=doc)
    existing = graph.concept_create(
        name="Tokenization", acting_user=None
    )  # behind the queue's back
    out = decisions.proposal_edit_accept(
        proposal_id=p.pk, acting_user=reviewer, edits=EdgeEdits(relation="builds_on")
    )
    (edge,) = out.edges
    assert edge.source == existing and edge.relation.key == "builds_on"
    assert reload(tok).status == "accepted" and reload(tok).concept == existing
    assert Concept.objects.filter(name="Tokenization").count() == 1
    assert_queue_decidable()


# --- rejection --------------------------------------------------------------------------


def test_rejecting_a_concept_whose_name_now_belongs_to_a_concept_repoints_its_edges(f, reviewer):
    """Rejected as a duplicate, the proposal does not poison the edges waiting for it."""
    doc = f.lesson()
    ce = f.concept_proposal("Cross-encoder", doc=doc)
    waiting = f.edge_proposal(ce, f.concept("Rerankers"), doc=doc)
    existing = graph.concept_create(
        name="Cross-encoder", acting_user=None
    )  # behind the queue's back
    out = decisions.proposal_reject(
        proposal_id=ce.pk, acting_user=reviewer, reason_code="duplicate"
    )
    assert end(waiting, "source")["concept_id"] == existing.pk
    assert [d.action for d in out.settled] == ["reresolve"]
    accepted = decisions.proposal_accept(proposal_id=waiting.pk, acting_user=reviewer)
    assert accepted.edges[0].source == existing
    assert_queue_decidable()


def test_rejecting_a_concept_nobody_has_supersedes_the_edges_that_need_it_and_undo_restores(
    f, reviewer
):
    """The concept will not exist, so the edges needing it close with the reason; undoing
    the rejection brings all of them back."""
    doc = f.lesson()
    embed = f.concept_proposal("Embed", doc=doc)
    e1 = f.edge_proposal(embed, f.concept("Vector search"), doc=doc)
    e2 = f.edge_proposal(f.concept("RAG"), embed, "builds_on", doc=doc)
    out = decisions.proposal_reject(
        proposal_id=embed.pk, acting_user=reviewer, reason_code="too_vague"
    )
    for e in (e1, e2):
        e = reload(e)
        assert e.status == "superseded"
        assert 'needs the concept "Embed", which was rejected' in e.decisions.last().note
    assert_queue_decidable()
    undone = undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    assert {reload(x).status for x in (embed, e1, e2)} == {"pending"}
    assert undone.first_proposal_id == embed.pk and len(undone.undone) == 3
    assert_queue_decidable()


# --- retired and merged ends -------------------------------------------------------------


def test_accepting_an_edge_whose_end_was_retired_is_refused_in_words_not_a_500(f, reviewer):
    """A legacy proposal on a retired concept: the card lists the blocker and accepting
    says the same words (it used to raise AttributeError)."""
    old = f.concept("Bag of words")
    p = f.edge_proposal(old, f.concept("TF-IDF"))
    graph.concept_retire(concept=old, acting_user=None)  # behind the queue's back
    assert proposal_blockers(reload(p)) == [
        '"Bag of words" was retired; a curator can reactivate it from its page, '
        "or choose another concept."
    ]
    with pytest.raises(ProposalStale, match='"Bag of words" was retired'):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert reload(p).status == "pending"


def test_accepting_an_edge_whose_end_was_merged_names_the_survivor(f, reviewer):
    emb, dense = f.concept("Embeddings"), f.concept("Dense vectors")
    p = f.edge_proposal(dense, f.concept("Vector search"))
    graph.concept_merge(loser=dense, survivor=emb, acting_user=None)  # behind the queue's back
    assert proposal_blockers(reload(p)) == [
        '"Dense vectors" was merged into "Embeddings"; use the surviving concept.'
    ]
    with pytest.raises(ProposalStale, match='merged into "Embeddings"'):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)


def test_retiring_a_concept_supersedes_the_proposals_that_need_it(f, curator):
    """A curator retires an orphan; edges and merges proposed on it close with the reason."""
    orphan, other = f.concept("Bag of words"), f.concept("TF-IDF")
    p = f.edge_proposal(orphan, other)
    out = mend.concept_update_by_hand(acting_user=curator, concept_id=orphan.pk, status="retired")
    assert reload(orphan).status == "retired"
    assert reload(p).status == "superseded" and "was retired" in reload(p).decisions.last().note
    assert out.settled[0].caused_by == out.decision
    assert_queue_decidable()
    undo.decisions_undo(acting_user=curator, batch=out.batch)
    assert reload(orphan).status == "active" and reload(p).status == "pending"
    assert_queue_decidable()


def test_merging_moves_open_proposals_to_the_survivor_and_closes_rival_merges(f, curator):
    emb, dense, vec = f.concept("Embeddings"), f.concept("Dense vectors"), f.concept("Vectors")
    p = f.edge_proposal(dense, f.concept("Vector search"))
    rival = decisions_merge_proposal(dense, vec)
    out = mend.concepts_merge_by_hand(
        acting_user=curator, survivor_id=emb.pk, loser_id=dense.pk, note="Same thing."
    )
    assert end(p, "source")["concept_id"] == emb.pk and reload(p).source_concept == emb
    assert reload(rival).status == "superseded"
    assert reload(dense).status == "merged" and out.proposal.created_by == curator
    assert_queue_decidable()


def decisions_merge_proposal(a: Concept, b: Concept) -> Proposal:
    from kgreview.review.services import proposal_create

    return proposal_create(
        kind="merge_concepts",
        payload={"survivor_id": b.pk, "loser_id": a.pk, "score": 90.0, "why": "Similar."},
        confidence=0.9,
    )


def test_a_merge_that_joins_both_ends_of_a_proposal_closes_it_as_a_loop(f, curator):
    emb, dense = f.concept("Embeddings"), f.concept("Dense vectors")
    p = f.edge_proposal(dense, emb, "related")
    mend.concepts_merge_by_hand(acting_user=curator, survivor_id=emb.pk, loser_id=dense.pk, note="")
    assert reload(p).status == "superseded"
    assert "an edge cannot loop" in reload(p).decisions.last().note
    assert_queue_decidable()


# --- the edge already exists ------------------------------------------------------------


def test_adding_an_edge_by_hand_supersedes_the_agent_proposal_for_the_same_fact(f, reviewer):
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    p = f.edge_proposal(emb, vs)
    out = mend.edge_add_by_hand(
        acting_user=reviewer,
        source=EndChoice(concept_id=emb.pk),
        target=EndChoice(concept_id=vs.pk),
        relation="prerequisite",
        note="Obvious from lesson 3.",
    )
    assert reload(p).status == "superseded"
    assert f"edge #{out.edges[0].pk}" in reload(p).decisions.last().note
    assert_queue_decidable()
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    assert reload(p).status == "pending" and graph_selectors.edges_active().count() == 0
    assert_queue_decidable()


def test_retiring_an_edge_by_hand_supersedes_the_open_proposals_to_retire_it(f, reviewer):
    edge = f.edge(f.concept("A1"), f.concept("B1"))
    from kgreview.review.services import proposal_create

    heal = proposal_create(
        kind="invalidate_edge",
        payload={"edge_id": edge.pk, "reason_code": "evidence_gone"},
        confidence=0.8,
        reason="The quote is gone.",
    )
    out = mend.edge_retire_by_hand(acting_user=reviewer, edge_id=edge.pk, note="Wrong direction.")
    assert reload(edge).status == "invalidated" and reload(heal).status == "superseded"
    assert_queue_decidable()
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    assert graph_selectors.edges_active().count() == 1 and reload(heal).status == "pending"
    assert_queue_decidable()


# --- undo -------------------------------------------------------------------------------


def test_undoing_an_accept_that_created_concepts_makes_later_proposals_wait_again(f, reviewer):
    """Proposals re-pointed at the new concept wait for its proposal again after undo."""
    doc = f.lesson()
    ce = f.concept_proposal("Cross-encoder", doc=doc)
    first = f.edge_proposal(ce, f.concept("Rerankers"), doc=doc)
    second = f.edge_proposal(f.concept("Embeddings"), ce, "related", doc=doc)
    out = decisions.proposal_accept(proposal_id=first.pk, acting_user=reviewer)
    concept = reload(ce).concept
    assert end(second, "target")["concept_id"] == concept.pk
    result = undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    assert result.first_proposal_id == first.pk
    assert reload(concept).status == "retired" and reload(ce).status == "pending"
    target = end(second, "target")
    assert target.get("concept_id") is None and target["proposal_id"] == ce.pk
    assert reload(second).target_key == "n:cross encoder"
    assert_queue_decidable()
    again = decisions.proposal_accept(proposal_id=second.pk, acting_user=reviewer)
    assert again.edges[0].target == concept and reload(concept).status == "active"
    assert_queue_decidable()


def test_undoable_batch_is_named_by_the_decision_the_reviewer_took(f, reviewer):
    doc = f.lesson()
    emb, vs = f.concept_proposal("Embeddings", doc=doc), f.concept_proposal("VS", doc=doc)
    p = f.edge_proposal(emb, vs, doc=doc)
    decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    (latest,) = undo.undoable_batches(user=reviewer, limit=1)
    assert latest.first.proposal_id == p.pk
    assert latest.words == f"accept #{p.pk} and the 2 concepts accepted with it"


# --- many waiting at once ------------------------------------------------------------


def _accept_counting(proposal: Proposal, reviewer) -> int:
    with CaptureQueriesContext(connection) as ctx:
        decisions.proposal_accept(proposal_id=proposal.pk, acting_user=reviewer)
    return len([q for q in ctx.captured_queries if "SAVEPOINT" not in q["sql"]])


def test_a_concept_many_edges_wait_for_costs_its_accept_no_more_queries_than_one(f, reviewer):
    """Accepting an edge that needs "Hub" re-points every edge proposal waiting for "Hub"
    with a fixed number of statements: 25 waiting cost what one does (a manual's common
    concept is awaited by hundreds; one by one, four statements each)."""
    counts = {}
    for waiting in (1, 25):
        doc = f.lesson()
        hub = f.concept_proposal(f"Hub {waiting}", doc=doc)
        first = f.edge_proposal(hub, f.concept(f"Start {waiting}"), doc=doc)
        others = [
            f.edge_proposal(hub, f.concept(f"Other {waiting}.{i}"), doc=doc) for i in range(waiting)
        ]
        counts[waiting] = _accept_counting(first, reviewer)
        concept = reload(hub).concept
        for other in others:
            other = reload(other)
            assert other.status == "pending" and other.source_concept_id == concept.pk
            assert other.payload["source"] == {
                **end(other, "source"),
                "concept_id": concept.pk,
                "proposal_id": hub.pk,
            }
            assert other.decisions.get(action="reresolve").caused_by.proposal_id == first.pk
        assert_queue_decidable()
    assert counts[25] == counts[1], counts


def test_two_waiting_proposals_that_become_one_edge_keep_the_first_and_close_the_second(
    f, reviewer
):
    """ "Hub" (with the alias "Centre") is accepted: the pending "Centre" is its twin, so
    "Hub → Rerankers" and "Centre → Rerankers" both become the concept's edge to
    Rerankers in one settling; the first stays to be decided, the second closes naming it."""
    doc = f.lesson()
    rerankers = f.concept("Rerankers")
    hub = f.concept_proposal("Hub", aliases=["Centre"], doc=doc)
    centre = f.concept_proposal("Centre", doc=doc)
    first = f.edge_proposal(hub, rerankers, doc=doc)
    second = f.edge_proposal(centre, rerankers, doc=doc)
    decisions.proposal_accept(proposal_id=hub.pk, acting_user=reviewer)
    concept = reload(hub).concept
    assert reload(centre).status == "superseded"
    assert reload(first).status == "pending"
    assert end(first, "source")["concept_id"] == concept.pk
    second = reload(second)
    assert second.status == "superseded"
    assert f"already waiting as proposal #{first.pk}" in second.decisions.last().note
    assert_queue_decidable()


def test_waiting_proposals_whose_edge_is_in_the_graph_now_close_naming_it(f, curator):
    """A concept renamed "Hub" settles the two edge proposals waiting for the concept
    proposal "Hub" in one go: the one whose edge the concept already has closes naming
    that edge, the other is re-pointed at the concept."""
    doc = f.lesson()
    rerankers, other, centre = f.concept("Rerankers"), f.concept("Other"), f.concept("Centre")
    held = f.edge(centre, rerankers)
    hub = f.concept_proposal("Hub", doc=doc)
    same = f.edge_proposal(hub, rerankers, doc=doc)
    keeps = f.edge_proposal(hub, other, doc=doc)
    mend.concept_update_by_hand(acting_user=curator, concept_id=centre.pk, name="Hub")
    assert reload(hub).status == "superseded"
    assert reload(keeps).status == "pending"
    assert end(keeps, "source")["concept_id"] == centre.pk
    same = reload(same)
    assert same.status == "superseded"
    assert f"#{held.pk}" in same.decisions.get(action="supersede").note
    assert_queue_decidable()


# --- bulk -------------------------------------------------------------------------------


def test_bulk_accept_of_edges_sharing_a_pending_concept_accepts_it_once(f, reviewer):
    """The second edge finds the concept already made by the first: no refusal."""
    doc = f.lesson()
    ce = f.concept_proposal("Cross-encoder", doc=doc)
    ids = [f.edge_proposal(ce, f.concept(f"Target {i}"), doc=doc).pk for i in range(3)]
    preview = bulk.proposals_bulk_decide(
        acting_user=reviewer, proposal_ids=ids, action="accept", dry_run=True
    )
    assert preview.done == ids and preview.refused == []
    assert preview.items[0].also == [(ce.pk, "Cross-encoder")]
    assert not Decision.objects.exists() and reload(ce).status == "pending"
    result = bulk.proposals_bulk_decide(acting_user=reviewer, proposal_ids=ids, action="accept")
    assert result.done == ids and Edge.objects.count() == 3
    assert Concept.objects.filter(name="Cross-encoder").count() == 1
    assert_queue_decidable()
    (batch,) = undo.undoable_batches(user=reviewer, limit=1)
    assert batch.words == "bulk accept of 3 proposals and the 1 concept accepted with them"


def test_bulk_accept_refuses_an_edge_whose_concept_proposal_does_not_exist(f, reviewer):
    """An end naming a proposal that is not there (the queue takes such a payload) is
    refused in words, not a KeyError, and the rest of the batch is accepted."""
    doc = f.lesson()
    emb = f.concept("Embeddings")
    ghost = proposal_create(
        kind="add_edge",
        payload={
            "source": {"name": emb.name, "concept_id": emb.pk, "match": "exact", "score": 100.0},
            "target": {"name": "Ghost", "proposal_id": 999999, "match": "new"},
            "relation": "prerequisite",
        },
        confidence=0.9,
        reason="Typed by hand.",
    )
    fine = f.edge_proposal(f.concept("Rerankers"), f.concept("Vector search"), doc=doc)
    result = bulk.proposals_bulk_decide(
        acting_user=reviewer, proposal_ids=[ghost.pk, fine.pk], action="accept"
    )
    assert result.done == [fine.pk]
    ((pid, words),) = result.refused
    assert pid == ghost.pk and "There is no proposal #999999." in words


def test_bulk_accept_is_set_based_not_one_call_per_proposal(
    f, reviewer, django_assert_max_num_queries
):
    """Thirty edges needing ten new concepts: a few dozen statements in all, not hundreds."""
    doc = f.lesson()
    needed = [f.concept_proposal(f"Topic {i}", doc=doc) for i in range(10)]
    ends = [f.concept(f"Known {i}") for i in range(30)]
    ids = [f.edge_proposal(ends[i], needed[i % 10], "related", doc=doc).pk for i in range(30)]
    with django_assert_max_num_queries(40):
        result = bulk.proposals_bulk_decide(acting_user=reviewer, proposal_ids=ids, action="accept")
    assert result.done == ids and Edge.objects.filter(status="active").count() == 30
    assert Concept.objects.filter(name__startswith="Topic").count() == 10
    assert sum(len(i.also) for i in result.items) == 10
    (batch,) = undo.undoable_batches(user=reviewer, limit=1)
    assert batch.words == "bulk accept of 30 proposals and the 10 concepts accepted with them"
    assert_queue_decidable()
    # Undone as one set too; one statement records the undo decisions as the edges'
    # retirers (review's provenance rows, 31 since they left the edge table), and one
    # looks for the batch's votes on doubled proposals, to take them back with it (32).
    with django_assert_max_num_queries(32):
        undone = undo.decisions_undo(acting_user=reviewer, batch=result.batch)
    assert len(undone.undone) == 40 and len(undone.primary) == 30
    assert Proposal.objects.filter(pk__in=ids, status="pending").count() == 30
    assert not Concept.objects.filter(name__startswith="Topic", status="active").exists()
    edges = Edge.objects.filter(provenance__proposal__in=ids).select_related(
        "provenance__invalidation_decision"
    )
    assert {e.status for e in edges} == {"invalidated"}
    assert all(
        e.provenance.invalidation_decision.undoes_id == e.provenance.decision_id for e in edges
    )
    assert {reload(p).status for p in needed} == {"pending"}
    waiting = reload(Proposal.objects.get(pk=ids[0]))
    assert waiting.payload["target"]["proposal_id"] == needed[0].pk
    assert waiting.target_key.startswith("n:")
    assert_queue_decidable()


def test_bulk_refuses_in_words_what_one_by_one_would_refuse(f, reviewer, curator):
    """A cycle closed within the batch, the same fact twice, a decided proposal, a kind the
    reviewer does not decide, a missing id: each refused with its reason, the rest done."""
    a, b, c = f.concept("A"), f.concept("B"), f.concept("C")
    forward = f.edge_proposal(a, b)
    backward = f.edge_proposal(b, a)
    doc = f.lesson()
    cp = f.concept_proposal("Bee", doc=doc)
    graph.concept_add_alias(concept=b, name="Bee", acting_user=None)  # behind the queue's back
    twin = f.edge_proposal(c, cp, "related", doc=doc)
    same = f.edge_proposal(c, b, "related", doc=doc)
    done = f.edge_proposal(a, c)
    decisions.proposal_reject(proposal_id=done.pk, acting_user=curator, reason_code="too_vague")
    merge = decisions_merge_proposal(a, c)
    ids = [forward.pk, backward.pk, twin.pk, same.pk, done.pk, merge.pk, 999999]
    result = bulk.proposals_bulk_decide(acting_user=reviewer, proposal_ids=ids, action="accept")
    words = dict(result.refused)
    assert result.done == [forward.pk, twin.pk]
    assert "would close a cycle" in words[backward.pk]
    assert f"accepted earlier in this batch (#{twin.pk})" in words[same.pk]
    assert words[done.pk].startswith(f"Proposal #{done.pk} was already rejected by cora")
    assert words[merge.pk] == "Only curators decide merge concepts proposals."
    assert words[999999] == "There is no proposal #999999."
    assert reload(cp).status == "accepted" and reload(cp).concept == b
    assert [i.proposal_id for i in result.items] == ids


def test_bulk_of_curator_kinds_falls_back_to_one_by_one_and_keeps_the_order(f, curator):
    a, b, c = f.concept("A"), f.concept("B"), f.concept("C")
    edge = f.edge_proposal(a, b)
    merge = decisions_merge_proposal(c, b)
    result = bulk.proposals_bulk_decide(
        acting_user=curator, proposal_ids=[merge.pk, edge.pk], action="accept"
    )
    assert result.done == [merge.pk, edge.pk]
    assert reload(c).status == "merged"
    assert len({d.batch for d in Decision.objects.all()}) == 1


def test_bulk_reject_of_concepts_settles_the_edges_that_needed_them(f, reviewer):
    doc = f.lesson()
    embed = f.concept_proposal("Embed", doc=doc)
    waiting = f.edge_proposal(embed, f.concept("Vector search"), doc=doc)
    result = bulk.proposals_bulk_decide(
        acting_user=reviewer, proposal_ids=[embed.pk], action="reject", reason_code="too_vague"
    )
    assert result.done == [embed.pk] and result.settled_count == 1
    assert reload(waiting).status == "superseded"
    assert_queue_decidable()
