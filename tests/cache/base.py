"""Helpers shared by the cache tests: entries, raw SQLite access, page damage."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import anyio
from msgspec.structs import replace

from patchula.cache import HttpEntry

BASE = HttpEntry(
    key="npm-packument-v1|GET|https://registry.npmjs.org/left-pad",
    status=200,
    etag='"abc"',
    last_modified="Wed, 01 Jan 2025 00:00:00 GMT",
    headers=(("link", '<https://example.test/?page=2>; rel="next"'),),
    body=b'{"name": "left-pad", "versions": {}}' * 50,
    fetched_at=1_700_000_000.0,
    expires_at=1_700_000_300.0,
    cache_control="max-age=300",
    representation="npm-packument-v1",
)


def entry(key: str = BASE.key, body: bytes = BASE.body, **changes: Any) -> HttpEntry:
    """Return ``BASE`` with another key, body and any other fields changed."""
    return replace(BASE, key=key, body=body, **changes)


@contextmanager
def raw(path: Path) -> Iterator[sqlite3.Connection]:
    """Open a plain autocommit connection to ``path`` (beside the cache's own connections)."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        yield conn


def column(path: Path, sql: str, *params: object) -> Any:
    """Return the first column of the first row of ``sql`` on ``path``, or ``None``."""
    with raw(path) as conn:
        row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


def damage_http_pages(path: Path) -> list[int]:
    """Overwrite the root pages of ``http_entries`` and its key index with 0xFF bytes.

    Another connection then commits a no-op write, so every connection of an open cache drops
    its page cache (WAL change counter) and reads the damaged pages from the file.
    """
    with raw(path) as conn:
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        roots = [
            row[0]
            for row in conn.execute(
                "SELECT rootpage FROM sqlite_master WHERE tbl_name = 'http_entries'"
            )
        ]
    with path.open("r+b") as file:
        for root in roots:
            file.seek((root - 1) * size)
            file.write(b"\xff" * size)
    with raw(path) as conn:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("PRAGMA user_version = 1")
        conn.execute("COMMIT")
    return roots


async def wait_until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    """Poll ``condition`` every 5 ms until it holds; fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            msg = "condition not reached in time"
            raise AssertionError(msg)
        await anyio.sleep(0.005)


def quarantined(directory: Path) -> list[Path]:
    """Return the quarantined files in ``directory``, sorted."""
    return sorted(directory.glob("*.corrupt-*"))
