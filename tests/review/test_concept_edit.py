"""A new concept corrected before it is accepted: its name, type and description, the
way an edge's ends and relation are. The decision keeps the proposal as the agent drafted
it; the undo retires the concept and puts the draft back in the queue."""

from __future__ import annotations

import pytest
from django.urls import reverse

from kgreview.core.errors import DomainError
from kgreview.graph import services as graph
from kgreview.graph.models import Concept
from kgreview.review.decide import decisions
from kgreview.review.decide.undo import decisions_undo
from kgreview.review.kinds.add_concept import ConceptEdits
from kgreview.review.models import Proposal
from tests.review.workspace import HX, client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def types():
    graph.concept_type_create(key="setting", label="Setting", acting_user=None)
    graph.concept_type_create(key="command", label="Command", acting_user=None)
    old = graph.concept_type_create(key="gadget", label="Gadget", acting_user=None)
    graph.concept_type_retire(concept_type=old, acting_user=None)


def draft(f, name="the work_mem", type_key="command", **extra):
    p = f.concept_proposal(name)
    p.payload = {**p.payload, "type_key": type_key, **extra}
    p.save(update_fields=["payload"])
    return p


def test_a_renamed_and_retyped_concept_is_accepted_as_corrected_and_the_draft_kept(
    f, types, reviewer
):
    p = draft(f)
    out = decisions.proposal_edit_accept(
        proposal_id=p.pk,
        acting_user=reviewer,
        edits=ConceptEdits(name="work_mem", type_key="setting", description="Memory per sort."),
    )
    concept = Concept.objects.select_related("type").get(name="work_mem")
    assert (concept.type.key, concept.description) == ("setting", "Memory per sort.")
    assert not Concept.objects.filter(name="the work_mem").exists()
    assert out.decision.action == "edit_accept"
    assert out.decision.before["payload"]["name"] == "the work_mem"
    assert out.decision.before["payload"]["type_key"] == "command"
    assert out.decision.after["payload"]["type_key"] == "setting"


def test_undoing_a_corrected_concept_retires_it_and_queues_the_draft_as_it_was(f, types, reviewer):
    p = draft(f)
    out = decisions.proposal_edit_accept(
        proposal_id=p.pk, acting_user=reviewer, edits=ConceptEdits(name="work_mem")
    )
    decisions_undo(acting_user=reviewer, batch=out.decision.batch)
    p.refresh_from_db()
    assert p.status == Proposal.Status.PENDING
    assert (p.payload["name"], p.payload["type_key"]) == ("the work_mem", "command")
    assert Concept.objects.get(name="work_mem").status == Concept.Status.RETIRED


def test_an_empty_type_accepts_the_concept_untyped(f, types, reviewer):
    p = draft(f)
    decisions.proposal_edit_accept(
        proposal_id=p.pk, acting_user=reviewer, edits=ConceptEdits(type_key="")
    )
    assert Concept.objects.get(name="the work_mem").type_id is None


@pytest.mark.parametrize(
    ("type_key", "words"),
    [("gadget", "retired"), ("nonsense", '"nonsense"')],
)
def test_a_retired_or_unknown_type_is_refused_in_words_and_nothing_changes(
    f, types, reviewer, type_key, words
):
    p = draft(f)
    with pytest.raises(DomainError, match=words):
        decisions.proposal_edit_accept(
            proposal_id=p.pk, acting_user=reviewer, edits=ConceptEdits(type_key=type_key)
        )
    p.refresh_from_db()
    assert p.status == Proposal.Status.PENDING and p.payload["type_key"] == "command"
    assert not Concept.objects.exists()


def test_a_new_name_the_graph_has_links_to_that_concept(f, types, reviewer):
    existing = f.concept("work_mem")
    p = draft(f, aliases=["work_mem", "sort memory"])
    decisions.proposal_edit_accept(
        proposal_id=p.pk, acting_user=reviewer, edits=ConceptEdits(name="work_mem")
    )
    p.refresh_from_db()
    assert p.concept_id == existing.pk
    assert Concept.objects.count() == 1
    assert "sort memory" in set(existing.aliases.values_list("name", flat=True))


