"""Releases: cut one, its notes are the diff since the previous one, its files never
change, its instant is respected, its name and instant are refused in words."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from kgreview.core.errors import HardDeleteForbidden, ImmutableRecord, ValidationFailed
from kgreview.core.models import AuditEntry
from kgreview.exports.models import Release, ReleaseBuild, ReleaseFile
from kgreview.exports.releases import files, selectors
from kgreview.exports.releases.files import ReleaseFileChanged
from kgreview.exports.releases.services import (
    ReleaseNameTaken,
    release_build_run,
    release_create,
    release_request,
)
from kgreview.graph import services
from kgreview.graph.models import RelationType
from kgreview.review.decide import decisions

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def release_dir(settings, tmp_path):
    settings.KG_RELEASE_DIR = tmp_path / "releases"
    return settings.KG_RELEASE_DIR


def _bytes(release: Release) -> dict[str, bytes]:
    return {
        stored.filename: (files.folder(release.name) / stored.filename).read_bytes()
        for stored in release.files.all()
    }


def _edge_triples(rows: list[dict]) -> set[tuple[str, str, str]]:
    return {(r["source"], r["relation"], r["target"]) for r in rows}


def test_a_first_release_lists_the_whole_graph_as_added(graph, f):
    """No previous release: every concept and edge of the graph at the instant is added,
    the edge retired before it is in neither list, and the reviewer's accept is counted."""
    release = release_create(name="2026-11", acting_user=f.user(role="curator"))
    notes = release.changes
    assert notes["since"] is None
    assert [c["name"] for c in notes["concepts"]["added"]] == sorted(
        ["Embeddings", "Vector search", "RAG", "Keyword search", "Dense retrieval"]
    )
    assert _edge_triples(notes["edges"]["added"]) == {
        ("Embeddings", "prerequisite", "Vector search"),
        ("RAG", "builds_on", "Vector search"),
        ("Keyword search", "contrasts_with", "Dense retrieval"),
        ("Embeddings", "related", "Vector search"),
    }
    assert notes["edges"]["counts"] == {
        "before": 0,
        "after": 4,
        "added": 4,
        "changed": 0,
        "retired": 0,
    }
    assert notes["edges"]["retired"] == [] and notes["edges"]["changed"] == []
    assert notes["deciders"] == [
        {"username": "rita", "accepted": 1, "edited": 0, "rejected": 0, "undone": 0, "total": 1}
    ]
    vocabulary = sorted(RelationType.objects.filter(active=True).values_list("key", flat=True))
    assert notes["relation_types"] == {"added": vocabulary, "retired": []}


