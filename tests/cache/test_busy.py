"""A busy or failing database never costs an answer: writes and reads are best effort."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from patchula.cache import Cache, CacheError, ReleaseItem
from patchula.cache import recovery as cache_recovery
from patchula.cache import store as cache_store
from patchula.cache.workers import Job, Worker, call
from patchula.http.fetcher import Fetcher, make_client
from tests.cache.base import column, entry, raw
from tests.fake_registry import FakeRegistry

pytestmark = pytest.mark.anyio

BUSY_MS = 200


@pytest.fixture
def path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache path whose connections wait 0.2 s for a lock instead of 5 s."""
    monkeypatch.setattr(cache_recovery, "BUSY_TIMEOUT_MS", BUSY_MS)
    return tmp_path / "cache.sqlite3"


@pytest.fixture
def holder(path: Path) -> Iterator[sqlite3.Connection]:
    """Another connection, ready to take the write lock (released when the test ends)."""
    Cache.open(path).close()
    with raw(path) as conn:
        yield conn
        if conn.in_transaction:
            conn.execute("ROLLBACK")


def busy_error() -> sqlite3.OperationalError:
    """The error SQLite raises when a lock stays taken past the busy timeout."""
    exc = sqlite3.OperationalError("database is locked")
    exc.sqlite_errorcode = sqlite3.SQLITE_BUSY
    exc.sqlite_errorname = "SQLITE_BUSY"
    return exc


async def busy_timeout(worker: Worker) -> int:
    """The worker connection's current busy timeout in milliseconds (asked in its thread)."""
    return await call(
        worker, Job(lambda conn: int(conn.execute("PRAGMA busy_timeout").fetchone()[0]))
    )


async def test_a_lock_held_all_run_costs_one_busy_timeout_not_one_per_write(
    path: Path, holder: sqlite3.Connection
) -> None:
    """1,000 puts under a write lock held throughout all return; only the first one waits."""
    async with Cache.open(path) as cache:
        holder.execute("BEGIN IMMEDIATE")
        # Waiting 0.2 s per write would take 200 s; the deadline only catches that.
        with anyio.fail_after(30):
            for i in range(1000):
                await cache.put_http(entry(f"k{i}"))
        assert (cache.stats.write_failures, cache.stats.stores) == (1000, 0)
        assert await busy_timeout(cache._writer) == 0  # later writes no longer wait
        [warning] = cache.warnings  # said once, not 1,000 times
        assert "SQLITE_BUSY" in warning
        assert "not all stored" in warning
        assert "do not wait for the lock" in warning
        holder.execute("ROLLBACK")
        await cache.put_http(entry("after"))  # writes resume once the lock is free
        assert await cache.get_http("after") == entry("after")
    assert column(path, "SELECT count(*) FROM http_entries") == 1


async def test_every_kind_of_write_is_best_effort(path: Path, holder: sqlite3.Connection) -> None:
    """Revalidation, deletion, merges and extraction puts under a lock return, counted."""
    async with Cache.open(path) as cache:
        await cache.put_http(entry("kept"))
        holder.execute("BEGIN IMMEDIATE")
        await cache.touch_http(
            "kept",
            fetched_at=2.0,
            expires_at=3.0,
            etag=None,
            last_modified=None,
            cache_control=None,
        )
        await cache.delete_http("kept")
        assert await cache.merge_releases("npm", "p", [ReleaseItem("1.0.0", 1.0, None)]) is False
        page = [ReleaseItem("0.9.0", 0.5, None)]
        assert await cache.merge_release_page("npm", "p", page, after="1.0.0") is False
        await cache.put_extraction("acme/api", "c0ffee", "cfg", b"record")
        assert cache.stats.write_failures == 5
        assert cache.stats.revalidated == 0
        assert len(cache.warnings) == 1
        holder.execute("ROLLBACK")
        assert await cache.get_http("kept") == entry("kept")  # the delete did not happen


async def test_access_times_wait_for_a_free_lock_instead_of_failing_a_job(
    path: Path, holder: sqlite3.Connection
) -> None:
    """A pre-job access flush that meets the lock is kept for later; the job still runs."""
    async with Cache.open(path) as cache:
        await cache.put_http(entry("read"))
        before = column(path, "SELECT access_clock FROM http_entries WHERE key = 'read'")
        assert await cache.get_http("read") == entry("read")  # an access time is pending
        holder.execute("BEGIN IMMEDIATE")
        await cache.put_http(entry("during"))  # its flush and its write both meet the lock
        assert cache.stats.write_failures == 1
        holder.execute("ROLLBACK")
        await cache.put_http(entry("after"))  # flushes the kept access time first
        after = column(path, "SELECT access_clock FROM http_entries WHERE key = 'read'")
    assert after > before


