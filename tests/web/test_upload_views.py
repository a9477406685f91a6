"""Uploading documents on the curriculum page: who may, what each file answers, and every
bad request a client can send answered in words (never a 500)."""

from __future__ import annotations

import html as htmllib
import io
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from django.urls import reverse

from kgreview.graph import upload
from kgreview.graph.models import Source, SourceFile, SourceRevision
from kgreview.web.views import NO_FILE

pytestmark = pytest.mark.django_db

URL = "/sources/"
JSON = {"accept": "application/json"}
LESSON = b"# Tokenization\n\nText is split into **tokens** before a model reads it.\n"


def pdf_bytes(pages: int = 3, *, words: str = "Tokens are the units a model reads.") -> bytes:
    """A small PDF with a text layer and one bookmark per page."""
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, invariant=True)  # same bytes every time
    for number in range(1, pages + 1):
        pdf.bookmarkPage(f"page{number}")
        pdf.addOutlineEntry(f"Chapter {number}", f"page{number}", level=0)
        pdf.drawString(72, 720, f"Chapter {number}")
        pdf.drawString(72, 700, words)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def client_for(f, role: str | None) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(f.user(role=role))
    return client


@pytest.fixture
def curator(f) -> Client:
    return client_for(f, "curator")


def text(response) -> str:
    return htmllib.unescape(response.content.decode())


def rows(response) -> list[tuple[str, str]]:
    """(file name, result words) of each row the HTML answer shows."""
    found = re.findall(
        r'<span class="upload-name">(.*?)</span>\s*<span class="upload-result">(.*?)</span>',
        response.content.decode(),
        re.S,
    )
    return [
        (htmllib.unescape(name), htmllib.unescape(re.sub(r"<[^>]+>", "", result)))
        for name, result in found
    ]


def files(*pairs: tuple[str, bytes]) -> dict:
    return {"files": [SimpleUploadedFile(name, data) for name, data in pairs]}


def multipart(filename: bytes, content: bytes) -> tuple[bytes, str]:
    """A hand-made multipart body, for file names no test client would write."""
    body = (
        b"--XyZ\r\n"
        b'Content-Disposition: form-data; name="files"; filename="' + filename + b'"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n" + content + b"\r\n--XyZ--\r\n"
    )
    return body, "multipart/form-data; boundary=XyZ"


# --- who may upload ------------------------------------------------------------------------


def test_curators_see_the_upload_form_with_a_plain_file_input(curator):
    """The form posts multipart to /sources/ with a multiple file input and the size limit."""
    page = curator.get(reverse("home")).content.decode()
    assert 'id="upload-form"' in page
    assert 'enctype="multipart/form-data"' in page
    assert f'action="{URL}"' in page
    assert re.search(r'<input type="file" name="files" id="upload-files" multiple', page)
    assert "50 MB a file" in page
    assert 'src="/static/js/upload.js"' in page


@pytest.mark.parametrize("role", ["reviewer", "viewer"])
def test_others_see_no_upload_form_and_are_refused_on_post(f, role):
    """Reviewers and viewers get no form, and their POST is a 403 that stores nothing."""
    client = client_for(f, role)
    page = client.get(reverse("home")).content.decode()
    assert "upload-form" not in page
    assert "upload.js" not in page
    response = client.post(URL, files(("lesson.md", LESSON)), headers=JSON)
    assert response.status_code == 403
    assert not Source.objects.exists()


def test_anonymous_uploads_go_to_login_and_store_nothing(f):
    """Without a session the POST ends at the login page."""
    response = Client().post(URL, files(("lesson.md", LESSON)))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
    assert not Source.objects.exists()


