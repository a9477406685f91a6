"""Existing concepts get their types through the queue (``agents.concept_typing``):
construct proposes the type the reader gave a concept the graph has untyped, and an
accepted type is proposed for the untyped concepts its stored quotes show it fits;
each a ``set_concept_type`` proposal with the quote, never given silently."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from kgreview.agents import tasks
from kgreview.agents.concept_typing import type_accepted_run
from kgreview.agents.models import AgentRun
from kgreview.graph import services
from kgreview.graph.models import Concept
from kgreview.review.decide import decisions
from kgreview.review.models import Proposal
from kgreview.review.services import proposal_create

pytestmark = pytest.mark.django_db

TEXT = (
    "# Locks\n\n"
    "The ACCESS EXCLUSIVE lock is a prerequisite for DROP TABLE.\n"
    "Before learning DROP TABLE you should understand the ACCESS EXCLUSIVE lock.\n"
)


def construct(*args) -> dict:
    out = io.StringIO()
    call_command(
        "construct", "--provider", "offline", "--json", "--source", "locks", *args, stdout=out
    )
    return json.loads(out.getvalue())


def typings() -> dict[str, Proposal]:
    return {
        p.payload["concept_name"]: p
        for p in Proposal.objects.filter(kind="set_concept_type").select_related("origin")
    }


def type_of(name: str) -> str | None:
    concept = Concept.objects.select_related("type").get(name=name)
    return concept.type.key if concept.type else None


@pytest.fixture
def reviewer(f):
    return f.user("rita", role="reviewer")


@pytest.fixture
def curator(curator_user):
    return curator_user


# --- Construct ------------------------------------------------------------------------


def test_construct_proposes_the_readers_type_for_a_known_untyped_concept(f):
    services.concept_type_create(key="lock", label="Lock", acting_user=None)
    known = f.concept("ACCESS EXCLUSIVE lock")
    services.source_import(slug="locks", title="Locks", text=TEXT, acting_user=None)
    construct()
    found = typings()
    p = found["ACCESS EXCLUSIVE lock"]
    assert p.payload == {
        "concept_id": known.pk,
        "concept_name": "ACCESS EXCLUSIVE lock",
        "type_key": "lock",
        "type_from": "",
    }
    assert "ACCESS EXCLUSIVE lock" in p.evidence_quote and p.document.slug == "locks"
    assert p.origin.agent == "construct" and p.status == "pending"
    assert "The reader typed" in p.reason
    # the concept itself is not proposed again: its name resolved to the known one
    assert not Proposal.objects.filter(
        kind="add_concept", payload__name="ACCESS EXCLUSIVE lock"
    ).exists()


def test_a_known_concept_typed_already_gets_no_proposal(f):
    services.concept_type_create(key="lock", label="Lock", acting_user=None)
    services.concept_type_create(key="mode", label="Mode", acting_user=None)
    f.concept("ACCESS EXCLUSIVE lock", type_key="mode")
    services.source_import(slug="locks", title="Locks", text=TEXT, acting_user=None)
    construct()
    assert "ACCESS EXCLUSIVE lock" not in typings()


def test_a_rerun_types_a_concept_accepted_before_its_type_existed(f, reviewer):
    services.source_import(slug="locks", title="Locks", text=TEXT, acting_user=None)
    construct()
    concept_proposal = Proposal.objects.get(
        kind="add_concept", payload__name="ACCESS EXCLUSIVE lock"
    )
    decisions.proposal_accept(proposal_id=concept_proposal.pk, acting_user=reviewer)
    assert type_of("ACCESS EXCLUSIVE lock") is None
    services.concept_type_create(key="lock", label="Lock", acting_user=None)
    construct("--reverify")
    p = typings()["ACCESS EXCLUSIVE lock"]
    decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert type_of("ACCESS EXCLUSIVE lock") == "lock"


def test_a_type_rejected_with_this_quote_is_not_proposed_again(f, reviewer):
    services.concept_type_create(key="lock", label="Lock", acting_user=None)
    f.concept("ACCESS EXCLUSIVE lock")
    services.source_import(slug="locks", title="Locks", text=TEXT, acting_user=None)
    construct()
    p = typings()["ACCESS EXCLUSIVE lock"]
    decisions.proposal_reject(proposal_id=p.pk, acting_user=reviewer, reason_code="too_vague")
    construct("--reverify")
    assert list(Proposal.objects.filter(kind="set_concept_type")) == [p]
    assert p.status == "pending" and Proposal.objects.get(pk=p.pk).status == "rejected"


# --- A type accepted -----------------------------------------------------------------------

STORED = (
    "Only an ACCESS EXCLUSIVE lock blocks a plain SELECT.\n"
    "An advisory is a lock the application defines.\n"
    "DROP TABLE removes a table and needs the ACCESS EXCLUSIVE lock.\n"
    "VACUUM FULL rewrites the table.\n"
)


@pytest.fixture
def stored(f):
    """Untyped concepts whose edges quote a source: a lock by its head noun, one defined
    as a lock, and two commands that are no locks."""
    doc = f.source(slug="stored", text=STORED)
    rev = doc.current_revision
    made = {name: f.concept(name) for name in ("ACCESS EXCLUSIVE lock", "advisory", "DROP TABLE")}
    made["VACUUM FULL"] = f.concept("VACUUM FULL")
    f.edge(
        made["ACCESS EXCLUSIVE lock"],
        made["DROP TABLE"],
        "related",
        evidence=services.Evidence(
            revision=rev,
            start=STORED.index("DROP TABLE"),
            end=STORED.index("DROP TABLE") + 62,
            quote=STORED[STORED.index("DROP TABLE") :][:62],
        ),
    )
    f.edge_proposal(
        made["advisory"],
        made["VACUUM FULL"],
        "related",
        doc=doc,
        quote="An advisory is a lock the application defines.",
    )
    f.edge_proposal(
        made["ACCESS EXCLUSIVE lock"],
        made["VACUUM FULL"],
        "related",
        doc=doc,
        quote="Only an ACCESS EXCLUSIVE lock blocks a plain SELECT.",
    )
    return made


def accept_type(curator, django_capture_on_commit_callbacks, key="lock", label="Lock"):
    p = proposal_create(
        kind="add_concept_type", payload={"key": key, "label": label}, confidence=0.9
    )
    with django_capture_on_commit_callbacks(execute=True):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)


def test_accepting_a_type_proposes_it_for_the_untyped_concepts_it_fits(
    f, stored, curator, django_capture_on_commit_callbacks
):
    accept_type(curator, django_capture_on_commit_callbacks)
    found = typings()
    assert set(found) == {"ACCESS EXCLUSIVE lock", "advisory"}
    head = found["ACCESS EXCLUSIVE lock"]
    assert "ACCESS EXCLUSIVE lock" in head.evidence_quote
    assert head.reason == 'A quote stored about it names it, and its name ends in "lock".'
    defined = found["advisory"]
    assert defined.evidence_quote == "An advisory is a lock the application defines."
    assert 'the text defines it as a "lock"' in defined.reason
    run = AgentRun.objects.get(agent="typing")
    assert (run.trigger, run.status) == ("type_accepted", "succeeded")
    assert run.stats["proposals"] == {"set_concept_type": {"pending": 2}}
    assert {p.origin.agent for p in found.values()} == {"typing"}
    assert {p.origin.run for p in found.values()} == {run.pk}
    assert all(type_of(name) is None for name in stored)  # nothing given silently
    client = Client()
    client.force_login(curator)
    for url in (reverse("agents:home"), reverse("agents:run", args=[run.pk])):
        response = client.get(url)
        assert response.status_code == 200 and "Concept typing" in response.content.decode()
    card = client.get(reverse("review:proposal", args=[head.pk]), follow=True).content.decode()
    assert "Concept typing" in card and head.evidence_quote in card


def test_accepting_the_proposal_types_the_concept(
    f, stored, curator, reviewer, django_capture_on_commit_callbacks
):
    accept_type(curator, django_capture_on_commit_callbacks)
    decisions.proposal_accept(proposal_id=typings()["advisory"].pk, acting_user=reviewer)
    assert type_of("advisory") == "lock"


def test_a_second_pass_proposes_nothing_twice_and_a_rejected_quote_stays_out(
    f, stored, curator, reviewer, django_capture_on_commit_callbacks
):
    accept_type(curator, django_capture_on_commit_callbacks)
    first = typings()
    decisions.proposal_reject(
        proposal_id=first["advisory"].pk, acting_user=reviewer, reason_code="too_vague"
    )
    run = type_accepted_run(type_key="lock")
    assert run is not None and run.stats["proposals"] == {}
    assert run.stats["rejected_before"] == 1
    assert Proposal.objects.filter(kind="set_concept_type").count() == 2


def test_a_rejected_type_comes_back_with_a_new_quote_flagged(
    f, stored, curator, reviewer, django_capture_on_commit_callbacks
):
    accept_type(curator, django_capture_on_commit_callbacks)
    p = typings()["advisory"]
    decisions.proposal_reject(proposal_id=p.pk, acting_user=reviewer, reason_code="too_vague")
    doc = f.source(slug="more", text="Each advisory is a lock held by a session.\n")
    f.edge_proposal(
        stored["advisory"],
        stored["DROP TABLE"],
        "related",
        doc=doc,
        quote="Each advisory is a lock held by a session.",
    )
    # the earlier quote comes first: its edge proposal is rejected too, so it is left
    earlier = Proposal.objects.get(
        kind="add_edge", evidence_quote="An advisory is a lock the application defines."
    )
    decisions.proposal_reject(proposal_id=earlier.pk, acting_user=reviewer, reason_code="too_vague")
    type_accepted_run(type_key="lock")
    again = Proposal.objects.get(
        kind="set_concept_type", status="pending", payload__concept_name="advisory"
    )
    assert again.evidence_quote == "Each advisory is a lock held by a session."
    assert "previously_rejected" in again.flags


def test_a_type_that_fits_none_proposes_nothing(
    f, stored, curator, django_capture_on_commit_callbacks
):
    accept_type(curator, django_capture_on_commit_callbacks, key="index", label="Index")
    assert typings() == {}
    run = AgentRun.objects.get(agent="typing")
    assert run.stats["fits"] == 0


def test_a_subtype_accepted_is_proposed_for_what_it_fits(
    f, stored, curator, django_capture_on_commit_callbacks
):
    services.concept_type_create(key="object", label="Object", acting_user=None)
    p = proposal_create(
        kind="add_concept_type",
        payload={"key": "lock", "label": "Lock", "parent_key": "object"},
        confidence=0.9,
    )
    with django_capture_on_commit_callbacks(execute=True):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)
    assert {p.payload["type_key"] for p in typings().values()} == {"lock"}
    # asked for the parent, the subtype below it is what fits
    for typing in typings().values():
        decisions.proposal_reject(
            proposal_id=typing.pk, acting_user=curator, reason_code="too_vague"
        )
    run = type_accepted_run(type_key="object")
    assert run is not None and run.stats["fits"] == 2
    assert run.stats["rejected_before"] == 2


def test_a_refusing_broker_does_not_undo_the_types_acceptance(
    f, stored, curator, django_capture_on_commit_callbacks, monkeypatch
):
    def refused(**kwargs):
        raise ConnectionRefusedError("the broker is down")

    monkeypatch.setattr(tasks.type_concepts, "delay", refused)
    accept_type(curator, django_capture_on_commit_callbacks)
    assert Proposal.objects.get(kind="add_concept_type").status == "accepted"
    assert typings() == {}


def test_the_pass_reads_as_many_queries_for_many_untyped_concepts_as_for_few(f, stored):
    """One pass, batched: the queries do not grow with the untyped concepts."""
    services.concept_type_create(key="lock", label="Lock", acting_user=None)
    type_accepted_run(type_key="lock")  # queued once: the passes below meet them again
    counts = []
    for extra in (5, 60):
        for i in range(extra):
            f.concept(f"spare {extra} {i}")
        with CaptureQueriesContext(connection) as queries:
            run = type_accepted_run(type_key="lock")
        assert run is not None and run.stats["fits"] == 2
        counts.append(len(queries))
    assert counts[0] == counts[1] <= 30


def test_discovery_types_a_concept_accepted_after_its_type_was(f, reviewer):
    """The type was accepted while the concept still waited in the queue: the typing pass
    then had nothing to type. The next discovery looks again, for every active type."""
    from kgreview.agents.discover import discover_run
    from kgreview.agents.runs import agent_run_create

    services.concept_type_create(key="lock", label="Lock", acting_user=None)
    services.source_import(slug="locks", title="Locks", text=TEXT, acting_user=None)
    construct()
    concept_proposal = Proposal.objects.get(
        kind="add_concept", payload__name="ACCESS EXCLUSIVE lock"
    )
    concept_proposal.payload = {**concept_proposal.payload, "type_key": ""}
    concept_proposal.save(update_fields=["payload"])
    decisions.proposal_accept(proposal_id=concept_proposal.pk, acting_user=reviewer)
    assert type_of("ACCESS EXCLUSIVE lock") is None
    run = discover_run(agent_run_create(agent=AgentRun.Agent.DISCOVER, provider="offline"))
    typing = AgentRun.objects.get(pk=run.stats["typing_run"])
    assert typing.agent == "typing" and typing.status == "succeeded"
    assert (typing.progress_done, typing.progress_total) == (1, 1)  # one chunk of concepts
    p = typings()["ACCESS EXCLUSIVE lock"]
    assert p.payload["type_key"] == "lock" and "ACCESS EXCLUSIVE lock" in p.evidence_quote
    decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer)
    assert type_of("ACCESS EXCLUSIVE lock") == "lock"
