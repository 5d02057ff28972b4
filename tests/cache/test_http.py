"""HTTP entries: compressed storage, 304 metadata updates, deletion, damaged bodies."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest
import zstandard

from patchula.cache import Cache, HttpEntry
from patchula.cache import store as cache_store
from tests.cache.base import column, entry, raw

pytestmark = pytest.mark.anyio

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """A cache file in a fresh directory."""
    return tmp_path / "cache.sqlite3"


def body_blob(path: Path, key: str) -> bytes | None:
    """Return the stored (compressed) body column of ``key``."""
    found = column(path, "SELECT body FROM http_entries WHERE key = ?", key)
    return None if found is None else bytes(found)


async def test_roundtrip_returns_the_same_entry(path: Path) -> None:
    """A stored entry comes back equal: status, validators, headers, body, times and hints."""
    original = entry()
    async with Cache.open(path) as cache:
        await cache.put_http(original)
        assert await cache.get_http(original.key) == original
        assert cache.stats.hits == 1
        assert cache.stats.stores == 1


async def test_body_is_stored_zstd_level_3(path: Path) -> None:
    """The body column holds a Zstandard level-3 frame, smaller than the body it decodes to."""
    original = entry()
    async with Cache.open(path) as cache:
        await cache.put_http(original)
        stored = body_blob(path, original.key)
        assert stored is not None
        assert stored.startswith(ZSTD_MAGIC)
        assert len(stored) < len(original.body) / 5
        level3 = zstandard.ZstdCompressor(level=3, write_checksum=True).compress(original.body)
        assert stored == level3
        assert zstandard.ZstdDecompressor().decompress(stored) == original.body
        assert cache.stats.bytes_stored == len(stored)


async def test_missing_key_is_a_miss(path: Path) -> None:
    """An unknown key returns None and counts a miss."""
    async with Cache.open(path) as cache:
        assert await cache.get_http("nothing") is None
        assert cache.stats.misses == 1


@pytest.mark.parametrize("status", [199, 304, 404, 500])
async def test_only_success_statuses_are_stored(path: Path, status: int) -> None:
    """put_http refuses anything but a 2xx with ValueError and stores nothing."""
    async with Cache.open(path) as cache:
        with pytest.raises(ValueError, match="2xx"):
            await cache.put_http(entry(status=status))
        assert await cache.get_http(entry().key) is None


async def test_put_replaces_an_entry(path: Path) -> None:
    """A second put of a key replaces body and validators, and the byte count follows."""
    async with Cache.open(path) as cache:
        await cache.put_http(entry(body=b"a" * 10_000))
        await cache.put_http(entry(body=b"b" * 20, etag='"new"'))
        found = await cache.get_http(entry().key)
        assert found is not None
        assert (found.body, found.etag) == (b"b" * 20, '"new"')
        assert cache.stats.bytes_stored == len(body_blob(path, entry().key) or b"")


async def test_put_is_transactional(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A put failing after its insert leaves no row and no counted bytes, and does not raise."""
    real_write = cache_store.write_http

    def insert_then_fail(*args: Any) -> int:
        real_write(*args)
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(cache_store, "write_http", insert_then_fail)
    async with Cache.open(path) as cache:
        await cache.put_http(entry())  # best effort: the caller's answer is not lost
        assert column(path, "SELECT count(*) FROM http_entries") == 0
        assert (cache.stats.bytes_stored, cache.stats.stores) == (0, 0)
        assert cache.stats.write_failures == 1
        [warning] = cache.warnings
        assert "disk I/O error" in warning


async def test_representations_are_separate_namespaces(path: Path) -> None:
    """Keys that differ only in representation keep separate bodies and validators."""
    url = "GET|https://registry.npmjs.org/left-pad"
    raw_entry = entry(f"raw|{url}", b"raw body", etag='"raw"', representation="raw")
    compact = entry(f"npm-packument-v1|{url}", b"compact", etag='"compact"')
    async with Cache.open(path) as cache:
        await cache.put_http(raw_entry)
        await cache.put_http(compact)
        await cache.delete_http(raw_entry.key)
        assert await cache.get_http(compact.key) == compact
        assert await cache.get_http(raw_entry.key) is None


async def test_expired_entries_keep_their_validators(path: Path) -> None:
    """Expiry does not discard validators: a stale entry is returned with ETag and date."""
    stale = entry(fetched_at=10.0, expires_at=20.0)
    async with Cache.open(path) as cache:
        await cache.put_http(stale)
        found = await cache.get_http(stale.key)
        assert found is not None
        assert (found.etag, found.last_modified) == (stale.etag, stale.last_modified)


