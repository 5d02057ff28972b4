"""Threads and dispatch: parallel readers, back-pressure, cancellation, handles, shutdown."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from patchula.cache import Cache, CacheError, HttpEntry
from patchula.cache import store as cache_store
from patchula.cache.workers import Job
from tests.cache.base import entry, raw, wait_until

pytestmark = pytest.mark.anyio


def block(cache: Cache) -> threading.Event:
    """Occupy the writer thread until the returned event is set."""
    gate = threading.Event()
    cache._writer.queue.put(Job(lambda _: gate.wait(10)))
    return gate


async def test_readers_decode_in_parallel_while_the_writer_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four readers decode at once, outside read transactions, while the writer writes."""
    path = tmp_path / "cache.sqlite3"
    bodies = {f"big{i}": os.urandom(512 * 1024) for i in range(4)}
    inside: set[str] = set()
    gate = threading.Event()
    real_decompress = cache_store.decompress

    def slow_decompress(blob: bytes, raw_size: int) -> bytes:
        inside.add(threading.current_thread().name)
        assert gate.wait(5)
        return real_decompress(blob, raw_size)

    async with Cache.open(path) as cache:
        for key, body in bodies.items():
            await cache.put_http(entry(key, body))
        await cache.put_http(entry("recent"))  # the WAL has frames the readers could pin
        monkeypatch.setattr(cache_store, "decompress", slow_decompress)
        found: dict[str, HttpEntry | None] = {}

        async def get(key: str) -> None:
            found[key] = await cache.get_http(key)

        async with anyio.create_task_group() as tasks:
            for key in bodies:
                tasks.start_soon(get, key)
            await wait_until(lambda: len(inside) == 4)  # four threads decode at once
            for i in range(5):
                await cache.put_http(entry(f"during{i}", os.urandom(1000)))
            with raw(path) as observer:
                observer.execute("PRAGMA busy_timeout = 0")
                # A reader still inside a read transaction would make this report busy (1).
                checkpoint = observer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            assert checkpoint == (0, 0, 0)
            gate.set()
        assert {key: item.body if item else None for key, item in found.items()} == bodies
        assert inside == {f"patchula-cache-reader-{i}" for i in range(4)}


async def test_an_open_read_transaction_would_block_the_checkpoint(tmp_path: Path) -> None:
    """Control for the test above: a connection pinning a snapshot makes TRUNCATE report busy."""
    path = tmp_path / "cache.sqlite3"
    async with Cache.open(path) as cache:
        await cache.put_http(entry("a"))
        with raw(path) as pinned, raw(path) as observer:
            pinned.execute("BEGIN")
            pinned.execute("SELECT count(*) FROM http_entries").fetchall()
            observer.execute("PRAGMA busy_timeout = 0")
            assert observer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 1
            pinned.execute("COMMIT")


async def test_reads_are_dispatched_round_robin(tmp_path: Path) -> None:
    """Reads (HTTP, releases, extractions) rotate over the four reader threads."""
    async with Cache.open(tmp_path / "cache.sqlite3") as cache:
        await cache.put_http(entry())
        before = [reader.jobs_done for reader in cache._readers]
        for _ in range(4):
            await cache.get_http(entry().key)
            await cache.releases("npm", "p")
            await cache.release_heads("npm", "p")
            await cache.get_extraction("acme/api", "c0ffee", "cfg")
        assert [r.jobs_done - b for r, b in zip(cache._readers, before, strict=True)] == [4] * 4
        assert cache._writer.jobs_done == 1  # the put; no read went through the writer


async def test_full_queue_applies_back_pressure_without_blocking_the_loop(
    tmp_path: Path,
) -> None:
    """With the writer busy, 200 writes queue at most 128 jobs, the loop runs, and all complete.

    Extraction records: HTTP puts share jobs (``test_puts_made_while_the_writer_is_busy_...``).
    """
    path = tmp_path / "cache.sqlite3"
    async with Cache.open(path) as cache:
        writer = cache._writer
        gate = block(cache)
        await wait_until(writer.queue.empty)  # the writer holds the blocking job
        async with anyio.create_task_group() as tasks:
            for i in range(200):
                tasks.start_soon(cache.put_extraction, "acme/api", f"c{i}", "cfg", b"x")
            await wait_until(writer.queue.full)
            with anyio.fail_after(1):
                await anyio.sleep(0.05)  # the loop is free while callers wait for room
            assert writer.queue.qsize() == writer.queue.maxsize == 128
            gate.set()
    with raw(path) as conn:
        assert conn.execute("SELECT count(*) FROM extractions").fetchone() == (200,)


