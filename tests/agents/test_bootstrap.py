"""manage.py bootstrap, its task and the Ontology page's button: a small manual in,
proposals of every kind of the ontology out, each with its own quotes; nothing twice."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from kgreview.agents import tasks
from kgreview.agents.models import AgentRun
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, SourceRevision
from kgreview.review.decide import decisions
from kgreview.review.models import Proposal
from tests.construction.fake_llm import reply
from tests.construction.test_ontology_bootstrap import TEXTS

pytestmark = pytest.mark.django_db

KINDS = {"add_concept_type", "add_relation_type", "add_relation_pattern", "add_attribute"}


@pytest.fixture
def manual(f):
    for slug, text in TEXTS.items():
        graph.source_import(slug=slug, title=slug.title(), text=text, acting_user=None)


def bootstrap(*args: str) -> dict:
    out = io.StringIO()
    call_command("bootstrap", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_bootstrap_proposes_each_kind_with_its_own_quotes_and_adds_nothing_when_run_again(
    manual,
):
    report = bootstrap("--sample-chunks", "0")
    assert report["run"]["status"] == "succeeded" and report["run"]["sources"] == 3
    proposals = list(Proposal.objects.filter(kind__in=KINDS))
    assert {p.kind for p in proposals} == KINDS
    by = {(p.kind, p.payload.get("key") or p.payload.get("relation_key")): p for p in proposals}
    sub = by[("add_concept_type", "maintenance_command")]
    assert sub.payload["parent_key"] == "command"
    requires = by[("add_relation_type", "requires")]
    assert requires.payload["patterns"] == [{"domain_key": "command", "range_key": "lock"}]
    assert by[("add_relation_pattern", "applies_to")].payload["domain_key"] == "setting"
    texts = {r.pk: r.text for r in SourceRevision.objects.all()}
    for p in proposals:
        examples = p.payload["examples"]
        assert examples, p.kind
        for e in examples:  # each item's own quotes, verbatim where they say they are
            assert texts[e["revision_id"]][e["start"] : e["end"]] == e["quote"]
        assert "Support: " in p.payload["description"] and p.status == "pending"
        assert p.origin.agent == "bootstrap"
    again = bootstrap("--sample-chunks", "0")
    assert again["proposals"] == []
    assert Proposal.objects.filter(kind__in=KINDS).count() == len(proposals)
    assert again["run"]["held_open"] == len(proposals)


def test_a_rejected_item_comes_back_only_with_new_evidence(manual, f):
    bootstrap("--sources", "locks", "commands", "--sample-chunks", "0")
    lock = Proposal.objects.get(kind="add_concept_type", payload__key="lock")
    Proposal.objects.filter(pk=lock.pk).update(status="rejected", decided_at=lock.created_at)
    Proposal.objects.exclude(pk=lock.pk).update(status="rejected", decided_at=lock.created_at)
    report = bootstrap("--sources", "locks", "commands", "--sample-chunks", "0")
    assert report["proposals"] == [] and report["run"]["held_rejected"] >= 1
    graph.source_import(
        slug="more-locks",
        title="More locks",
        text="# Row-Level Locks\n\nThe FOR UPDATE lock blocks other writers. The FOR SHARE "
        "lock blocks writers too. The FOR KEY SHARE lock is the weakest row lock.\n",
        acting_user=None,
    )
    report = bootstrap("--sample-chunks", "0")
    again = Proposal.objects.filter(kind="add_concept_type", payload__key="lock", status="pending")
    assert again.count() == 1
    quotes = {e["quote"] for e in again.get().payload["examples"]}
    assert quotes - {e["quote"] for e in lock.payload["examples"]}


def test_the_command_refuses_an_unknown_source_in_words(manual):
    with pytest.raises(CommandError, match="No source with the slug nope"):
        call_command("bootstrap", "--sources", "nope", stdout=io.StringIO())


def test_the_task_runs_a_queued_bootstrap_run(manual):
    run = AgentRun.objects.create(
        agent=AgentRun.Agent.BOOTSTRAP,
        trigger=AgentRun.Trigger.MANUAL,
        provider="offline",
        params={"sample_chunks": None},
    )
    assert tasks.bootstrap.apply(kwargs={"run_id": run.pk}).get() == run.pk
    run.refresh_from_db()
    assert run.status == "succeeded" and run.progress_done == run.progress_total == 3
    assert run.proposals.filter(kind="add_concept_type").exists()
    # a finished run is never touched again
    assert tasks.bootstrap.apply(kwargs={"run_id": run.pk}).get() == 0


def test_the_openai_provider_skips_a_failed_chunk_softly(manual, settings, fake_llm):
    settings.OPENAI_BASE_URL = fake_llm.base_url
    settings.OPENAI_API_KEY = "k"
    settings.KG_LLM_MODEL = "fake"
    settings.KG_LLM_VALIDATION_RETRIES = 0
    settings.KG_LLM_MAX_RETRIES = 0
    answer = {
        "types": [
            {
                "label": "Lock",
                "parent": "",
                "description": "A table lock.",
                "examples": [{"concept": "SHARE lock", "quote": "The SHARE lock protects a table"}],
            }
        ],
        "relations": [],
        "attributes": [],
    }
    fake_llm.push(
        reply({"about": "Locks.", "central": ["lock"]}),
        reply(answer),
        reply({"merges": [], "reversed": []}),
    )
    fake_llm.fallback = lambda body: reply("not json")
    report = bootstrap("--sources", "locks", "settings", "--provider", "openai")
    assert report["run"]["status"] == "partial"
    assert report["run"]["skipped_chunks"] == [
        "settings#0: no valid answer after 1 attempt: the answer is not JSON (Expecting value)"
    ]
    (p,) = report["proposals"]
    assert p["kind"] == "add_concept_type"
    (lock,) = Proposal.objects.filter(kind="add_concept_type")
    assert lock.payload["examples"][0]["quote"] == "The SHARE lock protects a table"


# --- The button on the Ontology page --------------------------------------------------------


def test_a_curator_starts_a_bootstrap_from_the_ontology_page(manual, client, f, monkeypatch):
    queued = []
    monkeypatch.setattr(tasks.bootstrap, "delay", lambda **kw: queued.append(kw))
    client.force_login(f.user("cura", role="curator"))
    page = client.get(reverse("ontology"))
    assert b'id="bootstrap"' in page.content and b"Draft an ontology" in page.content
    response = client.post(reverse("agents:bootstrap"), {"sample_chunks": "4"})
    run = AgentRun.objects.get(agent="bootstrap")
    assert response.status_code == 302 and response.url == reverse("agents:run", args=[run.pk])
    assert queued == [{"run_id": run.pk}] and run.params["sample_chunks"] == 4


def test_with_htmx_the_button_answers_its_panel_with_the_run(manual, client, f, monkeypatch):
    monkeypatch.setattr(tasks.bootstrap, "delay", lambda **kw: None)
    client.force_login(f.user("cura", role="curator"))
    response = client.post(
        reverse("agents:bootstrap"), {"sample_chunks": ""}, headers={"HX-Request": "true"}
    )
    run = AgentRun.objects.get(agent="bootstrap")
    assert response.status_code == 200
    body = response.content.decode()
    assert f"Bootstrap run #{run.pk}" in body and 'id="bootstrap"' in body
    assert "<html" not in body and run.params["sample_chunks"] == 8


def test_a_reviewer_sees_no_button_and_cannot_start_one(manual, client, f):
    client.force_login(f.user("revi", role="reviewer"))
    page = client.get(reverse("ontology"))
    assert b"Draft an ontology" not in page.content
    assert client.post(reverse("agents:bootstrap"), {}).status_code == 403
    assert not AgentRun.objects.filter(agent="bootstrap").exists()


def test_a_bad_sample_size_is_refused_in_words(manual, client, f):
    client.force_login(f.user("cura", role="curator"))
    response = client.post(reverse("agents:bootstrap"), {"sample_chunks": "-3"}, follow=True)
    assert "at least 0" in response.content.decode()
    assert not AgentRun.objects.filter(agent="bootstrap").exists()


# --- Discovery of additions as documents arrive ----------------------------------------------


def discover() -> AgentRun:
    from kgreview.agents.discover import discover_run
    from kgreview.agents.runs import agent_run_create

    return discover_run(agent_run_create(agent=AgentRun.Agent.DISCOVER, provider="offline"))


def test_discover_proposes_additions_from_arrived_documents_and_never_a_change(manual, f):
    graph.concept_type_create(key="command", label="Command", acting_user=None)
    run = discover()
    assert run.status == "succeeded" and run.stats["additions_sources"] == 3
    added = {p.payload["key"] for p in run.proposals.filter(kind="add_concept_type")}
    assert {"setting", "lock", "maintenance_command"} <= added and "command" not in added
    sub = run.proposals.get(kind="add_concept_type", payload__key="maintenance_command")
    assert sub.payload["parent_key"] == "command"  # hangs under the type the graph has
    assert all(e["quote"] for p in run.proposals.all() for e in p.payload.get("examples", []))
    # nothing arrived since: the next run reads no document
    assert discover().stats["additions_sources"] == 0


def test_discover_does_not_propose_a_rejected_addition_again_without_new_evidence(manual, f):
    first = discover()
    setting = first.proposals.get(kind="add_concept_type", payload__key="setting")
    Proposal.objects.filter(pk=setting.pk).update(status="rejected", decided_at=setting.created_at)
    # the same documents arrive again (a new revision of one, with the same sentences)
    graph.source_import(
        slug="settings", title="Settings", text=TEXTS["settings"] + "\n", acting_user=None
    )
    graph.source_import(
        slug="commands", title="Commands", text=TEXTS["commands"] + "\n", acting_user=None
    )
    again = discover()
    assert again.stats["additions_sources"] == 2
    assert not again.proposals.filter(kind="add_concept_type", payload__key="setting").exists()
    assert again.stats.get("additions_held_rejected", 0) >= 1


def test_construction_proposes_new_concepts_with_the_type_that_fits(f):
    """After a curator accepted types, the offline reader's add_concept carries type_key,
    and accepting it gives the concept that type."""
    graph.concept_type_create(key="command", label="Command", acting_user=None)
    graph.concept_type_create(key="lock", label="Lock", acting_user=None)
    graph.source_import(slug="locks", title="Locks", text=TEXTS["locks"], acting_user=None)
    call_command("construct", "--all", "--provider", "offline", stdout=io.StringIO())
    typed = {
        p.payload["name"]: p.payload.get("type_key", "")
        for p in Proposal.objects.filter(kind="add_concept")
    }
    assert typed["VACUUM command"] == "command"
    assert typed["SHARE UPDATE EXCLUSIVE lock"] == "lock"
    (vacuum,) = Proposal.objects.filter(kind="add_concept", payload__name="VACUUM command")
    curator = f.user("cura", role="curator")
    decisions.proposal_accept(proposal_id=vacuum.pk, acting_user=curator)
    assert Concept.objects.get(name="VACUUM command").type.key == "command"


def test_a_drafted_patterns_reason_puts_an_before_a_vowel():
    from kgreview.agents.bootstrap import _a

    assert (_a("argument"), _a("setting"), _a("Index")) == ("an argument", "a setting", "an Index")


def test_discover_proposes_the_pattern_the_accepted_typed_edges_use_with_their_quotes(f):
    """No document arrived, yet two accepted part_of edges join a setting to a process:
    the open relation is proposed that pattern, quoting the edges; once it exists, nothing."""
    from tests.factories import evidence

    graph.concept_type_create(key="setting", label="Setting", acting_user=None)
    graph.concept_type_create(key="process", label="Process", acting_user=None)
    text = (
        "The wal_buffers setting is part of checkpointing. The work_mem setting is part of sorting."
    )
    revision = f.lesson("tuning", text=text).current_revision
    quotes = text.split(". ")
    for (setting, process), quote in zip(
        (("wal_buffers", "Checkpointing"), ("work_mem", "Sorting")), quotes, strict=True
    ):
        s = graph.concept_set_type(concept=f.concept(setting), type_key="setting", acting_user=None)
        p = graph.concept_set_type(concept=f.concept(process), type_key="process", acting_user=None)
        f.edge(s, p, "part_of", evidence=evidence(revision, quote.rstrip(".")))
    run = discover()
    (pattern,) = run.proposals.filter(kind="add_relation_pattern")
    assert (pattern.payload["relation_key"], pattern.payload["domain_key"]) == (
        "part_of",
        "setting",
    )
    assert pattern.payload["range_key"] == "process"
    assert "in 2 accepted edges" in pattern.reason
    assert [e["quote"] for e in pattern.payload["examples"]] == [
        "The wal_buffers setting is part of checkpointing",
        "The work_mem setting is part of sorting",
    ]
    again = discover()
    assert not again.proposals.filter(kind="add_relation_pattern").exists()  # open already
