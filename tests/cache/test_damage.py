"""Damaged rows: one that cannot be read is a miss for its own key; repeated damage rebuilds."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from patchula.cache import Cache
from patchula.cache import recovery as cache_recovery
from tests.cache.base import column, entry, quarantined, raw

pytestmark = pytest.mark.anyio

KEYS = [f"k{i}" for i in range(10)]

# Each turns one value of a stored row into something its column must not hold; the first is
# the bit flip of the issue (a BLOB's serial type becomes TEXT: same bytes, not UTF-8).
DAMAGE = {
    "body-blob-to-text": "UPDATE http_entries SET body = CAST(body AS TEXT) WHERE key = ?",
    "etag-invalid-utf8": "UPDATE http_entries SET etag = CAST(x'ff00fe' AS TEXT) WHERE key = ?",
    "status-as-text": "UPDATE http_entries SET status = 'two hundred' WHERE key = ?",
    "headers-not-json": "UPDATE http_entries SET headers = x'7b7b' WHERE key = ?",
    "body-integer": "UPDATE http_entries SET body = 12345 WHERE key = ?",
}


async def fill(path: Path) -> None:
    """Create a closed cache holding one entry per key of ``KEYS``."""
    async with Cache.open(path) as cache:
        for key in KEYS:
            await cache.put_http(entry(key))


def damage(path: Path, sql: str, *keys: str) -> None:
    """Apply ``sql`` to each key's row; the file's structure stays intact."""
    with raw(path) as conn:
        for key in keys:
            conn.execute(sql, (key,))


def test_control_the_bit_flip_passes_integrity_check_and_breaks_a_plain_fetch(
    tmp_path: Path,
) -> None:
    """Control: the damage is invisible to integrity_check and fails a whole plain statement."""
    path = tmp_path / "cache.sqlite3"
    with raw(path) as conn:
        conn.execute("CREATE TABLE t (k TEXT, b BLOB)")
        conn.execute("INSERT INTO t VALUES ('a', x'28b52ffd'), ('b', x'28b52ffd')")
        conn.execute("UPDATE t SET b = CAST(b AS TEXT) WHERE k = 'b'")
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        with pytest.raises(sqlite3.OperationalError, match="Could not decode to UTF-8"):
            conn.execute("SELECT k, b FROM t").fetchall()


@pytest.mark.parametrize("sql", DAMAGE.values(), ids=DAMAGE.keys())
async def test_a_damaged_row_is_a_miss_for_its_key_only(tmp_path: Path, sql: str) -> None:
    """A batch read with one damaged row answers every other key; that row is dropped."""
    path = tmp_path / "cache.sqlite3"
    await fill(path)
    damage(path, sql, "k3")
    async with Cache.open(path) as cache:
        found = await cache.get_http_many(KEYS)
        assert found == {key: None if key == "k3" else entry(key) for key in KEYS}
        assert (cache.stats.corrupt_bodies, cache.stats.misses, cache.stats.hits) == (1, 1, 9)
        [warning] = cache.warnings
        assert "damaged row" in warning
        assert str(path) in warning
        assert await cache.get_http("k3") is None  # gone: its validators are never sent
        assert cache.stats.corrupt_bodies == 1
        await cache.put_http(entry("k3"))  # the refetched answer takes its place
        assert await cache.get_http("k3") == entry("k3")
        assert cache.stats.rebuilds == 0
    assert column(path, "SELECT value FROM meta WHERE name = 'damaged_rows'") == 1


async def test_a_damaged_row_read_alone_is_a_miss(tmp_path: Path) -> None:
    """``get_http`` on a row whose BLOB became TEXT returns None instead of raising."""
    path = tmp_path / "cache.sqlite3"
    await fill(path)
    damage(path, DAMAGE["body-blob-to-text"], "k1")
    async with Cache.open(path) as cache:
        assert await cache.get_http("k1") is None
        assert await cache.get_http("k2") == entry("k2")
        assert cache.stats.corrupt_bodies == 1
    assert column(path, "SELECT count(*) FROM http_entries WHERE key = 'k1'") == 0


async def test_three_damaged_rows_in_one_run_quarantine_and_rebuild(tmp_path: Path) -> None:
    """The third unreadable row in a run moves the file aside and rebuilds it, saying why."""
    path = tmp_path / "cache.sqlite3"
    await fill(path)
    damage(path, DAMAGE["body-blob-to-text"], "k1", "k2", "k3")
    async with Cache.open(path) as cache:
        found = await cache.get_http_many(KEYS)
        assert [key for key, value in found.items() if value is None] == ["k1", "k2", "k3"]
        assert cache.stats.rebuilds == 1
        assert len(quarantined(tmp_path)) >= 1
        assert any("3 unreadable rows in this run" in w for w in cache.warnings)
        await cache.put_http(entry("fresh"))
        assert await cache.get_http("fresh") == entry("fresh")
        assert await cache.get_http("k5") is None  # the rebuilt file starts empty
    with raw(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


async def test_damage_met_again_on_a_later_run_rebuilds(tmp_path: Path) -> None:
    """A file that lost a row to damage before and shows more on a later run is rebuilt."""
    path = tmp_path / "cache.sqlite3"
    await fill(path)
    damage(path, DAMAGE["body-blob-to-text"], "k1")
    async with Cache.open(path) as cache:
        assert await cache.get_http("k1") is None
        assert cache.stats.rebuilds == 0
    damage(path, DAMAGE["body-blob-to-text"], "k2")
    async with Cache.open(path) as cache:
        assert await cache.get_http("k2") is None
        assert cache.stats.rebuilds == 1
        assert any("again, after 1 dropped by earlier runs" in w for w in cache.warnings)
    assert len([p for p in quarantined(tmp_path) if not p.name.endswith(("-wal", "-shm"))]) == 1


async def test_damaged_release_and_extraction_rows_are_misses(tmp_path: Path) -> None:
    """Release and extraction reads skip a value of the wrong type instead of raising."""
    path = tmp_path / "cache.sqlite3"
    async with Cache.open(path) as cache:
        await cache.put_extraction("acme/api", "c1", "h", b"record")
    with raw(path) as conn:
        conn.execute("UPDATE extractions SET data = CAST(x'ff28' AS TEXT)")
        conn.execute("INSERT INTO release_heads VALUES ('npm', 'p', CAST(x'ff' AS TEXT), 1, NULL)")
        conn.execute("INSERT INTO releases VALUES ('npm', 'p', CAST(x'ff' AS TEXT), 0, 1, NULL)")
        conn.execute("INSERT INTO releases VALUES ('npm', 'p', '1.0.0', 1, 1, NULL)")
    async with Cache.open(path) as cache:
        assert await cache.get_extraction("acme/api", "c1", "h") is None
        assert await cache.release_heads("npm", "p") is None
        assert [item.version for item in await cache.releases("npm", "p")] == ["1.0.0"]


async def test_a_damaged_size_never_stops_a_store_or_quotes_stored_bytes(tmp_path: Path) -> None:
    """Replacing a row whose size became invalid text works; no message quotes stored text."""
    path = tmp_path / "cache.sqlite3"
    await fill(path)
    damage(
        path, "UPDATE http_entries SET body_size = CAST(x'ff53454352' AS TEXT) WHERE key = ?", "k1"
    )
    async with Cache.open(path) as cache:
        await cache.put_http(entry("k1", b"new body"))
        assert await cache.get_http("k1") == entry("k1", b"new body")
        assert cache.stats.write_failures == 0
        assert not any("SECR" in w for w in cache.warnings)


def test_an_undecodable_value_is_never_quoted_in_an_error() -> None:
    """Python's decode error quotes the stored text; the cache's error does not."""
    exc = sqlite3.OperationalError("Could not decode to UTF-8 column 'body' with text 'SECRET'")
    message = str(cache_recovery.unavailable(exc, Path("c.sqlite3")))
    assert "SECRET" not in message
    assert "not valid UTF-8" in message
