"""manage.py evaluate --manual DIR on a tiny manual imported with import_sources: the
figures against its index and its labels (JSON and words), a sample to label written
with the labels already given, and folders or files that are not a manual refused in
words."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from kgreview.graph.models import Source
from kgreview.review.models import Proposal
from tests import factories as f

pytestmark = pytest.mark.django_db

PAGES = {
    "routine-vacuuming.html": "<html><head><title>Routine Vacuuming</title></head><body>"
    "<h1>Routine Vacuuming</h1><p>VACUUM reclaims storage occupied by dead tuples.</p>"
    "<p>It is twice as fast with a larger work_mem.</p></body></html>",
    "wal-intro.html": "<html><head><title>Write-Ahead Logging</title></head><body>"
    "<h1>Write-Ahead Logging</h1><p>Checkpoints flush the WAL to disk.</p></body></html>",
}
TERMS = [
    {"term": "VACUUM", "pages": ["routine-vacuuming.html"]},
    {"term": "dead tuples", "pages": ["routine-vacuuming.html"]},
    {"term": "work_mem configuration parameter", "names": ["work_mem"],
     "pages": ["routine-vacuuming.html"]},
    {"term": "checkpoint", "pages": ["wal-intro.html"]},
]  # fmt: skip


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def manual(tmp_path):
    """The manual's folder, its pages imported, and three edge proposals read from them."""
    folder = tmp_path / "tiny"
    (folder / "pages").mkdir(parents=True)
    for name, html in PAGES.items():
        (folder / "pages" / name).write_text(html, encoding="utf-8")
    write_jsonl(folder / "terms.jsonl", TERMS)
    call_command("import_sources", str(folder / "pages"), stdout=StringIO())
    vacuuming = Source.objects.get(slug="routine-vacuuming")
    f.edge_proposal(
        "VACUUM",
        "Dead tuples",
        "part_of",
        doc=vacuuming,
        quote="VACUUM reclaims storage occupied by dead tuples.",
    )
    f.edge_proposal(
        "Twice",
        "Work_mem",
        "prerequisite",
        doc=vacuuming,
        quote="It is twice as fast with a larger work_mem.",
        confidence=0.3,
    )
    f.edge_proposal(
        "Checkpoints",
        "WAL",
        "related",
        doc=Source.objects.get(slug="wal-intro"),
        quote="Checkpoints flush the WAL to disk.",
    )
    return folder


def run(*args) -> str:
    out = StringIO()
    call_command("evaluate", *args, stdout=out)
    return out.getvalue()


def label(source, relation, target, quote, page, verdict):
    return {"kind": "edge", "page": page, "quote": quote, "source": source,
            "relation": relation, "target": target, "quote_supports": verdict,
            "names_are_terms": verdict, "relation_right": verdict, "note": ""}  # fmt: skip


def test_figures_against_the_index_and_the_labels(manual):
    """Index terms found and proposed, edge ends, yield per page, and the labels, which
    find their proposals again although written with other case and the ends of a
    symmetric relation swapped."""
    write_jsonl(
        manual / "labels.jsonl",
        [
            label("vacuum", "part_of", "dead tuple", "VACUUM reclaims storage occupied by "
                  "dead tuples.", "routine-vacuuming", True),
            label("WAL", "related", "Checkpoints", "Checkpoints flush the WAL to disk.",
                  "wal-intro", False),
            {"kind": "name", "name": "Twice", "judgement": "junk"},
            {"kind": "name", "name": "vacuum", "judgement": "sensible"},  # not as written
        ],
    )  # fmt: skip
    report = json.loads(run("--manual", str(manual), "--json"))
    assert report["terms"]["proposed_names"] == 6
    assert report["terms"]["index_terms_among_them"] == 4  # VACUUM, dead tuples, work_mem, …
    assert (report["terms"]["found"], report["terms"]["index_terms_on_pages"]) == (4, 4)
    assert report["edge_ends"]["one_word_non_terms"] == 2  # Twice, WAL
    assert report["yield"]["edges"] == 3 and report["yield"]["above_gate"] == 2
    assert report["yield"]["pages"] == 2 and report["yield"]["words"] > 10
    edges = report["labels"]["edges"]
    assert edges["labelled"] == 2 and edges["all"]["fully_right"] == 1
    assert edges["above_gate"]["precision"] == 0.5 and edges["below_gate"]["judged"] == 0
    assert report["labels"]["names"]["junk"] == 1
    text = run("--manual", str(manual))
    assert "term recall     100%  (4 of 4 index terms of the imported pages were proposed)" in text
    assert "Labelled edges: 2 of 3 proposals (0 labels match no current proposal)" in text


