"""Relation patterns in review: every decision path that writes an edge or changes what
one joins refuses a pattern breaker in the rule book's words, writing nothing (accept,
edit-accept, bulk, each mend); the card shows the refusal as a blocker; the ontology's
kinds (add_concept's type, add_relation_type's patterns, add_relation_pattern) are
applied and undone; a curator may accept a breaker by widening the pattern, recorded as
its own proposal and decision, and a reviewer may not."""

from __future__ import annotations

import pytest
from django.urls import reverse

from kgreview.core.errors import ValidationFailed
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, ConceptTypeChange, Edge, RelationPattern, RelationType
from kgreview.review.decide import bulk, decisions, mend, undo, widen
from kgreview.review.decide.blockers import pattern_blocked, proposal_blockers
from kgreview.review.decide.outcome import NotAllowed, ProposalStale, stale
from kgreview.review.models import Decision, Proposal
from kgreview.review.services import proposal_create
from tests.review.conftest import reload
from tests.review.workspace import client_for

pytestmark = pytest.mark.django_db

BREAKS = (
    'The relation "prerequisite" joins a setting to a process; "WAL" is a file and '
    '"checkpoint" is a process.'
)


@pytest.fixture
def onto(f):
    """Types setting, process, file; "prerequisite" joins a setting to a process."""
    for key in ("setting", "process", "file"):
        graph.concept_type_create(key=key, label=key, acting_user=None)
    graph.pattern_create(
        relation_key="prerequisite", domain_key="setting", range_key="process", acting_user=None
    )
    return {
        "setting": f.concept("shared_buffers", type_key="setting"),
        "process": f.concept("checkpoint", type_key="process"),
        "file": f.concept("WAL", type_key="file"),
    }


def edges() -> int:
    return Edge.objects.count()


def test_accepting_a_pattern_breaker_is_refused_in_words_and_the_card_says_so_first(
    f, onto, reviewer
):
    p = f.edge_proposal(onto["file"], onto["process"])
    assert proposal_blockers(p) == [BREAKS]
    assert pattern_blocked(p) == ([BREAKS], True)
    before = edges()
    with pytest.raises(ProposalStale) as caught:
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert str(caught.value) == stale(BREAKS)
    assert reload(p).status == "pending" and edges() == before


def test_an_edge_that_fits_is_accepted_and_its_card_shows_no_blocker(f, onto, reviewer):
    p = f.edge_proposal(onto["setting"], onto["process"])
    assert proposal_blockers(p) == []
    decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert reload(p).status == "accepted"


def test_editing_an_edge_onto_a_patterned_relation_it_breaks_is_refused(f, onto, reviewer):
    p = f.edge_proposal(onto["file"], onto["process"], "related")
    before = edges()
    with pytest.raises(ProposalStale, match="joins a setting to a process"):
        decisions.proposal_edit_accept(
            proposal_id=p.pk,
            acting_user=reviewer,
            edits=_edits(relation="prerequisite"),
        )
    assert reload(p).status == "pending" and edges() == before


def _edits(**kwargs):
    from kgreview.review.kinds.add_edge import EdgeEdits

    return EdgeEdits(**kwargs)


def test_bulk_accept_refuses_a_breaker_in_the_single_paths_words_and_takes_the_rest(
    f, onto, reviewer
):
    bad = f.edge_proposal(onto["file"], onto["process"])
    good = f.edge_proposal(onto["setting"], onto["process"])
    before = edges()
    result = bulk.proposals_bulk_decide(
        acting_user=reviewer, proposal_ids=[bad.pk, good.pk], action="accept"
    )
    assert result.done == [good.pk]
    assert result.refused == [(bad.pk, stale(BREAKS))]
    assert edges() == before + 1 and reload(bad).status == "pending"


