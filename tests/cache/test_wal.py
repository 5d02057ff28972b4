"""A write-ahead log beside the cache: its own is replayed (and said so), a foreign one is not."""

from __future__ import annotations

import shutil
import signal
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from patchula.cache import Cache
from patchula.cache import wal as cache_wal
from patchula.clock import FixedClock
from tests.cache.base import entry, quarantined, raw

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).parents[2]
CLOCK = FixedClock(datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC))
STAMP = "cache.sqlite3.corrupt-20300102T030405Z"

# Stores one entry through the cache and dies without closing: its -wal stays behind.
CACHE_CHILD = """
import os, signal, sys
from pathlib import Path
from typing import Any
import anyio
from patchula.cache import Cache
from tests.cache.base import entry

async def main():
    cache = Cache.open(Path(sys.argv[1]))
    await cache.put_http(entry(sys.argv[2]))
    os.kill(os.getpid(), signal.SIGKILL)

anyio.run(main)
"""

# Writes one row with plain sqlite3 (no page-1 frame) at a page size, and dies.
RAW_CHILD = """
import os, signal, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute(f"PRAGMA page_size = {int(sys.argv[2])}")
conn.execute("PRAGMA journal_mode = WAL")
conn.execute("CREATE TABLE IF NOT EXISTS other (x)")
conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
conn.execute("INSERT INTO other VALUES (randomblob(100))")
os.kill(os.getpid(), signal.SIGKILL)
"""


# Opens the database, reads, and stays until killed.
HOLD_CHILD = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1])
conn.execute("SELECT 1 FROM meta").fetchall()
print("open", flush=True)
time.sleep(30)
"""


def killed(script: str, *args: str) -> None:
    """Run ``script`` in a child that SIGKILLs itself."""
    child = subprocess.run([sys.executable, "-c", script, *args], cwd=ROOT, check=False)  # noqa: S603 - our own interpreter and script
    assert child.returncode == -signal.SIGKILL


def wal_of(path: Path) -> Path:
    """The ``-wal`` beside ``path``."""
    return path.with_name(path.name + "-wal")


async def make_cache(path: Path, *keys: str) -> None:
    """Create a closed cache at ``path`` holding ``keys``."""
    async with Cache.open(path) as cache:
        for key in keys:
            await cache.put_http(entry(key))


async def test_a_wal_of_another_cache_is_moved_aside_and_not_replayed(tmp_path: Path) -> None:
    """Another cache's log placed beside this one is quarantined, kept byte for byte, unread."""
    path, other = tmp_path / "cache.sqlite3", tmp_path / "other" / "cache.sqlite3"
    await make_cache(path, "mine")
    await make_cache(other)
    killed(CACHE_CHILD, str(other), "foreign")
    shutil.copy(wal_of(other), wal_of(path))
    stale = wal_of(path).read_bytes()
    verdict = cache_wal.inspect(path)
    assert verdict is not None
    assert verdict.foreign == "it was written for another database"
    async with Cache.open(path, clock=CLOCK) as cache:
        assert await cache.get_http("foreign") is None  # the other database's row never shows
        assert await cache.get_http("mine") == entry("mine")
        [warning] = cache.warnings
        assert "not replayed" in warning
        assert "written for another database" in warning
        kept = tmp_path / f"{STAMP}-wal"
        assert str(kept) in warning
    assert kept.read_bytes() == stale  # moved, never deleted
    assert not (tmp_path / STAMP).exists()  # the database itself stays where it is


async def test_a_wal_with_another_page_size_is_moved_aside(tmp_path: Path) -> None:
    """A log whose page size differs from the database's cannot be its own."""
    path, other = tmp_path / "cache.sqlite3", tmp_path / "other.sqlite3"
    await make_cache(path, "mine")
    killed(RAW_CHILD, str(other), "8192")
    shutil.copy(wal_of(other), wal_of(path))
    async with Cache.open(path, clock=CLOCK) as cache:
        [warning] = cache.warnings
        assert "its page size is 8192 bytes, the database's 4096" in warning
        assert await cache.get_http("mine") == entry("mine")
    with raw(path) as conn:
        assert (
            conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'other'").fetchone()[0]
            == 0
        )


