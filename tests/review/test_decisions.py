"""Decisions: accept, reject, edit, undo, bulk; stale and conflicting decisions."""

from __future__ import annotations

import pytest

from kgreview.core.errors import NotFound, SelfLoop, StateConflict, ValidationFailed
from kgreview.graph import precheck
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, Edge, RelationType, SourceConcept
from kgreview.review.decide import decisions, undo
from kgreview.review.decide.decisions import (
    AlreadyDecided,
    EdgeEdits,
    EndChoice,
    NotAllowed,
    ProposalStale,
    VersionChanged,
)
from kgreview.review.models import Decision, Proposal
from kgreview.review.services import proposal_create
from tests.review.conftest import reload

pytestmark = pytest.mark.django_db


# --- accept -----------------------------------------------------------------------------


def test_accepting_an_edge_between_known_concepts_writes_the_edge_with_provenance(f, reviewer):
    """The edge carries the proposal, the decision, the reviewer and the quoted evidence."""
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    p = f.edge_proposal(emb, vs)
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer, version=p.version)
    (edge,) = out.edges
    assert (edge.source, edge.relation.key, edge.target) == (emb, "prerequisite", vs)
    made = edge.provenance
    assert made.proposal == p and made.decision == out.decision and edge.decided_by == reviewer
    assert edge.evidence_quote == p.evidence_quote and edge.evidence_revision == (
        p.evidence_revision
    )
    p = reload(p)
    assert p.status == "accepted" and p.decided_by == reviewer and p.version == 2
    assert out.decision.action == "accept" and out.decision.proposal_version == 1
    assert SourceConcept.objects.filter(source=p.document, concept__in=[emb, vs]).count() == 2


def test_accepting_an_edge_accepts_the_pending_concepts_it_needs_in_the_same_batch(f, reviewer):
    """Endpoints that are pending add_concept proposals are accepted with the edge."""
    doc = f.lesson()
    emb = f.concept_proposal("Embeddings", doc=doc)
    vs = f.concept_proposal("Vector search", aliases=["VS"], doc=doc)
    p = f.edge_proposal(emb, vs, doc=doc)
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert {c.name for c in out.concepts} == {"Embeddings", "Vector search"}
    assert {x.pk for x in out.also_decided} == {emb.pk, vs.pk}
    assert reload(emb).status == reload(vs).status == "accepted"
    assert reload(vs).concept.aliases.filter(name="VS").exists()
    batch = {d.batch for d in Decision.objects.all()}
    assert batch == {out.batch} and Decision.objects.count() == 3
    assert graph_selectors.edges_active().count() == 1


def test_accepting_a_concept_creates_it_with_free_aliases_only(f, reviewer):
    """Aliases already naming another concept are skipped, not fatal."""
    f.concept("Retrieval-augmented generation", aliases=["RAG"])
    p = f.concept_proposal("Retrieval augmented generation system", aliases=["RAG", "RAGS"])
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    (concept,) = out.concepts
    assert sorted(concept.aliases.values_list("name", flat=True)) == [
        "RAGS",
        "Retrieval augmented generation system",
    ]
    assert reload(p).concept == concept


def test_accepting_a_concept_whose_name_exists_links_it_to_that_concept(f, reviewer):
    """A concept proposal for a name the graph already has is accepted as that concept:
    nothing new is created, and undoing it leaves the concept alone."""
    emb = f.concept("Embeddings")
    p = f.concept_proposal("embeddings", aliases=["Vector embeddings"])
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert out.concepts == [emb] and "already the concept" in out.message
    assert reload(p).concept == emb and Concept.objects.count() == 1
    assert set(emb.aliases.values_list("name", flat=True)) == {"Embeddings", "Vector embeddings"}
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    assert reload(emb).status == "active" and reload(p).status == "pending"
    assert set(emb.aliases.values_list("name", flat=True)) == {"Embeddings"}


