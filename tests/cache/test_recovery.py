"""Corruption quarantine and rebuild, in-memory fallback, and errors that are not corruption."""

from __future__ import annotations

import logging
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from patchula.cache import Cache, CacheUnavailable
from patchula.cache import recovery as cache_recovery
from patchula.clock import FixedClock
from tests.cache.base import column, damage_http_pages, entry, quarantined, raw

pytestmark = pytest.mark.anyio

SECRET = b"BODY-MARKER-never-in-warnings "


async def fill(path: Path, count: int = 20) -> None:
    """Create a closed cache at ``path`` holding ``count`` entries of incompressible bodies."""
    async with Cache.open(path) as cache:
        for i in range(count):
            await cache.put_http(entry(f"k{i}", SECRET + os.urandom(2_000)))


def truncate_half(path: Path) -> None:
    """Cut the file to half its size (a partial copy, a full disk)."""
    with path.open("r+b") as file:
        file.truncate(path.stat().st_size // 2)


def garbage_header(path: Path) -> None:
    """Overwrite the first 100 bytes (the SQLite header) with random bytes."""
    with path.open("r+b") as file:
        file.write(random.Random(7).randbytes(100))  # noqa: S311 - reproducible, not secret


def zero_index_cell_pointers(path: Path) -> None:
    """Zero the cell pointers of the HTTP key index root: quick_check reports, not raises."""
    with raw(path) as conn:
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_http_entries_1'"
        ).fetchone()[0]
    with path.open("r+b") as file:
        file.seek((root - 1) * size + 8)
        file.write(bytes(16))


def test_damaged_cell_pointers_fail_quick_check(tmp_path: Path) -> None:
    """Control for the case below: that damage makes quick_check return problems."""
    path = tmp_path / "cache.sqlite3"
    anyio.run(fill, path)
    zero_index_cell_pointers(path)
    with raw(path) as conn:
        assert conn.execute("PRAGMA quick_check").fetchone()[0] != "ok"


