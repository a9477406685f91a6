"""Annotations from other tools through the queue (``agents.annotations``,
``manage.py import_annotations``): Label Studio, doccano and INCEpTION files become
sources and proposals quoting the marked characters, flagged with their annotator."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from kgreview.agents.annotations import annotations_import
from kgreview.agents.models import AgentRun
from kgreview.core.errors import ValidationFailed
from kgreview.graph.models import Source, SourceRevision
from kgreview.graph.sources import source_import
from kgreview.review.models import Proposal

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "annotations"
LABEL_STUDIO = FIXTURES / "labelstudio.json"
DOCCANO = FIXTURES / "doccano.jsonl"
XMI = FIXTURES / "inception.xmi"
MAPPING = FIXTURES / "mapping.json"
ALICE = "annotator:labelstudio:alice@example.org"


def run(path: Path, tool: str, *extra: str) -> tuple[dict, int]:
    """The command's JSON report and its exit status (1 when anything was left out)."""
    out = io.StringIO()
    try:
        call_command(
            "import_annotations",
            str(path),
            "--format",
            tool,
            "--json",
            *extra,
            stdout=out,
            stderr=io.StringIO(),
        )
        status = 0
    except CommandError as exc:
        status = exc.returncode
    return json.loads(out.getvalue()), status


def quoted_exactly(proposal: Proposal) -> bool:
    text = proposal.evidence_revision.text
    return text[proposal.evidence_start : proposal.evidence_end] == proposal.evidence_quote


def edge(relation: str, source: str, target: str) -> Proposal:
    return Proposal.objects.get(
        kind="add_edge",
        relation_key=relation,
        payload__source__name=source,
        payload__target__name=target,
    )


def test_label_studio_export_queues_concepts_and_edges_at_their_offsets():
    """Spans become concept proposals and relations edge proposals, each quoting exactly
    the characters marked (after the text's CRLF became LF), flagged with the annotator."""
    report, status = run(LABEL_STUDIO, "labelstudio", "--map", str(MAPPING))
    assert status == 1  # one region past the text's end, one relation label unmapped
    assert report["proposals"] == {"add_concept": 4, "add_edge": 2}
    needed = edge("prerequisite", "Embeddings", "Vector search")
    text = needed.evidence_revision.text
    assert "\r" not in text
    assert needed.evidence_quote == "Embeddings are needed before vector search"
    assert (needed.evidence_start, needed.evidence_end) == (0, 42)
    # "left": the arrow runs from the second region to the first.
    builds = edge("builds_on", "Retrieval-augmented generation", "Vector search")
    assert builds.evidence_quote == "Retrieval-augmented generation builds on vector search"
    assert builds.evidence_start == text.index("Retrieval")  # 45 in the CRLF text, 44 here
    rag = Proposal.objects.get(kind="add_concept", payload__name="Retrieval-augmented generation")
    assert rag.evidence_quote == "Retrieval-augmented generation" and quoted_exactly(rag)
    alice = Proposal.objects.filter(flag_rows__flag=ALICE)
    assert alice.count() == 5 and all(quoted_exactly(p) for p in alice)
    assert all(p.origin.agent == AgentRun.Agent.ANNOTATIONS for p in alice)
    reranker = Proposal.objects.get(kind="add_concept", payload__name="Reranker")
    assert "annotator:labelstudio:user-7" in reranker.flags
    assert report["unmapped"] == {"relation label “mentions”": 1}
    words = [p["problem"] for p in report["problems"]]
    assert any('"mentions" has no mapping' in w for w in words)
    assert any("run past the end of the text (43 characters)" in w for w in words)


def test_doccano_file_imports_lines_and_reports_bad_ones():
    """Each JSONL line is a text; a line that is not JSON and offsets past the text are
    reported in words, the rest imports; offsets count characters (an emoji is one)."""
    report, status = run(DOCCANO, "doccano", "--map", str(MAPPING), "--annotator", "Bob")
    assert status == 1
    first = edge("prerequisite", "Tokenization", "Embeddings")
    assert first.evidence_quote == "Tokenization comes before embeddings"
    assert quoted_exactly(first) and "annotator:doccano:bob" in first.flags
    part = edge("part_of", "Fine-tuning", "Model training")
    assert part.evidence_quote == "Fine-tuning is part of model training"
    documents = Proposal.objects.get(kind="add_concept", payload__name="Documents")
    assert documents.evidence_quote == "documents" and quoted_exactly(documents)
    words = " | ".join(f"{p['where']}: {p['problem']}" for p in report["problems"])
    assert "line 3: is not JSON" in words
    assert "line 4, entity 50: left out: its offsets 7–500 run past the end" in words
    assert 'line 2, relation 40: left out: its label "splits" has no mapping' in words
    assert report["unmapped"] == {"relation label “splits”": 1}