def test_accepting_a_concept_whose_name_a_curator_retired_is_refused_in_words(f, reviewer):
    """A retired concept is not silently brought back by an agent's proposal."""
    emb = f.concept("Embeddings")
    graph.concept_retire(concept=emb, acting_user=None)
    p = f.concept_proposal("embeddings")
    with pytest.raises(ProposalStale, match="which a curator retired"):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert reload(p).status == "pending" and not Decision.objects.exists()


def test_a_proposal_that_would_close_a_cycle_is_refused_and_nothing_is_written(f, reviewer):
    """Re-verification at accept time: a cycle refuses the whole decision."""
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    f.edge(vs, emb)
    doc = f.lesson()
    need = f.concept_proposal("Vector search engines", doc=doc)
    ok = f.edge_proposal(emb, need, doc=doc)
    bad = f.edge_proposal(emb, vs, doc=doc)
    with pytest.raises(ProposalStale, match="cycle: Vector search → Embeddings → Vector search"):
        decisions.proposal_accept(proposal_id=bad.pk, acting_user=reviewer)
    assert reload(bad).status == "pending" and reload(bad).version == 1
    assert Decision.objects.count() == 0 and Edge.objects.count() == 1
    decisions.proposal_accept(proposal_id=ok.pk, acting_user=reviewer)
    assert Edge.objects.count() == 2


def test_stale_proposals_say_why_retired_relation_merged_endpoint_duplicate(f, reviewer):
    """Retired relation types, merged endpoints and existing edges refuse with reasons."""
    a, b, c = f.concept("A concept"), f.concept("B concept"), f.concept("C concept")
    applies = f.edge_proposal(a, b, "applies_to")
    graph.relation_type_retire(
        relation=RelationType.objects.get(key="applies_to"), acting_user=None
    )
    with pytest.raises(ProposalStale, match="retired"):
        decisions.proposal_accept(proposal_id=applies.pk, acting_user=reviewer)
    merged = f.edge_proposal(a, c)
    graph.concept_merge(loser=c, survivor=b, acting_user=None)
    with pytest.raises(ProposalStale, match='merged into "B concept"'):
        decisions.proposal_accept(proposal_id=merged.pk, acting_user=reviewer)
    dup = f.edge_proposal(b, a, "related")
    f.edge(a, b, "related")
    with pytest.raises(ProposalStale, match="already in the graph"):
        decisions.proposal_accept(proposal_id=dup.pk, acting_user=reviewer)


def test_deciding_a_decided_proposal_says_who_decided_and_when(f, reviewer):
    """The second reviewer is told the first reviewer's name and the time."""
    other = f.user("otto", role="reviewer")
    p = f.edge_proposal(f.concept("A1"), f.concept("B1"))
    decisions.proposal_accept(proposal_id=p.pk, acting_user=other)
    with pytest.raises(AlreadyDecided, match=r"already accepted by otto at \d{4}-\d\d-\d\d"):
        decisions.proposal_reject(proposal_id=p.pk, acting_user=reviewer, reason_code="too_vague")
    assert Decision.objects.count() == 1


def test_a_proposal_changed_since_it_was_shown_is_refused(f, reviewer):
    """A decision names the version it saw; a newer version refuses it."""
    p = f.edge_proposal(f.concept("A2"), f.concept("B2"))
    from kgreview.review.services import proposal_flag_conflict

    proposal_flag_conflict(proposal_id=p.pk, other={"kind": "proposal", "id": 999})
    with pytest.raises(VersionChanged, match="changed while you were looking"):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer, version=1)
    decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer, version=2)


def test_unknown_proposal_is_not_found(reviewer):
    """Deciding a proposal that does not exist is an error in words."""
    with pytest.raises(NotFound):
        decisions.proposal_accept(proposal_id=12345, acting_user=reviewer)


# --- reject -----------------------------------------------------------------------------


