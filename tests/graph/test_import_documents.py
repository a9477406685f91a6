"""import_sources for every format: structure and original kept; links never followed."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from benchmarks.synthetic_documents import handbook_docx, handbook_html, handbook_pdf
from kgreview.graph.models import Source, SourceFile, SourceRevision
from kgreview.graph.sources import place_of, revision_structure

pytestmark = pytest.mark.django_db


def run(*args) -> tuple[dict, int]:
    out = io.StringIO()
    code = 0
    try:
        call_command("import_sources", *map(str, args), "--json", stdout=out)
    except CommandError as exc:
        code = exc.returncode
    return json.loads(out.getvalue()), code


@pytest.fixture
def documents(tmp_path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "handbook.pdf").write_bytes(handbook_pdf())
    (folder / "handbook-web.html").write_text(handbook_html(), encoding="utf-8")
    (folder / "handbook-word.docx").write_bytes(handbook_docx())
    (folder / "notes.txt").write_text("Field notes\n\nRouters flood advertisements.\n")
    return folder


def test_a_folder_of_pdf_html_word_and_text_imports_with_types_and_structure(documents):
    """Each format becomes a source whose revision keeps its media type and structure."""
    report, code = run(documents)
    assert code == 0, report["errors"]
    got = {r["slug"]: r for r in report["imported"]}
    assert set(got) == {"handbook", "handbook-web", "handbook-word", "notes"}
    types = {
        r.source.slug: (r.media_type, r.text_format)
        for r in SourceRevision.objects.select_related("source")
    }
    assert types["handbook"] == ("application/pdf", "plain")
    assert types["handbook-web"] == ("text/html", "markdown")
    assert types["handbook-word"][1] == "markdown" and "word" in types["handbook-word"][0]
    assert types["notes"] == ("text/plain", "plain")
    pdf = Source.objects.get(slug="handbook").current_revision
    assert got["handbook"]["pages"] == len(pdf.structure["pages"]) >= 3
    paths = [tuple(s.path) for s in revision_structure(pdf).sections]
    assert ("Routing",) in paths and ("Tokenization",) in paths


def test_the_original_file_is_kept_once_by_content(documents):
    """The PDF's bytes are stored with their sha256; importing again adds nothing."""
    run(documents)
    raw = (documents / "handbook.pdf").read_bytes()
    revision = Source.objects.get(slug="handbook").current_revision
    assert revision.original.sha256 == hashlib.sha256(raw).hexdigest()
    assert bytes(SourceFile.objects.get(pk=revision.original_id).data) == raw
    assert revision.filename == "handbook.pdf"
    again, code = run(documents)
    assert code == 0
    assert {r["outcome"] for r in again["imported"]} == {"unchanged"}
    assert SourceFile.objects.count() == 4
    assert SourceRevision.objects.count() == 4


def test_a_changed_pdf_adds_a_revision(documents, tmp_path):
    """New content in the same file name is revision 2; revision 1 stays as it was."""
    run(documents)
    changed = [("Routing", "# Routing\n\nRouters exchange hello packets every ten seconds.\n")]
    (documents / "handbook.pdf").write_bytes(handbook_pdf(changed))
    report, _ = run(documents / "handbook.pdf")
    assert report["imported"][0]["outcome"] == "revised"
    source = Source.objects.get(slug="handbook")
    assert source.revisions.count() == 2
    assert "hello packets" in source.current_revision.text


def test_a_pdf_quote_knows_its_page_and_section(documents):
    """place_of names the page whose own text holds the quote, and its heading path."""
    run(documents)
    revision = Source.objects.get(slug="handbook").current_revision
    pages = revision.structure["pages"]
    at = revision.text.index("cross-encoder reranker")
    place = place_of(revision, at)
    page_start = pages[place.page - 1]
    page_end = pages[place.page] if place.page < len(pages) else len(revision.text)
    assert page_start <= at < page_end
    assert place.section[0] == "Retrieval"
    assert place.label.startswith(f"p. {place.page} · Retrieval")


def test_scripts_in_html_are_never_stored(documents):
    """The web page's <script> and <style> text never reach the stored text."""
    run(documents)
    text = Source.objects.get(slug="handbook-web").current_revision.text
    assert "UA-SCRIPT-MARKER" not in text and "<script" not in text
    assert "font-family" not in text
    assert "link-state routing protocol" in text