def test_inception_xmi_imports_with_its_type_system():
    """A CAS in XMI with INCEpTION's layers: named entities and a custom relation layer;
    its UTF-16 offsets (after an emoji) land on the right characters."""
    report, status = run(XMI, "inception", "--map", str(MAPPING), "--annotator", "carol")
    assert status == 1  # "requires-before" has no mapping
    builds = edge("builds_on", "Retrieval-augmented generation", "Vector search")
    assert "annotator:inception:carol" in builds.flags and quoted_exactly(builds)
    reranker = Proposal.objects.get(kind="add_concept", payload__name="Reranker")
    assert reranker.evidence_quote == "reranker" and quoted_exactly(reranker)
    assert Source.objects.get(slug=report["texts"][0]["source"]).title == "Search lesson"
    assert report["unmapped"] == {"relation label “requires-before”": 1}


def test_importing_the_same_file_again_adds_nothing():
    """A second import stores no revision and queues nothing: every proposal is already
    waiting, and the texts are the same."""
    run(DOCCANO, "doccano", "--map", str(MAPPING))
    proposals, revisions = Proposal.objects.count(), SourceRevision.objects.count()
    again, _ = run(DOCCANO, "doccano", "--map", str(MAPPING))
    assert again["proposals"] == {}
    assert {t["source_outcome"] for t in again["texts"]} == {"unchanged"}
    assert Proposal.objects.count() == proposals
    assert SourceRevision.objects.count() == revisions
    assert sum(t["dropped"].get("duplicate", 0) for t in again["texts"]) > 0


def test_a_text_already_imported_as_a_source_is_quoted_there():
    """An annotated text identical to a source's revision adds no source: its proposals
    quote that revision."""
    stored = source_import(
        slug="tokens",
        title="Tokens",
        text="Tokenization comes before embeddings. Fine-tuning is part of model training.",
        acting_user=None,
    )
    run(DOCCANO, "doccano", "--map", str(MAPPING))
    first = edge("prerequisite", "Tokenization", "Embeddings")
    assert first.evidence_revision_id == stored.revision.pk
    assert not Source.objects.filter(slug="doccano-doccano-example-1").exists()


def test_unmapped_labels_are_counted_and_nothing_is_guessed():
    """Without a mapping file no relation is proposed, even one whose label is a relation
    key: every label is reported with its count; the spans still become concepts."""
    raw = json.dumps(
        {
            "text": "Embeddings come before vector search.",
            "entities": [
                {"id": 1, "start_offset": 0, "end_offset": 10, "label": "C"},
                {"id": 2, "start_offset": 23, "end_offset": 36, "label": "C"},
            ],
            "relations": [
                {"id": 3, "from_id": 1, "to_id": 2, "type": "prerequisite"},
                {"id": 4, "from_id": 2, "to_id": 1, "type": "prerequisite"},
            ],
        }
    ).encode()
    report = annotations_import(raw=raw, filename="x.jsonl", tool="doccano", acting_user=None)
    assert report.unmapped == {"relation label “prerequisite”": 2}
    assert report.proposed == {"add_concept": 2}
    assert not Proposal.objects.filter(kind="add_edge").exists()


def test_mapping_errors_are_said_in_words_before_anything_is_written(tmp_path):
    """A mapping to a relation the graph lacks, or a mapping that is not JSON, refuses the
    import whole."""
    unknown = tmp_path / "map.json"
    unknown.write_text(json.dumps({"relations": {"needed before": "needs"}}))
    with pytest.raises(
        CommandError, match='"needed before" to "needs", which is no active relation'
    ):
        call_command(
            "import_annotations",
            str(LABEL_STUDIO),
            "--format",
            "labelstudio",
            "--map",
            str(unknown),
        )
    broken = tmp_path / "broken.json"
    broken.write_text("relations: needed before = prerequisite")
    with pytest.raises(CommandError, match="the mapping file is not JSON"):
        call_command(
            "import_annotations", str(LABEL_STUDIO), "--format", "labelstudio", "--map", str(broken)
        )
    shape = tmp_path / "shape.json"
    shape.write_text(json.dumps({"relation": {"a": "b"}}))
    with pytest.raises(CommandError, match="keys it does not know: relation"):
        call_command(
            "import_annotations", str(LABEL_STUDIO), "--format", "labelstudio", "--map", str(shape)
        )
    assert not Proposal.objects.exists() and not Source.objects.exists()
    assert not AgentRun.objects.exists()


