"""Releases in the API: ``GET /api/v1/releases``, ``GET /api/v1/releases/{name}`` and a
file of one. The exports app provides these operations to the API through
``core.api_parts`` (the API cannot import a peer); they run under the API's
authentication, rate limits and refusals."""

from __future__ import annotations

from ninja import Path, Router, Schema

from kgreview.core import api_parts

from . import downloads, selectors

router = Router()


class Refusal(Schema):
    detail: str
    code: str | None = None


class ReleaseFileOut(Schema):
    format: str
    label: str
    filename: str
    content_type: str
    size: int
    sha256: str
    url: str


class ReleaseCounts(Schema):
    concepts: int
    edges: int


class ReleaseOut(Schema):
    name: str
    as_of: str
    created_at: str
    created_by: str | None
    previous: str | None
    notes: str
    conforms: bool
    counts: ReleaseCounts
    files: list[ReleaseFileOut]


class ReleaseDetailOut(ReleaseOut):
    changes: dict
    validation: dict


class ReleasesOut(Schema):
    releases: list[ReleaseOut]


def _file_urls(request):
    """Files' addresses under the API's own mount (read off the request, since the API's
    URL names are not this app's to reverse)."""
    base = request.path[: request.path.index("/v1/releases")] + "/v1/releases"

    def url(release, stored) -> str:
        return f"{base}/{release.name}/files/{stored.filename}"

    return url


NAME = Path(..., max_length=200)
FILENAME = Path(..., max_length=200)


@router.get("/v1/releases", response={200: ReleasesOut, 400: Refusal, 401: Refusal})
def releases(request):
    """Every release, latest instant first: its name, instant, who cut it, the
    release it follows, whether the graph conformed to its shapes then, how many
    concepts and edges it holds, and its files with their sizes and SHA-256."""
    return {
        "releases": [
            selectors.release_json(r, file_url=_file_urls(request)) for r in selectors.releases()
        ]
    }


@router.get(
    "/v1/releases/{name}",
    response={200: ReleaseDetailOut, 400: Refusal, 401: Refusal, 404: Refusal},
)
def release(request, name: str = NAME):
    """One release, with its notes (``changes``: what changed since the previous
    release, generated from the diff) and its validation report."""
    found = selectors.release_named(name)
    return selectors.release_json(found, file_url=_file_urls(request), detail=True)


@router.get(
    "/v1/releases/{name}/files/{filename}",
    response={400: Refusal, 401: Refusal, 404: Refusal, 409: Refusal},
    openapi_extra={
        "responses": {
            "200": {
                "description": "The file, byte for byte as it was when the release was "
                "cut (its SHA-256 is checked before it is sent), with that SHA-256 as its "
                '`ETag` ("sha256-<hex>"), `Repr-Digest` and `X-Content-SHA256`; a request '
                "whose `If-None-Match` names the ETag is answered 304.",
                "content": {
                    "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
                },
            },
            "304": {"description": "The client already holds these bytes (its If-None-Match)."},
        }
    },
)
def release_file(request, name: str = NAME, filename: str = FILENAME):
    """A file of a release. It is read through and compared with the SHA-256 recorded
    when the release was cut; a file changed or missing on the server's disk is refused
    with a 409 in words, never served."""
    found = selectors.release_named(name)
    return downloads.file_response(request, selectors.release_file(found, filename))


def provide() -> None:
    api_parts.provide("releases", router)