def test_a_link_to_the_secret_key_is_refused_and_nothing_is_published(tmp_path, settings):
    """``ln -s var/secret_key lessons/leak.md`` is refused in words; the secret stays out."""
    secret = tmp_path / "secret_key"
    secret.write_text("django-insecure-SECRET-MARKER\n")
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "ok.md").write_text("# Fine\n\nA lesson.\n")
    (lessons / "leak.md").symlink_to(secret)
    (lessons / "passwd.md").symlink_to("/etc/passwd")
    report, code = run(lessons)
    assert code == 1
    errors = {Path(e["path"]).name: e["error"] for e in report["errors"]}
    assert "symbolic link" in errors["leak.md"] and "symbolic link" in errors["passwd.md"]
    assert [r["slug"] for r in report["imported"]] == ["ok"]
    assert not SourceRevision.objects.filter(text__contains="SECRET-MARKER").exists()
    assert not SourceRevision.objects.filter(text__contains="root:").exists()


def test_a_linked_folder_and_a_linked_file_named_directly_are_refused(tmp_path):
    """A folder link inside the tree is not walked; a link named on the command line is
    not read either."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.md").write_text("# Private\n\nNot for the graph.\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "ok.md").write_text("# Ok\n\nFine.\n")
    (tree / "elsewhere").symlink_to(outside)
    direct = tmp_path / "direct.md"
    direct.symlink_to(outside / "private.md")
    report, code = run(tree, direct)
    assert code == 1
    errors = {Path(e["path"]).name: e["error"] for e in report["errors"]}
    assert "symbolic link" in errors["elsewhere"]
    assert "symbolic link" in errors["direct.md"]
    assert not Source.objects.filter(slug="private").exists()


def test_a_fifo_is_refused_without_blocking(tmp_path):
    """A named pipe is not a regular file: refused at once, never opened."""
    import os

    (tmp_path / "ok.md").write_text("Fine.\n")
    os.mkfifo(tmp_path / "pipe.md")
    report, code = run(tmp_path)
    assert code == 1
    errors = {Path(e["path"]).name: e["error"] for e in report["errors"]}
    assert "not a regular file" in errors["pipe.md"]


@pytest.mark.parametrize(
    "name,content,words",
    [
        ("scan.pdf", "scanned", "no text layer: OCR is not supported"),
        ("broken.docx", b"PK\x03\x04 this is not really a zip", "not a readable Word file"),
        ("broken.pdf", b"%PDF-1.7 garbage", "not a readable PDF"),
        ("empty.html", b"", "no text"),
    ],
)
def test_bad_documents_are_reported_in_words_and_the_batch_goes_on(tmp_path, name, content, words):
    """Each bad file gets its own sentence; the good file beside it still imports."""
    (tmp_path / "good.md").write_text("# Good\n\nFine.\n")
    if content == "scanned":
        from reportlab.pdfgen import canvas

        buffer = io.BytesIO()
        page = canvas.Canvas(buffer)
        page.rect(100, 100, 300, 300, fill=1)
        page.showPage()
        page.save()
        content = buffer.getvalue()
    (tmp_path / name).write_bytes(content)
    report, code = run(tmp_path)
    assert code == 1
    errors = {Path(e["path"]).name: e["error"] for e in report["errors"]}
    assert words in errors[name]
    assert [r["slug"] for r in report["imported"]] == ["good"]


def test_text_mode_names_pages_and_draws_no_bar_when_not_a_terminal(documents):
    """Without --json: one line per file with its pages or words; no progress bar
    characters in output that is not a terminal."""
    out, err = io.StringIO(), io.StringIO()
    call_command("import_sources", str(documents), stdout=out, stderr=err)
    text = out.getvalue()
    assert "handbook (revision 1, " in text and " pages)" in text
    assert "━" not in text and "\r" not in text


def test_a_file_named_in_another_script_gets_a_stable_slug(tmp_path):
    """A file named "日本語.md" has no ASCII slug: it gets one from its name, always the same."""
    (tmp_path / "日本語.md").write_text("# 日本語\n\nテキスト。\n", encoding="utf-8")
    first, code = run(tmp_path)
    assert code == 0
    slug = first["imported"][0]["slug"]
    assert slug.startswith("document-") and first["imported"][0]["title"] == "日本語"
    again, _ = run(tmp_path)
    assert again["imported"][0] == {**first["imported"][0], "outcome": "unchanged"}