def test_a_sample_to_label_keeps_the_labels_given(manual, tmp_path):
    """--sample writes every label given and a blank one per unlabelled sampled proposal
    and name, with the context a labeller needs."""
    quote = "VACUUM reclaims storage occupied by dead tuples."
    given = label("VACUUM", "part_of", "Dead tuples", quote, "routine-vacuuming", True)
    write_jsonl(manual / "labels.jsonl", [given])
    out = tmp_path / "sample.jsonl"
    said = run("--manual", str(manual), "--sample", "3", "--names", "10", "--out", str(out))
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == given
    blanks = [r for r in rows[1:] if r["kind"] == "edge"]
    assert {(r["source"], r["gate"]) for r in blanks} == {
        ("Twice", "below"),
        ("Checkpoints", "above"),
    }
    assert all(r["quote_supports"] is None for r in blanks)
    names = sorted(r["name"] for r in rows if r["kind"] == "name")
    assert names == ["Checkpoints", "Dead tuples", "Twice", "VACUUM", "WAL", "Work_mem"]
    assert "8 of them new" in said


def test_the_offline_reader_end_to_end(tmp_path):
    """Imported and read by today's offline reader, every add_edge proposal of the pages
    is counted, whatever the reader makes of them."""
    folder = tmp_path / "tiny"
    (folder / "pages").mkdir(parents=True)
    (folder / "pages" / "lesson.html").write_text(
        "<html><body><h1>Indexes</h1><p>A B-tree index is part of the storage engine. "
        "Query planning is a prerequisite for index scans.</p></body></html>",
        encoding="utf-8",
    )
    write_jsonl(folder / "terms.jsonl", [{"term": "index scan", "pages": ["lesson.html"]}])
    call_command("import_sources", str(folder / "pages"), stdout=StringIO())
    call_command("construct", "--all", "--provider", "offline", stdout=StringIO())
    report = json.loads(run("--manual", str(folder), "--json"))
    edges = Proposal.objects.filter(kind="add_edge", document__slug="lesson").exclude(
        status="superseded"
    )
    assert report["yield"]["edges"] == edges.count()
    assert report["yield"]["pages"] == 1


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        (lambda d: d.mkdir(), "has no pages/ folder"),
        (lambda d: (d / "pages").mkdir(parents=True), "holds no pages"),
    ],
)
def test_a_folder_that_is_no_manual_is_refused(tmp_path, setup, words):
    """A folder without pages is refused in words."""
    folder = tmp_path / "m"
    setup(folder)
    with pytest.raises(CommandError, match=words):
        run("--manual", str(folder))


def test_bad_files_and_options_are_refused_in_words(manual, tmp_path):
    """A bad label line names its line; pages never imported, a sample without --out and a
    missing terms file are refused in words."""
    (manual / "labels.jsonl").write_text('{"kind": "edge"}\n', encoding="utf-8")
    with pytest.raises(CommandError, match=r"labels.jsonl:1: an edge label needs"):
        run("--manual", str(manual))
    (manual / "labels.jsonl").unlink()
    with pytest.raises(CommandError, match="--sample N and --out FILE go together"):
        run("--manual", str(manual), "--sample", "3")
    other = tmp_path / "other"
    (other / "pages").mkdir(parents=True)
    (other / "pages" / "never-imported.html").write_text("<p>x</p>", encoding="utf-8")
    with pytest.raises(CommandError, match="Cannot read .*terms.jsonl"):
        run("--manual", str(other))
    write_jsonl(other / "terms.jsonl", TERMS)
    with pytest.raises(CommandError, match="None of the pages .* is imported"):
        run("--manual", str(other))
