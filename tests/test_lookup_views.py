"""``scan`` with catalog views in process: a fallback to older data keeps a newer view's age."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from patchula.cache import Cache
from patchula.clock import FixedClock
from patchula.lookup import _matches
from patchula.models import Derive, FetchResponse
from patchula.scan import ScanResult, scan
from patchula.settings import Settings

FETCHED = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class StampedFetch:
    """An npm registry whose answers carry ``fetched_at`` (a stored answer: an older time)."""

    def __init__(self, fetched_at: datetime) -> None:
        self.fetched_at = fetched_at
        self.calls: Counter[str] = Counter()

    async def __call__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,  # noqa: ARG002 - the Fetch protocol
        representation: str = "raw",  # noqa: ARG002 - no cache here
        derive: Derive | None = None,
    ) -> FetchResponse:
        """Answer ``left-pad`` with two old releases."""
        self.calls[url] += 1
        await anyio.lowlevel.checkpoint()
        body = {
            "name": "left-pad",
            "dist-tags": {"latest": "1.1.0"},
            "versions": {"1.0.0": {}, "1.1.0": {}},
            "time": {"1.0.0": "2025-01-01T00:00:00Z", "1.1.0": "2025-02-01T00:00:00Z"},
        }
        content = json.dumps(body).encode()
        if derive is not None:
            content = derive(content)
        return FetchResponse(200, url, (), content, self.fetched_at)


def _scan(
    repo: Path, cache: Cache, fetch: StampedFetch, now: datetime, **more: object
) -> ScanResult:
    settings = Settings.model_validate(
        {"registries": {"npm": "http://npm.test"}, "min_release_age": "3d", **more}
    )
    return anyio.run(
        lambda: scan([str(repo)], settings, fetch, FixedClock(now), views=cache.handle())
    )


def _catalog(result: ScanResult) -> tuple[datetime, bool]:
    (row,) = result.repos[0].rows
    assert row.catalog is not None
    return row.catalog.fetched_at, row.catalog.reused


def test_a_catalog_from_older_data_never_resets_a_newer_views_age(tmp_path: Path) -> None:
    """A rechecked lookup answered with older data leaves the newer view; later runs reuse it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text('{"dependencies": {"left-pad": "1.0.0"}}')
    cache = Cache.open(tmp_path / "c.db")
    try:
        fresh = StampedFetch(FETCHED)
        assert _catalog(_scan(repo, cache, fresh, FETCHED)) == (FETCHED, False)
        older = StampedFetch(FETCHED - timedelta(days=2))  # e.g. a quota fallback's stored answer
        later = FETCHED + timedelta(hours=2)
        rechecked = _scan(repo, cache, older, later, recheck=["*"])
        assert _catalog(rechecked) == (FETCHED - timedelta(days=2), False)
        assert sum(older.calls.values()) == 1
        reused = _scan(repo, cache, older, later)
        assert _catalog(reused) == (FETCHED, True)
        assert reused.view_hits == 1
        assert sum(older.calls.values()) == 1  # no request
    finally:
        cache.close()


def test_no_view_is_read_or_written_without_a_cache_or_a_wait(tmp_path: Path) -> None:
    """Zero wait: the second run asks again and nothing is stored."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text('{"dependencies": {"left-pad": "1.0.0"}}')
    cache = Cache.open(tmp_path / "c.db")
    try:
        fetch = StampedFetch(FETCHED)
        _scan(repo, cache, fetch, FETCHED, min_release_age="0")
        result = _scan(repo, cache, fetch, FETCHED + timedelta(minutes=5), min_release_age="0")
        assert _catalog(result) == (FETCHED, False)
        assert sum(fetch.calls.values()) == 2
        assert cache.view_summary().count == 0
    finally:
        cache.close()


@pytest.mark.parametrize(
    ("pattern", "name", "datasource", "expected"),
    [
        ("Requests", "requests", "pypi", True),  # PEP 503: case folded
        ("zope_interface", "zope.interface", "pypi", True),  # and -_. runs are one "-"
        ("Flask-*", "flask_login", "pypi", True),
        ("Serde", "serde", "crates", True),
        ("Actions/Checkout", "actions/checkout", "github-tags", True),
        ("React", "react", "npm", False),  # npm names are case-sensitive
        ("@scope/*", "@scope/a", "npm", True),
        ("pkg-1*", "pkg-2", "npm", False),
    ],
)
def test_recheck_patterns_fold_names_where_the_registry_does(
    pattern: str, name: str, datasource: str, *, expected: bool
) -> None:
    """``--recheck Requests`` names PyPI's ``requests``; npm's names keep their case."""
    assert _matches(pattern, name, datasource) is expected