def test_the_next_release_notes_list_exactly_what_changed(graph, f):
    """Between two releases: concepts added, merged and retired, edges added, changed and
    retired, relation and concept types added and retired, counts per relation and who
    decided how much: exactly those, nothing else."""
    curator = f.user("cora", role="curator")
    stray = f.concept("Stray")
    vector_db = f.concept("Vector database")
    first = release_create(name="r1", acting_user=curator)

    sam = f.user("sam", role="reviewer")
    rerank = f.concept("Reranking")
    f.edge(rerank, graph.rag, "applies_to")
    accept = f.edge_proposal(graph.kw, graph.rag)
    decisions.proposal_accept(proposal_id=accept.pk, acting_user=sam)
    reject = f.edge_proposal(graph.emb, graph.rag)
    decisions.proposal_reject(proposal_id=reject.pk, acting_user=sam, reason_code="duplicate")
    services.edge_invalidate(edge=graph.builds_on, reason="Not stated.", acting_user=curator)
    changed = services.edge_supersede(
        edge=graph.contrasts, confidence=0.5, why="Less sure.", acting_user=curator
    )
    services.concept_merge(loser=vector_db, survivor=graph.vs, acting_user=curator)
    services.concept_retire(concept=stray, acting_user=curator)
    services.relation_type_create(key="uses", label="Uses", verb="uses", acting_user=curator)
    services.relation_type_retire(relation=graph.related.relation, acting_user=curator)
    services.concept_type_create(key="method", label="Method", acting_user=curator)

    second = release_create(name="r2", acting_user=curator, notes="Spring term.")
    notes = second.changes
    assert second.previous == first and notes["since"] is not None
    assert [c["name"] for c in notes["concepts"]["added"]] == ["Reranking"]
    assert [(c["name"], c["into"]["name"]) for c in notes["concepts"]["merged"]] == [
        ("Vector database", "Vector search")
    ]
    assert [c["name"] for c in notes["concepts"]["retired"]] == ["Stray"]
    assert _edge_triples(notes["edges"]["added"]) == {
        ("Reranking", "applies_to", "RAG"),
        ("Keyword search", "prerequisite", "RAG"),
    }
    assert _edge_triples(notes["edges"]["retired"]) == {("RAG", "builds_on", "Vector search")}
    assert [(c["old"]["id"], c["new"]["id"]) for c in notes["edges"]["changed"]] == [
        (graph.contrasts.pk, changed.pk)
    ]
    assert notes["edges"]["counts"] == {
        "before": 4,
        "after": 5,
        "added": 2,
        "changed": 1,
        "retired": 1,
    }
    assert notes["relation_types"] == {"added": ["uses"], "retired": ["related"]}
    assert notes["concept_types"] == {"added": ["method"], "retired": []}
    zero = {"before": 0, "after": 0, "added": 0, "changed": 0, "retired": 0}
    assert notes["relations"] == {
        "applies_to": {**zero, "after": 1, "added": 1},
        "builds_on": {**zero, "before": 1, "retired": 1},
        "contrasts_with": {**zero, "before": 1, "after": 1, "changed": 1},
        "prerequisite": {**zero, "before": 1, "after": 2, "added": 1},
        "related": {**zero, "before": 1, "after": 1},
    }
    assert notes["deciders"] == [
        {"username": "sam", "accepted": 1, "edited": 0, "rejected": 1, "undone": 0, "total": 2}
    ]
    assert second.notes == "Spring term."


def test_a_release_stores_every_export_and_the_validation_report_with_their_hashes(graph, f):
    """Five exports and the report, each file's size and SHA-256 as recorded."""
    release = release_create(name="v1.0", acting_user=None)
    stored = {s.format: s for s in release.files.all()}
    assert set(stored) == {"jsonld", "csv", "graphml", "turtle", "shacl", "validation"}
    for s in stored.values():
        data = (files.folder("v1.0") / s.filename).read_bytes()
        assert len(data) == s.size > 0
        assert hashlib.sha256(data).hexdigest() == s.sha256
    report = json.loads((files.folder("v1.0") / "validation.json").read_text())
    assert report == release.validation and report["conforms"] is release.conforms
    doc = json.loads((files.folder("v1.0") / "graph.jsonld").read_text())
    edges = {n["identifier"] for n in doc["@graph"] if n.get("@type") == "rdf:Statement"}
    assert edges == {graph.accepted.pk, graph.builds_on.pk, graph.contrasts.pk, graph.related.pk}


def test_a_release_files_never_change_after_later_decisions(graph, f):
    """Bytes and hashes of a release are the same after edges are retired, concepts merged
    and another release cut (the live exports of that instant would now differ)."""
    curator = f.user(role="curator")
    first = release_create(name="first", acting_user=curator)
    before = _bytes(first)
    hashes = {s.filename: s.sha256 for s in first.files.all()}

    services.edge_invalidate(edge=graph.accepted, reason="Wrong.", acting_user=curator)
    services.concept_merge(loser=graph.dense, survivor=graph.kw, acting_user=curator)
    release_create(name="second", acting_user=curator)

    again = Release.objects.get(name="first")
    assert _bytes(again) == before
    assert {s.filename: s.sha256 for s in again.files.all()} == hashes
    for stored in again.files.all():
        assert selectors.release_file_path(stored).read_bytes() == before[stored.filename]