def test_bulk_accept_types_the_new_concepts_and_checks_edges_with_those_types(f, onto, reviewer):
    """An edge waiting for a concept proposed as a file breaks the pattern; one waiting
    for a concept proposed as a process fits, and its concept is made with that type."""
    doc = f.lesson()
    as_file = _typed_concept_proposal(f, "Autovacuum", "file", doc)
    as_process = _typed_concept_proposal(f, "Background writer", "process", doc)
    bad = f.edge_proposal(onto["setting"], as_file, doc=doc)
    good = f.edge_proposal(onto["setting"], as_process, doc=doc)
    assert proposal_blockers(bad) == [
        'The relation "prerequisite" joins a setting to a process; "shared_buffers" is a '
        'setting and "Autovacuum" is a file.'
    ]
    result = bulk.proposals_bulk_decide(
        acting_user=reviewer, proposal_ids=[bad.pk, good.pk], action="accept"
    )
    assert result.done == [good.pk]
    assert result.refused[0][0] == bad.pk and 'Autovacuum" is a file' in result.refused[0][1]
    made = Concept.objects.get(name="Background writer")
    assert made.type.key == "process"
    assert ConceptTypeChange.objects.filter(concept=made, type__key="process").exists()
    assert not Concept.objects.filter(name="Autovacuum").exists()


def _typed_concept_proposal(f, name: str, type_key: str, doc=None):
    return proposal_create(
        kind="add_concept",
        payload={"name": name, "type_key": type_key},
        confidence=0.9,
        reason="Named in the manual.",
        document=doc,
    )


def test_accepting_a_concept_gives_it_its_proposed_type_and_a_missing_type_blocks(
    f, onto, reviewer
):
    p = _typed_concept_proposal(f, "WAL writer", "process")
    decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert reload(p).concept.type.key == "process"
    missing = _typed_concept_proposal(f, "Lock", "lock_mode")
    assert proposal_blockers(missing) == ['There is no concept type "lock_mode".']
    with pytest.raises(ProposalStale, match='There is no concept type "lock_mode".'):
        decisions.proposal_accept(proposal_id=missing.pk, acting_user=reviewer)
    assert not Concept.objects.filter(name="Lock").exists()
    result = bulk.proposals_bulk_decide(
        acting_user=reviewer, proposal_ids=[missing.pk], action="accept"
    )
    assert result.refused == [(missing.pk, stale('There is no concept type "lock_mode".'))]


def test_a_concept_accepted_with_an_edge_is_made_with_its_type_so_the_edge_fits(f, onto, reviewer):
    doc = f.lesson()
    waiting = _typed_concept_proposal(f, "Background writer", "process", doc)
    p = f.edge_proposal(onto["setting"], waiting, doc=doc)
    decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert Concept.objects.get(name="Background writer").type.key == "process"
    assert reload(p).status == "accepted"


# --- mending -----------------------------------------------------------------------------


def test_an_edge_added_by_hand_that_breaks_a_pattern_is_refused(f, onto, reviewer):
    from kgreview.review.decide.ends import EndChoice

    before = edges(), Proposal.objects.count()
    with pytest.raises(ProposalStale, match="joins a setting to a process"):
        mend.edge_add_by_hand(
            acting_user=reviewer,
            source=EndChoice(concept_id=onto["file"].pk),
            target=EndChoice(concept_id=onto["process"].pk),
            relation="prerequisite",
            note="The manual says so.",
        )
    assert (edges(), Proposal.objects.count()) == before


def test_a_type_change_by_hand_that_would_break_edges_is_refused_naming_them(f, onto, curator):
    f.edge(onto["setting"], onto["process"])
    with pytest.raises(ProposalStale, match='"checkpoint" cannot be given the type file'):
        mend.concept_update_by_hand(
            acting_user=curator, concept_id=onto["process"].pk, type_key="file"
        )
    assert Concept.objects.get(pk=onto["process"].pk).type.key == "process"