async def test_budget_eviction_that_meets_the_lock_keeps_the_stored_entry(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A put that stored its row but cannot evict is still a store, not a failure."""
    real_evict = cache_store.evict

    def busy_evict(*args: Any) -> tuple[int, int]:
        raise busy_error()

    async with Cache.open(path, budget_bytes=1) as cache:
        monkeypatch.setattr(cache_store, "evict", busy_evict)
        await cache.put_http(entry("big"))
        assert (cache.stats.stores, cache.stats.write_failures) == (1, 0)
        assert "SQLITE_BUSY" in cache.warnings[0]
        assert await cache.get_http("big") == entry("big")
        monkeypatch.setattr(cache_store, "evict", real_evict)


@pytest.mark.parametrize("many", [False, True], ids=["get_http", "get_http_many"])
async def test_a_refused_read_is_a_miss_with_a_warning(
    path: Path, monkeypatch: pytest.MonkeyPatch, *, many: bool
) -> None:
    """A read the database refuses (busy, I/O) is answered as misses, never raised."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise busy_error()

    async with Cache.open(path) as cache:
        await cache.put_http(entry("a"))
        monkeypatch.setattr(cache_store, "read_http", refuse)
        monkeypatch.setattr(cache_store, "read_http_many", refuse)
        for _ in range(3):
            if many:
                assert await cache.get_http_many(["a", "b"]) == {"a": None, "b": None}
            else:
                assert await cache.get_http("a") is None
        assert cache.stats.read_failures == 3
        assert cache.stats.misses == (6 if many else 3)
        [warning] = cache.warnings
        assert "could not read from the cache" in warning
        assert "SQLITE_BUSY" in warning
        # Every reader stops waiting for locks from its next job on.
        monkeypatch.undo()
        for _ in range(4):
            assert await cache.get_http("a") == entry("a")
        assert [await busy_timeout(reader) for reader in cache._readers] == [0] * 4


async def test_a_closed_handle_is_still_an_error(path: Path) -> None:
    """Using a closed handle is a programming error and raises CacheError."""
    cache = Cache.open(path)
    await cache.aclose()
    with pytest.raises(CacheError, match="closed"):
        await cache.put_http(entry())
    with pytest.raises(CacheError, match="closed"):
        await cache.get_http_many(["a"])


async def test_a_fetched_answer_survives_a_locked_cache(
    fake_registry: FakeRegistry, path: Path, holder: sqlite3.Connection
) -> None:
    """Through the fetcher: the registry's 200 is returned although the cache cannot store it."""
    fake_registry.npm.add("left-pad", {"1.0.0": None})
    url = f"{fake_registry.url('npm')}/left-pad"
    async with Cache.open(path) as cache, make_client() as client:
        fetcher = Fetcher(client, cache=cache)
        holder.execute("BEGIN IMMEDIATE")
        response = await fetcher(url, headers={"Accept": "application/json"})
        assert response.status == 200
        assert b"left-pad" in response.content
        assert cache.stats.write_failures == 1
        holder.execute("ROLLBACK")


# Tries to lock the whole database file the way a rollback-journal or exclusive-mode program
# would, reports whether it could, and keeps trying to hold it until killed.
EXCLUSIVE_CHILD = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=0.2)
conn.execute("PRAGMA locking_mode = EXCLUSIVE")
try:
    conn.execute("BEGIN EXCLUSIVE")
    conn.execute("INSERT INTO meta VALUES ('other', 1)")
    print("locked", flush=True)
except sqlite3.OperationalError as exc:
    print("refused", exc, flush=True)
time.sleep(30)
"""


async def test_an_exclusive_lock_cannot_stall_reads_of_an_open_cache(path: Path) -> None:
    """With the cache open in WAL mode another process cannot take the file exclusively.

    So reads keep being served without waiting (before the cache opens, such a lock makes the
    open fall back to memory, see test_recovery and the CLI tests).
    """
    async with Cache.open(path) as cache:
        await cache.put_http(entry("a"))
        async with await anyio.open_process(
            [sys.executable, "-c", EXCLUSIVE_CHILD, str(path)]
        ) as child:
            assert child.stdout is not None
            try:
                assert (await child.stdout.receive()).startswith(b"refused")
                with anyio.fail_after(5):
                    assert await cache.get_http("a") == entry("a")
                    await cache.put_http(entry("b"))
                assert (cache.stats.read_failures, cache.stats.write_failures) == (0, 0)
            finally:
                child.kill()


async def test_a_write_lock_held_at_open_leaves_the_file_readable(
    path: Path, holder: sqlite3.Connection
) -> None:
    """A WAL write lock held elsewhere at open: reads are served, writes wait for nobody."""
    async with Cache.open(path) as cache:
        await cache.put_http(entry("stored"))
    holder.execute("BEGIN IMMEDIATE")
    with anyio.fail_after(10):
        async with Cache.open(path) as cache:
            assert cache.path == path
            assert cache.fallback is None
            assert await cache.get_http("stored") == entry("stored")
            for i in range(100):
                await cache.put_http(entry(f"k{i}"))
            assert cache.stats.write_failures == 100
            [warning] = cache.warnings
            assert "another process holds its write lock" in warning
            holder.execute("ROLLBACK")
            await cache.put_http(entry("after"))  # stored once the lock is free
            assert await cache.get_http("after") == entry("after")
