"""Fixtures for the construction loop's tests."""

from __future__ import annotations

from tests.construction.fake_llm import fake_llm

__all__ = ["fake_llm"]