def test_a_release_holds_the_graph_as_of_its_instant_not_what_came_after(graph, f):
    """An edge recorded after the instant is in neither the notes nor the files."""
    at = timezone.now()
    later = f.edge(graph.kw, graph.rag, "applies_to")
    release = release_create(name="as-of", as_of=at, acting_user=None)
    assert release.as_of == at
    doc = json.loads((files.folder("as-of") / "graph.jsonld").read_text())
    ids = {n["identifier"] for n in doc["@graph"] if n.get("@type") == "rdf:Statement"}
    assert later.pk not in ids and graph.accepted.pk in ids
    graphml = (files.folder("as-of") / "graph.graphml").read_text()
    assert f'id="e{later.pk}"' not in graphml and f'id="e{graph.accepted.pk}"' in graphml
    assert ("Keyword search", "applies_to", "RAG") not in _edge_triples(
        release.changes["edges"]["added"]
    )


def test_a_future_instant_is_refused_in_words(graph):
    """A release vouches for the graph as it was."""
    with pytest.raises(ValidationFailed, match="is in the future"):
        release_create(name="soon", as_of=timezone.now() + timedelta(days=1), acting_user=None)
    assert not Release.objects.exists()


def test_an_instant_before_the_previous_release_is_refused_in_words(graph):
    """Releases follow each other in time."""
    release_create(name="one", acting_user=None)
    with pytest.raises(ValidationFailed, match='is before release "one"'):
        release_create(name="two", as_of=timezone.now() - timedelta(days=1), acting_user=None)
    assert list(Release.objects.values_list("name", flat=True)) == ["one"]


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("", "Give the release a name"),
        ("   ", "Give the release a name"),
        ("a\x00b", "no control characters"),
        ("x" * 10_000, "at most 64 characters; this one has 10,000"),
        ("2026/12", "path separator"),
        ("..\\etc", "path separator"),
        ("..", "cannot name a release"),
        (".hidden", "cannot name a release"),
        ("Spring-2026", "use lower case"),
        ("two words", "cannot name a release"),
        ("cut", "uses in its own addresses"),
        (12, "as text"),
    ],
)
def test_a_malformed_name_is_refused_in_words_and_nothing_is_kept(name, words, release_dir):
    """Each malformed name is refused with its reason; no row, no folder."""
    with pytest.raises(ValidationFailed, match=words):
        release_create(name=name, acting_user=None)
    assert not Release.objects.exists()
    assert not release_dir.exists() or [p.name for p in release_dir.iterdir()] in ([], [".staging"])


def test_a_taken_name_is_refused_in_words(graph):
    """A release never changes, so its name is never given again."""
    release_create(name="2026-12", acting_user=None)
    with pytest.raises(ReleaseNameTaken, match='already a release named "2026-12"'):
        release_create(name="2026-12", acting_user=None)
    assert Release.objects.count() == 1


def test_a_release_is_append_only_and_never_deleted(graph):
    """No edit, no delete: the release and its files' rows refuse both."""
    release = release_create(name="kept", acting_user=None)
    release.notes = "rewritten"
    with pytest.raises(ImmutableRecord):
        release.save()
    with pytest.raises(ImmutableRecord):
        Release.objects.filter(pk=release.pk).update(notes="x")
    with pytest.raises(HardDeleteForbidden):
        release.delete()
    stored = release.files.first()
    with pytest.raises(ImmutableRecord):
        ReleaseFile.objects.filter(pk=stored.pk).update(sha256="0" * 64)
    assert Release.objects.get(pk=release.pk).notes == ""


def test_cutting_a_release_writes_one_curation_log_row_naming_the_curator(graph, f):
    """One audited service: the row names who cut it and each file's hash."""
    curator = f.user("cora", role="curator")
    release = release_create(name="logged", acting_user=curator)
    (entry,) = AuditEntry.objects.filter(action="release.create")
    assert entry.user == curator and entry.subject_id == str(release.pk)
    assert entry.after["files"] == {s.filename: s.sha256 for s in release.files.all()}
    assert release.created_by == curator


def test_a_tampered_file_is_refused_in_words(graph):
    """A file changed on disk no longer matches its hash and is not served."""
    release = release_create(name="tamper", acting_user=None)
    stored = release.files.get(format="graphml")
    path = files.folder("tamper") / stored.filename
    path.write_bytes(path.read_bytes().replace(b"Embeddings", b"Embeddingz"))
    with pytest.raises(ReleaseFileChanged, match="was changed on the server's disk"):
        selectors.release_file_path(stored)
    path.unlink()
    with pytest.raises(ReleaseFileChanged, match="is missing"):
        selectors.release_file_path(stored)


