"""The cache's SQL: one function per operation, each given a connection by its worker thread.

Write functions expect to run inside ``schema.transaction``; read functions fetch all rows
first, which ends SQLite's implicit read transaction, and only then decode.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import zstandard

from patchula.cache.base import HttpEntry, ReleaseItem

__all__ = [
    "CorruptBody",
    "compress",
    "delete_http",
    "evict",
    "get_extraction",
    "merge_releases",
    "page_bytes",
    "put_extraction",
    "read_http",
    "read_http_many",
    "release_head",
    "releases",
    "stored_bytes",
    "touch_http",
    "write_http",
]

ZSTD_LEVEL = 3
_local = threading.local()  # zstd contexts are not thread-safe: one pair per worker thread


@dataclass(frozen=True, slots=True)
class CorruptBody:
    """A stored body that failed to decompress; ``body`` is the blob, to delete exactly it."""

    body: bytes


def compress(data: bytes) -> bytes:
    """Return a Zstandard frame (level 3, with content size and checksum) of ``data``."""
    compressor: zstandard.ZstdCompressor | None = getattr(_local, "compressor", None)
    if compressor is None:
        compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True)
        _local.compressor = compressor
    return compressor.compress(data)


def decompress(blob: bytes, raw_size: int) -> bytes:
    """Return the decoded body; raise ``zstandard.ZstdError`` when the frame is damaged.

    The frame's declared size must equal the recorded ``raw_size`` (bytes) before anything is
    allocated, so a damaged header cannot ask for gigabytes.
    """
    decompressor: zstandard.ZstdDecompressor | None = getattr(_local, "decompressor", None)
    if decompressor is None:
        decompressor = zstandard.ZstdDecompressor()
        _local.decompressor = decompressor
    if zstandard.frame_content_size(blob) != raw_size:
        msg = "frame size does not match the recorded size"
        raise zstandard.ZstdError(msg)
    return decompressor.decompress(blob)


_HTTP_COLUMNS = (
    "status, etag, last_modified, headers, body, raw_size, fetched_at, expires_at,"
    " cache_control, representation"
)


def read_http(conn: sqlite3.Connection, key: str) -> HttpEntry | CorruptBody | None:
    """Return the entry for ``key``, ``CorruptBody`` if its body cannot be decoded, or ``None``."""
    rows = conn.execute(
        f"SELECT {_HTTP_COLUMNS} FROM http_entries WHERE key = ?",  # noqa: S608 - constant columns
        (key,),
    ).fetchall()
    # Decoding happens after the statement finished: no read transaction is held meanwhile.
    return _entry(key, rows[0]) if rows else None


def read_http_many(
    conn: sqlite3.Connection, keys: Sequence[str]
) -> dict[str, HttpEntry | CorruptBody | None]:
    """Return ``read_http`` for many keys, one statement per 500 keys, decoding afterwards."""
    unique = list(dict.fromkeys(keys))
    rows: list[Any] = []
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows += conn.execute(
            f"SELECT key, {_HTTP_COLUMNS} FROM http_entries WHERE key IN ({marks})",  # noqa: S608 - placeholders only
            chunk,
        ).fetchall()
    found: dict[str, HttpEntry | CorruptBody | None] = dict.fromkeys(unique)
    for row in rows:
        found[row[0]] = _entry(row[0], row[1:])
    return found


def _entry(key: str, row: Any) -> HttpEntry | CorruptBody:  # noqa: ANN401 - an sqlite3 row
    status, etag, last_modified, headers, blob, raw_size, fetched, expires, control, rep = row
    try:
        body = decompress(blob, raw_size)
    except (zstandard.ZstdError, ValueError):
        return CorruptBody(bytes(blob))
    return HttpEntry(
        key=key,
        status=status,
        etag=etag,
        last_modified=last_modified,
        headers=tuple((str(name), str(value)) for name, value in orjson.loads(headers)),
        body=body,
        fetched_at=fetched,
        expires_at=expires,
        cache_control=control,
        representation=rep,
    )


def write_http(conn: sqlite3.Connection, entry: HttpEntry, blob: bytes, clock: int) -> int:
    """Insert or replace ``entry`` with its compressed ``blob``; return the stored-bytes change."""
    old = conn.execute("SELECT body_size FROM http_entries WHERE key = ?", (entry.key,)).fetchone()
    conn.execute(
        "INSERT OR REPLACE INTO http_entries (key, status, etag, last_modified, headers, body,"
        " raw_size, fetched_at, expires_at, cache_control, representation, body_size,"
        " access_clock) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            entry.key,
            entry.status,
            entry.etag,
            entry.last_modified,
            orjson.dumps([list(pair) for pair in entry.headers]),
            blob,
            len(entry.body),
            entry.fetched_at,
            entry.expires_at,
            entry.cache_control,
            entry.representation,
            len(blob),
            clock,
        ),
    )
    return len(blob) - (old[0] if old else 0)


def touch_http(
    conn: sqlite3.Connection,
    key: str,
    *,
    fetched_at: float,
    expires_at: float,
    etag: str | None,
    last_modified: str | None,
    cache_control: str | None,
    clock: int,
) -> bool:
    """Update the metadata of ``key`` after a 304; the body is left as stored.

    A ``None`` validator or Cache-Control keeps the stored value: a 304 updates the header
    fields it carries (RFC 9111 §4.3.4). Returns whether the row exists.
    """
    cursor = conn.execute(
        "UPDATE http_entries SET fetched_at = ?, expires_at = ?, etag = coalesce(?, etag),"
        " last_modified = coalesce(?, last_modified),"
        " cache_control = coalesce(?, cache_control), access_clock = ? WHERE key = ?",
        (fetched_at, expires_at, etag, last_modified, cache_control, clock, key),
    )
    return cursor.rowcount > 0


def delete_http(conn: sqlite3.Connection, key: str, blob: bytes | None = None) -> int:
    """Delete the row of ``key`` (only if its body is ``blob``, when given); return bytes freed."""
    row = conn.execute("SELECT body_size, body FROM http_entries WHERE key = ?", (key,)).fetchone()
    if row is None or (blob is not None and bytes(row[1]) != blob):
        return 0
    conn.execute("DELETE FROM http_entries WHERE key = ?", (key,))
    return int(row[0])


def flush_access(conn: sqlite3.Connection, clocks: dict[str, int]) -> None:
    """Raise each key's access clock to the recorded value (never lower it)."""
    conn.executemany(
        "UPDATE http_entries SET access_clock = ?1 WHERE key = ?2 AND access_clock < ?1",
        [(clock, key) for key, clock in clocks.items()],
    )


