"""Control characters in a lesson's text: removed with a note for that file, never a
refusal of the batch, never a database error (PostgreSQL text cannot hold NUL).

Run on PostgreSQL too: ``DATABASE_URL=postgres://... pytest tests/graph/test_import_controls.py``.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from construction.documents import BadDocument, decode_text, read_document
from kgreview.graph.models import Source

pytestmark = pytest.mark.django_db

PADDING = b"Embeddings map words to vectors. " * 300  # about 10 KB, past the 8 KB sniff
NOTE_ONE_NUL = "removed 1 NUL byte from the text"


def run_import(*args, json_out: bool = True) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        call_command(
            "import_sources",
            *map(str, args),
            *(["--json"] if json_out else []),
            stdout=out,
            stderr=err,
        )
    except CommandError as exc:
        code = exc.returncode
    return out.getvalue(), err.getvalue(), code


def test_a_nul_after_the_first_8_kb_is_removed_with_a_note_and_the_batch_goes_on(tmp_path):
    (tmp_path / "a-late-nul.md").write_bytes(b"# Late\n\n" + PADDING + b"Then a\x00NUL.\n")
    (tmp_path / "b-fine.md").write_bytes(b"# Fine\n\nNothing odd here.\n")
    out, _, code = run_import(tmp_path)
    report = json.loads(out)
    assert code == 0
    assert report["counts"]["created"] == 2 and report["counts"]["errors"] == 0
    (note,) = report["notes"]
    assert note["path"].endswith("a-late-nul.md") and note["note"].startswith(NOTE_ONE_NUL)
    by_slug = {r["slug"]: r for r in report["imported"]}
    assert by_slug["a-late-nul"]["notes"] == [note["note"]]
    assert by_slug["b-fine"]["notes"] == []
    text = Source.objects.get(slug="a-late-nul").current_revision.text
    assert "\x00" not in text and text.endswith("Then aNUL.\n")


def test_the_text_report_shows_the_note_beside_the_file(tmp_path):
    (tmp_path / "odd.txt").write_bytes(b"A bell\x07 and an escape\x1b and a NUL\x00 here.\n")
    out, _, code = run_import(tmp_path, json_out=False)
    assert code == 0
    assert "note" in out and "odd.txt" in out
    assert "removed 1 NUL byte and 2 other control characters from the text" in out
    assert (
        Source.objects.get(slug="odd").current_revision.text
        == "A bell and an escape and a NUL here.\n"
    )


@pytest.mark.parametrize("where", [10, 4000, 9000])
def test_a_stray_nul_in_utf8_text_is_text_wherever_it_sits(where):
    raw = (b"Lesson. " * 1200)[:where] + b"\x00" + b"More lesson text.\n"
    document = read_document(raw, filename="stray.md", max_bytes=10**6)
    assert "\x00" not in document.text
    assert document.notes[0].startswith(NOTE_ONE_NUL)


def test_a_web_page_with_control_characters_gets_the_note_too():
    raw = b"<html><body><h1>T</h1><p>" + PADDING + b"x\x00y\x01z</p></body></html>"
    document = read_document(raw, filename="page.html", max_bytes=10**6)
    assert "\x00" not in document.text and "\x01" not in document.text
    assert document.notes[0].startswith("removed 1 NUL byte and 1 other control character")


@pytest.mark.parametrize(
    "raw",
    [
        "UTF-16 text without a byte order mark".encode("utf-16-le"),
        b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR" + PADDING,
        b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01" + b"\xe9" * 100,
    ],
    ids=["utf16-no-bom", "png", "jpeg-not-utf8"],
)
def test_bytes_that_are_mostly_nul_or_not_utf8_with_nul_are_still_binary(raw):
    with pytest.raises(BadDocument, match="looks binary"):
        decode_text(raw)


def test_an_upload_with_a_nul_says_so_in_its_result(f):
    client = Client()
    client.force_login(f.user(role="curator"))
    body = io.BytesIO(b"# Upload\n\n" + PADDING + b"a\x00b\n")
    body.name = "late.md"
    response = client.post(
        reverse("source-upload"), {"files": [body]}, headers={"Accept": "application/json"}
    )
    assert response.status_code == 200
    (result,) = response.json()["results"]
    assert result["message"].startswith("created late, revision 1, ")
    assert NOTE_ONE_NUL in result["message"]
    assert result["notes"][0].startswith(NOTE_ONE_NUL)
    assert "\x00" not in Source.objects.get(slug="late").current_revision.text