def test_reject_records_the_typed_reason(f, reviewer):
    """A rejection keeps its reason code and note; the graph is untouched."""
    p = f.edge_proposal(f.concept("A3"), f.concept("B3"))
    out = decisions.proposal_reject(
        proposal_id=p.pk, acting_user=reviewer, reason_code="wrong_direction", note="reversed"
    )
    assert reload(p).status == "rejected"
    assert (out.decision.reason_code, out.decision.note) == ("wrong_direction", "reversed")
    assert not Edge.objects.exists()


def test_reject_needs_a_known_reason_and_words_for_other(f, reviewer):
    """Unknown reasons, and "other" without a note, are refused."""
    p = f.edge_proposal(f.concept("A4"), f.concept("B4"))
    with pytest.raises(ValidationFailed, match="not a reject reason"):
        decisions.proposal_reject(proposal_id=p.pk, acting_user=reviewer, reason_code="meh")
    with pytest.raises(ValidationFailed, match="Say why"):
        decisions.proposal_reject(proposal_id=p.pk, acting_user=reviewer, reason_code="other")
    decisions.proposal_reject(
        proposal_id=p.pk, acting_user=reviewer, reason_code="other", note="Off topic."
    )


# --- edit -------------------------------------------------------------------------------


def test_edit_then_accept_swaps_direction_changes_relation_and_keeps_before_and_after(f, reviewer):
    """The accepted edge reflects the edits; the decision keeps both versions."""
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    p = f.edge_proposal(vs, emb, "prerequisite")
    out = decisions.proposal_edit_accept(
        proposal_id=p.pk,
        acting_user=reviewer,
        version=1,
        edits=EdgeEdits(swap_direction=True, relation="builds_on", confidence=0.75, weight=2),
    )
    (edge,) = out.edges
    assert (edge.source, edge.relation.key, edge.target) == (emb, "builds_on", vs)
    assert (edge.confidence, edge.weight) == (0.75, 2.0)
    d = out.decision
    assert d.action == "edit_accept"
    assert d.before["payload"]["relation"] == "prerequisite"
    assert d.after["payload"]["relation"] == "builds_on"


def test_edit_then_accept_can_repoint_an_endpoint_to_an_existing_or_new_concept(f, reviewer):
    """An endpoint can be replaced by another concept, or by a new name."""
    emb, vs, ann = f.concept("Embeddings"), f.concept("Vector search"), f.concept("ANN")
    p = f.edge_proposal(emb, vs)
    out = decisions.proposal_edit_accept(
        proposal_id=p.pk,
        acting_user=reviewer,
        edits=EdgeEdits(
            target=EndChoice(concept_id=ann.pk),
            source=EndChoice(name="Dense embeddings", create=True),
        ),
    )
    (edge,) = out.edges
    assert edge.target == ann and edge.source.name == "Dense embeddings"


def test_edit_that_points_both_ends_at_one_concept_is_refused_in_the_rule_books_words(f, reviewer):
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    p = f.edge_proposal(emb, vs)
    with pytest.raises(SelfLoop, match='An edge cannot join "Embeddings" to itself.'):
        decisions.proposal_edit_accept(
            proposal_id=p.pk,
            acting_user=reviewer,
            edits=EdgeEdits(target=EndChoice(concept_id=emb.pk)),
        )
    assert reload(p).status == "pending" and not Edge.objects.exists()


def test_edit_with_a_typed_name_nobody_picked_is_refused_with_the_closest_names(f, reviewer):
    """A partial name is never silently made a new concept: the reviewer must pick one of
    the suggestions or ask for a new concept explicitly."""
    f.concept("Embeddings")
    p = f.edge_proposal(f.concept("Vector search"), f.concept("ANN"))
    with pytest.raises(ValidationFailed, match='No concept is called "Embed".*"Embeddings"'):
        decisions.proposal_edit_accept(
            proposal_id=p.pk, acting_user=reviewer, edits=EdgeEdits(source=EndChoice(name="Embed"))
        )
    assert reload(p).status == "pending" and not Concept.objects.filter(name="Embed").exists()