@pytest.mark.parametrize(
    ("content", "tool", "words"),
    [
        (b"this is not json", "labelstudio", "is not JSON"),
        (b'[{"id": 1, "data": {"text": "x"}}]\x00', "labelstudio", "NUL bytes"),
        (b'{"tasks": 3}', "labelstudio", "one JSON object with the keys tasks, which is no task"),
        (
            b'[{"id": 4, "data": {"image": 3}, "annotations": [{"result": []}]}]',
            "labelstudio",
            "nothing to import, so nothing was written: task 4: has no text to read",
        ),
        (
            b'[{"id": 4, "annotations": [], "data": {"text": "x"}}]',
            "labelstudio",
            "nothing to import, so nothing was written: task 4: has no annotations",
        ),
        (b"\xff\xfe garbage", "doccano", "not UTF-8"),
        (b"<xmi:XMI broken", "inception", "not UIMA CAS XMI"),
        (b"", "doccano", "the file is empty"),
        (
            b'{"text": "x", "entities": [], "relations": []}',
            "doccano",
            "line 1: marks nothing kgreview reads",
        ),
    ],
)
def test_bad_files_are_refused_in_words(tmp_path, content, tool, words):
    """A file that is not of its format is refused in words; nothing is written."""
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    extra = ["--typesystem", str(FIXTURES / "TypeSystem.xml")] if tool == "inception" else []
    err = io.StringIO()
    with pytest.raises(CommandError) as refused:
        call_command(
            "import_annotations",
            str(path),
            "--format",
            tool,
            *extra,
            stdout=io.StringIO(),
            stderr=err,
        )
    # Refused whole, the exception saying why, with exit status 1 and nothing written:
    # no source, no run, no proposal.
    assert words in str(refused.value)
    assert refused.value.returncode == 1
    assert not Proposal.objects.exists() and not Source.objects.exists()
    assert not AgentRun.objects.exists()


def test_an_oversized_file_is_refused_before_it_is_read(tmp_path, settings):
    """A file over KG_MAX_SOURCE_BYTES (a 100 MB one) is refused by its size, unread."""
    settings.KG_MAX_SOURCE_BYTES = 50_000_000
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(100 * 1024 * 1024)  # sparse: costs no disk
    with pytest.raises(CommandError, match="is 100.0 MB; an annotation file is 47.7 MB at most"):
        call_command("import_annotations", str(path), "--format", "labelstudio")


def test_curator_accepts_all_of_one_annotators_proposals_with_the_bulk_preview(f):
    """The Queue filters by the origin flag, and its bulk preview then apply decides
    exactly that annotator's proposals."""
    run(LABEL_STUDIO, "labelstudio", "--map", str(MAPPING))
    others = set(Proposal.objects.exclude(flag_rows__flag=ALICE).values_list("pk", flat=True))
    assert others  # user 7's reranker
    client = Client()
    client.force_login(f.user("cura", role="curator"))
    queue = client.get(reverse("review:queue")).content.decode()
    link = f'href="?status=open&amp;flag={quote(ALICE)}"'
    assert link in queue  # each of her cards links to the filter of her work
    page = client.get(reverse("review:queue") + f"?flag={ALICE}").content.decode()
    assert "Unknown flag" not in page and 'id="result-count">5<' in page
    assert f'name="flag" value="{ALICE}" checked' in page
    counts = client.get(reverse("review:queue-counts") + f"?flag={ALICE}").content.decode()
    assert re.search(r'id="result-count"[^>]*>5<', counts)
    q = f"flag={ALICE}"
    preview = client.post(
        reverse("review:bulk"),
        {"q": q, "scope": "filter", "action": "accept", "step": "preview"},
        headers={"HX-Request": "true"},
    ).content.decode()
    assert "5 would go through" in preview
    assert not Proposal.objects.filter(status="accepted").exists()
    client.post(
        reverse("review:bulk"),
        {"q": q, "scope": "filter", "action": "accept", "step": "apply"},
        headers={"HX-Request": "true"},
    )
    alice = Proposal.objects.filter(flag_rows__flag=ALICE)
    assert set(alice.values_list("status", flat=True)) == {"accepted"}
    assert set(Proposal.objects.filter(pk__in=others).values_list("status", flat=True)) == {
        "pending"
    }