def test_a_failed_cut_leaves_no_folder_and_a_later_one_takes_the_name(graph, release_dir):
    """A folder left by a cut that never committed is moved aside, never served."""
    orphan = release_dir / "again"
    orphan.mkdir(parents=True)
    (orphan / "graph.jsonld").write_text("left over")
    release = release_create(name="again", acting_user=None)
    assert (files.folder("again") / "graph.jsonld").read_text() != "left over"
    assert [p.name.startswith("again-") for p in (release_dir / ".orphans").iterdir()] == [True]
    assert release.files.count() == 6


def test_a_requested_build_cuts_the_release_once_even_when_run_twice(
    graph, f, django_capture_on_commit_callbacks
):
    """The task's body is safe to run twice: one release, the build done and linked."""
    curator = f.user(role="curator")
    with django_capture_on_commit_callbacks(execute=True):
        build = release_request(name="queued", acting_user=curator)
    build.refresh_from_db()
    assert build.status == ReleaseBuild.Status.DONE and build.release.name == "queued"
    assert release_build_run(build_id=build.pk).status == ReleaseBuild.Status.DONE
    assert Release.objects.filter(name="queued").count() == 1
    assert AuditEntry.objects.filter(action="release.request", user=curator).count() == 1


def test_a_build_overtaken_by_a_later_release_fails_in_words(graph, f):
    """The instant and the name are checked again when the worker cuts: a release cut
    meanwhile as of a later instant fails the build, which says why; a release cannot
    take the name of a build under way."""
    curator = f.user(role="curator")
    build = release_request(name="race", acting_user=curator)  # not committed: not queued
    with pytest.raises(ReleaseNameTaken, match='"race" is being built now'):
        release_create(name="race", acting_user=None)
    release_create(name="overtaker", acting_user=None)
    done = release_build_run(build_id=build.pk)
    assert done.status == ReleaseBuild.Status.FAILED
    assert 'is before release "overtaker"' in done.error
    assert not Release.objects.filter(name="race").exists()


def test_a_second_request_for_a_name_being_built_is_refused(graph, f):
    """One open build per name."""
    release_request(name="busy", acting_user=None)
    with pytest.raises(ReleaseNameTaken, match="is being built now"):
        release_request(name="busy", acting_user=None)


def test_the_command_cuts_and_lists_releases(graph, capsys):
    """release create NAME --notes, --json; release list --json."""
    call_command("release", "create", "cli-1", "--notes", "From the shell.")
    out = capsys.readouterr().out
    assert 'Release "cli-1" cut' in out and "graph.jsonld" in out
    call_command("release", "create", "cli-2", "--json")
    made = json.loads(capsys.readouterr().out)
    assert made["name"] == "cli-2" and made["previous"] == "cli-1"
    assert {f["filename"] for f in made["files"]} >= {"graph.jsonld", "validation.json"}
    call_command("release", "list", "--json")
    listed = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in listed["releases"]] == ["cli-2", "cli-1"]


def test_the_command_refuses_in_words(graph):
    """A bad instant or name is a CommandError with the reason."""
    with pytest.raises(CommandError, match="--as-of"):
        call_command("release", "create", "x1", "--as-of", "yesterday")
    with pytest.raises(CommandError, match="path separator"):
        call_command("release", "create", "a/b")


def test_an_edge_edited_twice_between_releases_is_one_change_from_old_to_new(graph, f):
    """The row in between was made and replaced inside the window: the notes pair the
    previous release's row with this release's, and list nothing else."""
    release_create(name="before", acting_user=None)
    middle = services.edge_supersede(
        edge=graph.related, confidence=0.7, why="First edit.", acting_user=None
    )
    last = services.edge_supersede(edge=middle, confidence=0.6, why="Again.", acting_user=None)
    notes = release_create(name="after", acting_user=None).changes
    assert [(c["old"]["id"], c["new"]["id"]) for c in notes["edges"]["changed"]] == [
        (graph.related.pk, last.pk)
    ]
    assert notes["edges"]["added"] == [] and notes["edges"]["retired"] == []
    assert notes["edges"]["counts"]["changed"] == 1
