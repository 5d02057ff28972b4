"""The cache's SQL: one function per operation, each given a connection by its worker thread.

Write functions expect to run inside ``schema.transaction``; read functions fetch all rows
first, which ends SQLite's implicit read transaction, and only then decode.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from typing import Any

import msgspec
import orjson
import zstandard

from patchula.cache.base import CatalogView, DatasourceViews, HttpEntry, ReleaseItem, ViewSummary

__all__ = [
    "VIEW_ACCESS",
    "CorruptBody",
    "compress",
    "damaged_rows",
    "delete_damaged",
    "delete_http",
    "delete_view",
    "evict",
    "fetch_rows",
    "get_extraction",
    "merge_releases",
    "page_bytes",
    "purge_extractions",
    "put_extraction",
    "read_http",
    "read_http_many",
    "read_views",
    "release_head",
    "releases",
    "stored_bytes",
    "touch_http",
    "view_summary",
    "write_http",
    "write_view",
]

ZSTD_LEVEL = 3
_local = threading.local()  # zstd contexts are not thread-safe: one pair per worker thread


class CorruptBody(msgspec.Struct, frozen=True):
    """A stored row that cannot be decoded (its body, headers or a column's type).

    ``body`` is the stored body as ``CAST(body AS BLOB)`` reads it (``None`` for NULL), so the
    writer deletes exactly this row and never a newer one stored meanwhile.
    """

    body: bytes | None


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


class _Text(bytes):
    """A TEXT value read as raw bytes (while re-reading rows that did not decode)."""

    __slots__ = ()


def fetch_rows(conn: sqlite3.Connection, sql: str, params: Sequence[object]) -> list[Any]:
    """Return every row of ``sql``; one row whose TEXT does not decode fails no other row.

    Python's sqlite3 decodes TEXT as UTF-8 while fetching, and one undecodable value (a bit
    flip turning a BLOB into TEXT passes ``integrity_check``) raises ``OperationalError`` for
    the whole statement. Then the statement runs again with TEXT read as bytes, and each TEXT
    value is decoded here: valid text becomes ``str``, invalid text stays a ``bytes``
    subclass, which the caller's type checks reject for that row only. The common path keeps
    the C decoder.
    """
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        # SQLite's own errors carry a result code; a failed conversion in Python has none.
        if getattr(exc, "sqlite_errorcode", None) is not None:
            raise
    factory = conn.text_factory
    conn.text_factory = _Text
    try:
        rows = conn.execute(sql, params).fetchall()
    finally:
        conn.text_factory = factory
    return [tuple(_decoded(value) for value in row) for row in rows]


def _decoded(value: object) -> object:
    if isinstance(value, _Text):
        try:
            return value.decode()
        except UnicodeDecodeError:
            return value
    return value


def read_http(conn: sqlite3.Connection, key: str) -> HttpEntry | CorruptBody | None:
    """Return the entry for ``key``, ``CorruptBody`` if its row cannot be decoded, or ``None``."""
    rows = fetch_rows(
        conn,
        f"SELECT key, {_HTTP_COLUMNS} FROM http_entries WHERE key = ?",  # noqa: S608 - constant columns
        (key,),
    )
    # Decoding happens after the statement finished: no read transaction is held meanwhile.
    return _entry(key, rows[0][1:]) if rows else None


def read_http_many(
    conn: sqlite3.Connection, keys: Sequence[str]
) -> dict[str, HttpEntry | CorruptBody | None]:
    """Return ``read_http`` for many keys, one statement per 500 keys, decoding afterwards.

    A row that cannot be decoded is ``CorruptBody`` for its key only; the others are answered.
    """
    unique = list(dict.fromkeys(keys))
    rows: list[Any] = []
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows += fetch_rows(
            conn,
            f"SELECT key, {_HTTP_COLUMNS} FROM http_entries WHERE key IN ({marks})",  # noqa: S608 - placeholders only
            chunk,
        )
    found: dict[str, HttpEntry | CorruptBody | None] = dict.fromkeys(unique)
    for row in rows:
        # Only a stored key equal to a requested one matches, so it is one of ``unique``.
        if row[0] in found:
            found[row[0]] = _entry(row[0], row[1:])
    return found


_NUMBER = (int, float)


def _entry(key: str, row: Any) -> HttpEntry | CorruptBody:  # noqa: ANN401 - an sqlite3 row
    """Decode one row; any value of the wrong type or that does not decode makes it corrupt.

    The schema's column types are not enforced by SQLite (https://www.sqlite.org/datatype3.html)
    and damage can change a value's type, so each is checked before it is used.
    """
    status, etag, last_modified, headers, blob, raw_size, fetched, expires, control, rep = row
    if not (
        type(blob) is bytes
        and type(headers) is bytes
        and type(status) is int
        and type(raw_size) is int
        and type(rep) is str
        and (etag is None or type(etag) is str)
        and (last_modified is None or type(last_modified) is str)
        and (control is None or type(control) is str)
        and type(fetched) in _NUMBER
        and type(expires) in _NUMBER
    ):
        return CorruptBody(_identity(blob))
    try:
        body = decompress(blob, raw_size)
        pairs = tuple([(str(name), str(value)) for name, value in orjson.loads(headers)])
    except (zstandard.ZstdError, ValueError, TypeError):
        return CorruptBody(blob)
    # Positional (the warm path builds one per hit; keywords cost more). Order: key, status,
    # etag, last_modified, headers, body, fetched_at, expires_at, cache_control, representation.
    return HttpEntry(key, status, etag, last_modified, pairs, body, fetched, expires, control, rep)


def _identity(value: object) -> bytes | None:
    """The stored bytes of a body value as ``CAST(body AS BLOB)`` gives them (``None``: NULL)."""
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    return None if value is None else str(value).encode()


def write_http(conn: sqlite3.Connection, entry: HttpEntry, blob: bytes, clock: int) -> int:
    """Insert or replace ``entry`` with its compressed ``blob``; return the stored-bytes change."""
    old = conn.execute(
        "SELECT CASE typeof(body_size) WHEN 'integer' THEN body_size ELSE 0 END"
        " FROM http_entries WHERE key = ?",
        (entry.key,),
    ).fetchone()
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
    """Delete the row of ``key`` (only if its body is ``blob``, when given); return bytes freed.

    Reads the body as a BLOB and the size only when it is an integer, so a damaged row (TEXT
    that is not UTF-8, a wrong type) can always be deleted.
    """
    row = conn.execute(
        "SELECT CASE typeof(body_size) WHEN 'integer' THEN body_size ELSE 0 END,"
        " CAST(body AS BLOB) FROM http_entries WHERE key = ?",
        (key,),
    ).fetchone()
    if row is None or (blob is not None and row[1] != blob):
        return 0
    conn.execute("DELETE FROM http_entries WHERE key = ?", (key,))
    return int(row[0])


def delete_damaged(conn: sqlite3.Connection, key: str, blob: bytes | None) -> int:
    """Delete the damaged row of ``key`` if its body is still ``blob`` (``None``: NULL).

    Returns the bytes freed and counts the damage in ``meta`` (``damaged_rows``), so a later
    run knows this file has been damaged before.
    """
    row = conn.execute(
        "SELECT CASE typeof(body_size) WHEN 'integer' THEN body_size ELSE 0 END,"
        " CAST(body AS BLOB) IS ? FROM http_entries WHERE key = ?",
        (blob, key),
    ).fetchone()
    if row is None or not row[1]:
        return 0
    conn.execute("DELETE FROM http_entries WHERE key = ?", (key,))
    conn.execute(
        "INSERT INTO meta (name, value) VALUES ('damaged_rows', 1)"
        " ON CONFLICT (name) DO UPDATE SET value = value + 1"
    )
    return int(row[0])


def damaged_rows(conn: sqlite3.Connection) -> int:
    """Return how many damaged HTTP rows earlier runs dropped from this database."""
    row = conn.execute(
        "SELECT CASE typeof(value) WHEN 'integer' THEN value ELSE 1 END FROM meta"
        " WHERE name = 'damaged_rows'"
    ).fetchone()
    return 0 if row is None else int(row[0])


# Pending access times of catalog views carry this prefix (``_Shared.pending`` holds both
# kinds); HTTP keys start with a representation name, so the two never collide.
VIEW_ACCESS = "\0view\0"


def flush_access(conn: sqlite3.Connection, clocks: dict[str, int]) -> None:
    """Raise each key's access clock to the recorded value (never lower it).

    Keys starting with ``VIEW_ACCESS`` are catalog views, the others HTTP entries.
    """
    http = [(clock, key) for key, clock in clocks.items() if not key.startswith(VIEW_ACCESS)]
    views = [
        (clock, key.removeprefix(VIEW_ACCESS))
        for key, clock in clocks.items()
        if key.startswith(VIEW_ACCESS)
    ]
    conn.executemany(
        "UPDATE http_entries SET access_clock = ?1 WHERE key = ?2 AND access_clock < ?1", http
    )
    if views:
        conn.executemany(
            "UPDATE catalog_views SET access_clock = ?1 WHERE key = ?2 AND access_clock < ?1",
            views,
        )


_SIZE = "CASE typeof(body_size) WHEN 'integer' THEN body_size ELSE 0 END"
_CLOCK = "CASE typeof(access_clock) WHEN 'integer' THEN access_clock ELSE 0 END"


def stored_bytes(conn: sqlite3.Connection) -> tuple[int, int]:
    """Return (compressed bytes stored, highest access clock) of HTTP rows and catalog views.

    Both count against the one cache budget and share one access clock.
    """
    total = highest = 0
    for table in ("http_entries", "catalog_views"):
        row = conn.execute(
            f"SELECT total({_SIZE}), max({_CLOCK}) FROM {table}"  # noqa: S608 - constant names
        ).fetchone()
        total += int(row[0])
        highest = max(highest, int(row[1] or 0))
    return total, highest


def evict(conn: sqlite3.Connection, stored: int, budget: int) -> tuple[int, int]:
    """Delete whole rows, least recent access clock first, until ``stored <= budget``.

    HTTP rows and catalog views are one pool ordered by their shared access clock: a view
    read by every run outlives the HTTP body it was parsed from, and the other way round.
    Returns (rows evicted, bytes freed). Validators go with their bodies, so no 304 can ever
    refer to a body that is gone.
    """
    rows = freed = 0
    while stored - freed > budget:
        # By rowid and with a checked size: a damaged key or size never stops eviction.
        batch = conn.execute(
            f"SELECT 'http_entries' AS kind, rowid AS id, {_SIZE}, {_CLOCK} AS clock"  # noqa: S608 - constant names
            f" FROM http_entries UNION ALL SELECT 'catalog_views', rowid, {_SIZE}, {_CLOCK}"
            " FROM catalog_views ORDER BY clock, kind DESC, id LIMIT 64"
        ).fetchall()
        if not batch:
            break
        for table, rowid, size, _ in batch:
            if stored - freed <= budget:
                break
            conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))  # noqa: S608 - a constant name
            rows += 1
            freed += size
    return rows, freed


def read_views(
    conn: sqlite3.Connection, keys: Sequence[str]
) -> dict[str, CatalogView | CorruptBody | None]:
    """Return the stored view of each key, ``CorruptBody`` for an unreadable row, or ``None``.

    One statement per 500 keys; decoding (decompression) after the statements finished.
    """
    unique = list(dict.fromkeys(keys))
    rows: list[Any] = []
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows += fetch_rows(
            conn,
            "SELECT key, datasource, package, representation, body, raw_size, fetched_at"  # noqa: S608 - placeholders only
            f" FROM catalog_views WHERE key IN ({marks})",
            chunk,
        )
    found: dict[str, CatalogView | CorruptBody | None] = dict.fromkeys(unique)
    for key, datasource, package, representation, blob, raw_size, fetched in rows:
        if key not in found:
            continue
        if not (
            type(blob) is bytes
            and type(datasource) is str
            and type(package) is str
            and type(representation) is str
            and type(raw_size) is int
            and type(fetched) in _NUMBER
        ):
            found[key] = CorruptBody(_identity(blob))
            continue
        try:
            body = decompress(blob, raw_size)
        except zstandard.ZstdError:
            found[key] = CorruptBody(blob)
            continue
        found[key] = CatalogView(key, datasource, package, representation, body, float(fetched))
    return found


def write_view(
    conn: sqlite3.Connection, view: CatalogView, blob: bytes, stored_at: float, clock: int
) -> int | None:
    """Store ``view`` unless the stored one was fetched later; return the bytes change.

    ``None`` when the stored view is newer and was kept: a catalog from older data (a
    rate-limit or quota fallback to a stored answer) never resets a view's age.
    """
    old = conn.execute(
        f"SELECT {_SIZE} FROM catalog_views WHERE key = ?",  # noqa: S608 - a constant expression
        (view.key,),
    ).fetchone()
    cursor = conn.execute(
        "INSERT INTO catalog_views (key, datasource, package, representation, body, body_size,"
        " raw_size, fetched_at, stored_at, access_clock) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (key) DO UPDATE SET datasource = excluded.datasource,"
        " package = excluded.package, representation = excluded.representation,"
        " body = excluded.body, body_size = excluded.body_size, raw_size = excluded.raw_size,"
        " fetched_at = excluded.fetched_at, stored_at = excluded.stored_at,"
        " access_clock = excluded.access_clock"
        " WHERE excluded.fetched_at >= catalog_views.fetched_at"
        " OR typeof(catalog_views.fetched_at) NOT IN ('integer', 'real')",
        (
            view.key,
            view.datasource,
            view.package,
            view.representation,
            blob,
            len(blob),
            len(view.body),
            view.fetched_at,
            stored_at,
            clock,
        ),
    )
    if cursor.rowcount == 0:
        return None
    return len(blob) - (old[0] if old else 0)


def delete_view(conn: sqlite3.Connection, key: str, blob: bytes | None) -> int:
    """Delete the view of ``key`` if its body is still ``blob`` (``None``: NULL); bytes freed."""
    row = conn.execute(
        f"SELECT {_SIZE}, CAST(body AS BLOB) IS ? FROM catalog_views WHERE key = ?",  # noqa: S608 - a constant expression
        (blob, key),
    ).fetchone()
    if row is None or not row[1]:
        return 0
    conn.execute("DELETE FROM catalog_views WHERE key = ?", (key,))
    return int(row[0])


def view_summary(conn: sqlite3.Connection) -> ViewSummary:
    """Count the stored views per datasource, with their oldest and newest fetch times."""
    rows = fetch_rows(
        conn,
        f"SELECT datasource, count(*), min(fetched_at), max(fetched_at), total({_SIZE})"  # noqa: S608 - a constant expression
        " FROM catalog_views WHERE typeof(fetched_at) IN ('integer', 'real')"
        " GROUP BY datasource ORDER BY datasource",
        (),
    )
    return ViewSummary(
        {
            str(datasource): DatasourceViews(int(count), float(low), float(high), int(size))
            for datasource, count, low, high, size in rows
        }
    )


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
    """Return the stored newest release of the package, or ``None`` (also when it is damaged)."""
    rows = fetch_rows(
        conn,
        "SELECT version, published_at, digest FROM release_heads WHERE source = ? AND package = ?",
        (source, package),
    )
    items = _release_items(rows)
    return items[0] if items else None


def releases(conn: sqlite3.Connection, source: str, package: str) -> list[ReleaseItem]:
    """Return the stored releases in upstream order (newest first), without damaged rows."""
    rows = fetch_rows(
        conn,
        "SELECT version, published_at, digest FROM releases"
        " WHERE source = ? AND package = ? ORDER BY position",
        (source, package),
    )
    return _release_items(rows)


def _release_items(rows: list[Any]) -> list[ReleaseItem]:
    """Rows as ``ReleaseItem``; a row with a value of the wrong type is left out."""
    return [
        ReleaseItem(version, published, digest)
        for version, published, digest in rows
        if type(version) is str
        and (published is None or type(published) in _NUMBER)
        and (digest is None or type(digest) is str)
    ]


def put_extraction(
    conn: sqlite3.Connection,
    repo: str,
    commit: str,
    config_hash: str,
    data: bytes,
    record_format: int = 0,
) -> None:
    """Store (or replace) the caller's extraction bytes for one repo, commit and config."""
    conn.execute(
        "INSERT OR REPLACE INTO extractions (repo, commit_sha, config_hash, data, format)"
        " VALUES (?, ?, ?, ?, ?)",
        (repo, commit, config_hash, data, record_format),
    )


def purge_extractions(conn: sqlite3.Connection, record_format: int) -> int:
    """Delete records of formats below ``record_format`` (never read again); rows deleted.

    Takes no write lock when there is none (the usual open).
    """
    found = conn.execute(
        "SELECT 1 FROM extractions WHERE format < ? LIMIT 1", (record_format,)
    ).fetchone()
    if found is None:
        return 0
    conn.execute("BEGIN IMMEDIATE")
    try:
        cursor = conn.execute("DELETE FROM extractions WHERE format < ?", (record_format,))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return cursor.rowcount


def get_extraction(
    conn: sqlite3.Connection, repo: str, commit: str, config_hash: str
) -> bytes | None:
    """Return the stored extraction bytes, or ``None`` (also when the value is not a BLOB)."""
    rows = fetch_rows(
        conn,
        "SELECT data FROM extractions WHERE repo = ? AND commit_sha = ? AND config_hash = ?",
        (repo, commit, config_hash),
    )
    return rows[0][0] if rows and type(rows[0][0]) is bytes else None