async def test_a_wal_without_its_database_is_moved_aside(tmp_path: Path) -> None:
    """A log beside a missing database file is kept aside, not silently deleted by SQLite."""
    path, other = tmp_path / "cache.sqlite3", tmp_path / "other" / "cache.sqlite3"
    await make_cache(other)
    killed(CACHE_CHILD, str(other), "foreign")
    shutil.copy(wal_of(other), wal_of(path))
    async with Cache.open(path, clock=CLOCK) as cache:
        assert "no database it could belong to" in cache.warnings[0]
        assert await cache.get_http("foreign") is None
    assert (tmp_path / f"{STAMP}-wal").exists()


async def test_its_own_wal_is_replayed_and_reported(tmp_path: Path) -> None:
    """This database's log left by a killed run is replayed, with its frame count, not moved."""
    path = tmp_path / "cache.sqlite3"
    await make_cache(path, "before")
    killed(CACHE_CHILD, str(path), "committed")
    verdict = cache_wal.inspect(path)
    assert verdict is not None
    assert (verdict.foreign, verdict.decided) == (None, True)  # tied to the file by page 1
    async with Cache.open(path, clock=CLOCK) as cache:
        assert await cache.get_http("committed") == entry("committed")
        [warning] = cache.warnings
        assert "replayed" in warning
        assert "frames of a write-ahead log left by an unfinished run" in warning
    assert quarantined(tmp_path) == []


def test_a_log_without_page_one_is_undecided(tmp_path: Path) -> None:
    """A log with no frame for page 1 cannot be tied to the file: it is judged undecided."""
    path = tmp_path / "plain.sqlite3"
    killed(RAW_CHILD, str(path), "4096")
    verdict = cache_wal.inspect(path)
    assert verdict is not None
    assert (verdict.foreign, verdict.decided) == (None, False)
    assert verdict.frames >= 1


def test_no_or_an_invalid_log_is_not_judged(tmp_path: Path) -> None:
    """No -wal, a short one, or one with a bad header is left to SQLite (nothing to replay)."""
    path = tmp_path / "cache.sqlite3"
    assert cache_wal.inspect(path) is None
    wal_of(path).write_bytes(b"short")
    assert cache_wal.inspect(path) is None
    wal_of(path).write_bytes(bytes(4096))
    assert cache_wal.inspect(path) is None