def test_an_edge_waiting_for_the_renamed_concept_joins_it(f, types, reviewer):
    p = draft(f)
    edge = f.edge_proposal(p, f.concept("Sort"), "related")
    decisions.proposal_edit_accept(
        proposal_id=p.pk, acting_user=reviewer, edits=ConceptEdits(name="work_mem")
    )
    out = decisions.proposal_accept(proposal_id=edge.pk, acting_user=reviewer)
    assert out.edges[0].source.name == "work_mem"


def test_the_edit_form_offers_the_name_and_the_active_types_with_and_without_htmx(f, types):
    p = draft(f)
    client = client_for(f, "reviewer")
    for headers in (HX, {}):
        page = client.get(reverse("review:edit", args=[p.pk]), headers=headers).content.decode()
        assert 'id="edit-name"' in page and 'value="the work_mem"' in page
        assert '<option value="command" selected>Command</option>' in page
        assert '<option value="setting">Setting</option>' in page
        assert "gadget" not in page  # a retired type is not offered


def test_posting_the_edit_form_accepts_the_corrected_concept(f, types):
    p = draft(f)
    response = client_for(f, "reviewer").post(
        reverse("review:edit", args=[p.pk]),
        {"version": p.version, "name": "work_mem", "type_key": "setting", "description": ""},
        headers=HX,
    )
    assert "Edited and accepted" in response.content.decode()
    assert Concept.objects.get(name="work_mem").type.key == "setting"


@pytest.mark.parametrize(
    ("sent", "words"),
    [
        ({"name": "x" * 201}, "at most 200 characters"),
        ({"name": "work_mem", "confidence": "high"}, "Confidence must be a number"),
        ({"name": "work_mem", "type_key": "nonsense"}, "no concept type"),
        ({"name": "\x00\x01"}, ""),
        ({"name": "work_mem", "confidence": "1e309"}, "Confidence must be a number"),
        ({"name": "work_mem", "confidence": "NaN"}, "Confidence must be a number"),
        ({"name": "work_mem", "confidence": "-1"}, "Confidence must lie between 0 and 1"),
        ({"name": "work_mem", "type_key": "x" * 500}, "no concept type"),
        ({"name": "work_mem", "description": "d" * 5001}, "at most 5000 characters"),
        ({"name": "work_mem", "kind": "add_edge", "relation": "nonsense"}, "can be edited"),
    ],
)
def test_a_bad_edit_is_refused_in_words_in_the_card_and_keeps_what_was_typed(f, types, sent, words):
    p = draft(f)
    response = client_for(f, "reviewer").post(
        reverse("review:edit", args=[p.pk]), {"version": p.version, **sent}, headers=HX
    )
    page = response.content.decode()
    assert response.status_code < 500
    if words:
        assert words in page and 'class="edit-form"' in page
    p.refresh_from_db()
    if words:
        assert p.status == Proposal.Status.PENDING


def test_a_viewer_cannot_edit_a_concept(f, types):
    p = draft(f)
    response = client_for(f, "viewer").post(
        reverse("review:edit", args=[p.pk]), {"name": "work_mem"}, headers=HX
    )
    assert response.status_code == 403
    p.refresh_from_db()
    assert p.status == Proposal.Status.PENDING


def test_a_blocked_concept_card_says_an_edit_can_give_it_another_type(f, types):
    p = draft(f, type_key="gadget")  # a retired type: accepting it as it stands is refused
    page = client_for(f, "reviewer").get(reverse("review:focus") + f"?id={p.pk}")
    text = page.content.decode()
    assert "Accepting it as it stands would be refused" in text
    assert "to give it another name or type" in text
