"""manage.py import_sources: folders, front matter, revisions; bad files never stop the batch."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from construction.documents import BadDocument, parse_front_matter
from kgreview.graph.models import Source, SourceRevision

pytestmark = pytest.mark.django_db

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def run(*args) -> tuple[dict, int]:
    out = io.StringIO()
    code = 0
    try:
        call_command("import_sources", *map(str, args), "--json", stdout=out)
    except CommandError as exc:
        code = exc.returncode
    return json.loads(out.getvalue()), code


def lesson(folder: Path, name: str, body: str, **front) -> Path:
    path = folder / name
    head = ""
    if front:
        head = "---\n" + "".join(f"{k}: {v}\n" for k, v in front.items()) + "---\n"
    path.write_text(head + body, encoding="utf-8")
    return path


def test_imports_a_folder_with_front_matter_and_default_slugs(tmp_path):
    """Front matter sets title and slug; without it the slug is the file stem."""
    lesson(tmp_path, "a.md", "# Attention\n\nQueries, keys and values.\n", title="Attention 101")
    lesson(tmp_path, "02-kv-cache.md", "# The KV cache\n\nCaching keys.\n", slug="kv-cache")
    lesson(tmp_path, "plain-lesson.markdown", "# Plain heading\n\nBody.\n")
    (tmp_path / "gold.jsonl").write_text('{"not": "a document"}\n')
    report, code = run(tmp_path)
    assert code == 0
    got = {r["slug"]: r for r in report["imported"]}
    assert set(got) == {"a", "kv-cache", "plain-lesson"}
    assert got["a"]["title"] == "Attention 101"
    assert got["plain-lesson"]["title"] == "Plain heading"
    assert Source.objects.get(slug="kv-cache").current_revision.text.startswith("# The KV cache")
    assert report["counts"] == {
        "created": 3,
        "revised": 0,
        "unchanged": 0,
        "errors": 0,
        "skipped": 1,
    }
    assert [Path(p).name for p in report["skipped"]] == ["gold.jsonl"]


def test_reimporting_a_changed_file_adds_revision_two_and_unchanged_adds_nothing(tmp_path):
    """A changed file gets revision 2; an unchanged one is reported unchanged."""
    a = lesson(tmp_path, "a.md", "First text.\n")
    lesson(tmp_path, "b.md", "Stays the same.\n")
    run(tmp_path)
    a.write_text("Second text.\n")
    report, code = run(tmp_path)
    outcomes = {r["slug"]: (r["outcome"], r["revision"]) for r in report["imported"]}
    assert outcomes == {"a": ("revised", 2), "b": ("unchanged", 1)}
    assert SourceRevision.objects.filter(source__slug="a").count() == 2
    assert SourceRevision.objects.filter(source__slug="b").count() == 1


def test_bad_files_are_reported_and_the_rest_of_the_batch_imports(tmp_path, settings):
    """Binary, empty, oversized and malformed files each get a clear error; a Latin-1
    file is decoded, not refused."""
    settings.KG_MAX_SOURCE_BYTES = 1_000_000
    lesson(tmp_path, "good.md", "A good lesson.\n")
    (tmp_path / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR")
    (tmp_path / "latin1.md").write_bytes("caf\xe9 au lait".encode("latin-1"))
    lesson(tmp_path, "empty.md", "   \n\n")
    lesson(tmp_path, "only-front.md", "\n", title="Nothing")
    (tmp_path / "unclosed.md").write_text("---\ntitle: Oops\nNo closing line.\n")
    (tmp_path / "badkey.md").write_text("---\nthis is not yaml\n---\nBody.\n")
    lesson(tmp_path, "bad-slug.md", "Body.\n", slug="no spaces allowed")
    (tmp_path / "huge.md").write_text("word " * 300_000)
    report, code = run(tmp_path)
    assert code == 1
    assert [r["slug"] for r in report["imported"]] == ["good", "latin1"]
    assert Source.objects.get(slug="latin1").current_revision.text == "café au lait\n"
    errors = {Path(e["path"]).name: e["error"] for e in report["errors"]}
    assert "binary" in errors["binary.md"]
    assert "no text" in errors["empty.md"]
    assert "after its front matter" in errors["only-front.md"]
    assert "never closed" in errors["unclosed.md"]
    assert "not a 'key: value' pair" in errors["badkey.md"]
    assert "not valid" in errors["bad-slug.md"]
    assert "over the limit" in errors["huge.md"] and "KG_MAX_SOURCE_BYTES" in errors["huge.md"]
    assert Source.objects.count() == 2


def test_unreadable_files_and_missing_paths_are_reported(tmp_path):
    """A file that cannot be read, a link and a missing path are errors in words."""
    lesson(tmp_path, "good.md", "Fine.\n")
    (tmp_path / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    (tmp_path / "empty-folder").mkdir()
    locked = lesson(tmp_path, "locked.md", "Secret.\n")
    locked.chmod(0)
    try:
        report, code = run(
            tmp_path, tmp_path / "empty-folder", tmp_path / "missing.md", tmp_path / "notes.txt"
        )
    finally:
        locked.chmod(0o644)
    assert code == 1
    errors = {Path(e["path"]).name: e["error"] for e in report["errors"]}
    assert "symbolic link" in errors["dangling.md"]
    assert "holds no documents" in errors["empty-folder"]
    assert "no such file" in errors["missing.md"]
    assert "no such file" in errors["notes.txt"]
    if os.geteuid() != 0:  # root reads any file, so only a normal user sees EACCES
        assert "Permission denied" in errors["locked.md"]
    assert "good" in {r["slug"] for r in report["imported"]}


def test_explicit_file_of_an_unknown_type_is_refused(tmp_path):
    """Naming a .png file is an error in words, not a silent skip."""
    png = tmp_path / "diagram.png"
    png.write_bytes(b"\x89PNG\r\n")
    report, code = run(png)
    assert code == 1
    assert "unsupported file type '.png'" in report["errors"][0]["error"]
    assert ".pdf" in report["errors"][0]["error"]


def test_duplicate_slugs_in_one_batch_are_refused_for_the_second_file(tmp_path):
    """Two files claiming one slug: the first imports, the second is told why not."""
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    lesson(tmp_path / "x", "rag.md", "One.\n")
    lesson(tmp_path / "y", "rag.md", "Two.\n")
    report, code = run(tmp_path)
    assert code == 1
    assert [r["slug"] for r in report["imported"]] == ["rag"]
    assert "already used" in report["errors"][0]["error"]


def test_line_endings_and_bom_are_normalised(tmp_path):
    """CRLF files and a UTF-8 BOM import as the same text as their clean twin."""
    (tmp_path / "crlf.md").write_bytes(
        b"\xef\xbb\xbf---\r\nslug: same\r\n---\r\nLine one.\r\nTwo.\r\n"
    )
    run(tmp_path)
    (tmp_path / "crlf.md").write_bytes(b"---\nslug: same\n---\nLine one.\nTwo.\n")
    report, _ = run(tmp_path)
    assert report["imported"][0]["outcome"] == "unchanged"
    assert Source.objects.get(slug="same").current_revision.text == "Line one.\nTwo.\n"


def test_hostile_html_is_stored_verbatim(tmp_path):
    """Script in a lesson is kept as text (escaping happens when it is shown)."""
    body = "# Evil\n\n<script>alert(1)</script><img src=x onerror=alert(2)>\n"
    lesson(tmp_path, "evil.md", body)
    run(tmp_path)
    assert "<script>alert(1)</script>" in Source.objects.get(slug="evil").current_revision.text


def test_text_mode_prints_a_summary_and_errors_on_stderr(tmp_path):
    """Without --json people get one line per file and a count."""
    lesson(tmp_path, "a.md", "Text.\n")
    (tmp_path / "b.md").write_bytes(b"\x00\x01")
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_sources", str(tmp_path), stdout=out, stderr=err)
    assert "created  a (revision 1, 1 words)" in out.getvalue()
    assert "1 created, 0 revised, 0 unchanged, 1 failed." in out.getvalue()
    assert "b.md" in err.getvalue() and "binary" in err.getvalue()


def test_the_sample_curriculum_imports_cleanly():
    """The shipped corpus: at least 30 lessons of 150-400 words, all importing."""
    report, code = run(CORPUS)
    assert code == 0, report["errors"]
    assert len(report["imported"]) >= 30
    for source in Source.objects.select_related("current_revision"):
        words = source.current_revision.word_count
        assert 150 <= words <= 420, (source.slug, words)


def test_gold_file_names_imported_lessons_and_known_relations():
    """corpus/gold.jsonl labels at least 10 lessons with edges of the seeded vocabulary."""
    rows = [json.loads(line) for line in (CORPUS / "gold.jsonl").read_text().splitlines() if line]
    lessons = {r["lesson"] for r in rows}
    assert len(lessons) >= 10
    slugs = {p.read_text().split("slug:")[1].split()[0] for p in CORPUS.glob("*.md")}
    assert lessons <= slugs
    assert {r["relation"] for r in rows} <= {
        "prerequisite",
        "builds_on",
        "part_of",
        "contrasts_with",
        "applies_to",
        "related",
    }
    assert all(r["source"] and r["target"] and r["source"] != r["target"] for r in rows)


@pytest.mark.parametrize(
    "text,meta,body",
    [
        ("no front matter\n", {}, "no front matter\n"),
        (
            "---\ntitle: 'Quoted: yes'\nslug: q\n---\nBody",
            {"title": "Quoted: yes", "slug": "q"},
            "Body",
        ),
        ("---\n# comment\n\ntitle: T\n...\nBody", {"title": "T"}, "Body"),
    ],
)
def test_parse_front_matter_cases(text, meta, body):
    """Quotes are stripped, comments and blank lines skipped, '...' also closes."""
    assert parse_front_matter(text) == (meta, body)


def test_parse_front_matter_rejects_unclosed_block():
    """An opening '---' that never closes is an error."""
    with pytest.raises(BadDocument):
        parse_front_matter("---\ntitle: x\n")
