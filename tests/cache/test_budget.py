"""The byte budget: LRU eviction by access clock, on put and on open, and prune."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from patchula.cache import Cache, ReleaseItem
from patchula.cache import store as cache_store
from tests.cache.base import column, entry

pytestmark = pytest.mark.anyio

BODY = 4_000


def random_body() -> bytes:
    """Return incompressible bytes, so compressed sizes are predictable."""
    return os.urandom(BODY)


def blob_size(body: bytes) -> int:
    """Return the compressed size the cache stores for ``body``."""
    return len(cache_store.compress(body))


def keys(path: Path) -> set[str]:
    """Return the HTTP keys stored in the file."""
    with_rows = column(path, "SELECT group_concat(key) FROM http_entries")
    return set(with_rows.split(",")) if with_rows else set()


def test_default_budget_is_256_mib() -> None:
    """The default budget is 256 MiB of compressed HTTP body bytes."""
    assert Cache.open.__kwdefaults__ is not None
    assert Cache.open.__kwdefaults__["budget_bytes"] == 256 * 1024 * 1024


async def test_put_evicts_least_recently_accessed_rows(tmp_path: Path) -> None:
    """Over budget, whole rows go oldest access clock first; a read protects an old entry."""
    path = tmp_path / "cache.sqlite3"
    bodies = {name: random_body() for name in "abcd"}
    size = blob_size(bodies["a"])
    async with Cache.open(path, budget_bytes=3 * size) as cache:
        for name in "abc":
            await cache.put_http(entry(name, bodies[name]))
        assert await cache.get_http("a") is not None  # a is now more recent than b and c
        await cache.put_http(entry("d", bodies["d"]))
        assert keys(path) == {"a", "c", "d"}
        assert cache.stats.evictions == 1
        assert cache.stats.bytes_stored == 3 * size
        assert await cache.get_http("b") is None  # evicted with its validators
        await cache.put_http(entry("e", random_body()))
        assert keys(path) == {"a", "d", "e"}  # c was the least recently accessed


async def test_budget_counts_only_http_bodies(tmp_path: Path) -> None:
    """Release lists and extraction records are kept whatever the HTTP budget."""
    path = tmp_path / "cache.sqlite3"
    async with Cache.open(path, budget_bytes=0) as cache:
        await cache.merge_releases("npm", "left-pad", [ReleaseItem("1.3.0", 1.0, "sha")])
        await cache.put_extraction("acme/api", "c0ffee", "cfg", b"x" * 100_000)
        await cache.put_http(entry("a", random_body()))
        assert keys(path) == set()
        assert cache.stats.evictions == 1
        assert await cache.releases("npm", "left-pad") == [ReleaseItem("1.3.0", 1.0, "sha")]
        assert await cache.get_extraction("acme/api", "c0ffee", "cfg") == b"x" * 100_000


async def test_lower_budget_on_reopen_evicts_on_open(tmp_path: Path) -> None:
    """Opening with a budget below the stored bytes evicts least recent rows straight away."""
    path = tmp_path / "cache.sqlite3"
    bodies = {name: random_body() for name in "abc"}
    async with Cache.open(path) as cache:
        for name in "abc":
            await cache.put_http(entry(name, bodies[name]))
        assert await cache.get_http("a") is not None  # flushed at close: a is the newest
    reopened = Cache.open(path, budget_bytes=blob_size(bodies["a"]))
    try:
        assert reopened.stats.evictions == 2
        assert keys(path) == {"a"}
        assert reopened.stats.bytes_stored == blob_size(bodies["a"])
    finally:
        await reopened.aclose()


async def test_prune_vacuums_and_reports_bytes_freed(tmp_path: Path) -> None:
    """Pruning evicts to the budget, VACUUMs and returns how many bytes the database shrank."""
    path = tmp_path / "cache.sqlite3"
    async with Cache.open(path) as cache:
        for i in range(30):
            await cache.put_http(entry(f"k{i}", os.urandom(20_000)))
        for i in range(29):
            await cache.delete_http(f"k{i}")
    before = path.stat().st_size
    with Cache.open(path, budget_bytes=0) as cache:
        freed = cache.prune()
        assert freed > 25 * 20_000
        assert keys(path) == set()
    assert path.stat().st_size < before - 25 * 20_000


def test_prune_works_in_memory() -> None:
    """Pruning also works on the in-memory database and returns a byte count."""
    with Cache.open(None) as cache:
        assert cache.prune() >= 0


async def test_stores_under_the_budget_read_the_stored_total_rarely(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading the file's total scans every row: 200 small stores read it a few times, not 200.

    Once per store made a cold run of N lookups quadratic in N (issue 12).
    """
    reads = 0
    real = cache_store.stored_bytes

    def counting(conn: object) -> tuple[int, int]:
        nonlocal reads
        reads += 1
        return real(conn)  # type: ignore[arg-type]

    monkeypatch.setattr(cache_store, "stored_bytes", counting)
    size = blob_size(random_body())
    # 200 stores are 200 / (budget / 32 / size) = 4 budget checks past the one at open.
    budget = 200 * size * 32 // 4
    async with Cache.open(tmp_path / "cache.sqlite3", budget_bytes=budget) as cache:
        opened = reads
        for i in range(200):
            await cache.put_http(entry(f"k{i}", random_body()))
    assert opened == 2  # the totals read at open, then the budget check at open
    assert reads - opened == 4


async def test_what_another_run_stored_is_evicted_within_a_32nd_of_the_budget(
    tmp_path: Path,
) -> None:
    """Another run's bytes are not in this run's tally; the periodic check still catches them."""
    path = tmp_path / "cache.sqlite3"
    size = blob_size(random_body())
    budget = 64 * size
    async with (
        Cache.open(path, budget_bytes=budget) as ours,
        Cache.open(path, budget_bytes=budget) as theirs,
    ):
        for i in range(60):
            await theirs.put_http(entry(f"theirs-{i}", random_body()))
        for i in range(10):  # ours believes 10 rows are stored: under budget by its tally
            await ours.put_http(entry(f"ours-{i}", random_body()))
        stored = column(path, "SELECT total(body_size) FROM http_entries")
    assert ours.stats.evictions > 0
    assert float(stored) <= budget + budget / 32
