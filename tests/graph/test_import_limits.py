"""Bombs uploaded or imported are refused in words naming the limit, store nothing, and
leave the web or command process's memory as it was (issue 25, finding 2).

The limits come from the ``KG_READ_*`` settings; the tests lower them so that bombs of a
few hundred KB (made here) hit each one quickly.
"""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from construction.doc_limits import ReadLimits
from kgreview.graph.importing import read_limits
from kgreview.graph.models import Source, SourceFile, SourceRevision
from tests.construction.bombs import (
    TEXT,
    docx_with_body,
    flate_spaces,
    pdf_with_content,
    zip_bomb_docx,
)

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PARENT_GROWTH_KB = 30 * 1024
LESSON = b"# Tokenization\n\nText is split into tokens before a model reads it.\n"


@pytest.fixture(scope="module")
def pdf_bomb() -> bytes:
    """About 200 KB of PDF whose content stream inflates to 200 MB of spaces."""
    return pdf_with_content(flate_spaces(200, TEXT))


@pytest.fixture
def open_inflation(settings):
    """Inflation unchecked, so that the child's memory cap is what stops a bomb."""
    settings.KG_READ_MAX_INFLATION = 10**6
    settings.KG_READ_MAX_UNPACKED_BYTES = 10**12
    settings.KG_READ_MEMORY_MB = 150
    return settings


def peak_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def test_an_uploaded_pdf_bomb_is_refused_in_words_and_nothing_is_stored(f, pdf_bomb):
    """The default limits: 200 KB inflating to 200 MB is refused as it is, before PDFium
    opens it, beside a lesson that is stored."""
    client = Client()
    client.force_login(f.user(role="curator"))
    before = peak_kb()
    response = client.post(
        "/sources/",
        {"files": [SimpleUploadedFile("bomb.pdf", pdf_bomb), SimpleUploadedFile("a.md", LESSON)]},
        headers={"accept": "application/json"},
    )
    assert response.status_code == 200
    bomb, lesson = response.json()["results"]
    assert bomb["name"] == "bomb.pdf"
    assert bomb["error"].startswith("the file inflates more than 100 times: its ")
    assert lesson["outcome"] == "created"
    assert list(Source.objects.values_list("slug", flat=True)) == ["a"]
    assert SourceFile.objects.count() == 1
    assert peak_kb() - before < PARENT_GROWTH_KB


def test_a_pdf_needing_more_memory_than_allowed_is_refused_on_the_upload_page(
    f, pdf_bomb, open_inflation
):
    """The page shows the refusal in its row (no 500), the web process does not grow by
    what the reader needed, and nothing is half-stored."""
    client = Client()
    client.force_login(f.user(role="curator"))
    before = peak_kb()
    response = client.post("/sources/", {"files": [SimpleUploadedFile("bomb.pdf", pdf_bomb)]})
    assert response.status_code == 400
    page = response.content.decode()
    assert "the document needs more than 150 MB to read (KG_READ_MEMORY_MB)" in page
    assert peak_kb() - before < PARENT_GROWTH_KB
    assert not SourceRevision.objects.exists()
    assert not SourceFile.objects.exists()


def run_import(*paths) -> tuple[dict, int]:
    out = io.StringIO()
    code = 0
    try:
        call_command("import_sources", *map(str, paths), "--json", stdout=out)
    except CommandError as exc:
        code = exc.returncode
    return json.loads(out.getvalue()), code


def test_import_sources_refuses_each_bomb_naming_its_limit_and_imports_the_rest(
    tmp_path, settings, pdf_bomb
):
    settings.KG_READ_MAX_PARAGRAPHS = 1_000
    settings.KG_READ_MAX_UNPACKED_BYTES = 50_000_000
    (tmp_path / "bomb.pdf").write_bytes(pdf_bomb)
    (tmp_path / "paragraphs.docx").write_bytes(docx_with_body(5_000))
    (tmp_path / "zip-bomb.docx").write_bytes(zip_bomb_docx(60))
    (tmp_path / "lesson.md").write_bytes(LESSON)
    report, code = run_import(tmp_path)
    assert code == 1
    assert [r["slug"] for r in report["imported"]] == ["lesson"]
    errors = {Path(e["path"]).name: e["error"] for e in report["errors"]}
    assert errors["bomb.pdf"].startswith("the file inflates more than 100 times: its ")
    assert errors["paragraphs.docx"] == (
        "the document has more than 1,000 paragraphs (KG_READ_MAX_PARAGRAPHS)"
    )
    assert errors["zip-bomb.docx"].startswith(
        "the file unpacks to more than 50,000,000 bytes (at least "
    )
    assert Source.objects.count() == 1


def test_the_reading_limits_are_the_settings(settings):
    settings.KG_READ_MEMORY_MB = 300
    settings.KG_READ_CPU_SECONDS = 7
    settings.KG_READ_MAX_PAGES = 9
    settings.KG_READ_MAX_CHARS = 1_000
    settings.KG_READ_MAX_PARAGRAPHS = 20
    settings.KG_READ_MAX_INFLATION = 3
    settings.KG_READ_MAX_UNPACKED_BYTES = 4_000
    assert read_limits() == ReadLimits(
        memory_mb=300,
        cpu_seconds=7,
        max_pages=9,
        max_chars=1_000,
        max_paragraphs=20,
        max_inflation=3,
        max_unpacked_bytes=4_000,
    )


def load_settings(tmp_path, **env) -> subprocess.CompletedProcess:
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("KG_", "DATABASE_URL", "CELERY_"))
    }
    clean.update(
        {"DJANGO_SETTINGS_MODULE": "kgreview.settings", "KG_VAR_DIR": str(tmp_path), **env}
    )
    code = (
        "import django; django.setup(); from kgreview.graph.importing import read_limits; "
        "print(read_limits().as_json())"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True
    )


def test_the_limits_default_and_come_from_the_environment(tmp_path):
    defaults = load_settings(tmp_path)
    assert defaults.returncode == 0, defaults.stderr
    assert defaults.stdout.strip() == str(ReadLimits().as_json())
    tuned = load_settings(tmp_path, KG_READ_MEMORY_MB="512", KG_READ_MAX_PAGES="40")
    assert tuned.returncode == 0, tuned.stderr
    assert "'memory_mb': 512" in tuned.stdout and "'max_pages': 40" in tuned.stdout
    bad = load_settings(tmp_path, KG_READ_MEMORY_MB="10")
    assert bad.returncode != 0
    assert "KG_READ_MEMORY_MB" in bad.stderr and "must be at least 64" in bad.stderr
