"""Two annotators marking the same thing (``agents.annotations``): the second one's item
is merged into the first one's open proposal, which then carries both annotators' flags,
so filtering the Queue by either annotator finds it; the report says what was merged
into which proposal, and what was dropped, in words."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from kgreview.review.decide.decisions import proposal_accept, proposal_reject
from kgreview.review.models import Proposal
from kgreview.review.services import flags_text, proposal_add_flags
from tests.agents.test_annotations import MAPPING, run

pytestmark = pytest.mark.django_db

ALICE = "annotator:doccano:alice"
BOB = "annotator:doccano:bob"
TEXT = "Tokenization comes before embeddings. Fine-tuning is part of model training."


def line(user: str, *, relation: bool = True, fine_tuning: bool = False) -> dict:
    """One doccano example of ``TEXT`` by ``user``: "Tokenization" and "embeddings"
    marked (joined by "prerequisite-of" unless ``relation`` is off), and "Fine-tuning"
    alone when asked."""
    entities = [
        {"id": 10, "start_offset": 0, "end_offset": 12, "label": "Concept"},
        {"id": 11, "start_offset": 26, "end_offset": 36, "label": "Concept"},
    ]
    if fine_tuning:
        entities.append({"id": 12, "start_offset": 38, "end_offset": 49, "label": "Concept"})
    relations = [{"id": 20, "from_id": 10, "to_id": 11, "type": "prerequisite-of"}]
    return {
        "id": 1,
        "text": TEXT,
        "user": user,
        "entities": entities,
        "relations": relations if relation else [],
    }


def imported(tmp_path: Path, *lines: dict, name: str = "work.jsonl") -> tuple[dict, int]:
    """The command's JSON report for a doccano file of ``lines``, and its exit status."""
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    return run(path, "doccano", "--map", str(MAPPING))


def import_words(tmp_path: Path, *lines: dict, name: str) -> str:
    """The command's report in words (no ``--json``)."""
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    out = io.StringIO()
    call_command(
        "import_annotations",
        str(path),
        "--format",
        "doccano",
        "--map",
        str(MAPPING),
        stdout=out,
        stderr=io.StringIO(),
    )
    return out.getvalue()


def the_edge() -> Proposal:
    return Proposal.objects.get(kind="add_edge", relation_key="prerequisite")


def outcomes(report: dict) -> list[dict]:
    return [o for text in report["texts"] for o in text["outcomes"]]


def test_second_annotator_in_a_later_run_is_merged_and_flagged(tmp_path):
    """Bob, imported after Alice, marks her relation and her two spans: nothing new is
    queued, her three proposals now carry his flag too (once each), and his report says
    each was merged into which proposal."""
    imported(tmp_path, line("alice"), name="alice.jsonl")
    edge = the_edge()
    concepts = set(Proposal.objects.filter(kind="add_concept").values_list("pk", flat=True))
    assert len(concepts) == 2
    report, status = imported(tmp_path, line("bob"), name="bob.jsonl")
    assert status == 0 and report["proposals"] == {}
    assert Proposal.objects.count() == 3
    edge.refresh_from_db()
    assert ALICE in edge.flags and BOB in edge.flags
    assert len(edge.flags) == len(set(edge.flags))
    for proposal in Proposal.objects.all():
        assert BOB in proposal.flags and ALICE in proposal.flags
    merged = {o["id"]: o for o in outcomes(report) if o["result"] == "merged"}
    assert set(merged) == {edge.pk, *concepts}
    said = merged[edge.pk]
    assert said["item"] == 'relation "Tokenization" prerequisite "embeddings"'
    assert f"already waiting for review as proposal #{edge.pk}" in said["detail"]
    assert f"It is flagged {BOB} too." in said["detail"]


