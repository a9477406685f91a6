"""add_alias: a name a document defines for a concept, with the defining sentence as its
evidence. Accepting adds the name (the ask loop finds the concept by it), undoing takes
it off; a name another concept holds blocks it in words; the card and the queue show it
with and without htmx; an open concept proposal is given defined names in place."""

from __future__ import annotations

import pytest
from django.urls import reverse

from construction.text import name_key
from kgreview.core.errors import DuplicateProposal
from kgreview.graph.name_index import QUESTION_INDEX
from kgreview.review.decide import decisions, undo
from kgreview.review.decide.blockers import open_proposal_blockers
from kgreview.review.decide.outcome import ProposalStale
from kgreview.review.kinds import kind_of
from kgreview.review.models import Decision, Proposal
from kgreview.review.services import proposal_add_names, proposal_create
from tests import factories
from tests.review.workspace import HX, client_for

pytestmark = pytest.mark.django_db

TEXT = "The Transmission Control Protocol (TCP) gives a reliable stream.\n"
QUOTE = "The Transmission Control Protocol (TCP) gives a reliable stream."


@pytest.fixture
def tcp(f):
    return f.concept("Transmission Control Protocol")


@pytest.fixture
def alias(f, tcp):
    doc = f.source(slug="transport", text=TEXT)
    return proposal_create(
        kind="add_alias",
        payload={"concept_id": tcp.pk, "alias": "TCP", "name": tcp.name},
        confidence=0.9,
        reason='The document defines "TCP" as another name for it.',
        evidence=factories.evidence(doc.current_revision, QUOTE),
        document=doc,
    )


def test_it_is_keyed_by_concept_and_name_key_and_points_at_its_concept(alias, tcp):
    """ "tcp" for the same concept is the same proposal; its column names the concept."""
    assert alias.dedup_key == f"add_alias:{tcp.pk}|tcp"
    assert alias.source_concept_id == tcp.pk
    assert alias.status == "pending" and alias.evidence_quote == QUOTE
    with pytest.raises(DuplicateProposal):
        proposal_create(
            kind="add_alias", payload={"concept_id": tcp.pk, "alias": "tcp"}, confidence=0.9
        )
    assert kind_of(alias).claim(alias) == "Transmission Control Protocol is also called TCP"


def test_accepting_adds_the_name_and_the_ask_loop_finds_the_concept_by_it(alias, tcp, reviewer):
    """A reviewer may decide it; afterwards "TCP" names the concept in questions."""
    decisions.proposal_accept(proposal_id=alias.pk, acting_user=reviewer)
    assert tcp.aliases.filter(name="TCP").exists()
    assert QUESTION_INDEX.get().exact(name_key("TCP")).concept_id == tcp.pk
    assert tcp.source_links.filter(source__slug="transport").exists()


def test_undoing_takes_the_name_off_again(alias, tcp, reviewer):
    """The acceptance is compensated: the name is free, the decision log keeps both."""
    out = decisions.proposal_accept(proposal_id=alias.pk, acting_user=reviewer)
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    assert not tcp.aliases.filter(name="TCP").exists()
    assert Proposal.objects.get(pk=alias.pk).status == "pending"
    assert Decision.objects.filter(proposal=alias).count() == 2


def test_a_name_another_concept_holds_blocks_it_and_accepting_is_refused_in_words(
    f, alias, reviewer
):
    """Another concept took "TCP" meanwhile: the card says so and nothing changes."""
    f.concept("TCP")
    assert open_proposal_blockers([alias])[alias.pk] == [
        'The name "TCP" already belongs to the concept "TCP".'
    ]
    with pytest.raises(ProposalStale, match='already belongs to the concept "TCP"'):
        decisions.proposal_accept(proposal_id=alias.pk, acting_user=reviewer)


def test_a_name_the_concept_already_has_is_accepted_without_a_second_row(alias, tcp, reviewer):
    """Someone added it by hand meanwhile: accepting says so and adds nothing."""
    from kgreview.graph import services

    services.concept_add_alias(concept=tcp, name="TCP", acting_user=None)
    out = decisions.proposal_accept(proposal_id=alias.pk, acting_user=reviewer)
    assert "already answers to" in out.message
    assert tcp.aliases.filter(name="TCP").count() == 1


def test_the_card_shows_the_claim_and_the_defining_sentence_with_and_without_htmx(f, alias):
    """The claim names both names; the quote is highlighted in its paragraph."""
    client = client_for(f, "reviewer")
    url = reverse("review:focus") + f"?id={alias.pk}"
    page = client.get(url).content.decode()
    assert "<html" in page and "is also called" in page and "<bdi>TCP</bdi>" in page
    assert f"<mark>{QUOTE}</mark>" in page
    card = client.get(url, headers=HX).content.decode()
    assert "<html" not in card and '<section id="card"' in card and "is also called" in card


def test_the_queue_lists_it_with_its_name_and_concept(f, alias):
    """One row names the alias and the concept it is for."""
    html = client_for(f, "reviewer").get(reverse("review:queue") + "?kind=add_alias")
    html = html.content.decode()
    assert "<bdi>TCP</bdi>" in html and "<bdi>Transmission Control Protocol</bdi>" in html


def test_an_open_concept_proposal_is_given_the_names_a_document_defines(f):
    """New names join its aliases with their sentence; known names and decided
    proposals are left alone; the version tells a reviewer it changed."""
    p = f.concept_proposal("Domain Name System", aliases=["name system"])
    defined = {"alias": "DNS", "quote": "The Domain Name System (DNS) finds hosts."}
    changed = proposal_add_names(
        proposal_id=p.pk, defined=[defined, {**defined, "alias": "name systems"}]
    )
    assert changed.payload["aliases"] == ["name system", "DNS"]
    assert changed.payload["defined"] == [
        {**defined, "start": None, "end": None, "revision_id": None}
    ]
    assert changed.version == p.version + 1
    again = proposal_add_names(proposal_id=p.pk, defined=[defined])
    assert again.version == changed.version
    decisions.proposal_reject(
        proposal_id=p.pk, acting_user=f.user("rita", role="reviewer"), reason_code="duplicate"
    )
    assert proposal_add_names(proposal_id=p.pk, defined=[{**defined, "alias": "NS"}]) is None


def test_a_concept_cards_defined_names_show_their_sentences(f):
    """The card lists each name a document defines, with its sentence."""
    p = proposal_create(
        kind="add_concept",
        payload={
            "name": "Domain Name System",
            "aliases": ["DNS"],
            "defined": [{"alias": "DNS", "quote": "The Domain Name System (DNS) finds hosts."}],
        },
        confidence=0.9,
    )
    html = client_for(f, "reviewer").get(reverse("review:focus") + f"?id={p.pk}")
    html = html.content.decode()
    assert "Names the documents define" in html
    assert "The Domain Name System (DNS) finds hosts." in html
