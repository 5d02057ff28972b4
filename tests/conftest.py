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


# Where credentials and registry choices come from (patchula.credentials): never the user's.
_CREDENTIAL_VARIABLES = (
    "NPM_CONFIG_USERCONFIG",
    "npm_config_userconfig",
    "NPM_CONFIG_REGISTRY",
    "npm_config_registry",
    "PIP_INDEX_URL",
    "PIP_CONFIG_FILE",
    "NETRC",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_API_URL",
    "XDG_CONFIG_HOME",
    "DOCKER_CONFIG",
    "CARGO_HOME",
)


@pytest.fixture(autouse=True)
def _isolated_credentials(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Give every test an empty home: no ~/.npmrc, ~/.netrc, pip.conf or tokens of the user."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in _CREDENTIAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("patchula.credentials.PIP_GLOBAL_DIR", home / "etc")
    return home