def test_edit_with_a_plural_of_an_existing_concept_uses_that_concept(f, reviewer):
    """ "Large language models" typed where "Large language model" exists is that concept:
    the resolver's rule (one name key, one concept), not a new twin beside it."""
    llm = f.concept("Large language model")
    p = f.edge_proposal(f.concept("Tokenization"), f.concept("Transformers"))
    out = decisions.proposal_edit_accept(
        proposal_id=p.pk,
        acting_user=reviewer,
        edits=EdgeEdits(target=EndChoice(name="Large language models", create=True)),
    )
    assert out.edges[0].target == llm
    assert not Concept.objects.filter(name="Large language models").exists()


def test_edit_with_an_unknown_relation_is_refused(f, reviewer):
    """Edits are validated like any proposal."""
    p = f.edge_proposal(f.concept("A5"), f.concept("B5"))
    with pytest.raises(ValidationFailed, match='"causes" is not an active relation'):
        decisions.proposal_edit_accept(
            proposal_id=p.pk, acting_user=reviewer, edits=EdgeEdits(relation="causes")
        )
    assert reload(p).status == "pending"


# --- undo -------------------------------------------------------------------------------


def test_undoing_an_accepted_edge_invalidates_it_and_reopens_everything_it_accepted(f, reviewer):
    """Compensation, not deletion: the edge is invalidated, concepts retired, proposals back."""
    doc = f.lesson()
    emb = f.concept_proposal("Embeddings", doc=doc)
    vs = f.concept_proposal("Vector search", doc=doc)
    p = f.edge_proposal(emb, vs, doc=doc)
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    undone = undo.decisions_undo(acting_user=reviewer, batch=out.batch).undone
    assert len(undone) == 3 and {d.action for d in undone} == {"undo"}
    (edge,) = Edge.objects.all()
    assert edge.status == "invalidated" and "Undone by rita" in edge.invalidation_reason
    assert {reload(x).status for x in (p, emb, vs)} == {"pending"}
    assert set(Concept.objects.values_list("status", flat=True)) == {"retired"}
    assert graph_selectors.edges_active().count() == 0
    again = decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert {c.pk for c in again.concepts} == set(Concept.objects.values_list("pk", flat=True))
    assert set(Concept.objects.values_list("status", flat=True)) == {"active"}


def test_undoing_a_rejection_puts_the_proposal_back(f, reviewer):
    """A rejected proposal returns to the queue with a new version."""
    p = f.edge_proposal(f.concept("A6"), f.concept("B6"))
    out = decisions.proposal_reject(proposal_id=p.pk, acting_user=reviewer, reason_code="too_vague")
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    p = reload(p)
    assert p.status == "pending" and p.decided_at is None and p.version == 3


def test_undo_only_once_and_only_ones_own(f, reviewer):
    """A batch is undone once, by the reviewer who made it."""
    other = f.user("otto", role="reviewer")
    p = f.edge_proposal(f.concept("A7"), f.concept("B7"))
    out = decisions.proposal_reject(proposal_id=p.pk, acting_user=reviewer, reason_code="too_vague")
    with pytest.raises(NotAllowed):
        undo.decisions_undo(acting_user=other, batch=out.batch)
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    with pytest.raises(StateConflict, match="already undone"):
        undo.decisions_undo(acting_user=reviewer, batch=out.batch)


def test_undo_is_refused_when_the_same_change_is_queued_again(f, reviewer):
    """A rejected proposal cannot return while an equivalent one is waiting."""
    a, b = f.concept("A8"), f.concept("B8")
    p = f.edge_proposal(a, b)
    out = decisions.proposal_reject(proposal_id=p.pk, acting_user=reviewer, reason_code="too_vague")
    twin = f.edge_proposal(
        a, b, quote="Retrieval-augmented generation (RAG) builds on vector search."
    )
    with pytest.raises(StateConflict, match=f"proposal #{twin.pk}"):
        undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    assert reload(p).status == "rejected"


