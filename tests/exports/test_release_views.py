"""The Releases pages and the API's releases: lists, notes, files checked against their
hashes, the curators' form with and without htmx, refusals in words."""

from __future__ import annotations

import hashlib
import html as htmllib

import pytest
from django.test import Client
from django.urls import reverse

from kgreview.api.services import api_token_create
from kgreview.exports.models import Release, ReleaseBuild
from kgreview.exports.releases import files
from kgreview.exports.releases.services import release_create

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def release_dir(settings, tmp_path):
    settings.KG_RELEASE_DIR = tmp_path / "releases"
    return settings.KG_RELEASE_DIR


def _client(f, role: str) -> Client:
    client = Client()
    client.force_login(f.user(role=role))
    return client


@pytest.fixture
def viewer(f) -> Client:
    return _client(f, "viewer")


@pytest.fixture
def curator(f) -> Client:
    return _client(f, "curator")


@pytest.fixture
def cut(graph):
    return release_create(name="2026-11", acting_user=None, notes="First <b>cut</b>.")


def text(response) -> str:
    return htmllib.unescape(response.content.decode())


def body(response) -> bytes:
    return b"".join(response.streaming_content)


HTMX = {"HTTP_HX_REQUEST": "true"}


def test_the_releases_page_lists_each_release_with_its_files(viewer, cut):
    """Name, instant, counts and a download link per file."""
    page = text(viewer.get(reverse("releases:index")))
    assert 'id="release-2026-11"' in page
    for stored in cut.files.all():
        assert reverse("releases:file", args=["2026-11", stored.filename]) in page
    assert "Cut a release" not in page  # a viewer gets no form


def test_the_releases_page_with_htmx_answers_the_builds_region_and_the_list(viewer, cut):
    """htmx polls the builds region; it is answered without the frame, with the list of
    releases out of band (a build that just finished shows its release there too)."""
    response = viewer.get(reverse("releases:index"), **HTMX)
    page = text(response)
    assert response.status_code == 200
    assert page.lstrip().startswith('<section class="card" id="release-builds"')
    assert '<section class="card" id="release-list" hx-swap-oob="true">' in page
    assert 'id="release-2026-11"' in page
    assert "<html" not in page


def test_a_release_page_shows_its_notes_files_hashes_and_report(viewer, cut):
    """The generated notes, each file's size and SHA-256, the validation verdict; the
    curator's notes stay text."""
    page = viewer.get(reverse("releases:detail", args=["2026-11"])).content.decode()
    assert "First &lt;b&gt;cut&lt;/b&gt;." in page
    for stored in cut.files.all():
        assert stored.sha256 in page and f"<td>{stored.size}</td>" in page
    assert 'id="concepts-added"' in page and "Dense retrieval" in page
    assert 'id="release-conforms"' in page or 'id="release-violations"' in page


def test_an_unknown_release_is_a_404_in_words(viewer):
    """Also a malformed or oversized name in the address."""
    for name in ("nope", "x" * 300):
        response = viewer.get(reverse("releases:detail", args=[name]))
        assert response.status_code == 404
        assert "There is no release named" in text(response)


def test_a_release_file_downloads_byte_for_byte_with_its_hash(viewer, cut):
    """The bytes on disk, named after the release, with the hash in a header."""
    stored = cut.files.get(format="jsonld")
    response = viewer.get(reverse("releases:file", args=["2026-11", stored.filename]))
    data = body(response)
    assert response.status_code == 200
    assert hashlib.sha256(data).hexdigest() == stored.sha256 == response["X-Content-SHA256"]
    assert "kgreview-2026-11-graph.jsonld" in response["Content-Disposition"]