def test_a_merge_by_hand_that_would_break_a_pattern_is_refused(f, onto, curator):
    f.edge(onto["setting"], onto["process"])
    with pytest.raises(ProposalStale, match="would break a relation's pattern"):
        mend.concepts_merge_by_hand(
            acting_user=curator,
            survivor_id=onto["file"].pk,
            loser_id=onto["process"].pk,
            note="Same thing.",
        )
    assert Concept.objects.get(pk=onto["process"].pk).status == "active"


# --- the ontology's kinds ---------------------------------------------------------------


def _pattern_proposal(relation="prerequisite", domain="file", range_="process"):
    return proposal_create(
        kind="add_relation_pattern",
        payload={
            "relation_key": relation,
            "domain_key": domain,
            "range_key": range_,
            "description": "Files come before processes.",
            "examples": [{"quote": "WAL is written before a checkpoint.", "source_slug": "m"}],
        },
        confidence=0.8,
        reason="Seen in the manual.",
    )


def test_accepting_a_pattern_proposal_allows_the_pattern_and_undo_retires_it(
    f, onto, curator, reviewer
):
    p = _pattern_proposal()
    with pytest.raises(NotAllowed):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)
    pattern = RelationPattern.objects.get(domain__key="file", active=True)
    assert pattern.description == "Files come before processes."
    assert f.edge(onto["file"], onto["process"]).is_active
    twin = _pattern_proposal()
    assert proposal_blockers(twin) == [
        'The relation "prerequisite" already allows a file to a process.'
    ]
    decisions.proposal_reject(proposal_id=twin.pk, acting_user=curator, reason_code="duplicate")
    undo.decisions_undo(acting_user=curator, batch=out.batch)
    pattern.refresh_from_db()
    assert not pattern.active


def test_a_pattern_proposal_naming_a_missing_type_shows_it_as_a_blocker(onto):
    assert proposal_blockers(_pattern_proposal(domain="lock_mode")) == [
        'There is no concept type "lock_mode".'
    ]


def test_accepting_a_relation_type_creates_its_patterns_and_undo_retires_them(onto, curator):
    p = proposal_create(
        kind="add_relation_type",
        payload={
            "key": "affects",
            "label": "affects",
            "verb": "affects",
            "patterns": [{"domain_key": "setting", "range_key": "process"}],
        },
        confidence=0.8,
        reason="Seen in the manual.",
    )
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)
    (pattern,) = RelationPattern.objects.filter(relation__key="affects")
    assert (pattern.domain.key, pattern.range.key, pattern.active) == ("setting", "process", True)
    undo.decisions_undo(acting_user=curator, batch=out.batch)
    pattern.refresh_from_db()
    assert not pattern.active and not RelationType.objects.get(key="affects").active


# --- a curator widens the pattern -------------------------------------------------------


def test_a_curator_accepts_a_breaker_by_widening_the_pattern_as_a_separate_decision(
    f, onto, curator
):
    p = f.edge_proposal(onto["file"], onto["process"])
    out = widen.proposal_accept_widening(
        proposal_id=p.pk, acting_user=curator, note="WAL files feed checkpoints."
    )
    assert reload(p).status == "accepted"
    made = Proposal.objects.get(kind="add_relation_pattern")
    assert made.status == "accepted" and made.created_by == curator
    assert made.payload["description"] == "WAL files feed checkpoints."
    assert made.payload["examples"][0]["quote"] == p.evidence_quote
    pattern = RelationPattern.objects.get(domain__key="file", range__key="process", active=True)
    assert pattern.description == "WAL files feed checkpoints."
    decided = Decision.objects.filter(batch=out.batch)
    assert {d.proposal_id for d in decided} == {p.pk, made.pk}
    assert all(d.user == curator for d in decided)
    assert Edge.objects.filter(
        source=onto["file"], target=onto["process"], status="active"
    ).exists()


