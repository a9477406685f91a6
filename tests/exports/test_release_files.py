"""A release's files never change after the cut: running its build again, later
decisions, a relation type retired and another release cut leave every file's bytes and
hash as recorded; the page and the API serve them at the same address with that hash
(ETag, Repr-Digest), and a client holding them is answered 304."""

from __future__ import annotations

import base64
import hashlib

import pytest
from django.test import Client
from django.urls import reverse
from rdflib import Graph

from kgreview.api.services import api_token_create
from kgreview.exports.models import Release, ReleaseBuild
from kgreview.exports.releases import files
from kgreview.exports.releases.services import release_build_run, release_create, release_request
from kgreview.graph import services
from kgreview.graph.models import RelationType

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def release_dir(settings, tmp_path):
    settings.KG_RELEASE_DIR = tmp_path / "releases"
    return settings.KG_RELEASE_DIR


def _on_disk(name: str) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(files.folder(name).iterdir())}


def _recorded(release: Release) -> dict[str, tuple[int, str]]:
    return {s.filename: (s.size, s.sha256) for s in release.files.all()}


def _downloads(release: Release, client: Client, api: Client) -> dict[str, tuple]:
    """Each file as the page and the API serve it: (bytes, ETag, Repr-Digest) twice."""
    out = {}
    for stored in release.files.all():
        page = client.get(reverse("releases:file", args=[release.name, stored.filename]))
        rest = api.get(f"/api/v1/releases/{release.name}/files/{stored.filename}")
        assert page.status_code == rest.status_code == 200
        out[stored.filename] = tuple(
            (b"".join(r.streaming_content), r["ETag"], r["Repr-Digest"]) for r in (page, rest)
        )
    return out


def test_running_the_build_again_and_changing_the_graph_leave_every_file_as_cut(
    graph, f, django_capture_on_commit_callbacks, release_dir
):
    """Cut by a build; then the build's task runs again, edges are retired, concepts
    merged, a relation type retired and a second release cut: each file of the first
    is the same bytes under the same hash, on disk, in its rows and as downloaded."""
    curator = f.user("cora", role="curator")
    with django_capture_on_commit_callbacks(execute=True):
        build = release_request(name="2026-12", acting_user=curator)
    release = Release.objects.get(name="2026-12")
    disk, rows = _on_disk("2026-12"), _recorded(release)
    assert set(disk) == set(rows) and "graph.ttl" in disk
    for name, data in disk.items():
        assert (len(data), hashlib.sha256(data).hexdigest()) == rows[name]
    client = Client()
    client.force_login(f.user("vic", role="viewer"))
    token = api_token_create(owner=f.user("api", role="viewer"), name="t", acting_user=None)
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token.secret}")
    served = _downloads(release, client, api)

    assert release_build_run(build_id=build.pk).status == ReleaseBuild.Status.DONE
    with django_capture_on_commit_callbacks(execute=True):
        twin = release_request(name="2026-12b", acting_user=curator)
    services.edge_invalidate(edge=graph.accepted, reason="Wrong.", acting_user=curator)
    services.concept_merge(loser=graph.dense, survivor=graph.kw, acting_user=curator)
    services.relation_type_retire(
        relation=RelationType.objects.get(key="applies_to"), acting_user=curator
    )
    release_create(name="2027-01", acting_user=curator)
    assert ReleaseBuild.objects.get(pk=twin.pk).status == ReleaseBuild.Status.DONE

    again = Release.objects.get(name="2026-12")
    assert _on_disk("2026-12") == disk
    assert _recorded(again) == rows
    assert _downloads(again, client, api) == served
    later = _recorded(Release.objects.get(name="2027-01"))
    assert later["graph.jsonld"] != rows["graph.jsonld"]  # the graph did change


def test_a_download_names_its_stored_hash_and_a_holder_of_it_gets_304(graph, f):
    """ETag "sha256-<hex>", Repr-Digest sha-256=:<base64>: and X-Content-SHA256 agree
    with the stored hash and the bytes; If-None-Match with that ETag answers 304 on the
    page and in the API; the file may be kept for good by the browser that asked."""
    release = release_create(name="v1", acting_user=None)
    stored = release.files.get(format="turtle")
    client = Client()
    client.force_login(f.user("vic", role="viewer"))
    token = api_token_create(owner=f.user("api", role="viewer"), name="t", acting_user=None)
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token.secret}")
    page_url = reverse("releases:file", args=["v1", stored.filename])
    api_url = f"/api/v1/releases/v1/files/{stored.filename}"
    for who, url in ((client, page_url), (api, api_url)):
        response = who.get(url)
        data = b"".join(response.streaming_content)
        digest = hashlib.sha256(data).digest()
        assert response["ETag"] == f'"sha256-{stored.sha256}"'
        assert response["Repr-Digest"] == f"sha-256=:{base64.b64encode(digest).decode()}:"
        assert response["X-Content-SHA256"] == stored.sha256 == digest.hex()
        assert "immutable" in response["Cache-Control"]
        assert "private" in response["Cache-Control"]
        held = who.get(url, HTTP_IF_NONE_MATCH=response["ETag"])
        assert held.status_code == 304 and held["ETag"] == response["ETag"]
        other = who.get(url, HTTP_IF_NONE_MATCH='"sha256-' + "0" * 64 + '"')
        assert other.status_code == 200
    assert len(Graph().parse(data=data.decode(), format="turtle")) > 0


def test_the_turtle_export_is_stored_with_every_release(graph):
    """graph.ttl parses as RDF and holds the release's edges."""
    release = release_create(name="rdf", acting_user=None)
    stored = release.files.get(format="turtle")
    assert stored.filename == "graph.ttl" and stored.content_type.startswith("text/turtle")
    parsed = Graph().parse(
        data=(files.folder("rdf") / "graph.ttl").read_text(encoding="utf-8"), format="turtle"
    )
    assert len(parsed) > 0
    assert "Embeddings" in {str(o) for o in parsed.objects()}
