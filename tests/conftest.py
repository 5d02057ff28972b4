"""Shared fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Run async tests on asyncio only."""
    return "asyncio"


pytest_plugins = ["tests.fake_registry.plugin"]
