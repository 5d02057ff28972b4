"""Coalesced access times: reads take no write lock; the writer flushes them in one go."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from patchula.cache import Cache
from patchula.cache import store as cache_store
from tests.cache.base import entry, raw

pytestmark = pytest.mark.anyio


def clocks(conn: sqlite3.Connection) -> dict[str, int]:
    """Return the stored access clock of every key."""
    return dict(conn.execute("SELECT key, access_clock FROM http_entries").fetchall())


def data_version(conn: sqlite3.Connection) -> int:
    """Return ``PRAGMA data_version``: it changes when another connection commits."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


async def test_reads_alone_write_nothing(tmp_path: Path) -> None:
    """Any number of reads commits no transaction: access times wait in memory."""
    path = tmp_path / "cache.sqlite3"
    async with Cache.open(path) as cache:
        for key in "ab":
            await cache.put_http(entry(key))
        with raw(path) as observer:
            version, before = data_version(observer), clocks(observer)
            for _ in range(20):
                assert await cache.get_http("a") is not None
            assert await cache.releases("npm", "x") == []
            assert data_version(observer) == version
            assert clocks(observer) == before


async def test_access_is_flushed_in_one_transaction_before_the_next_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer stores every pending access time in one flush before its next job."""
    path = tmp_path / "cache.sqlite3"
    flushes: list[dict[str, int]] = []
    real_flush = cache_store.flush_access

    def recording_flush(conn: sqlite3.Connection, pending: dict[str, int]) -> None:
        flushes.append(dict(pending))
        real_flush(conn, pending)

    monkeypatch.setattr(cache_store, "flush_access", recording_flush)
    async with Cache.open(path) as cache:
        for key in "abcd":
            await cache.put_http(entry(key))
        with raw(path) as observer:
            before = clocks(observer)
        for key in "abc":
            await cache.get_http(key)
        assert flushes == []
        await cache.touch_http(
            "d", fetched_at=1.0, expires_at=2.0, etag=None, last_modified=None, cache_control=None
        )
        assert len(flushes) == 1
        assert set(flushes[0]) == {"a", "b", "c"}
        with raw(path) as observer:
            after = clocks(observer)
        assert all(after[key] > before[key] for key in "abcd")
        assert after["a"] < after["b"] < after["c"] < after["d"]  # order of access


async def test_access_is_flushed_at_close(tmp_path: Path) -> None:
    """Closing the last handle writes the access times still pending."""
    path = tmp_path / "cache.sqlite3"
    cache = Cache.open(path)
    for key in "ab":
        await cache.put_http(entry(key))
    await cache.get_http("a")
    await cache.aclose()
    with raw(path) as conn:
        after = clocks(conn)
    assert after["a"] > after["b"]


async def test_access_clock_continues_after_reopen(tmp_path: Path) -> None:
    """The access clock is monotonic across runs: a new write is newer than any stored one."""
    path = tmp_path / "cache.sqlite3"
    async with Cache.open(path) as cache:
        await cache.put_http(entry("old"))
        await cache.get_http("old")
    async with Cache.open(path) as cache:
        await cache.put_http(entry("new"))
    with raw(path) as conn:
        stored = clocks(conn)
    assert stored["new"] > stored["old"]


async def test_a_batch_read_stores_the_access_times_of_reads_one_by_one(tmp_path: Path) -> None:
    """``get_http_many`` ticks the access clock per hit, in key order, like ``get_http`` calls.

    Two copies of one file: one read in a batch (a miss among the keys), one key by key; the
    stored access clocks and the hit and miss counts are the same.
    """
    stored: list[dict[str, int]] = []
    counts: list[tuple[int, int]] = []
    for batch in (True, False):
        path = tmp_path / f"{batch}.sqlite3"
        async with Cache.open(path) as cache:
            for key in "dcba":
                await cache.put_http(entry(key))
            wanted = ["b", "missing", "d", "a"]
            if batch:
                found = await cache.get_http_many(wanted)
                assert [key for key, value in found.items() if value is None] == ["missing"]
            else:
                for key in wanted:
                    await cache.get_http(key)
            counts.append((cache.stats.hits, cache.stats.misses))
        with raw(path) as conn:
            stored.append(clocks(conn))
    assert stored[0] == stored[1]
    assert stored[0]["b"] < stored[0]["d"] < stored[0]["a"]
    assert counts == [(3, 1), (3, 1)]
