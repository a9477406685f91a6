"""A scripted chat-completions server on 127.0.0.1, for driving the real openai client.

Mocking the SDK would test our guesses about it; a real HTTP exchange tests the SDK's
actual error classes, headers, timeouts and parsing. Each request takes the next
behaviour from a queue; every request body is recorded for the test to inspect.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass(frozen=True)
class Reply:
    """Answer 200 with a chat.completion whose message content is ``content``."""

    content: str | None
    prompt_tokens: int = 10
    completion_tokens: int = 5
    with_usage: bool = True
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Status:
    """Answer with an HTTP error status, an OpenAI-style error body and extra headers."""

    code: int
    message: str = "scripted failure"
    headers: dict[str, str] = field(default_factory=dict)
    param: str | None = None


@dataclass(frozen=True)
class Slow:
    """Wait ``seconds`` before behaving as ``then`` (long enough, and the client times out)."""

    seconds: float
    then: Reply | Status


@dataclass(frozen=True)
class InFlight:
    """Run ``answer`` in the request's own thread, outside the server's lock, so requests
    that arrive together are answered together (tests count how many overlap)."""

    answer: Callable[[], Reply | Status]


Behaviour = Reply | Status | Slow | InFlight


def reply(content: Any, *, prompt_tokens: int = 10, completion_tokens: int = 5, **kw) -> Reply:
    """A 200 answer; a dict or list is sent as its JSON text, as a model would write it."""
    text = content if content is None or isinstance(content, str) else json.dumps(content)
    return Reply(text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, **kw)


def status(
    code: int, message: str = "scripted failure", *, param: str | None = None, **headers: str
) -> Status:
    """An error answer; header names use underscores (retry_after="2" -> Retry-After: 2)."""
    named = {name.replace("_", "-").title(): value for name, value in headers.items()}
    return Status(code, message, named, param)


def slow(seconds: float, then: Reply | Status) -> Slow:
    return Slow(seconds, then)


@dataclass(frozen=True)
class Recorded:
    """One request as received; header names are lower-cased so lookups need not guess."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeLLM:
    """The server. Use as a context manager, or through the ``fake_llm`` fixture."""

    def __init__(self) -> None:
        self._queue: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self.log: list[Recorded] = []
        # When set, every json_schema request is refused without using the queue, the way
        # a server without structured output does; json_object requests still get answers.
        self.refuses_json_schema = False
        # Called for a request when the queue is empty (an unscripted, endless answerer).
        self.fallback: Callable[[Any], Behaviour] | None = None
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests(self) -> list[Any]:
        """Bodies of the requests received so far, parsed from JSON."""
        with self._lock:
            return [r.body for r in self.log]

    def push(self, *behaviours: Behaviour) -> FakeLLM:
        with self._lock:
            self._queue.extend(behaviours)
        return self

    def script(self, *behaviours: Behaviour) -> FakeLLM:
        """Replace whatever is still queued."""
        with self._lock:
            self._queue.clear()
            self._queue.extend(behaviours)
        return self

    def refuse_json_schema(self) -> FakeLLM:
        self.refuses_json_schema = True
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def start(self) -> FakeLLM:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _next(self, body: Any) -> Behaviour:
        with self._lock:
            wants_schema = (
                isinstance(body, dict)
                and (body.get("response_format") or {}).get("type") == "json_schema"
            )
            if self.refuses_json_schema and wants_schema:
                return Status(400, "response_format json_schema is not supported by this model")
            if not self._queue:
                if self.fallback is not None:
                    return self.fallback(body)
                return Status(500, "fake_llm: the script has no behaviour left for this request")
            return self._queue.popleft()

    def _wait(self, seconds: float) -> None:
        # Returns early when the server closes, so a slow behaviour never delays teardown.
        self._closing.wait(seconds)


def _completion(body: Any, behaviour: Reply) -> dict:
    completion: dict[str, Any] = {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake") if isinstance(body, dict) else "fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": behaviour.content, "refusal": None},
                "logprobs": None,
                "finish_reason": behaviour.finish_reason,
            }
        ],
    }
    if behaviour.with_usage:
        completion["usage"] = {
            "prompt_tokens": behaviour.prompt_tokens,
            "completion_tokens": behaviour.completion_tokens,
            "total_tokens": behaviour.prompt_tokens + behaviour.completion_tokens,
        }
    return completion


def _handler_for(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                body = raw.decode("utf-8", "replace")
            with fake._lock:
                headers = {name.lower(): value for name, value in self.headers.items()}
                fake.log.append(Recorded("POST", self.path, headers, body))
            behaviour = fake._next(body)
            if isinstance(behaviour, InFlight):
                behaviour = behaviour.answer()
            if isinstance(behaviour, Slow):
                fake._wait(behaviour.seconds)
                behaviour = behaviour.then
            if isinstance(behaviour, Reply):
                self._send(200, _completion(body, behaviour), {})
            else:
                error = {
                    "error": {
                        "message": behaviour.message,
                        "type": "invalid_request_error" if behaviour.code < 500 else "server_error",
                        "param": behaviour.param,
                        "code": None,
                    }
                }
                self._send(behaviour.code, error, behaviour.headers)

        def _send(self, code: int, payload: dict, headers: dict[str, str]) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (a timeout test); nothing to tell it

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler


@pytest.fixture
def fake_llm():
    """A running fake chat-completions server, closed after the test."""
    with FakeLLM() as server:
        yield server
