"""One conversation with a chat-completions endpoint: the client's settings, transient
retries with backoff, the structured-output mode (json_schema, falling back to
json_object once an endpoint refuses it), and validation retries with feedback.

Shared by everything that talks to the model (the extractor, the ask planner and critic)
so each of them only says what it asks and how it reads the answer.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import openai
from openai.types.chat import ChatCompletionMessageParam
from openai.types.chat.completion_create_params import ResponseFormat

from ..errors import LLMConfigurationError, LLMError, LLMTransientError
from ..types import LLMUsage
from .endpoint import content_of, endpoint_message, is_transient, refused, retry_after, usage_of

JSON_MODES = ("auto", "json_schema", "json_object")
FALLBACK_HINTS = ("response_format", "json_schema", "not supported", "unsupported")
Schema = tuple[str, dict]  # (name, JSON schema) for a json_schema response format
T = TypeVar("T")


@dataclass(frozen=True)
class Conversation(Generic[T]):
    """How a conversation ended: the valid answer, or the last answer and what was wrong
    with it; the usage of every call, and how many answers were asked for."""

    answer: T | None
    content: str | None
    problems: tuple[str, ...]
    usage: LLMUsage
    attempts: int

    @property
    def tries(self) -> str:
        return f"{self.attempts} attempt{'s' if self.attempts != 1 else ''}"


class ChatClient:
    """An OpenAI-compatible chat-completions endpoint, used with bounded retries."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None,
        model: str,
        timeout: float = 60.0,
        max_retries: int = 3,
        validation_retries: int = 2,
        json_mode: str = "auto",
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        sleep: Callable[[float], None] = time.sleep,
        http_client: Any = None,
        temperature: float = 0.0,
    ) -> None:
        if json_mode not in JSON_MODES:
            raise ValueError(f"json_mode must be one of {', '.join(JSON_MODES)}, not {json_mode!r}")
        if max_retries < 0 or validation_retries < 0:
            raise ValueError("max_retries and validation_retries cannot be negative")
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        self.validation_retries = validation_retries
        self.json_mode = json_mode
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.temperature = temperature
        self._sleep = sleep
        # Learned per instance: once an endpoint has refused json_schema, asking again on
        # every call would double the requests for the rest of the run.
        self._format = "json_object" if json_mode == "json_object" else "json_schema"
        self._client = openai.OpenAI(
            # Local servers (Ollama, vLLM) need no key, but the SDK refuses to start without one.
            api_key=api_key or "unused",
            base_url=base_url or None,
            timeout=timeout,
            # The SDK's own retries are off: this class retries with its own backoff so
            # that every retry is counted in LLMUsage and bounded by our settings, and so
            # that SDK and class retries do not multiply.
            max_retries=0,
            http_client=http_client,
        )

    @property
    def response_format_type(self) -> str:
        """The structured-output mode the next request will use."""
        return self._format

    # --- A conversation, with validation retries -------------------------------------------

    def converse(
        self,
        messages: Sequence[ChatCompletionMessageParam],
        *,
        schema: Schema,
        read: Callable[[str | None], tuple[T | None, list[str]]],
        feedback: Callable[[Sequence[str]], str],
    ) -> Conversation[T]:
        """Ask until ``read`` accepts an answer, at most ``validation_retries`` more times;
        each rejected answer goes back to the model with ``feedback(problems)``. Transient
        and configuration errors are raised (``LLMError``, carrying the usage so far)."""
        history = list(messages)
        usage = LLMUsage()
        attempts = self.validation_retries + 1
        for attempt in range(1, attempts + 1):
            try:
                content, spent = self.complete(history, schema=schema)
            except LLMError as err:
                err.usage = usage + err.usage
                raise
            usage += spent
            answer, problems = read(content)
            if answer is not None:
                return Conversation(answer, content, (), usage, attempt)
            if attempt == attempts:
                return Conversation(None, content, tuple(problems), usage, attempt)
            usage += LLMUsage(validation_retries=1)
            history = [
                *history,
                {"role": "assistant", "content": content or ""},
                {"role": "user", "content": feedback(problems)},
            ]
        raise AssertionError("unreachable: the last attempt returns")

    # --- One answer, with transient retries ------------------------------------------------

    def complete(
        self, messages: Sequence[ChatCompletionMessageParam], *, schema: Schema
    ) -> tuple[str | None, LLMUsage]:
        """Send the conversation until the endpoint answers; count calls, retries, tokens."""
        calls = retries = 0
        while True:
            calls += 1
            try:
                response = self._client.chat.completions.create(
                    model=self.model,
                    messages=list(messages),
                    temperature=self.temperature,
                    response_format=self._response_format(schema),
                )
            except openai.BadRequestError as err:
                if self._should_fall_back(err):
                    self._format = "json_object"
                    continue
                raise LLMConfigurationError(
                    refused(err), usage=LLMUsage(calls=calls, retries=retries)
                ) from err
            except (openai.APIConnectionError, openai.APIStatusError) as err:
                spent = LLMUsage(calls=calls, retries=retries)
                if isinstance(err, openai.APIStatusError) and not is_transient(err):
                    raise LLMConfigurationError(refused(err), usage=spent) from err
                if retries >= self.max_retries:
                    message = self._gave_up(err, attempts=retries + 1)
                    raise LLMTransientError(message, usage=spent) from err
                self._sleep(self._delay(retries, err))
                retries += 1
                continue
            if not hasattr(response, "choices"):
                # The SDK hands back the raw text of a non-JSON 200, typically a web page
                # served at a base URL that lacks its /v1; retrying cannot help.
                where = self.base_url or "the default OpenAI endpoint"
                raise LLMConfigurationError(
                    f"the model endpoint at {where} did not answer with a chat completion "
                    f"(got {str(response)[:80]!r}); check OPENAI_BASE_URL",
                    usage=LLMUsage(calls=calls, retries=retries),
                )
            return content_of(response), LLMUsage(calls=calls, retries=retries) + usage_of(response)

    def _response_format(self, schema: Schema) -> ResponseFormat:
        if self._format == "json_object":
            return {"type": "json_object"}
        name, body = schema
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": body, "strict": True},
        }

    def _should_fall_back(self, err: openai.BadRequestError) -> bool:
        if self.json_mode != "auto" or self._format != "json_schema":
            return False
        # A complaint about another parameter ("temperature is not supported") is no reason
        # to give up structured output.
        if err.param and not err.param.startswith("response_format"):
            return False
        said = f"{err.message} {json.dumps(err.body, default=str)} {err.param or ''}".lower()
        return any(hint in said for hint in FALLBACK_HINTS)

    def _delay(self, retry: int, err: Exception) -> float:
        """Seconds before retry number ``retry`` (0-based): the server's word, else backoff."""
        asked = retry_after(err)
        if asked is not None:
            return min(self.backoff_max, asked)
        ceiling = min(self.backoff_max, self.backoff_base * 2**retry)
        # Half fixed, half random: workers that failed together do not retry together.
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def _gave_up(self, err: Exception, *, attempts: int) -> str:
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if isinstance(err, openai.APITimeoutError):
            return f"the model endpoint timed out after {self.timeout:g} s, {tries}"
        if isinstance(err, openai.APIConnectionError):
            where = self.base_url or "the default OpenAI endpoint"
            return f"could not connect to the model endpoint at {where} after {tries}"
        assert isinstance(err, openai.APIStatusError)
        what = "kept rate-limiting" if err.status_code == 429 else "kept failing"
        detail = endpoint_message(err)
        return f"the model endpoint {what} (HTTP {err.status_code}) after {tries}" + (
            f": {detail}" if detail else ""
        )