async def test_touch_updates_metadata_only(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 304 touch changes times and header values; the body blob stays byte-identical."""
    original = entry()
    async with Cache.open(path) as cache:
        await cache.put_http(original)
        before = body_blob(path, original.key)

        def no_encoding(data: bytes) -> bytes:
            raise AssertionError

        monkeypatch.setattr(cache_store, "compress", no_encoding)
        await cache.touch_http(
            original.key,
            fetched_at=2_000_000_000.0,
            expires_at=2_000_000_600.0,
            etag=None,
            last_modified="Thu, 02 Jan 2025 00:00:00 GMT",
            cache_control="max-age=600",
        )
        assert body_blob(path, original.key) == before
        found = await cache.get_http(original.key)
        assert found is not None
        assert (found.fetched_at, found.expires_at) == (2_000_000_000.0, 2_000_000_600.0)
        assert found.etag == original.etag  # a 304 without ETag keeps the stored one
        assert found.last_modified == "Thu, 02 Jan 2025 00:00:00 GMT"
        assert found.cache_control == "max-age=600"
        assert found.body == original.body
        assert cache.stats.revalidated == 1


async def test_touch_of_a_missing_key_creates_nothing(path: Path) -> None:
    """Touching a key that is not stored leaves it missing and counts no revalidation."""
    async with Cache.open(path) as cache:
        await cache.touch_http(
            "gone",
            fetched_at=1.0,
            expires_at=2.0,
            etag='"x"',
            last_modified=None,
            cache_control=None,
        )
        assert await cache.get_http("gone") is None
        assert cache.stats.revalidated == 0


async def test_delete_removes_body_and_validators(path: Path) -> None:
    """delete_http (no-store) removes the whole row, so no validator is ever sent again."""
    original = entry()
    async with Cache.open(path) as cache:
        await cache.put_http(original)
        await cache.delete_http(original.key)
        assert column(path, "SELECT count(*) FROM http_entries") == 0
        assert await cache.get_http(original.key) is None
        assert cache.stats.bytes_stored == 0


def flip_middle_byte(blob: bytes) -> bytes:
    """Return ``blob`` with one payload byte inverted (the frame checksum then fails)."""
    middle = len(blob) // 2
    return blob[:middle] + bytes([blob[middle] ^ 0xFF]) + blob[middle + 1 :]


@pytest.mark.parametrize(
    "damage",
    [flip_middle_byte, lambda blob: blob[: len(blob) // 2], lambda _: b"not a zstd frame"],
    ids=["flipped-byte", "truncated", "not-zstd"],
)
async def test_corrupt_body_is_a_counted_miss_and_dropped(
    path: Path, damage: object, caplog: pytest.LogCaptureFixture
) -> None:
    """A body that fails to decompress is a miss, is counted, and its row (validators) is gone."""
    assert callable(damage)
    secret = b"SECRET-BODY-CONTENT " * 200
    original = entry(body=secret)
    caplog.set_level(logging.DEBUG, logger="patchula.cache")
    async with Cache.open(path) as cache:
        await cache.put_http(original)
        blob = body_blob(path, original.key)
        with raw(path) as conn:
            conn.execute("UPDATE http_entries SET body = ?", (damage(blob),))
        assert await cache.get_http(original.key) is None
        assert (cache.stats.corrupt_bodies, cache.stats.misses) == (1, 1)
        assert column(path, "SELECT count(*) FROM http_entries") == 0
        assert cache.stats.bytes_stored == 0
        assert "SECRET" not in caplog.text
        assert not any("SECRET" in warning for warning in cache.warnings)
        # The next successful fetch replaces it.
        await cache.put_http(original)
        assert await cache.get_http(original.key) == original


async def test_a_corrupt_row_is_not_deleted_after_being_replaced(path: Path) -> None:
    """Dropping a damaged body deletes exactly that blob, never a newer entry for the key."""
    original = entry()
    async with Cache.open(path) as cache:
        await cache.put_http(original)
        with raw(path) as conn:
            freed = cache_store.delete_http(conn, original.key, b"some other blob")
        assert freed == 0
        assert await cache.get_http(original.key) == original


async def test_in_memory_cache_round_trips(tmp_path: Path) -> None:
    """Cache.open(None) is an in-memory database served by the writer alone."""
    async with Cache.open(None) as cache:
        assert cache.path is None
        await cache.put_http(entry())
        assert await cache.get_http(entry().key) == entry()
    assert [child async for child in anyio.Path(tmp_path).iterdir()] == []


def test_http_entry_is_frozen() -> None:
    """HttpEntry values are immutable."""
    with pytest.raises(AttributeError):
        entry().status = 201  # type: ignore[misc]
    assert isinstance(entry(), HttpEntry)
