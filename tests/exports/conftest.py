"""Fixtures of the export tests."""

from __future__ import annotations

import pytest

from tests.exports.support import Built, build


@pytest.fixture
def graph(f) -> Built:
    """Five concepts, four edges as of now (one parallel, one symmetric), one retired."""
    return build(f)