def test_queue_refuses_a_flag_that_is_neither_known_nor_an_origin(f):
    """Any other flag is said to be unknown, as before."""
    client = Client()
    client.force_login(f.user("rev", role="reviewer"))
    page = client.get(reverse("review:queue") + "?flag=annotator:paint:bob").content.decode()
    assert "Unknown flag: annotator:paint:bob." in page


def test_an_invalid_confidence_is_refused():
    """A confidence outside 0..1 is refused in words."""
    with pytest.raises(ValidationFailed, match="between 0 and 1"):
        annotations_import(
            raw=DOCCANO.read_bytes(),
            filename="d.jsonl",
            tool="doccano",
            acting_user=None,
            confidence=2.0,
        )


def test_after_decisions_importing_again_proposes_nothing(f):
    """An accepted edge is in the graph and a rejected span's concept was turned down
    with this very quote: importing the file again proposes neither."""
    from kgreview.review.decide.decisions import proposal_accept, proposal_reject

    run(DOCCANO, "doccano", "--map", str(MAPPING))
    curator = f.user("cura", role="curator")
    proposal_accept(
        proposal_id=edge("prerequisite", "Tokenization", "Embeddings").pk, acting_user=curator
    )
    documents = Proposal.objects.get(kind="add_concept", payload__name="Documents")
    proposal_reject(proposal_id=documents.pk, acting_user=curator, reason_code="too_vague")
    again, _ = run(DOCCANO, "doccano", "--map", str(MAPPING))
    assert again["proposals"] == {}
    dropped = {}
    for text in again["texts"]:
        for reason, n in text["dropped"].items():
            dropped[reason] = dropped.get(reason, 0) + n
    assert dropped.get("existing_edge") == 1 and dropped.get("previously_rejected") == 1
    assert Proposal.objects.filter(kind="add_concept", payload__name="Documents").count() == 1


def test_label_studio_json_min_imports_its_spans_flagged_like_the_full_export():
    """JSON-MIN: the same annotators' flags as the full export, the spans at their
    offsets; the unlabelled task and the missing relations are reported as skipped, which
    is no failure (exit status 0)."""
    report, status = run(FIXTURES / "labelstudio_min.json", "labelstudio")
    assert status == 0 and report["problems"] == []
    assert report["proposals"] == {"add_concept": 4}
    assert report["flags"] == [ALICE, "annotator:labelstudio:user-7"]
    skipped = {s["where"]: s["problem"] for s in report["skipped"]}
    assert skipped["task 13"] == "has no annotations"
    assert "carries no relations" in skipped["the file"]
    rag = Proposal.objects.get(kind="add_concept", payload__name="Retrieval-augmented generation")
    assert quoted_exactly(rag) and ALICE in rag.flags


def test_label_studio_texts_by_url_are_read_from_the_texts_folder(tmp_path):
    """--texts DIR: a task's text given as Label Studio's upload path is read from the
    file of that name (its upload prefix dropped), never downloaded; the span after the
    emoji lands on its characters (code points); the URL not in the folder is reported;
    the cancelled annotation and the predictions propose nothing."""
    report, status = run(
        FIXTURES / "labelstudio_url.json",
        "labelstudio",
        "--map",
        str(MAPPING),
        "--texts",
        str(FIXTURES / "texts"),
    )
    assert status == 1  # task 22's text is not in the folder
    edge_ = edge("prerequisite", "Tokenization", "Embeddings")
    assert edge_.evidence_quote == "tokenization comes before embeddings" and quoted_exactly(edge_)
    assert ALICE in edge_.flags
    assert not Proposal.objects.filter(payload__name="Reranker").exists()  # a prediction
    assert not Proposal.objects.filter(flag_rows__flag="annotator:labelstudio:bob@example.org")
    (problem,) = report["problems"]
    assert problem["where"] == "task 22"
    assert 'text "https://example.org/texts/elsewhere.txt" is not in' in problem["problem"]
    skipped = [s["where"] for s in report["skipped"]]
    assert skipped == ["task 21, annotation 202", "task 23"]


def test_label_studio_texts_by_url_without_a_folder_are_refused_whole_in_words():
    """No --texts: nothing of the file can be read, so nothing is written and the words
    say what to give."""
    with pytest.raises(CommandError, match="give the folder holding that file with --texts DIR"):
        call_command(
            "import_annotations",
            str(FIXTURES / "labelstudio_url.json"),
            "--format",
            "labelstudio",
            stdout=io.StringIO(),
        )
    assert not Source.objects.exists() and not AgentRun.objects.exists()


