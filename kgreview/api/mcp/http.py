"""``/api/mcp``: the MCP server's streamable HTTP transport inside the WSGI app.

The SDK's transport is an ASGI app; kgreview is served by gunicorn's WSGI workers. In
its stateless mode with JSON answers the transport needs nothing to outlive a request
(no session, no open event stream): each POST carries one JSON-RPC message and gets one
JSON answer. So this Django view authenticates the bearer token and counts the request
as the API does, then hands the request to the SDK's own session manager for that one
exchange (``async_to_sync``; the tools' database reads come back to this request's
thread through ``sync_to_async``) and returns what it wrote. docs/mcp.md weighs this
against an ASGI server beside gunicorn.

Refusals before the transport (no token, a revoked one, an account without a role, a
spent rate, a body that is not JSON or is empty, a request whose id is neither a string
nor an integer, which the transport would take for a notification and answer with
nothing) are JSON-RPC errors at their HTTP status, so the SDK's client raises them with
their words.
"""

from __future__ import annotations

import json
import math
from collections.abc import MutableMapping
from typing import Any

import anyio
from asgiref.sync import async_to_sync
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.request import RawPostDataException
from django.views.decorators.csrf import csrf_exempt
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from kgreview.core.permissions import can_view

from ..services import api_token_authenticate
from ..throttle import EVERY
from .server import SERVER, Caller, reading_as

#: JSON-RPC's code for a request refused by the server (the implementation-defined range).
REFUSED = -32001
#: The largest request body read (a tool call's arguments are small).
MAX_BODY = 1_000_000

UNAUTHENTICATED = (
    "Authentication needed: send Authorization: Bearer <token> (make one on the API "
    "tokens page or with manage.py api_token create). Revoked tokens and accounts "
    "without a role are refused."
)


def _message(body: bytes) -> Any:
    """The body as JSON, or None when it is none (the transport says why, in its words)."""
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def _is_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _request_id(body: bytes) -> Any:
    """The JSON-RPC id of the message, when it can be read (for a refusal's answer)."""
    message = _message(body)
    found = message.get("id") if isinstance(message, dict) else None
    return found if _is_id(found) else None


def _message_problem(request: HttpRequest, body: bytes) -> tuple[int, str] | None:
    """What makes the body no JSON-RPC message the transport could answer, with the
    status to refuse it at, or None. The transport refuses most malformed messages in
    its own words; these it would answer with a bare status, or take a request whose
    id is not a string or an integer for a notification, run it and answer nothing."""
    if not body.strip():
        return 400, "The body is empty: send one JSON-RPC message. Nothing was done."
    media_type = (request.content_type or "").strip().lower()
    if media_type != "application/json":
        sent = f"Content-Type {media_type}" if media_type else "no Content-Type"
        return 415, (
            f"The message was sent with {sent}: send one JSON-RPC message as the body, "
            "with Content-Type: application/json. Nothing was done."
        )
    message = _message(body)
    if isinstance(message, dict) and "id" in message and not _is_id(message["id"]):
        return 400, (
            "Invalid Request: a JSON-RPC request's id is a string or an integer (this one "
            f"is {type(message['id']).__name__ if message['id'] is not None else 'null'}); "
            "a message without an id is a notification, answered with nothing. Nothing "
            "was done."
        )
    return None


def _body(request: HttpRequest) -> bytes | None:
    """The request's body, or None when a middleware already read it as a form (a form
    post is no JSON-RPC message)."""
    try:
        return request.body
    except RawPostDataException:
        return None


def _refusal(request: HttpRequest, status: int, words: str) -> JsonResponse:
    body = _body(request) if request.method == "POST" else None
    return JsonResponse(
        {
            "jsonrpc": "2.0",
            "id": _request_id(body) if body else None,
            "error": {"code": REFUSED, "message": words},
        },
        status=status,
    )


def _scope(request: HttpRequest) -> dict[str, Any]:
    """The ASGI scope of this WSGI request."""
    meta = request.META
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode("utf-8"),
        "root_path": "",
        "query_string": meta.get("QUERY_STRING", "").encode("latin-1"),
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1", "replace"))
            for name, value in request.headers.items()
        ],
        "server": (meta.get("SERVER_NAME", "localhost"), int(meta.get("SERVER_PORT") or 80)),
        "client": (meta.get("REMOTE_ADDR", ""), 0),
    }


async def _exchange(scope: dict[str, Any], body: bytes) -> tuple[int, list, bytes]:
    """One request through the SDK's stateless transport: its status, headers and body."""
    manager = StreamableHTTPSessionManager(
        # The low-level server behind the MCPServer: what the SDK's own
        # streamable_http_app hands its session manager.
        app=SERVER._lowlevel_server,
        json_response=True,
        stateless=True,
        # Django checks the Host header (ALLOWED_HOSTS) before this view runs.
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=MAX_BODY,
    )
    status, headers, chunks = 500, [], []
    sent, answered = False, anyio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        # The client stays connected until the whole answer is written (the transport
        # listens for a disconnect to cancel the work).
        await answered.wait()
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status, headers = message["status"], message.get("headers", [])
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                answered.set()

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return status, headers, b"".join(chunks)


@csrf_exempt  # a bearer token, never a cookie, authenticates here
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    """The streamable HTTP transport, one JSON-RPC message per POST."""
    if request.method != "POST":
        # Stateless: no event stream to open with a GET, no session to end with a DELETE
        # (the transport would hold a GET open, and a worker thread with it).
        answer = _refusal(
            request,
            405,
            f"{request.method} is not served here: this MCP endpoint is stateless, with no "
            "event stream or session; POST one JSON-RPC message at a time.",
        )
        answer["Allow"] = "POST"
        return answer
    scheme, _, secret = request.headers.get("Authorization", "").partition(" ")
    token = api_token_authenticate(secret=secret.strip()) if scheme.lower() == "bearer" else None
    if token is None or not can_view(token.user):
        answer = _refusal(request, 401, UNAUTHENTICATED)
        answer["WWW-Authenticate"] = 'Bearer realm="kgreview"'
        return answer
    request.user = token.user
    request.api_token = token  # type: ignore[attr-defined]
    if not EVERY.allow_request(request):
        wait = max(1, math.ceil(EVERY.wait() or 1))
        answer = _refusal(
            request,
            429,
            "Too many requests from this account: the API's rate limit (KG_API_RATE, "
            "counted per account across all its tokens, its browser session and MCP) is "
            f"spent for now. Try again in {wait} seconds (Retry-After).",
        )
        answer["Retry-After"] = str(wait)
        return answer
    body = _body(request)
    if body is None:
        return _refusal(
            request,
            415,
            "Send one JSON-RPC message as the body, with Content-Type: application/json.",
        )
    if len(body) > MAX_BODY:
        return _refusal(request, 413, f"A message has at most {MAX_BODY:,} bytes.")
    problem = _message_problem(request, body)
    if problem is not None:
        return _refusal(request, *problem)
    reset = reading_as(Caller(user=token.user, api_token=token, counted=True))
    try:
        status, headers, answer_body = async_to_sync(_exchange)(_scope(request), body)
    finally:
        reset.var.reset(reset)
    response = HttpResponse(answer_body, status=status)
    for name, value in headers:
        key = name.decode("latin-1")
        if key.lower() != "content-length":
            response[key] = value.decode("latin-1")
    return response