def test_accepting_and_undoing_an_invalidation_restores_the_fact(f, reviewer):
    """Undoing an invalidation brings the fact back as a new row superseding the old."""
    e = f.edge(f.concept("A9"), f.concept("B9"))
    p = proposal_create(
        kind="invalidate_edge",
        payload={"edge_id": e.pk, "reason_code": "evidence_gone"},
        confidence=0.9,
        reason="Quote vanished.",
    )
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert reload(e).status == "invalidated" and reload(e).invalidation_reason == "Quote vanished."
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    restored = Edge.objects.get(supersedes=e)
    assert restored.is_active and (restored.source_id, restored.target_id) == (
        e.source_id,
        e.target_id,
    )


def test_accepting_and_undoing_an_update_returns_the_original_values(f, reviewer):
    """An update supersedes the edge; undo supersedes it again with the old values."""
    e = f.edge(f.concept("A10"), f.concept("B10"), confidence=0.7)
    p = proposal_create(
        kind="update_edge",
        payload={"edge_id": e.pk, "relation": "builds_on", "swap_direction": True},
        confidence=0.9,
        reason="Direction was wrong.",
    )
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    (new,) = out.edges
    assert (new.source_id, new.relation.key) == (e.target_id, "builds_on")
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    (current,) = graph_selectors.edges_active()
    assert (current.source_id, current.relation.key, current.target_id) == (
        e.source_id,
        "prerequisite",
        e.target_id,
    )
    assert current.supersedes == new


def test_undoable_batches_lists_recent_own_decisions(f, reviewer):
    """The undo list shows the reviewer's latest batches, newest first, not yet undone."""
    p1 = f.edge_proposal(f.concept("A11"), f.concept("B11"))
    p2 = f.edge_proposal(f.concept("A12"), f.concept("B12"))
    first = decisions.proposal_reject(
        proposal_id=p1.pk, acting_user=reviewer, reason_code="too_vague"
    )
    second = decisions.proposal_accept(proposal_id=p2.pk, acting_user=reviewer)
    batches = undo.undoable_batches(user=reviewer)
    assert [b.batch for b in batches] == [second.batch, first.batch]
    undo.decisions_undo(acting_user=reviewer, batch=second.batch)
    assert [b.batch for b in undo.undoable_batches(user=reviewer)] == [first.batch]


# --- roles ------------------------------------------------------------------------------


def test_reviewers_cannot_decide_curator_kinds_but_curators_can(f, reviewer, curator):
    """add_relation_type and merge_concepts are for curators."""
    p = proposal_create(
        kind="add_relation_type",
        payload={
            "key": "alternative_to",
            "label": "Alternative to",
            "verb": "is an alternative to",
            "directed": False,
            "symmetric": True,
        },
        confidence=0.8,
        reason="Recurs in three lessons.",
    )
    with pytest.raises(NotAllowed, match="Only curators"):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)
    assert RelationType.objects.get(key="alternative_to").symmetric


def test_curator_accepts_a_merge(f, curator):
    """A merge proposal merges through the graph service."""
    a, b = f.concept("Fine-tuning"), f.concept("Finetuning")
    p = proposal_create(
        kind="merge_concepts",
        payload={"survivor_id": a.pk, "loser_id": b.pk, "score": 95.0, "why": "Spelling."},
        confidence=0.9,
    )
    decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)
    assert reload(b).merged_into == a


def test_deciding_rejected_proposals_again_is_impossible_without_undo(f, reviewer):
    """Held proposals can be decided; closed ones only reopen through undo."""
    p = f.edge_proposal(f.concept("A16"), f.concept("B16"), confidence=0.3)
    assert p.status == "held"
    decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    with pytest.raises(AlreadyDecided):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert Proposal.objects.get(pk=p.pk).status == "accepted"


