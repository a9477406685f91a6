"""Fixtures for agent tests: the scripted chat-completions server and an openai setup."""

from __future__ import annotations

import pytest
from django.test import Client

from kgreview.agents.adapters import INDEX_CACHE
from tests.agents.pages import client_for
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
    # Generous: a busy machine must not turn a normal answer into a timeout. The test of
    # the timeout itself sets a short one.
    settings.KG_LLM_TIMEOUT = 30.0
    settings.KG_LLM_MAX_RETRIES = 2
    settings.KG_LLM_VALIDATION_RETRIES = 2
    settings.KG_LLM_BACKOFF_BASE = 0.0
    settings.KG_LLM_BACKOFF_MAX = 0.01
    return fake_llm


# --- the Agents page's clients and a graph the heal agent has work in ---------------------


@pytest.fixture
def viewer(f) -> Client:
    return client_for(f, "viewer")


@pytest.fixture
def duplicates(f):
    """Two spellings of one concept, which the heal agent proposes to merge."""
    big = f.concept("Vector database")
    small = f.concept("Vector databases")
    for other in ("Embeddings", "ANN", "Metadata filtering"):
        f.edge(f.concept(other), big, "part_of")
    return big, small