@pytest.mark.parametrize(
    "damage",
    [truncate_half, garbage_header, zero_index_cell_pointers],
    ids=["truncated", "header", "quick-check"],
)
async def test_corrupt_file_is_quarantined_and_rebuilt_on_open(
    tmp_path: Path, damage: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A damaged file fails its open checks, is moved aside intact, and a new cache works."""
    path = tmp_path / "cache.sqlite3"
    await fill(path)
    damage(path)
    damaged = path.read_bytes()
    caplog.set_level(logging.WARNING, logger="patchula.cache")
    async with Cache.open(path) as cache:
        assert [r.getMessage() for r in caplog.records] == cache.warnings  # logged too
        assert cache.path == path
        assert cache.stats.rebuilds == 1
        [kept] = quarantined(tmp_path)
        assert kept.read_bytes() == damaged  # kept for inspection, never deleted
        [warning] = cache.warnings
        assert str(path) in warning
        assert str(kept) in warning
        assert "corrupt" in warning
        assert await cache.get_http("k1") is None
        await cache.put_http(entry("new"))
        assert await cache.get_http("new") == entry("new")
    with raw(path) as conn:
        assert conn.execute("PRAGMA quick_check").fetchone() == ("ok",)


def test_quarantine_names_are_unique_and_take_the_sidecars(tmp_path: Path) -> None:
    """Quarantine moves file, -wal and -shm to <name>.corrupt-<UTC stamp>[-n], never overwriting."""
    path = tmp_path / "cache.sqlite3"
    now = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    for round_ in ("first", "second"):
        for suffix in ("", "-wal", "-shm"):
            path.with_name(path.name + suffix).write_text(round_ + suffix)
        cache_recovery.quarantine(path, now)
    stamp = "cache.sqlite3.corrupt-20250102T030405Z"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [stamp, stamp + "-wal", stamp + "-shm", stamp + "-1", stamp + "-1-wal", stamp + "-1-shm"]
    )
    assert (tmp_path / (stamp + "-wal")).read_text() == "first-wal"
    assert (tmp_path / (stamp + "-1")).read_text() == "second"


def test_quarantine_uses_the_injected_clock(tmp_path: Path) -> None:
    """The quarantine timestamp comes from the Cache's clock."""
    path = tmp_path / "cache.sqlite3"
    path.write_bytes(b"definitely not sqlite" * 10)
    clock = FixedClock(datetime(2030, 6, 7, 8, 9, 10, tzinfo=UTC))
    with Cache.open(path, clock=clock):
        assert [p.name for p in quarantined(tmp_path)] == ["cache.sqlite3.corrupt-20300607T080910Z"]


async def test_corruption_met_by_a_reader_rebuilds_and_retries_once(tmp_path: Path) -> None:
    """A damaged page met by a reader mid-run: readers off, rebuild, one clean retry (a miss)."""
    path = tmp_path / "cache.sqlite3"
    await fill(path)
    cache = Cache.open(path)
    damage_http_pages(path)
    assert await cache.get_http("k3") is None
    assert cache.stats.rebuilds == 1
    assert not cache._readers_enabled
    [kept, shm, wal] = quarantined(tmp_path)  # the file and its sidecars, side by side
    assert (wal.name, shm.name) == (kept.name + "-wal", kept.name + "-shm")
    assert not any("BODY-MARKER" in warning for warning in cache.warnings)
    await cache.put_http(entry("after"))
    assert await cache.get_http("after") == entry("after")
    other = cache.handle()  # the rebuild also keeps other handles off the old readers
    assert await other.get_http("after") == entry("after")
    await other.aclose()
    await cache.aclose()
    async with Cache.open(path) as reopened:
        assert reopened.warnings == []
        assert await reopened.get_http("after") == entry("after")


async def test_corruption_met_by_the_writer_rebuilds_and_retries_once(tmp_path: Path) -> None:
    """A damaged page met mid-run by a write: the writer rebuilds and the write succeeds."""
    path = tmp_path / "cache.sqlite3"
    await fill(path)
    async with Cache.open(path) as cache:
        damage_http_pages(path)
        await cache.put_http(entry("after"))
        assert cache.stats.rebuilds == 1
        assert await cache.get_http("after") == entry("after")
        assert await cache.get_http("k1") is None
    async with Cache.open(path) as reopened:
        assert reopened.warnings == []
        assert await reopened.get_http("after") == entry("after")


async def test_failed_quarantine_falls_back_to_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the corrupt file cannot be moved, the run continues on an in-memory database."""
    path = tmp_path / "cache.sqlite3"
    path.write_bytes(b"\x00garbage" * 100)

    def refuse(path: Path, now: datetime) -> Path:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cache_recovery, "quarantine", refuse)
    async with Cache.open(path) as cache:
        assert cache.path is None
        assert cache._readers == []  # the fallback is served by the writer connection
        [warning] = cache.warnings
        assert "in-memory" in warning
        assert "Permission denied" in warning
        await cache.put_http(entry())
        assert await cache.get_http(entry().key) == entry()
    assert path.read_bytes() == b"\x00garbage" * 100


async def test_failed_rebuild_falls_back_to_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the fresh database cannot be created after quarantine, the run uses memory."""
    path = tmp_path / "cache.sqlite3"
    path.write_bytes(b"\x00garbage" * 100)
    real_connect = cache_recovery.connect_writer
    calls: list[Path] = []

    def second_fails(target: Path) -> sqlite3.Connection:
        calls.append(target)
        if len(calls) > 1:
            raise CacheUnavailable("disk is read-only now")
        return real_connect(target)

    monkeypatch.setattr(cache_recovery, "connect_writer", second_fails)
    async with Cache.open(path) as cache:
        assert cache.path is None
        assert len(cache.warnings) == 2
        assert "in-memory" in cache.warnings[1]
        assert len(quarantined(tmp_path)) == 1
        await cache.put_http(entry())
        assert await cache.get_http(entry().key) == entry()


async def test_mid_run_corruption_with_failed_quarantine_continues_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Corruption met mid-run when quarantine fails: the call misses and the run goes on."""
    path = tmp_path / "cache.sqlite3"
    await fill(path)
    cache = Cache.open(path)

    def refuse(path: Path, now: datetime) -> Path:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(cache_recovery, "quarantine", refuse)
    damage_http_pages(path)
    assert await cache.get_http("k1") is None
    assert cache.path is None
    await cache.put_http(entry())
    assert await cache.get_http(entry().key) == entry()
    await cache.aclose()


def test_unwritable_directory_is_unavailable_not_corrupt(tmp_path: Path) -> None:
    """A directory that cannot be written raises CacheUnavailable naming it; nothing is moved.

    Root ignores directory modes, so then the directory is made impossible by a regular file.
    """
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # running as root: chmod has no effect
            blocker = tmp_path / "a-file"
            blocker.write_text("not a directory")
            target = blocker / "cache.sqlite3"
        else:
            target = locked / "cache.sqlite3"
        with pytest.raises(CacheUnavailable) as raised:
            Cache.open(target)
    finally:
        locked.chmod(0o700)
    assert str(target.parent) in str(raised.value)
    assert quarantined(tmp_path) == []
    assert quarantined(target.parent) == [] if target.parent.is_dir() else True


def test_read_only_file_is_unavailable_not_corrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database that can only be opened read-only raises CacheUnavailable and is kept."""
    path = tmp_path / "cache.sqlite3"
    Cache.open(path).close()
    before = path.read_bytes()
    path.chmod(0o400)
    if os.access(path, os.W_OK):  # running as root: open it read-only the way SQLite would
        real_connect = sqlite3.connect

        def read_only(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
            if str(database) == str(path):
                database, kwargs["uri"] = f"{path.as_uri()}?mode=ro", True
            conn: sqlite3.Connection = real_connect(database, *args, **kwargs)
            return conn

        monkeypatch.setattr(sqlite3, "connect", read_only)
    try:
        with pytest.raises(CacheUnavailable, match=r"readonly|read-only|READONLY"):
            Cache.open(path)
    finally:
        path.chmod(0o600)
    assert path.read_bytes() == before
    assert quarantined(tmp_path) == []


def test_a_directory_in_place_of_the_file_is_unavailable(tmp_path: Path) -> None:
    """A path that is a directory cannot be opened: CacheUnavailable, nothing quarantined."""
    path = tmp_path / "cache.sqlite3"
    path.mkdir()
    with pytest.raises(CacheUnavailable, match="SQLITE_CANTOPEN"):
        Cache.open(path)
    assert path.is_dir()
    assert quarantined(tmp_path) == []


def test_locked_file_at_open_is_busy_not_corrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file another process holds exclusively is reported busy and left alone."""
    monkeypatch.setattr(cache_recovery, "BUSY_TIMEOUT_MS", 50)
    path = tmp_path / "cache.sqlite3"
    with raw(path) as holder:
        holder.execute("CREATE TABLE other (x)")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("INSERT INTO other VALUES (1)")
        with pytest.raises(CacheUnavailable, match="SQLITE_BUSY"):
            Cache.open(path)
        holder.execute("ROLLBACK")
    assert quarantined(tmp_path) == []
    assert column(path, "SELECT count(*) FROM other") == 0


async def test_busy_during_a_write_is_not_corruption(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write lock held elsewhere loses that write (counted, warned), with no rebuild."""
    monkeypatch.setattr(cache_recovery, "BUSY_TIMEOUT_MS", 50)
    path = tmp_path / "cache.sqlite3"
    async with Cache.open(path) as cache:
        with raw(path) as holder:
            holder.execute("BEGIN IMMEDIATE")
            await cache.put_http(entry())  # returns normally: the entry is just not stored
            holder.execute("ROLLBACK")
        assert cache.stats.rebuilds == 0
        assert (cache.stats.write_failures, cache.stats.stores) == (1, 0)
        [warning] = cache.warnings
        assert "SQLITE_BUSY" in warning
        await cache.put_http(entry())
        assert await cache.get_http(entry().key) == entry()
    assert quarantined(tmp_path) == []


WAL_CHILD = """
import os, signal, sys
from pathlib import Path
import anyio
from patchula.cache import Cache, ReleaseItem
from tests.cache.base import entry

async def main():
    cache = Cache.open(Path(sys.argv[1]))
    await cache.put_http(entry("committed"))
    await cache.merge_releases("npm", "p", [ReleaseItem("1.0.0", 1.0, None)])
    os.kill(os.getpid(), signal.SIGKILL)

anyio.run(main)
"""


async def test_wal_left_by_a_killed_process_is_recovered(tmp_path: Path) -> None:
    """A process killed without closing leaves a -wal; the next open sees its committed data."""
    path = tmp_path / "cache.sqlite3"
    root = Path(__file__).parents[2]
    child = await anyio.run_process(
        [sys.executable, "-c", WAL_CHILD, str(path)], cwd=root, check=False
    )
    assert child.returncode == -signal.SIGKILL
    wal = path.with_name(path.name + "-wal")
    assert wal.stat().st_size > 0
    async with Cache.open(path) as cache:
        [warning] = cache.warnings
        assert "replayed" in warning
        assert "left by an unfinished run" in warning
        assert await cache.get_http("committed") == entry("committed")
        assert [r.version for r in await cache.releases("npm", "p")] == ["1.0.0"]


KILL_CHILD = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA synchronous = NORMAL")
blob = os.urandom(4096)
generation = conn.execute(
    "SELECT coalesce(max(access_clock), 0) FROM http_entries WHERE key LIKE 'kill-%'"
).fetchone()[0]
while True:
    generation += 1
    print("begin", generation, flush=True)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("DELETE FROM http_entries WHERE key LIKE 'kill-%'")
    for i in range({rows}):
        conn.execute(
            "INSERT INTO http_entries VALUES (?, 200, NULL, NULL, '[]', ?, 4096, 4096,"
            " 0, 0, NULL, 'raw', ?)",
            (f"kill-{generation}-{i}", blob, generation),
        )
    conn.execute("COMMIT")
    print("commit", generation, flush=True)
"""


def kill_rows(path: Path) -> tuple[int, int | None, int | None]:
    """Return (count, lowest generation, highest generation) of the child's rows."""
    with raw(path) as conn:
        found = conn.execute(
            "SELECT count(*), min(access_clock), max(access_clock) FROM http_entries"
            " WHERE key LIKE 'kill-%'"
        ).fetchone()
    return found[0], found[1], found[2]


def test_killing_a_writer_mid_transaction_never_corrupts(tmp_path: Path) -> None:
    """A writer SIGKILLed mid-transaction 20 times: it reopens clean with the last commit whole."""
    path = tmp_path / "cache.sqlite3"
    Cache.open(path).close()
    rows = 600  # ~2.4 MiB per transaction: more than the page cache, so it spills to the WAL
    rng = random.Random(2024)  # noqa: S311 - reproducible timing, not secret
    committed = mid_transaction = 0
    for _ in range(20):
        child = subprocess.Popen(  # noqa: S603 - our own interpreter and script
            [sys.executable, "-c", KILL_CHILD.replace("{rows}", str(rows)), str(path)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        assert child.stdout.readline().startswith("begin")
        time.sleep(rng.uniform(0.0, 0.08))
        child.kill()
        child.wait()
        lines = child.stdout.read().split("\n")[:-1]
        child.stdout.close()
        commits = [int(line.split()[1]) for line in lines if line.startswith("commit")]
        committed = max([committed, *commits])
        mid_transaction += not lines or lines[-1].startswith("begin")
        with Cache.open(path) as cache:
            # The child's log is this database's own: replayed (and said so), never moved.
            assert all("left by an unfinished run" in w for w in cache.warnings)
        assert column(path, "PRAGMA quick_check") == "ok"
        count, low, high = kill_rows(path)
        # Killed between COMMIT and its print, the next generation is also complete.
        assert (count, low) in {(rows, committed), (rows, committed + 1)} | (
            {(0, None)} if committed == 0 else set()
        )
        assert high == low
        committed = low or 0
    assert quarantined(tmp_path) == []
    assert committed > 0
    assert mid_transaction >= 5  # most kills landed inside a transaction