def test_keeping_a_contradicting_proposal_retires_the_old_edge_and_undo_restores_it(f, reviewer):
    """One action: the contradicted edge is invalidated and the new edge accepted."""
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    old = f.edge(vs, emb)
    p = f.edge_proposal(emb, vs)
    Proposal.objects.filter(pk=p.pk).update(
        payload={
            **p.payload,
            "conflicts": [
                {"kind": "edge", "id": old.pk, "rule": "cycle", "explanation": "closes a cycle"}
            ],
        },
        flags=["contradiction"],
    )
    out = decisions.proposal_accept_over_conflicts(proposal_id=p.pk, acting_user=reviewer)
    assert reload(old).status == "invalidated" and "which rita kept" in old.invalidation_reason
    (new,) = out.edges
    assert new.is_active and (new.source, new.target) == (emb, vs)
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    (restored,) = graph_selectors.edges_active()
    assert (restored.source, restored.target, restored.supersedes) == (vs, emb, old)


def test_keeping_a_proposal_over_a_contradicting_proposal_rejects_the_other(f, reviewer):
    """The other open proposal is rejected in the same batch, with the reason."""
    a, b = f.concept("A17"), f.concept("B17")
    other = f.edge_proposal(b, a)
    p = f.edge_proposal(a, b, quote="Retrieval-augmented generation (RAG) builds on vector search.")
    Proposal.objects.filter(pk=p.pk).update(
        payload={**p.payload, "conflicts": [{"kind": "proposal", "id": other.pk}]}
    )
    out = decisions.proposal_accept_over_conflicts(proposal_id=p.pk, acting_user=reviewer)
    other = reload(other)
    assert other.status == "rejected"
    assert other.decisions.get().batch == out.batch
    assert reload(p).status == "accepted"


def test_undoing_an_accepted_merge_splits_the_concepts_again(f, curator):
    """A merge decision is undone like any other: the loser comes back with its edges."""
    a, b, c = f.concept("Fine-tuning"), f.concept("Finetuning"), f.concept("LoRA")
    f.edge(c, b, "builds_on")
    p = proposal_create(
        kind="merge_concepts",
        payload={"survivor_id": a.pk, "loser_id": b.pk, "score": 95.0, "why": "Spelling."},
        confidence=0.9,
    )
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)
    assert reload(b).status == "merged"
    undo.decisions_undo(acting_user=curator, batch=out.batch)
    assert reload(b).status == "active" and reload(p).status == "pending"
    (edge,) = graph_selectors.edges_active()
    assert (edge.source, edge.target) == (c, b)


def test_keeping_the_other_concept_relinks_the_merge_proposal(f, curator):
    """Choosing the other survivor swaps the proposal's loser/survivor links too."""
    a, b = f.concept("Fine-tuning"), f.concept("Finetuning")
    p = proposal_create(
        kind="merge_concepts",
        payload={"survivor_id": a.pk, "loser_id": b.pk, "why": "Spelling."},
        confidence=0.9,
    )
    decisions.proposal_accept(proposal_id=p.pk, acting_user=curator, merge_survivor=b.pk)
    p = reload(p)
    assert (p.source_concept_id, p.target_concept_id) == (a.pk, b.pk)
    assert reload(a).status == "merged" and reload(b).status == "active"


def test_an_edge_too_far_to_check_for_a_cycle_is_refused_in_words(f, reviewer, monkeypatch):
    """When neither bounded search ends, the decision is refused as stale, in words, and
    nothing is written (never accepted on a guess)."""

    monkeypatch.setattr(precheck, "INLINE_REBUILD", 0)
    monkeypatch.setattr(precheck, "REACH_LIMIT", 2)
    into, out = f.concept("Into"), f.concept("Out of")
    for _ in range(3):
        f.edge(f.concept(), into)
        f.edge(out, f.concept())
    RelationType.objects.filter(key="prerequisite").update(ordered=False)
    p = f.edge_proposal(into, out)
    with pytest.raises(ProposalStale, match="could not be checked for a cycle"):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert reload(p).status == "pending" and not Edge.objects.filter(source=into).exists()
