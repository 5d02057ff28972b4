"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["tests.fake_registry.plugin"]


@pytest.fixture
def anyio_backend() -> str:
    """Run async tests on asyncio only."""
    return "asyncio"


@pytest.fixture(autouse=True)
def _isolated_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Give every test its own cache file and cache directory, never the user's."""
    root = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(root / "xdg"))
    monkeypatch.setenv("PATCHULA_CACHE", str(root / "cache.sqlite3"))
    return root / "cache.sqlite3"
