"""Serving a release's file: the bytes recorded at the cut, named by their SHA-256.

The page (``/releases/<name>/files/<file>``) and the API serve a file the same way: its
stable address never changes what it answers, so the response names the stored hash
three ways (``ETag: "sha256-<hex>"``, ``Repr-Digest: sha-256=:<base64>:`` (RFC 9530)
and ``X-Content-SHA256: <hex>``) and may be kept for good by the browser that asked
(``Cache-Control: private, immutable``). A request whose ``If-None-Match`` names that
ETag is answered 304 without reading the file; any other is read through and checked
against the hash first (``selectors.release_file_path``), a changed file refused in words.
"""

from __future__ import annotations

import base64

from django.http import FileResponse, HttpRequest, HttpResponseNotModified
from django.http.response import HttpResponseBase

from ..models import ReleaseFile
from . import selectors

#: A release's file never changes: a year is "for good" to a cache.
CACHE_CONTROL = "private, max-age=31536000, immutable"


def etag(stored: ReleaseFile) -> str:
    return f'"sha256-{stored.sha256}"'


def repr_digest(stored: ReleaseFile) -> str:
    return "sha-256=:" + base64.b64encode(bytes.fromhex(stored.sha256)).decode("ascii") + ":"


def _names_this(request: HttpRequest, stored: ReleaseFile) -> bool:
    tags = {
        t.strip().removeprefix("W/") for t in request.headers.get("If-None-Match", "").split(",")
    }
    return etag(stored) in tags or "*" in tags


def _stamped(response: HttpResponseBase, stored: ReleaseFile) -> HttpResponseBase:
    response["ETag"] = etag(stored)
    response["Repr-Digest"] = repr_digest(stored)
    response["X-Content-SHA256"] = stored.sha256
    response["Cache-Control"] = CACHE_CONTROL
    response["X-Content-Type-Options"] = "nosniff"
    return response


def file_response(request: HttpRequest, stored: ReleaseFile) -> HttpResponseBase:
    """The stored file as an attachment (checked first), or 304 when the client already
    holds these bytes."""
    if _names_this(request, stored):
        return _stamped(HttpResponseNotModified(), stored)
    path = selectors.release_file_path(stored)
    response = FileResponse(
        path.open("rb"),
        as_attachment=True,
        filename=selectors.download_name(stored),
        content_type=stored.content_type,
    )
    return _stamped(response, stored)