def test_a_reviewer_cannot_widen_a_pattern_and_nothing_is_written(f, onto, reviewer):
    p = f.edge_proposal(onto["file"], onto["process"])
    before = edges(), Proposal.objects.count(), RelationPattern.objects.count()
    with pytest.raises(NotAllowed, match="Only curators widen"):
        widen.proposal_accept_widening(proposal_id=p.pk, acting_user=reviewer, note="Please.")
    assert (edges(), Proposal.objects.count(), RelationPattern.objects.count()) == before


def test_widening_needs_a_note_typed_ends_and_a_broken_pattern(f, onto, curator):
    p = f.edge_proposal(onto["file"], onto["process"])
    with pytest.raises(ValidationFailed, match="Say why the relation should allow"):
        widen.proposal_accept_widening(proposal_id=p.pk, acting_user=curator, note="  ")
    fits = f.edge_proposal(onto["setting"], onto["process"])
    with pytest.raises(ValidationFailed, match="fits the patterns"):
        widen.proposal_accept_widening(proposal_id=fits.pk, acting_user=curator, note="Why.")
    untyped = f.edge_proposal(f.concept("Something"), onto["process"])
    with pytest.raises(ValidationFailed, match='"Something" has no type'):
        widen.proposal_accept_widening(proposal_id=untyped.pk, acting_user=curator, note="Why.")
    assert not Proposal.objects.filter(kind="add_relation_pattern").exists()
    assert not RelationPattern.objects.filter(domain__key="file").exists()


def test_the_card_offers_widening_to_curators_only_and_the_form_widens(f, onto):
    p = f.edge_proposal(onto["file"], onto["process"])
    url = reverse("review:focus") + f"?id={p.pk}"
    reviewer_page = client_for(f, "reviewer").get(url).content.decode()
    assert "joins a setting to a process" in reviewer_page
    assert 'id="widen-form"' not in reviewer_page
    curator = client_for(f, "curator")
    assert 'id="widen-form"' in curator.get(url).content.decode()
    response = curator.post(
        reverse("review:accept", args=[p.pk]),
        {"version": p.version, "widen": "1", "note": "WAL files feed checkpoints."},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert reload(p).status == "accepted"
    assert RelationPattern.objects.filter(domain__key="file", active=True).exists()


def test_accepting_an_edge_update_onto_a_breaking_end_is_refused(f, onto, reviewer):
    edge = f.edge(onto["setting"], onto["process"])
    p = proposal_create(
        kind="update_edge",
        payload={"edge_id": edge.pk, "source_id": onto["file"].pk},
        confidence=0.9,
        reason="The manual says WAL instead.",
    )
    assert proposal_blockers(p) == [BREAKS]
    before = edges()
    with pytest.raises(ProposalStale, match='"WAL" is a file and "checkpoint" is a process.'):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert reload(p).status == "pending" and edges() == before
    assert reload(edge).is_active


def test_a_pattern_proposals_card_shows_its_examples_and_the_held_candidates_it_asks_again(f, onto):
    f.edge_proposal(onto["file"], onto["process"], flags=["pattern_violation"])
    p = _pattern_proposal()
    page = client_for(f, "curator").get(reverse("review:focus") + f"?id={p.pk}").content.decode()
    assert "WAL is written before a checkpoint." in page
    assert "No single quote: its evidence is the 1 example below" in page
    assert "asks again the 1 candidate held for breaking its patterns" in page


def test_a_pattern_proposals_card_puts_an_before_a_type_key_with_a_vowel(f, onto):
    """The PostgreSQL manual's bootstrap drafted "part_of joins a parameter_setting to
    an argument"; the card read "to a argument"."""
    graph.concept_type_create(key="index", label="index", acting_user=None)
    p = _pattern_proposal(domain="index", range_="file")
    page = client_for(f, "curator").get(reverse("review:focus") + f"?id={p.pk}").content.decode()
    assert "joins an <code>index</code> to a <code>file</code>" in page