def test_both_annotators_in_one_file_share_one_proposal_flagged_by_both(tmp_path):
    """Alice's and Bob's lines in one file: one edge, flagged by both."""
    report, _ = imported(tmp_path, line("alice"), line("bob"))
    assert report["proposals"] == {"add_concept": 2, "add_edge": 1}
    edge = the_edge()
    assert {ALICE, BOB} <= set(edge.flags)
    assert sorted(report["flags"]) == [ALICE, BOB]
    (bob,) = [t for t in report["texts"] if t["flag"] == BOB]
    assert {o["result"] for o in bob["outcomes"]} == {"merged"}
    assert edge.pk in {o["id"] for o in bob["outcomes"]}


def test_the_queue_filter_lists_the_merged_proposal_for_either_annotator(tmp_path, f):
    """``?flag=annotator:…`` of Alice and of Bob both list the edge they agree on; Bob's
    also lists his own span of Fine-tuning and nothing of Alice's alone."""
    imported(tmp_path, line("alice", fine_tuning=False), name="alice.jsonl")
    imported(tmp_path, line("bob", fine_tuning=True), name="bob.jsonl")
    edge = the_edge()
    client = Client()
    client.force_login(f.user("cura", role="curator"))
    for flag, count in ((ALICE, 3), (BOB, 4)):
        page = client.get(reverse("review:queue") + f"?flag={flag}").content.decode()
        assert f'id="result-count">{count}<' in page, flag
        assert f'name="ids" value="{edge.pk}"' in page
        counts = client.get(reverse("review:queue-counts") + f"?flag={flag}").content.decode()
        assert re.search(rf'id="result-count"[^>]*>{count}<', counts)


def test_importing_the_second_annotator_again_keeps_flags_a_set(tmp_path):
    """Bob's file imported twice adds his flag once, and the second time changes nothing
    (the proposal's version stays)."""
    imported(tmp_path, line("alice"), name="alice.jsonl")
    imported(tmp_path, line("bob"), name="bob.jsonl")
    edge = the_edge()
    flags, version = list(edge.flags), edge.version
    imported(tmp_path, line("bob"), name="bob.jsonl")
    edge.refresh_from_db()
    assert edge.flags == flags and edge.version == version
    assert edge.flags.count(BOB) == 1
    assert edge.flags_text == flags_text(edge.flags)


def test_a_rejected_match_is_dropped_and_said_in_words(tmp_path, f):
    """Alice's edge rejected: Bob's same relation with the same quote is not proposed
    again (the rule for rejected duplicates holds), the rejected proposal is left as it
    was, and his report says why in words."""
    imported(tmp_path, line("alice"), name="alice.jsonl")
    edge = the_edge()
    proposal_reject(
        proposal_id=edge.pk, acting_user=f.user("cura", role="curator"), reason_code="too_vague"
    )
    edge.refresh_from_db()
    flags, version = list(edge.flags), edge.version
    report, _ = imported(tmp_path, line("bob"), name="bob.jsonl")
    assert report["proposals"] == {}
    edge.refresh_from_db()
    assert edge.flags == flags and edge.version == version and edge.status == "rejected"
    (said,) = [o for o in outcomes(report) if o["item"].startswith("relation")]
    assert said["result"] == "dropped" and said["reason"] == "previously_rejected"
    assert "A reviewer rejected this change before, with this very quote" in said["detail"]


def test_an_accepted_match_is_dropped_as_an_existing_edge(tmp_path, f):
    """Alice's edge accepted: Bob's same relation is already in the graph, said so."""
    imported(tmp_path, line("alice"), name="alice.jsonl")
    proposal_accept(proposal_id=the_edge().pk, acting_user=f.user("cura", role="curator"))
    report, _ = imported(tmp_path, line("bob"), name="bob.jsonl")
    (said,) = [o for o in outcomes(report) if o["item"].startswith("relation")]
    assert said["result"] == "dropped" and said["reason"] == "existing_edge"
    assert "The graph already has this edge" in said["detail"]
    assert BOB not in the_edge().flags


def test_a_span_alone_merges_into_the_open_concept_proposal(tmp_path):
    """Bob marks only the spans (no relation): Alice's concept proposals gain his flag,
    her edge does not (he did not mark it)."""
    imported(tmp_path, line("alice"), name="alice.jsonl")
    report, _ = imported(tmp_path, line("bob", relation=False), name="bob.jsonl")
    assert report["proposals"] == {}
    for concept in Proposal.objects.filter(kind="add_concept"):
        assert BOB in concept.flags
    assert BOB not in the_edge().flags
    items = {o["item"] for o in outcomes(report) if o["result"] == "merged"}
    assert items == {'span "Tokenization"', 'span "embeddings"'}


