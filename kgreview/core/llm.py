"""The OpenAI-compatible endpoint as the settings configure it, for every model client
(the extractor, the question planner and critic): one place reads ``KG_LLM_*``."""

from __future__ import annotations

from typing import Any

from django.conf import settings


def client_settings() -> dict[str, Any]:
    """Keyword arguments for ``construction.llm.chat.ChatClient`` and its subclasses."""
    return {
        "api_key": settings.OPENAI_API_KEY,
        "base_url": settings.OPENAI_BASE_URL or None,
        "model": settings.KG_LLM_MODEL,
        "timeout": settings.KG_LLM_TIMEOUT,
        "max_retries": settings.KG_LLM_MAX_RETRIES,
        "validation_retries": settings.KG_LLM_VALIDATION_RETRIES,
        "json_mode": settings.KG_LLM_JSON_MODE,
        "backoff_base": settings.KG_LLM_BACKOFF_BASE,
        "backoff_max": settings.KG_LLM_BACKOFF_MAX,
    }
