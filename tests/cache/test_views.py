"""Catalog views in the engine: batch reads and writes, age-keeping upserts, damage, budget."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from patchula.cache import Cache, CatalogView, DatasourceViews
from patchula.cache import store as cache_store
from patchula.cache.schema import SCHEMA_VERSION
from tests.cache.base import column, entry, raw

pytestmark = pytest.mark.anyio


def view(
    key: str, *, fetched_at: float = 1_700_000_000.0, body: bytes | None = None
) -> CatalogView:
    """A view of package ``key`` on npm with ``body`` (default: a small document)."""
    return CatalogView(
        key=key,
        datasource="npm",
        package=key,
        representation="catalog-view-v1",
        body=body if body is not None else b'{"package": "%s"}' % key.encode(),
        fetched_at=fetched_at,
    )


async def test_many_views_are_written_and_read_back_in_one_job_each(tmp_path: Path) -> None:
    """600 views are stored in one writer job and read in one reader job, misses as ``None``."""
    path = tmp_path / "c.db"
    views = [view(f"p{i}", fetched_at=1_700_000_000.0 + i) for i in range(600)]
    async with Cache.open(path) as cache:
        writes = cache._writer.jobs_done
        assert await cache.put_views(views) == 600
        assert cache._writer.jobs_done - writes == 1
        reads = sum(r.jobs_done for r in cache._readers)
        found = await cache.get_views([*(v.key for v in views), "absent"])
        assert sum(r.jobs_done for r in cache._readers) - reads == 1
    assert found["absent"] is None
    assert found["p599"] == views[599]
    assert [found[v.key] for v in views] == views
    assert column(path, "SELECT count(*) FROM catalog_views") == 600
    assert SCHEMA_VERSION >= 3


async def test_an_older_catalog_never_replaces_a_newer_view(tmp_path: Path) -> None:
    """Same or later ``fetched_at`` replaces a view; an earlier one (a fallback) is ignored."""
    path = tmp_path / "c.db"
    async with Cache.open(path) as cache:
        await cache.put_views([view("a", fetched_at=2000.0, body=b"new")])
        assert await cache.put_views([view("a", fetched_at=1000.0, body=b"old")]) == 0
        stored = (await cache.get_views(["a"]))["a"]
        assert stored is not None
        assert (stored.body, stored.fetched_at) == (b"new", 2000.0)
        # Same fetch time (a reused view that gained publish dates): replaced.
        assert await cache.put_views([view("a", fetched_at=2000.0, body=b"dated")]) == 1
        stored = (await cache.get_views(["a"]))["a"]
        assert stored is not None
        assert stored.body == b"dated"
        assert cache.stats.view_stores == 2


async def test_a_damaged_view_row_is_a_miss_and_is_dropped(tmp_path: Path) -> None:
    """A row whose body does not decompress or whose value has the wrong type is a miss."""
    path = tmp_path / "c.db"
    async with Cache.open(path) as cache:
        await cache.put_views([view("a"), view("b"), view("c")])
    with raw(path) as conn:
        conn.execute("UPDATE catalog_views SET body = x'00112233' WHERE key = 'a'")
        conn.execute("UPDATE catalog_views SET fetched_at = 'soon' WHERE key = 'b'")
    async with Cache.open(path) as cache:
        found = await cache.get_views(["a", "b", "c"])
        assert (found["a"], found["b"]) == (None, None)
        assert found["c"] == view("c")
        assert cache.stats.corrupt_bodies == 2
        assert any("catalog view could not be read" in w for w in cache.warnings)
    assert column(path, "SELECT group_concat(key) FROM catalog_views") == "c"


async def test_views_count_in_the_budget_and_are_evicted_least_recently_used(
    tmp_path: Path,
) -> None:
    """Views and HTTP bodies share the budget; the least recently read row goes first."""
    path = tmp_path / "c.db"
    bodies = {name: os.urandom(4000) for name in ("v1", "v2", "h1")}
    size = len(cache_store.compress(bodies["v1"]))
    async with Cache.open(path, budget_bytes=3 * size) as cache:
        await cache.put_views([view("v1", body=bodies["v1"])])
        await cache.put_views([view("v2", body=bodies["v2"])])
        await cache.put_http(entry("h1", bodies["h1"]))
        assert cache.stats.bytes_stored == 3 * size
        assert (await cache.get_views(["v1"]))["v1"] is not None  # v1 now newer than v2
        await cache.put_http(entry("h2", os.urandom(4000)))  # forces a flush, then eviction
        assert cache.stats.evictions == 1
        found = await cache.get_views(["v1", "v2"])
    assert found["v1"] is not None
    assert found["v2"] is None
    assert column(path, "SELECT count(*) FROM http_entries") == 2


async def test_the_view_summary_counts_ages_and_bytes_per_datasource(tmp_path: Path) -> None:
    """``view_summary`` gives counts, oldest and newest fetch time and bytes per datasource."""
    path = tmp_path / "c.db"
    crate = CatalogView("k3", "crates", "serde", "catalog-view-v1", b"x" * 100, 500.0)
    async with Cache.open(path) as cache:
        assert cache.view_summary().datasources == {}
        await cache.put_views([view("a", fetched_at=100.0), view("b", fetched_at=300.0), crate])
        summary = cache.view_summary()
    npm_bytes = column(path, "SELECT sum(body_size) FROM catalog_views WHERE datasource = 'npm'")
    crate_bytes = column(path, "SELECT body_size FROM catalog_views WHERE key = 'k3'")
    assert summary.datasources == {
        "crates": DatasourceViews(1, 500.0, 500.0, crate_bytes),
        "npm": DatasourceViews(2, 100.0, 300.0, npm_bytes),
    }
    assert list(summary.datasources) == ["crates", "npm"]
    assert (summary.count, summary.bytes_stored) == (3, npm_bytes + crate_bytes)
