"""SQLite cache engine: HTTP entries, catalog views, release lists and extraction records.

``Cache.open(path)`` starts one writer thread and four reader threads; the async methods submit
jobs to them. ``patchula.cache`` never imports ``patchula.http``: callers build keys.
"""

from __future__ import annotations

from patchula.cache.base import (
    CacheError,
    CacheStats,
    CacheUnavailable,
    CatalogView,
    DatasourceViews,
    FutureSchema,
    HttpEntry,
    ReleaseItem,
    ViewSummary,
    default_cache_path,
)
from patchula.cache.engine import DEFAULT_BUDGET_BYTES, Cache

__all__ = [
    "DEFAULT_BUDGET_BYTES",
    "Cache",
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
