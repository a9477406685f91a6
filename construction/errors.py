"""One error tree for the construction loop."""

from __future__ import annotations

from .types import LLMUsage


class ConstructionError(Exception):
    """Base of every error the loop raises on purpose."""


class ExtractionFailed(ConstructionError):
    """READ could not produce an extraction for a source; nothing is written for it."""


class LLMError(ExtractionFailed):
    """The language model could not be used. ``usage`` counts the calls it took to find
    that out, so a caller that answers in words instead can still report them."""

    def __init__(self, *args: object, usage: LLMUsage | None = None) -> None:
        super().__init__(*args)
        self.usage = usage if usage is not None else LLMUsage()


class LLMTransientError(LLMError):
    """Rate limit, server error or timeout that outlived the retries."""


class LLMConfigurationError(LLMError):
    """Missing key, unreachable endpoint, unknown model: retrying will not help."""


class LLMAnswerInvalid(LLMError):
    """The model's answers stayed invalid after every validation retry."""