def stored_bytes(conn: sqlite3.Connection) -> tuple[int, int]:
    """Return (compressed body bytes stored, highest access clock)."""
    row = conn.execute("SELECT total(body_size), max(access_clock) FROM http_entries").fetchone()
    return int(row[0]), int(row[1] or 0)


def evict(conn: sqlite3.Connection, stored: int, budget: int) -> tuple[int, int]:
    """Delete whole HTTP rows, least recent access clock first, until ``stored <= budget``.

    Returns (rows evicted, bytes freed). Validators go with their bodies, so no 304 can ever
    refer to a body that is gone.
    """
    rows = freed = 0
    while stored - freed > budget:
        batch = conn.execute(
            "SELECT key, body_size FROM http_entries ORDER BY access_clock, key LIMIT 64"
        ).fetchall()
        if not batch:
            break
        for key, size in batch:
            if stored - freed <= budget:
                break
            conn.execute("DELETE FROM http_entries WHERE key = ?", (key,))
            rows += 1
            freed += size
    return rows, freed


def page_bytes(conn: sqlite3.Connection) -> int:
    """Return the database size in bytes (``page_count * page_size``)."""
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    return int(pages) * int(size)


def merge_releases(
    conn: sqlite3.Connection,
    source: str,
    package: str,
    items: Sequence[ReleaseItem],
    *,
    after: str | None,
) -> bool:
    """Store upstream newest-first ``items`` until the first one already stored.

    With ``after=None`` the new items go before the stored head and ``items[0]`` becomes the
    release head; with ``after`` they go right after that version (the previous page's last
    inserted item), or at the end when it is not stored. The known item's date and digest are
    refreshed. Returns whether a known item was met (nothing older needs fetching).
    """
    new: list[ReleaseItem] = []
    seen: set[str] = set()
    known = False
    for item in items:
        cursor = conn.execute(
            "UPDATE releases SET published_at = ?, digest = ?"
            " WHERE source = ? AND package = ? AND version = ?",
            (item.published_at, item.digest, source, package, item.version),
        )
        if cursor.rowcount:
            known = True
            break
        if item.version not in seen:
            seen.add(item.version)
            new.append(item)
    low, high = conn.execute(
        "SELECT min(position), max(position) FROM releases WHERE source = ? AND package = ?",
        (source, package),
    ).fetchone()
    if after is None:
        first = (low if low is not None else 0) - len(new)
    else:
        row = conn.execute(
            "SELECT position FROM releases WHERE source = ? AND package = ? AND version = ?",
            (source, package, after),
        ).fetchone()
        anchor = row[0] if row is not None else (high if high is not None else -1)
        conn.execute(
            "UPDATE releases SET position = position + ?"
            " WHERE source = ? AND package = ? AND position > ?",
            (len(new), source, package, anchor),
        )
        first = anchor + 1
    conn.executemany(
        "INSERT INTO releases (source, package, version, position, published_at, digest)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [
            (source, package, item.version, first + i, item.published_at, item.digest)
            for i, item in enumerate(new)
        ],
    )
    if after is None and items:
        head = items[0]
        conn.execute(
            "INSERT OR REPLACE INTO release_heads (source, package, version, published_at, digest)"
            " VALUES (?, ?, ?, ?, ?)",
            (source, package, head.version, head.published_at, head.digest),
        )
    return known


def release_head(conn: sqlite3.Connection, source: str, package: str) -> ReleaseItem | None:
    """Return the stored newest release of the package, or ``None``."""
    rows = conn.execute(
        "SELECT version, published_at, digest FROM release_heads WHERE source = ? AND package = ?",
        (source, package),
    ).fetchall()
    return ReleaseItem(*rows[0]) if rows else None


def releases(conn: sqlite3.Connection, source: str, package: str) -> list[ReleaseItem]:
    """Return the stored releases in upstream order (newest first)."""
    rows = conn.execute(
        "SELECT version, published_at, digest FROM releases"
        " WHERE source = ? AND package = ? ORDER BY position",
        (source, package),
    ).fetchall()
    return [ReleaseItem(*row) for row in rows]


def put_extraction(
    conn: sqlite3.Connection, repo: str, commit: str, config_hash: str, data: bytes
) -> None:
    """Store (or replace) the caller's extraction bytes for one repo, commit and config."""
    conn.execute(
        "INSERT OR REPLACE INTO extractions (repo, commit_sha, config_hash, data)"
        " VALUES (?, ?, ?, ?)",
        (repo, commit, config_hash, data),
    )


def get_extraction(
    conn: sqlite3.Connection, repo: str, commit: str, config_hash: str
) -> bytes | None:
    """Return the stored extraction bytes, or ``None``."""
    rows = conn.execute(
        "SELECT data FROM extractions WHERE repo = ? AND commit_sha = ? AND config_hash = ?",
        (repo, commit, config_hash),
    ).fetchall()
    return bytes(rows[0][0]) if rows else None