def test_the_report_in_words_names_the_merge(tmp_path):
    """Without ``--json`` the command prints each merge with the proposal's number."""
    imported(tmp_path, line("alice"), name="alice.jsonl")
    words = import_words(tmp_path, line("bob"), name="bob.jsonl")
    number = the_edge().pk
    assert re.search(
        rf'merged  line 1: relation "Tokenization" prerequisite "embeddings" into #{number}: '
        rf"The same change \(or its inverse\) is already waiting for review as proposal "
        rf"#{number}\. It is flagged {BOB} too\.",
        words,
    )


def test_adding_flags_keeps_a_set_leaves_decided_proposals_and_stops_at_the_column(tmp_path, f):
    """``proposal_add_flags``: a flag already there is not added again (no new version);
    a decided proposal is left alone; a flag that would overflow ``flags_text`` is not
    added, the others are."""
    imported(tmp_path, line("alice"), name="alice.jsonl")
    edge = the_edge()
    same = proposal_add_flags(proposal_id=edge.pk, flags=[ALICE, ALICE])
    assert same is not None and same.version == edge.version and same.flags == edge.flags
    long = [f"annotator:doccano:{'x' * 60}{n}" for n in range(10)]
    grown = proposal_add_flags(proposal_id=edge.pk, flags=[BOB, *long])
    assert grown is not None and BOB in grown.flags and grown.version == edge.version + 1
    assert long[0] in grown.flags and long[-1] not in grown.flags
    assert len(grown.flags_text) <= 500 and grown.flags == sorted(set(grown.flags))
    stored = Proposal.objects.get(pk=edge.pk)
    assert set(stored.flag_rows.values_list("flag", flat=True)) == set(stored.flags)
    proposal_reject(
        proposal_id=edge.pk, acting_user=f.user("cura", role="curator"), reason_code="too_vague"
    )
    assert proposal_add_flags(proposal_id=edge.pk, flags=["annotator:doccano:carol"]) is None
    assert "annotator:doccano:carol" not in Proposal.objects.get(pk=edge.pk).flags


def test_a_concept_refused_as_a_duplicate_when_written_gains_the_flag_too(tmp_path):
    """A concept draft the loop did not know was queued (refused as a duplicate only when
    written) is merged the same way: the open proposal gains the flag, the stats name it,
    and nothing new is queued."""
    from construction.types import ConceptDraft, SourceResult, Span
    from kgreview.agents.models import AgentRun
    from kgreview.agents.persist import persist_result
    from kgreview.agents.runs import agent_run_create

    imported(tmp_path, line("alice"), name="alice.jsonl")
    open_one = Proposal.objects.get(kind="add_concept", payload__name="Tokenization")
    run = agent_run_create(agent=AgentRun.Agent.ANNOTATIONS)
    draft = ConceptDraft(
        key="tokenization",
        name="Tokenization",
        aliases=(),
        description="",
        confidence=0.9,
        reason="bob labelled it",
        evidence=Span(0, 12, "Tokenization"),
        dedup_key=open_one.dedup_key,
    )
    result = SourceResult(concepts=(draft,), edges=(), invalidations=(), dropped=())
    revision = open_one.evidence_revision
    assert revision is not None
    stats = persist_result(
        run=run,
        revision=revision,
        result=result,
        flags=(BOB,),
        merged_gain_flags=True,
    )
    assert stats["proposals"] == {}
    assert stats["merged"] == [{"item": {"span": "Tokenization"}, "proposal_id": open_one.pk}]
    assert stats["gained"] == {open_one.pk: "gained"}
    open_one.refresh_from_db()
    assert {ALICE, BOB} <= set(open_one.flags)
    assert Proposal.objects.filter(kind="add_concept", payload__name="Tokenization").count() == 1