async def test_puts_made_while_the_writer_is_busy_share_jobs_and_keep_every_entry_in_order(
    tmp_path: Path,
) -> None:
    """150 puts behind a busy writer travel as 3 jobs of at most 64; every entry is stored.

    Puts of one key are applied in call order (the last one wins), and each caller returns
    only after its entry is stored.
    """
    path = tmp_path / "cache.sqlite3"
    returned: list[str] = []

    async def put(key: str, body: bytes) -> None:
        await cache.put_http(entry(key, body))
        returned.append(key)

    async with Cache.open(path) as cache:
        writer = cache._writer
        gate = block(cache)
        await wait_until(writer.queue.empty)
        before = writer.jobs_done
        async with anyio.create_task_group() as tasks:
            for i in range(150):
                tasks.start_soon(put, f"k{i}", b"x")
            tasks.start_soon(put, "same", b"first")
            tasks.start_soon(put, "same", b"second")
            await wait_until(lambda: writer.queue.qsize() == 3)  # 64 + 64 + 24 entries
            await anyio.sleep(0.05)
            assert returned == []  # nobody returns before the writer stored its entry
            gate.set()
        assert writer.jobs_done - before == 1 + 3  # the blocking job, then the three batches
        assert len(returned) == 152
        assert cache.stats.stores == 152
        stored = await cache.get_http("same")
        assert stored is not None
        assert stored.body == b"second"
    with raw(path) as conn:
        assert conn.execute("SELECT count(*) FROM http_entries").fetchone() == (151,)
        keys = {row[0] for row in conn.execute("SELECT key FROM http_entries")}
        assert keys == {f"k{i}" for i in range(150)} | {"same"}


async def test_a_put_to_an_idle_writer_is_stored_at_once(tmp_path: Path) -> None:
    """Batching never delays a lone put: it is its own job, stored when the call returns."""
    async with Cache.open(tmp_path / "cache.sqlite3") as cache:
        before = cache._writer.jobs_done
        await cache.put_http(entry("alone", b"body"))
        assert cache._writer.jobs_done - before == 1
        await cache.put_http(entry("next", b"body"))
        assert cache._writer.jobs_done - before == 2  # a started batch takes no more entries
        assert cache.stats.stores == 2


async def test_a_cancelled_caller_still_completes_its_write(tmp_path: Path) -> None:
    """Cancelling callers after they submitted writes (queued or waiting for room) keeps them."""
    path = tmp_path / "cache.sqlite3"
    cache = Cache.open(path)
    writer = cache._writer
    gate = block(cache)
    await wait_until(writer.queue.empty)
    returned: list[str] = []

    async def put(key: str) -> None:
        await cache.put_http(entry(key))
        returned.append(key)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(put, "queued")
        await wait_until(lambda: writer.queue.qsize() == 1)
        for _ in range(127):
            writer.queue.put_nowait(Job(lambda _: None))
        tasks.start_soon(put, "waiting-for-room")
        await anyio.sleep(0.05)
        tasks.cancel_scope.cancel()
        # Free the writer only after the cancellation reached both callers.
        threading.Timer(0.1, gate.set).start()
    assert "queued" not in returned  # that caller saw the cancellation; its write still ran
    await cache.aclose()
    async with Cache.open(path) as reopened:
        assert await reopened.get_http("queued") == entry("queued")
        assert await reopened.get_http("waiting-for-room") == entry("waiting-for-room")


async def test_handles_share_workers_and_the_last_close_stops_them(tmp_path: Path) -> None:
    """Cloned handles share threads and stats; threads stop only when every handle closed."""
    cache = Cache.open(tmp_path / "cache.sqlite3")
    clone = cache.handle()
    await cache.put_http(entry())
    await cache.aclose()
    await cache.aclose()  # closing a handle twice is harmless
    assert cache._writer.is_alive()
    assert await clone.get_http(entry().key) == entry()
    assert clone.stats is cache.stats
    assert clone.stats.stores == 1
    with pytest.raises(CacheError, match="closed"):
        await cache.get_http(entry().key)
    await clone.aclose()
    assert not any(t.is_alive() for t in [cache._writer, *cache._readers])


async def test_close_drains_queued_jobs(tmp_path: Path) -> None:
    """Jobs already queued when the last handle closes still run before the threads stop."""
    path = tmp_path / "cache.sqlite3"
    cache = Cache.open(path)
    gate = block(cache)
    done: list[int] = []

    def append(i: int) -> Callable[[object], None]:
        return lambda _: done.append(i)

    for i in range(10):
        cache._writer.queue.put(Job(append(i)))
    threading.Timer(0.05, gate.set).start()
    cache.close()
    assert done == list(range(10))


async def test_reads_go_through_the_writer_without_readers(tmp_path: Path) -> None:
    """With readers=0 every read is served by the writer connection."""
    async with Cache.open(tmp_path / "cache.sqlite3", readers=0) as cache:
        await cache.put_http(entry())
        assert cache._readers == []
        assert await cache.get_http(entry().key) == entry()


def test_negative_sizes_are_refused(tmp_path: Path) -> None:
    """A negative budget or reader count is a ValueError."""
    with pytest.raises(ValueError, match="negative"):
        Cache.open(tmp_path / "c.sqlite3", budget_bytes=-1)


def test_sync_close_runs_outside_an_event_loop(tmp_path: Path) -> None:
    """close() works from plain synchronous code (the CLI's cache prune)."""
    cache = Cache.open(tmp_path / "cache.sqlite3")
    assert cache.prune() >= 0
    cache.close()
    with sqlite3.connect(tmp_path / "cache.sqlite3") as conn:
        assert conn.execute("PRAGMA quick_check").fetchone() == ("ok",)
    conn.close()