def test_a_text_in_the_folder_that_is_not_utf8_is_reported(tmp_path):
    """A file of the --texts folder is read as UTF-8 or reported, never guessed."""
    (tmp_path / "lesson.txt").write_bytes("caf\u00e9 embeddings".encode("latin-1"))
    task = {
        "id": 1,
        "data": {"text": "/data/local-files/?d=corpus/lesson.txt"},
        "annotations": [
            {
                "id": 2,
                "completed_by": 1,
                "result": [
                    {"id": "a", "type": "labels", "value": {"start": 5, "end": 15, "labels": ["C"]}}
                ],
            }
        ],
    }
    path = tmp_path / "export.json"
    path.write_text(json.dumps([task]))
    with pytest.raises(CommandError, match="lesson.txt, which is not UTF-8 text"):
        call_command(
            "import_annotations", str(path), "--format", "labelstudio", "--texts", str(tmp_path)
        )


def test_a_relation_labelled_twice_and_a_region_to_nowhere_queue_one_edge(tmp_path):
    """Duplicate regions and a repeated relation queue one proposal each; a relation to a
    region id that is not in the annotation is reported; the rest imports."""
    text = "Embeddings are needed before vector search."
    region = lambda rid, a, b: {  # noqa: E731
        "id": rid,
        "type": "labels",
        "value": {"start": a, "end": b, "labels": ["C"]},
    }
    rel = {"type": "relation", "from_id": "e1", "to_id": "e2", "labels": ["needed before"]}
    result = [
        region("e1", 0, 10),
        region("e2", 29, 42),
        region("e3", 29, 42),
        rel,
        rel,
        {"type": "relation", "from_id": "e1", "to_id": "zz", "labels": ["needed before"]},
    ]
    path = tmp_path / "dup.json"
    path.write_text(
        json.dumps(
            [
                {
                    "id": 1,
                    "data": {"text": text},
                    "annotations": [{"id": 1, "completed_by": 1, "result": result}],
                }
            ]
        )
    )
    report, status = run(path, "labelstudio", "--map", str(MAPPING))
    assert status == 1
    assert Proposal.objects.filter(kind="add_edge").count() == 1
    assert report["proposals"]["add_edge"] == 1
    assert Proposal.objects.filter(kind="add_concept", payload__name="Vector search").count() == 1
    (problem,) = report["problems"]
    assert "it joins span zz, which was left out or is not in this text" in problem["problem"]


def test_a_text_with_a_lone_surrogate_is_stored_not_crashed(tmp_path):
    """Half of a UTF-16 pair escaped in the JSON is no character: it is stored as U+FFFD
    and the quote still sits on its characters."""
    path = tmp_path / "lone.json"
    path.write_bytes(
        b'[{"id": 1, "data": {"text": "a \\ud83d embeddings"}, "annotations": [{"result": '
        b'[{"id": "e", "type": "labels", "value": {"start": 4, "end": 14, "labels": ["C"]}}]}]}]'
    )
    report, status = run(path, "labelstudio")
    assert status == 0
    concept = Proposal.objects.get(kind="add_concept")
    assert concept.evidence_quote == "embeddings" and quoted_exactly(concept)
    assert "\ufffd" in concept.evidence_revision.text


def test_a_manual_page_annotated_in_both_tools_imports_with_every_quote_in_place():
    """bzip2's manual page, annotated by hand in Label Studio (alice; carol cancelled)
    and doccano (bob): every proposal quotes its characters; bob's doccano text is the
    same text, so it quotes the revision Label Studio's import stored, and what he marked
    as alice did is not queued twice."""
    bzip2 = FIXTURES / "bzip2"
    first, status = run(
        bzip2 / "labelstudio.json", "labelstudio", "--map", str(bzip2 / "mapping.json")
    )
    assert status == 0 and first["proposals"] == {"add_concept": 18, "add_edge": 12}
    assert len(first["skipped"]) == 2
    second, status = run(
        bzip2 / "doccano.jsonl",
        "doccano",
        "--map",
        str(bzip2 / "mapping.json"),
        "--annotator",
        "bob",
    )
    assert status == 0 and {t["source_outcome"] for t in second["texts"]} == {"unchanged"}
    assert second["proposals"] == {"add_concept": 7, "add_edge": 5}
    assert all(quoted_exactly(p) for p in Proposal.objects.all())
    assert Source.objects.count() == 2
