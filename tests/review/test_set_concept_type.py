"""set_concept_type through review: a reviewer gives an existing concept a type with the
quote that shows it; undo puts the old type back; stale, pattern-breaking, duplicate and
bulk cases are refused or ordered in words; its card shows what it replaces."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from kgreview.core.errors import DomainError, ValidationFailed
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, ConceptTypeChange
from kgreview.review.decide import bulk, decisions, undo
from kgreview.review.decide.outcome import ProposalStale
from kgreview.review.kinds import kind_of, payload_validate
from kgreview.review.models import Proposal
from kgreview.review.services import proposal_create
from tests.review.conftest import card, reload

pytestmark = pytest.mark.django_db

TEXT = (
    "Only an ACCESS EXCLUSIVE lock blocks a plain SELECT.\n"
    "The ACCESS EXCLUSIVE lock is taken by DROP TABLE.\n"
)
QUOTE = "Only an ACCESS EXCLUSIVE lock blocks a plain SELECT."


@pytest.fixture
def lock(f):
    """A type "lock", and an untyped concept it fits."""
    graph.concept_type_create(key="lock", label="Lock", acting_user=None)
    return f.concept("ACCESS EXCLUSIVE lock")


def type_proposal(f, concept, type_key="lock", quote=QUOTE, **payload) -> Proposal:
    doc = Proposal.objects.filter(document__slug="locks").first()
    doc = doc.document if doc else f.source(slug="locks", text=TEXT)
    body = {
        "concept_id": concept.pk,
        "concept_name": concept.name,
        "type_key": type_key,
        "type_from": concept.type.key if concept.type else "",
    }
    return proposal_create(
        kind="set_concept_type",
        payload={**body, **payload},
        confidence=0.7,
        reason="The text names it a lock.",
        evidence=f.evidence(doc.current_revision, quote),
        document=doc,
    )


def type_of(concept) -> str | None:
    found = Concept.objects.select_related("type").get(pk=concept.pk).type
    return found.key if found else None


# --- Accept and undo ----------------------------------------------------------------------


def test_a_reviewer_gives_the_concept_its_type_and_undo_takes_it_off(f, lock, reviewer):
    p = type_proposal(f, lock)
    assert kind_of(p).claim(p) == "ACCESS EXCLUSIVE lock: type lock"
    assert kind_of(p).blockers(p, None) == []
    assert p.source_concept_id == lock.pk and p.evidence_quote == QUOTE
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert type_of(lock) == "lock"
    assert out.decision.after["type_from"] == "" and out.decision.after["type_to"] == "lock"
    assert ConceptTypeChange.objects.filter(concept=lock, type__key="lock").exists()
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    assert type_of(lock) is None
    assert reload(p).status == "pending"


def test_undo_puts_back_the_type_the_concept_had(f, lock, curator):
    graph.concept_type_create(key="object", label="Object", acting_user=None)
    graph.concept_set_type(concept=lock, type_key="object", acting_user=None)
    lock.refresh_from_db()
    p = type_proposal(f, lock)
    assert p.payload["type_from"] == "object"
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)
    assert type_of(lock) == "lock"
    undo.decisions_undo(acting_user=curator, batch=out.batch)
    assert type_of(lock) == "object"


def test_undo_refuses_when_the_type_changed_since(f, lock, curator):
    graph.concept_type_create(key="object", label="Object", acting_user=None)
    out = decisions.proposal_accept(proposal_id=type_proposal(f, lock).pk, acting_user=curator)
    graph.concept_set_type(concept=lock, type_key="object", acting_user=None)
    with pytest.raises(DomainError, match="has the type Object since this decision gave it lock"):
        undo.decisions_undo(acting_user=curator, batch=out.batch)
    assert type_of(lock) == "object"


def test_a_viewer_may_not_decide_it_and_a_reviewer_may(f, lock):
    p = type_proposal(f, lock)
    viewer, reviewer = Client(), Client()
    viewer.force_login(f.user("vera", role="viewer"))
    reviewer.force_login(f.user("rita", role="reviewer"))
    assert viewer.post(reverse("review:accept", args=[p.pk])).status_code == 403
    assert type_of(lock) is None and reload(p).status == "pending"
    assert not kind_of(p).curator_only
    response = reviewer.post(reverse("review:accept", args=[p.pk]), follow=True)
    assert response.status_code == 200
    assert type_of(lock) == "lock" and reload(p).status == "accepted"


def test_a_rejected_type_is_closed_with_its_reason(f, lock, reviewer):
    p = type_proposal(f, lock)
    decisions.proposal_reject(proposal_id=p.pk, acting_user=reviewer, reason_code="too_vague")
    assert reload(p).status == "rejected" and type_of(lock) is None


# --- Stale ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("retire_concept", '"ACCESS EXCLUSIVE lock" was retired'),
        ("retire_type", 'The concept type "lock" was retired and cannot be given to a concept'),
        ("typed_already", '"ACCESS EXCLUSIVE lock" is a Lock already.'),
    ],
)
def test_it_goes_stale_in_words(f, lock, reviewer, change, words):
    p = type_proposal(f, lock)
    if change == "retire_concept":
        graph.concept_retire(concept=lock, acting_user=None)
    elif change == "retire_type":
        from kgreview.graph.models import ConceptType

        graph.concept_type_retire(
            concept_type=ConceptType.objects.get(key="lock"), acting_user=None
        )
    else:
        graph.concept_set_type(concept=lock, type_key="lock", acting_user=None)
    blockers = kind_of(p).blockers(p, None)
    assert len(blockers) == 1 and words in blockers[0]
    with pytest.raises(DomainError, match=words.replace(".", r"\.").replace('"', '"')):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)


def test_it_is_stale_when_the_type_is_gone(f, lock, reviewer):
    p = type_proposal(f, lock, type_key="lock")
    Proposal.objects.filter(pk=p.pk).update(
        payload={**p.payload, "type_key": "gate"}, dedup_key="x"
    )
    p = reload(p)
    assert kind_of(p).blockers(p, None) == ['There is no concept type "gate".']
    with pytest.raises(ProposalStale, match='There is no concept type "gate"'):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)


def test_an_open_one_closes_when_its_concept_is_merged(f, lock, curator):
    p = type_proposal(f, lock)
    survivor = f.concept("AccessExclusiveLock")
    merge = proposal_create(
        kind="merge_concepts",
        payload={"survivor_id": survivor.pk, "loser_id": lock.pk, "score": 90.0, "why": "Same."},
        confidence=0.9,
    )
    decisions.proposal_accept(proposal_id=merge.pk, acting_user=curator)
    assert reload(p).status == "superseded"


def test_a_type_change_that_breaks_a_pattern_is_refused_naming_the_edge(f, reviewer):
    for key in ("setting", "process", "file"):
        graph.concept_type_create(key=key, label=key, acting_user=None)
    graph.pattern_create(
        relation_key="prerequisite", domain_key="setting", range_key="process", acting_user=None
    )
    setting = f.concept("shared_buffers", type_key="setting")
    process = f.concept("checkpoint", type_key="process")
    f.edge(setting, process)
    doc = f.source(slug="wal", text="The checkpoint writes every dirty page.\n")
    p = proposal_create(
        kind="set_concept_type",
        payload={
            "concept_id": process.pk,
            "concept_name": "checkpoint",
            "type_key": "file",
            "type_from": "process",
        },
        confidence=0.6,
        evidence=f.evidence(doc.current_revision, "The checkpoint writes every dirty page."),
        document=doc,
    )
    (blocker,) = kind_of(p).blockers(p, None)
    assert blocker.startswith('"checkpoint" cannot be given the type file: 1 of its active edges')
    with pytest.raises(DomainError, match='"checkpoint" cannot be given the type file'):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert type_of(process) == "process"


# --- Payload, dedup, bulk ----------------------------------------------------------------


def test_one_open_proposal_per_concept_and_type(f, lock):
    first = type_proposal(f, lock)
    assert first.dedup_key == f"set_concept_type:c{lock.pk}:lock"
    with pytest.raises(DomainError, match="already"):
        type_proposal(f, lock, quote="The ACCESS EXCLUSIVE lock is taken by DROP TABLE.")


def test_a_bad_payload_is_refused_in_words(lock):
    with pytest.raises(ValidationFailed, match="the proposal's evidence"):
        payload_validate(
            kind="set_concept_type",
            payload={
                "concept_id": lock.pk,
                "concept_name": lock.name,
                "type_key": "lock",
                "evidence": {"quote": QUOTE},
            },
        )
    with pytest.raises(ValidationFailed, match="type_key"):
        payload_validate(
            kind="set_concept_type",
            payload={"concept_id": lock.pk, "concept_name": lock.name, "type_key": "Lock!"},
        )


def test_a_missing_concept_is_not_queued(f, lock):
    with pytest.raises(DomainError):
        proposal_create(
            kind="set_concept_type",
            payload={"concept_id": 999999, "concept_name": "ghost", "type_key": "lock"},
            confidence=0.5,
        )


def test_one_bulk_decision_accepts_the_type_before_typing_the_concept_with_it(f, curator):
    concept = f.concept("ROW SHARE lock")
    doc = f.source(slug="modes", text="A ROW SHARE lock is taken by SELECT FOR UPDATE.\n")
    add_type = proposal_create(
        kind="add_concept_type", payload={"key": "lock", "label": "Lock"}, confidence=0.9
    )
    typing = proposal_create(
        kind="set_concept_type",
        payload={"concept_id": concept.pk, "concept_name": concept.name, "type_key": "lock"},
        confidence=0.7,
        evidence=f.evidence(
            doc.current_revision, "A ROW SHARE lock is taken by SELECT FOR UPDATE."
        ),
        document=doc,
    )
    result = bulk.proposals_bulk_decide(
        acting_user=curator, proposal_ids=[typing.pk, add_type.pk], action="accept"
    )
    assert result.refused == []
    assert type_of(concept) == "lock"
    undo.decisions_undo(acting_user=curator, batch=result.batch)
    assert type_of(concept) is None
    assert {reload(add_type).status, reload(typing).status} == {"pending"}


def test_the_command_line_names_it_as_a_triple(f, lock):
    p = type_proposal(f, lock)
    assert kind_of(p).named_ends(p, {}, {}) == ("ACCESS EXCLUSIVE lock", "lock", "type")


# --- The card ------------------------------------------------------------------------------


@pytest.mark.parametrize("htmx", [False, True])
def test_the_card_shows_the_concept_its_type_now_the_proposed_type_and_the_quote(
    f, lock, reviewer, htmx
):
    graph.concept_type_create(
        key="mode", label="Mode", description="A way of holding something.", acting_user=None
    )
    graph.concept_set_type(concept=lock, type_key="mode", acting_user=None)
    lock.refresh_from_db()
    p = type_proposal(f, lock)
    page = card(reviewer, p, **({"HTTP_HX_REQUEST": "true"} if htmx else {}))
    assert QUOTE in page and "ACCESS EXCLUSIVE lock" in page
    assert '<span class="concept-type"><bdi>Lock</bdi></span>' in page
    assert "It is a <bdi>Mode</bdi> (<code>mode</code>) now; accepting replaces that type" in page
    assert "No quoted evidence" not in page


def test_the_card_of_an_untyped_concept_says_it_has_no_type(f, lock, reviewer):
    page = card(reviewer, type_proposal(f, lock))
    assert "It has no type now; accepting gives it this one" in page
    assert "The concept type <bdi>Lock</bdi> (<code>lock</code>)" in page


def test_the_queue_lists_it_in_words_and_filters_by_its_kind(f, lock, reviewer):
    p = type_proposal(f, lock)
    client = Client()
    client.force_login(reviewer)
    page = client.get(reverse("review:queue") + "?kind=set_concept_type").content.decode()
    assert f'href="/review/focus/?kind=set_concept_type&amp;id={p.pk}"' in page
    assert (
        '<bdi>ACCESS EXCLUSIVE lock</bdi> <span class="verb">is a</span> <code>lock</code>' in page
    )
    assert '<div class="quote-snippet">' + QUOTE + "</div>" in page


def test_the_card_ends_the_types_description_with_one_full_stop(f, lock, reviewer):
    graph.concept_type_create(
        key="mode", label="Mode", description="A way of holding something.", acting_user=None
    )
    graph.concept_type_create(key="grip", label="Grip", description="A hold", acting_user=None)
    assert "A way of holding something.." not in card(reviewer, type_proposal(f, lock, "mode"))
    assert "A hold." in card(reviewer, type_proposal(f, lock, "grip"))
