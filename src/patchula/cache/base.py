"""The cache's values and errors: what callers store, read back and catch.

```
PatchulaError
└── CacheError             the cache cannot serve this run (the caller may fall back)
    ├── FutureSchema       the database was written by a newer patchula; left untouched
    └── CacheUnavailable   unwritable/uncreatable path, busy/locked file, I/O failure
```

``Cache.open`` raises them; once open, reads and writes never do (a refused read is a miss, a
refused write is not stored, both counted and warned once): only a closed handle raises
``CacheError``.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import platformdirs

from patchula.errors import PatchulaError

__all__ = [
    "CacheError",
    "CacheStats",
    "CacheUnavailable",
    "CatalogView",
    "DatasourceViews",
    "FutureSchema",
    "HttpEntry",
    "ReleaseItem",
    "ViewSummary",
    "default_cache_path",
]


class CacheError(PatchulaError):
    """The cache cannot do what was asked; the message names the file, never a body or token."""


class FutureSchema(CacheError):  # noqa: N818 - the API names the condition
    """The database has a newer schema than this patchula knows; it is neither read nor moved."""

    def __init__(self, path: Path, found: int, supported: int) -> None:
        super().__init__(
            f"cache database {path} has schema version {found}, newer than the version this "
            f"patchula supports ({supported}); it was left untouched: upgrade patchula or use "
            "another cache path"
        )
        self.path = path
        self.found = found
        self.supported = supported


class CacheUnavailable(CacheError):  # noqa: N818 - the API names the condition
    """The database cannot be opened or written for a reason other than corruption."""


class HttpEntry(msgspec.Struct, frozen=True):
    """One cached successful HTTP response.

    ``key`` is the caller's normalised cache key (opaque here). ``headers`` holds selected
    response headers as ``(lower-case name, value)`` pairs. ``body`` is uncompressed; the cache
    stores it Zstandard-compressed. ``fetched_at`` and ``expires_at`` are epoch seconds; the
    entry is fresh while ``now < expires_at`` and keeps its validators after that.
    """

    key: str
    status: int
    etag: str | None
    last_modified: str | None
    headers: tuple[tuple[str, str], ...]
    body: bytes
    fetched_at: float
    expires_at: float
    cache_control: str | None
    representation: str


class CatalogView(msgspec.Struct, frozen=True):
    """One stored catalog view (seed 003, "Catalog views and release-age policy").

    ``key`` is the caller's view identity (opaque here; never a credential). ``body`` is the
    uncompressed versioned document named by ``representation`` (the cache stores it
    Zstandard-compressed); ``fetched_at`` (epoch seconds) is when the catalog was retrieved or
    validated upstream. A stored view is replaced only by one with the same or a later
    ``fetched_at``, so older data never resets a view's age.
    """

    key: str
    datasource: str
    package: str
    representation: str
    body: bytes
    fetched_at: float


class DatasourceViews(msgspec.Struct, frozen=True):
    """The stored views of one datasource: how many, their fetch times (epoch s), their bytes."""

    count: int
    oldest_fetched_at: float
    newest_fetched_at: float
    bytes_stored: int


class ViewSummary(msgspec.Struct, frozen=True):
    """Stored catalog views per datasource id (for ``patchula cache status``), ids sorted."""

    datasources: dict[str, DatasourceViews]

    @property
    def count(self) -> int:
        """Views stored in all."""
        return sum(v.count for v in self.datasources.values())

    @property
    def bytes_stored(self) -> int:
        """Compressed view bytes stored in all."""
        return sum(v.bytes_stored for v in self.datasources.values())


class ReleaseItem(msgspec.Struct, frozen=True):
    """One release of a package as upstream lists it; ``published_at`` in epoch seconds."""

    version: str
    published_at: float | None
    digest: str | None


class CacheStats(msgspec.Struct):
    """Counters for one run, shared by every handle of a ``Cache``.

    ``hits``/``misses``: ``get_http`` calls that returned an entry / ``None`` (a corrupt body
    counts as a miss and in ``corrupt_bodies``); ``revalidated``: ``touch_http`` calls that
    found their row; ``stores``: ``put_http`` calls; ``evictions``: rows removed by the budget;
    ``bytes_stored``: compressed body bytes currently stored; ``rebuilds``: corrupt databases
    quarantined and rebuilt; ``corrupt_bodies``: stored rows that could not be read (a body
    that fails to decompress, a value of the wrong type or TEXT that is not UTF-8), each a miss
    for its key; ``write_failures``: writes (stores, revalidations, deletions, merges) the
    database refused, e.g. busy past the timeout, each lost without failing its caller;
    ``read_failures``: reads that could not be served (busy, I/O), each answered as misses.
    ``view_stores``: catalog views written (new, or replacing one fetched no later).
    ``bytes_stored`` counts HTTP bodies and catalog views alike (one budget).
    """

    hits: int = 0
    misses: int = 0
    revalidated: int = 0
    stores: int = 0
    evictions: int = 0
    bytes_stored: int = 0
    corrupt_bodies: int = 0
    rebuilds: int = 0
    write_failures: int = 0
    read_failures: int = 0
    view_stores: int = 0


def default_cache_path() -> Path:
    """Return the platform's user cache file, e.g. ``~/.cache/patchula/cache.sqlite3`` on Linux."""
    return platformdirs.user_cache_path("patchula") / "cache.sqlite3"
