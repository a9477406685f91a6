"""Fixtures for agent tests: the scripted chat-completions server and an openai setup."""

from __future__ import annotations

import pytest

from kgreview.agents.adapters import INDEX_CACHE
from tests.construction.fake_llm import fake_llm

__all__ = ["fake_llm"]


@pytest.fixture(autouse=True)
def _fresh_concept_index():
    """The process-wide concept index must not carry names across tests' databases."""
    INDEX_CACHE.clear()
    yield
    INDEX_CACHE.clear()


@pytest.fixture
def openai_settings(settings, fake_llm):
    """Point the openai provider at the local fake server, with fast retries."""
    settings.KG_LLM_PROVIDER = "openai"
    settings.OPENAI_BASE_URL = fake_llm.base_url
    settings.OPENAI_API_KEY = "test-key"
    settings.KG_LLM_MODEL = "fake-model"
    settings.KG_LLM_TIMEOUT = 1.0
    settings.KG_LLM_MAX_RETRIES = 2
    settings.KG_LLM_VALIDATION_RETRIES = 2
    settings.KG_LLM_BACKOFF_BASE = 0.0
    settings.KG_LLM_BACKOFF_MAX = 0.01
    return fake_llm