def test_a_database_open_in_another_process_is_in_use(tmp_path: Path) -> None:
    """The -shm dead-man switch tells a live database from a left-over one."""
    path = tmp_path / "cache.sqlite3"
    Cache.open(path).close()
    assert not cache_wal.in_use(path)  # no -shm after a clean close
    child = subprocess.Popen(  # noqa: S603 - our own interpreter and script
        [
            sys.executable,
            "-c",
            HOLD_CHILD,
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "open"
        assert cache_wal.in_use(path)
    finally:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    assert not cache_wal.in_use(path)  # the kill released its lock; the -shm stays behind


async def test_a_damaged_database_header_is_not_judged_against_its_log(tmp_path: Path) -> None:
    """A file whose header is damaged is not judged by it: its own log is never moved away.

    Here the log holds page 1, so SQLite reads the header from it and the file opens whole.
    """
    path = tmp_path / "cache.sqlite3"
    await make_cache(path, "before")
    killed(CACHE_CHILD, str(path), "committed")
    with path.open("r+b") as file:
        file.write(b"\x00not a database header" * 4)
    assert cache_wal.inspect(path) is None
    async with Cache.open(path, clock=CLOCK) as cache:
        assert await cache.get_http("committed") == entry("committed")
        assert await cache.get_http("before") == entry("before")
    assert quarantined(tmp_path) == []


# Writes to a cache database with plain sqlite3 (no identity stamp, so no page-1 frame).
PLAIN_WRITER_CHILD = """
import os, signal, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("INSERT INTO meta VALUES ('plain', 1)")
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize(
    ("child", "check"),
    [(CACHE_CHILD, "PRAGMA quick_check"), (PLAIN_WRITER_CHILD, "PRAGMA integrity_check")],
    ids=["tied-to-the-file", "undecided"],
)
async def test_a_log_that_cannot_be_tied_to_the_file_gets_a_full_integrity_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, child: str, check: str
) -> None:
    """An undecided log is replayed and then checked in full; a log of this file only quickly."""
    path = tmp_path / "cache.sqlite3"
    await make_cache(path)
    killed(child, str(path), "committed")
    statements: list[str] = []
    real_connect = sqlite3.connect

    def tracing(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn: sqlite3.Connection = real_connect(*args, **kwargs)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(sqlite3, "connect", tracing)
    async with Cache.open(path) as cache:
        assert "replayed" in cache.warnings[0]
    other = {"PRAGMA quick_check", "PRAGMA integrity_check"} - {check}
    assert check in statements
    assert not other & set(statements)


async def test_another_caches_log_beside_a_file_without_identity_is_kept_and_not_replayed(
    tmp_path: Path,
) -> None:
    """The tester's case: two real caches, the other's killed run's log copied beside this one.

    This file has no identity in its header (a cache from before identities), so the log was
    judged undecided and replayed: the other cache's pages silently replaced this one's rows
    (or damaged the file, which was then rebuilt after the close copied the log into it and
    deleted it). A file is now stamped in its header at once, so a log carrying an identity
    beside a file without one is another cache's.
    """
    path, other = tmp_path / "victim.db", tmp_path / "other.db"
    await make_cache(path, "mine", "also-mine")
    with raw(path) as conn:
        conn.execute("PRAGMA application_id = 0")  # a cache from before identities
    original = path.stat().st_size
    await make_cache(other, "theirs")
    killed(CACHE_CHILD, str(other), "foreign")
    shutil.copy(wal_of(other), wal_of(path))
    stale = wal_of(path).read_bytes()
    async with Cache.open(path, clock=CLOCK) as cache:
        assert await cache.get_http("mine") == entry("mine")  # the cache survived
        assert await cache.get_http("also-mine") == entry("also-mine")
        assert await cache.get_http("foreign") is None
        assert await cache.get_http("theirs") is None
        assert cache.stats.rebuilds == 0
        [warning] = cache.warnings
        assert "not replayed (it was written for another cache" in warning
        kept = tmp_path / f"victim.db.corrupt-{STAMP.rsplit('-', 1)[1]}-wal"
        assert str(kept) in warning
    assert kept.read_bytes() == stale  # kept byte for byte, never checkpointed or deleted
    assert not kept.with_name(kept.name.removesuffix("-wal")).exists()  # the file stays
    assert path.stat().st_size == original  # no foreign page was copied into it
    assert cache_wal.inspect(path) is None
    with raw(path) as conn:  # stamped in the header itself by that open
        assert conn.execute("PRAGMA application_id").fetchone()[0] != 0


async def test_an_older_cache_is_stamped_in_its_header_at_once(tmp_path: Path) -> None:
    """The first open of a cache without an identity checkpoints its stamp into the header.

    So a run killed right after that open leaves a log tied to the file, never one that a
    later run would take for another cache's.
    """
    path = tmp_path / "cache.sqlite3"
    await make_cache(path, "before")
    with raw(path) as conn:
        conn.execute("PRAGMA application_id = 0")
    killed(CACHE_CHILD, str(path), "committed")
    with path.open("rb") as file:
        header = file.read(100)
    assert header[68:72] != bytes(4)
    verdict = cache_wal.inspect(path)
    assert verdict is not None
    assert (verdict.foreign, verdict.decided) == (None, True)
    async with Cache.open(path, clock=CLOCK) as cache:
        assert await cache.get_http("committed") == entry("committed")
        assert await cache.get_http("before") == entry("before")
        assert "replayed" in cache.warnings[0]
    assert quarantined(tmp_path) == []


async def test_an_undecided_log_that_damages_the_file_is_kept_aside(tmp_path: Path) -> None:
    """A log that cannot be tied to the file and breaks it is moved aside; the cache is kept.

    Another SQLite database's log of the same page size has no page-1 frame here. Replaying it
    read-write and checking afterwards copied it into the file on close, deleted it, and then
    quarantined the damaged file: the whole cache lost. The trial runs read-only now.
    """
    path, other = tmp_path / "victim.db", tmp_path / "other.sqlite3"
    await make_cache(path, "mine")
    original = path.read_bytes()
    killed(RAW_CHILD, str(other), "4096")
    shutil.copy(wal_of(other), wal_of(path))
    stale = wal_of(path).read_bytes()
    verdict = cache_wal.inspect(path)
    assert verdict is not None
    assert (verdict.foreign, verdict.decided) == (None, False)
    async with Cache.open(path, clock=CLOCK) as cache:
        assert await cache.get_http("mine") == entry("mine")
        assert cache.stats.rebuilds == 0
        [warning] = cache.warnings
        assert "not replayed (it could not be tied to the database" in warning
        assert "fails integrity_check" in warning
        kept = tmp_path / f"victim.db.corrupt-{STAMP.rsplit('-', 1)[1]}-wal"
        assert str(kept) in warning
    assert kept.read_bytes() == stale
    assert path.stat().st_size == len(original)  # no page of the log was copied into the file
    with raw(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
