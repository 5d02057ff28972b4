"""Pytest plugin: ``pytest_plugins = ["tests.fake_registry.plugin"]`` → ``fake_registry``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .registry import FakeRegistry


@pytest.fixture
def fake_registry() -> Iterator[FakeRegistry]:
    """A started fake registry with the bundled fixtures; a handler crash fails the test."""
    with FakeRegistry() as registry:
        yield registry
        errors = registry.errors
    if errors:
        pytest.fail("fake registry handler crashed:\n" + "\n".join(errors))
