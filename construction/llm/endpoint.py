"""What the SDK hands back: a completion's text and tokens, and its errors in words."""

from __future__ import annotations

from typing import Any

import openai

from ..types import LLMUsage

# Status codes the SDK itself would retry besides 429 and 5xx: request timeout, lock conflict.
TRANSIENT_STATUS = frozenset({408, 409})


def content_of(response: Any) -> str | None:
    try:
        return response.choices[0].message.content
    except (AttributeError, IndexError, TypeError):
        return None


def usage_of(response: Any) -> LLMUsage:
    usage = getattr(response, "usage", None)
    if usage is None:
        return LLMUsage()
    return LLMUsage(
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        total_tokens=getattr(usage, "total_tokens", 0) or 0,
    )


def is_transient(err: Exception) -> bool:
    if isinstance(err, openai.APIConnectionError | openai.RateLimitError):
        return True
    if isinstance(err, openai.InternalServerError):
        return True
    return isinstance(err, openai.APIStatusError) and err.status_code in TRANSIENT_STATUS


def retry_after(err: Exception) -> float | None:
    """The server's Retry-After in seconds, when it sent one we can read."""
    response = getattr(err, "response", None)
    if response is None:
        return None
    headers = response.headers
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except ValueError:
            continue  # an HTTP date; rare enough that our own backoff will do
        if seconds >= 0:
            return seconds
    return None


def endpoint_message(err: openai.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    if isinstance(body, str):
        return body.strip()[:300]
    return ""


HINTS = {
    401: "check OPENAI_API_KEY",
    403: "the key may not have access to this model",
    404: "check KG_LLM_MODEL and OPENAI_BASE_URL",
}


def refused(err: openai.APIStatusError) -> str:
    message = endpoint_message(err) or err.message
    hint = HINTS.get(err.status_code)
    return f"the model endpoint refused the request (HTTP {err.status_code}): {message}" + (
        f" ({hint})" if hint else ""
    )