def test_upload_needs_the_csrf_token(f):
    """The view reads files itself, yet still checks CSRF: no token, 403; with it, stored."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(f.user(role="curator"))
    assert client.post(URL, files(("lesson.md", LESSON))).status_code == 403
    assert not Source.objects.exists()
    page = client.get(reverse("home")).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    response = client.post(
        URL, files(("lesson.md", LESSON)), headers={**JSON, "X-CSRFToken": token}
    )
    assert response.status_code == 200
    assert Source.objects.filter(slug="lesson").exists()


def test_get_goes_back_to_the_list_and_other_methods_are_405(curator):
    """GET /sources/ redirects to the curriculum; PUT and DELETE are not allowed."""
    response = curator.get(URL)
    assert (response.status_code, response["Location"]) == (302, reverse("home"))
    assert curator.put(URL).status_code == 405
    assert curator.delete(URL).status_code == 405


# --- each file answers on its own --------------------------------------------------------------


def test_several_files_each_get_their_own_result_in_json(curator, f):
    """A PDF, a Markdown file and a broken PDF: two stored, one refused in words."""
    response = curator.post(
        URL,
        files(
            ("tokenization.pdf", pdf_bytes()),
            ("notes.md", LESSON),
            ("broken.pdf", b"%PDF-1.4 junk"),
        ),
        headers=JSON,
    )
    assert response.status_code == 200
    first, second, third = response.json()["results"]
    assert first["name"] == "tokenization.pdf"
    assert first["message"] == "created tokenization, revision 1, 3 pages"
    assert (first["slug"], first["pages"], first["outcome"]) == ("tokenization", 3, "created")
    assert first["url"] == reverse("source-detail", args=["tokenization"])
    assert second["message"].startswith("created notes, revision 1, ")
    assert third == {"name": "broken.pdf", "error": third["error"]}
    assert "PDF" in third["error"]
    revision = SourceRevision.objects.get(source__slug="tokenization")
    assert revision.origin == "upload:tokenization.pdf"
    assert revision.filename == "tokenization.pdf"
    assert revision.imported_by.groups.filter(name="curator").exists()
    assert revision.text_format == "plain"
    assert bytes(revision.original.data) == pdf_bytes()
    assert not Source.objects.filter(slug="broken").exists()


def test_without_script_the_page_comes_back_with_a_row_per_file(curator):
    """The plain form's POST answers with the curriculum page, each file's result in words,
    and the offer to read the new sources now."""
    response = curator.post(URL, files(("tokenization.pdf", pdf_bytes()), ("empty.md", b"")))
    assert response.status_code == 200
    assert "<html" in response.content.decode()
    assert rows(response) == [
        ("tokenization.pdf", "created tokenization, revision 1, 3 pages"),
        ("empty.md", "file has no text"),
    ]
    page = response.content.decode()
    run_now = reverse("agents:run-now", args=["construct"])
    assert re.search(rf'<form method="post" action="{run_now}">', page)
    assert 'id="upload-next" hidden' not in page
    assert "Read the new sources now" in page
    assert 'href="/sources/tokenization/"' in page  # the list includes it


def test_with_htmx_only_the_results_come_back(curator):
    """An htmx POST gets the results partial, not the whole page."""
    response = curator.post(URL, files(("notes.md", LESSON)), headers={"HX-Request": "true"})
    assert response.status_code == 200
    page = response.content.decode()
    assert page.lstrip().startswith('<div id="upload-results">')
    assert "<html" not in page
    assert rows(response)[0][1].startswith("created notes, revision 1")


def test_the_same_file_again_is_unchanged_and_offers_no_run(curator):
    """Re-uploading identical content says so and adds no revision."""
    curator.post(URL, files(("notes.md", LESSON)))
    response = curator.post(URL, files(("notes.md", LESSON)))
    assert rows(response) == [
        ("notes.md", "unchanged: revision 1 of notes already holds this text")
    ]
    assert 'id="upload-next" hidden' in response.content.decode()
    assert SourceRevision.objects.filter(source__slug="notes").count() == 1


def test_a_changed_file_is_a_new_revision(curator):
    """The same name with new text becomes revision 2 of that source."""
    curator.post(URL, files(("notes.md", LESSON)))
    response = curator.post(URL, files(("notes.md", LESSON + b"\nMore text.\n")), headers=JSON)
    assert response.json()["results"][0]["message"].startswith("revised notes, revision 2, ")


def test_two_files_with_one_slug_in_one_upload_are_refused_in_words(curator):
    """notes.md and notes.txt would both be "notes": the second is refused, not merged."""
    response = curator.post(
        URL, files(("notes.md", LESSON), ("notes.txt", b"plain words")), headers=JSON
    )
    second = response.json()["results"][1]
    assert "slug 'notes' is already used by notes.md in this upload" in second["error"]
    assert SourceRevision.objects.filter(source__slug="notes").count() == 1


def test_an_unexpected_reader_failure_is_words_and_the_others_are_stored(curator, monkeypatch):
    """A bug in one reader costs that file only."""
    real = upload.read_upload

    def flaky(raw, *, filename, max_bytes):
        if filename == "crash.md":
            raise RuntimeError("reader bug")
        return real(raw, filename=filename, max_bytes=max_bytes)

    monkeypatch.setattr(upload, "read_upload", flaky)
    response = curator.post(URL, files(("crash.md", LESSON), ("notes.md", LESSON)), headers=JSON)
    crashed, stored = response.json()["results"]
    assert "could not be read (RuntimeError)" in crashed["error"]
    assert stored["outcome"] == "created"


# --- what a client can send that is wrong ------------------------------------------------------


def test_no_file_is_a_400_in_words(curator):
    """A POST without files, as JSON and as a page."""
    response = curator.post(URL, {}, headers=JSON)
    assert response.status_code == 400
    assert response.json() == {"results": [], "error": NO_FILE}
    response = curator.post(URL, {})
    assert response.status_code == 400
    assert NO_FILE in text(response)


def test_an_empty_file_input_sends_no_file(curator):
    """A form submitted with nothing chosen sends a part with no file name: no file."""
    body, content_type = multipart(b"", b"")
    response = curator.generic("POST", URL, body, content_type=content_type, headers=JSON)
    assert response.status_code == 400
    assert response.json()["error"] == NO_FILE


@pytest.mark.parametrize(
    ("name", "data", "words"),
    [
        ("empty.md", b"", "file has no text"),
        ("blank.txt", b"  \n\n ", "file has no text"),
        ("virus.exe", b"MZ\x90\x00", "unsupported file type '.exe'"),
        ("noextension", b"words", "unsupported file type"),
        ("binary.md", bytes(range(256)) * 40, "file looks binary, not text"),
        ("scan.pdf", b"%PDF-1.4\n%%EOF", "not a readable PDF"),
    ],
)
def test_bad_files_are_refused_in_words(curator, name, data, words):
    """Each bad file is a 400 with a sentence, and nothing is stored."""
    response = curator.post(URL, files((name, data)), headers=JSON)
    assert response.status_code == 400
    assert response.json() == {
        "results": [{"name": name, "error": response.json()["results"][0]["error"]}]
    }
    assert words in response.json()["results"][0]["error"]
    assert not SourceRevision.objects.exists()


@pytest.mark.parametrize(
    ("filename", "status", "stored_as"),
    [
        (b"notes\x00.md", 200, "notes.md"),
        (b"../../etc/notes.md", 200, "notes.md"),
        (b"C:\\Users\\me\\notes.md", 200, "notes.md"),
        (("n" * 240).encode() + b".md", 200, "n" * 240 + ".md"),
        (b"\xff\xfe\xfa-notes.md", 400, None),  # Django drops a name that is not UTF-8
        (("n" * 1000).encode() + b".md", 400, None),  # over the parser's header limit
        (b"\r\n.md", 400, None),
        (b"..", 400, None),
        ("日本語.md".encode(), 200, "日本語.md"),  # a slug made from the name itself
    ],
)
def test_hostile_file_names_never_cause_a_500(curator, filename, status, stored_as):
    """NUL, folders, non-UTF-8 bytes, 1,000 characters: a result in words, no folders kept."""
    body, content_type = multipart(filename, LESSON)
    response = curator.generic("POST", URL, body, content_type=content_type, headers=JSON)
    assert response.status_code == status
    data = response.json()
    if stored_as is None:
        assert data.get("error") or data["results"][0]["error"]
        assert not SourceRevision.objects.exists()
    else:
        assert data["results"][0]["name"] == stored_as
        revision = SourceRevision.objects.get()
        assert revision.filename == stored_as
        assert revision.origin == f"upload:{stored_as}"


def test_a_hostile_file_name_is_shown_escaped(curator):
    """A name with markup comes back as text on the page."""
    response = curator.post(URL, files(("<img src=x onerror=alert(1)>.exe", b"x")))
    page = response.content.decode()
    assert "<img src=x" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;.exe" in page


@override_settings(KG_MAX_SOURCE_BYTES=2_000)
def test_a_file_over_the_limit_is_a_413_in_words_and_is_not_kept(curator):
    """The size limit stops the file while it streams in; the answer says the limit."""
    response = curator.post(URL, files(("big.txt", b"word " * 1_000)), headers=JSON)
    assert response.status_code == 413
    (result,) = response.json()["results"]
    assert result["name"] == "big.txt"
    assert "over the limit of 2 kB for one file (KG_MAX_SOURCE_BYTES)" in result["error"]
    assert not SourceFile.objects.exists()


@override_settings(KG_MAX_SOURCE_BYTES=2_000)
def test_a_big_file_beside_a_small_one_does_not_stop_it(curator):
    """One file too big, one fine: 200, the small one stored."""
    response = curator.post(
        URL, files(("big.txt", b"word " * 1_000), ("small.md", LESSON)), headers=JSON
    )
    assert response.status_code == 200
    results = {r["name"]: r for r in response.json()["results"]}
    assert "over the limit" in results["big.txt"]["error"]
    assert results["small.md"]["outcome"] == "created"


def test_a_file_bigger_than_the_memory_limits_is_read_from_disk(curator, settings):
    """Django keeps files over FILE_UPLOAD_MAX_MEMORY_SIZE on disk; they still import."""
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 10_000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    big = ("Tokens are the units a model reads. " * 100 + "\n\n") * 100  # ~370 kB
    response = curator.post(URL, files(("big.txt", big.encode())), headers=JSON)
    assert response.status_code == 200, response.content
    assert response.json()["results"][0]["outcome"] == "created"


def test_too_many_files_in_one_request_is_a_400_in_words(curator, settings):
    """Over DATA_UPLOAD_MAX_NUMBER_FILES: the limit in words, nothing stored."""
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 2
    response = curator.post(
        URL, files(("a.md", LESSON), ("b.md", LESSON), ("c.md", LESSON)), headers=JSON
    )
    assert response.status_code == 400
    assert response.json()["error"] == "too many files in one upload: send at most 2 at a time"
    assert not Source.objects.exists()


def test_a_malformed_body_is_a_400_in_words(curator):
    """A multipart body without its boundary or cut short is refused in words."""
    response = curator.generic(
        "POST", URL, b"garbage", content_type="multipart/form-data", headers=JSON
    )
    assert response.status_code == 400
    assert response.json()["error"].startswith("the upload could not be read")
    body, content_type = multipart(b"notes.md", LESSON)
    response = curator.generic("POST", URL, body[:60], content_type=content_type, headers=JSON)
    assert response.status_code == 400
    assert json.loads(response.content)["results"] == [] or response.json()["error"]


def test_a_body_that_is_not_multipart_has_no_files(curator):
    """JSON or raw bytes are not an upload."""
    response = curator.generic(
        "POST", URL, b'{"files": 1}', content_type="application/json", headers=JSON
    )
    assert response.status_code == 400
    assert response.json()["error"] == NO_FILE


# --- helpers -----------------------------------------------------------------------------------


def test_a_file_larger_than_the_limit_is_refused_before_it_is_read():
    """upload_one looks at the size first (a file the handler let through cannot be over)."""
    big = SimpleUploadedFile("big.md", b"x" * 101)
    result = upload.upload_one(big, acting_user=None, max_bytes=100, seen={})
    assert (result.ok, result.status) == (False, 413)
    assert result.message.startswith("file is 101 bytes over the limit of 100 bytes")


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("notes.md", "notes.md"),
        ("a/b/c.pdf", "c.pdf"),
        ("a\\b\\c.pdf", "c.pdf"),
        ("no\x00tes\x1f.md", "notes.md"),
        ("  two   spaces .md", "two spaces .md"),
        ("..", ""),
        ("", ""),
    ],
)
def test_clean_name_keeps_only_the_files_own_name(raw, clean):
    """No folders, no control characters, spaces collapsed."""
    assert upload.clean_name(raw) == clean


def test_clean_name_cuts_long_names_keeping_the_extension():
    """At most 255 characters, and the suffix survives."""
    name = upload.clean_name("x" * 1000 + ".pdf")
    assert len(name) == 255
    assert name.endswith("….pdf")


@pytest.mark.parametrize(
    ("n", "words"),
    [
        (0, "0 bytes"),
        (1, "1 byte"),
        (999, "999 bytes"),
        (1000, "1 kB"),
        (1_234_567, "1.2 MB"),
        (50_000_000, "50 MB"),
    ],
)
def test_human_size(n, words):
    """Decimal units, as upload.js counts them."""
    assert upload.human_size(n) == words


def test_the_list_shows_each_sources_type_and_length(curator, f):
    """PDF with pages, Markdown with words; htmx asks for the table alone."""
    curator.post(URL, files(("tokenization.pdf", pdf_bytes()), ("notes.md", LESSON)))
    f.source(slug="long", text="word " * 12_345)
    page = text(curator.get(reverse("home")))
    row = re.search(
        r"tokenization</code></td>\s*<td>(.*?)</td>.*?<td class=\"num\">(.*?)</td>", page, re.S
    )
    assert row.group(1) == "PDF"
    assert "3 pages" in page
    assert "Markdown" in page
    assert "12,345 words" in page
    partial = curator.get(reverse("home"), headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<div id="source-table">')
    assert "<html" not in partial
    assert (
        '<section class="totals" id="totals" aria-label="Graph totals" hx-swap-oob="true">'
        in partial
    )
    assert "hx-swap-oob" not in curator.get(reverse("home")).content.decode()