def test_a_tampered_release_file_is_refused_in_words_on_the_page_and_in_the_api(viewer, cut, f):
    """A file changed on disk: 409 with the reason, never the bytes."""
    stored = cut.files.get(format="turtle")
    path = files.folder("2026-11") / stored.filename
    path.write_bytes(path.read_bytes() + b"\n# appended\n")
    response = viewer.get(reverse("releases:file", args=["2026-11", stored.filename]))
    assert response.status_code == 409
    assert "was changed on the server's disk" in text(response)
    token = api_token_create(owner=f.user(role="viewer"), name="t", acting_user=None).secret
    api = Client().get(
        f"/api/v1/releases/2026-11/files/{stored.filename}",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert api.status_code == 409
    assert "was changed on the server's disk" in api.json()["detail"]


def test_a_curator_cuts_a_release_from_the_form_without_htmx(
    curator, graph, django_capture_on_commit_callbacks
):
    """The request is queued, the worker cuts it, the Releases page shows it."""
    with django_capture_on_commit_callbacks(execute=True):
        response = curator.post(reverse("releases:cut"), {"name": "from-page", "notes": "Hello."})
    assert response.status_code == 302 and response["Location"] == reverse("releases:index")
    build = ReleaseBuild.objects.get(name="from-page")
    assert build.status == ReleaseBuild.Status.DONE
    assert Release.objects.get(name="from-page").notes == "Hello."
    page = text(curator.get(reverse("releases:index")))
    assert 'id="release-from-page"' in page and "asked for; it shows below" in page


def test_a_curator_cuts_a_release_from_the_form_with_htmx(
    curator, graph, django_capture_on_commit_callbacks
):
    """htmx gets the form's card back, saying the release was asked for."""
    with django_capture_on_commit_callbacks(execute=True):
        response = curator.post(reverse("releases:cut"), {"name": "htmx-cut"}, **HTMX)
    page = text(response)
    assert response.status_code == 200
    assert page.lstrip().startswith('<section class="card" id="release-cut"')
    assert 'id="release-asked"' in page and "htmx-cut" in page
    assert response["HX-Trigger"] == "releaseAsked"  # the builds region asks again
    assert Release.objects.filter(name="htmx-cut").exists()


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_a_bad_name_is_refused_in_words_on_the_form(curator, graph, headers):
    """A taken name: 409 with the words and the form again, nothing queued."""
    release_create(name="taken", acting_user=None)
    response = curator.post(reverse("releases:cut"), {"name": "taken"}, **headers)
    assert response.status_code == 409
    assert 'already a release named "taken"' in text(response)
    assert not ReleaseBuild.objects.exists()
    too_long = curator.post(reverse("releases:cut"), {"name": "x" * 10_000}, **headers)
    assert too_long.status_code == 400
    assert "at most 64 characters; this one has 10,000" in text(too_long)
    slash = curator.post(reverse("releases:cut"), {"name": "a/b"}, **headers)
    assert slash.status_code == 400 and "path separator" in text(slash)


def test_a_future_instant_is_refused_on_the_form(curator, graph):
    """The form's instant goes through the same rule."""
    response = curator.post(reverse("releases:cut"), {"name": "later", "as_of": "2999-01-01T00:00"})
    assert response.status_code == 400 and "is in the future" in text(response)


def test_a_viewer_cannot_cut_a_release(viewer, graph):
    """403 in words, with and without htmx; nothing asked for."""
    for headers in ({}, HTMX):
        response = viewer.post(reverse("releases:cut"), {"name": "nope"}, **headers)
        assert response.status_code == 403
    assert "Only curators can cut a release" in text(
        viewer.post(reverse("releases:cut"), {"name": "nope"})
    )
    assert not ReleaseBuild.objects.exists() and not Release.objects.exists()


def test_the_exports_page_offers_curators_the_release_form(curator, viewer):
    """Curators see the form on the Exports page; viewers the link only."""
    assert 'id="release-cut"' in text(curator.get(reverse("exports:home")))
    page = text(viewer.get(reverse("exports:home")))
    assert 'id="release-cut"' not in page and 'id="releases-link"' in page


def test_the_api_lists_releases_and_serves_one_with_its_notes(cut, f):
    """GET /api/v1/releases and /api/v1/releases/{name} with a read token."""
    token = api_token_create(owner=f.user(role="viewer"), name="t", acting_user=None).secret
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    listed = Client().get("/api/v1/releases", **auth).json()
    (one,) = listed["releases"]
    assert one["name"] == "2026-11" and one["counts"] == {"concepts": 5, "edges": 4}
    assert {f["filename"] for f in one["files"]} == {s.filename for s in cut.files.all()}
    detail = Client().get("/api/v1/releases/2026-11", **auth).json()
    assert detail["changes"]["edges"]["counts"]["added"] == 4
    assert detail["validation"] == cut.validation
    stored = cut.files.get(format="graphml")
    got = Client().get(one["files"][2]["url"], **auth)
    assert got.status_code == 200
    assert hashlib.sha256(b"".join(got.streaming_content)).hexdigest() == stored.sha256
    missing = Client().get("/api/v1/releases/none-such", **auth)
    assert missing.status_code == 404 and "no release named" in missing.json()["detail"]
    assert Client().get("/api/v1/releases").status_code == 401


def test_the_builds_region_polls_while_a_build_is_under_way_and_stops_after(curator, graph):
    """A queued build: the region asks again every 2 s and shows its status; once it is
    done the region stops asking and links the release."""
    from kgreview.exports.releases.services import release_build_run, release_request

    build = release_request(name="polled", acting_user=None)  # not committed: not queued
    region = text(curator.get(reverse("releases:index"), **HTMX))
    assert ', every 2s"' in region and 'data-status="queued"' in region
    release_build_run(build_id=build.pk)
    region = text(curator.get(reverse("releases:index"), **HTMX))
    assert "every 2s" not in region and 'data-status="done"' in region
    assert reverse("releases:detail", args=["polled"]) in region
