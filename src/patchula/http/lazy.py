"""The run's fetch facade, made when the run first needs it (issue 12: start-up).

A run that looks nothing up (a checkout without manifests, every dependency skipped) never
imports ``http.fetcher`` — nor its governor, cache-key and freshness rules — and reports no
host statistics and no cache use, as the fetcher itself would.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from patchula.http.fetcher import CacheUse, Fetcher, HostStats
    from patchula.models import Derive, FetchResponse


class LazyFetcher:
    """A ``Fetcher`` made by ``make()`` at the first request, throttle or freshness floor.

    Satisfies ``datasource.base.MethodFetch`` and offers what the scan asks of a fetcher by
    name (``fresh_many``, ``throttle``, ``keep_fresh``); ``made`` is the fetcher, or ``None``
    while there is none (``stats``, ``unreachable`` and ``limits_used`` are then empty).
    """

    def __init__(self, make: Callable[[], Fetcher]) -> None:
        self._make = make
        self.made: Fetcher | None = None

    def fetcher(self) -> Fetcher:
        """The fetcher, made now when it was not yet."""
        if self.made is None:
            self.made = self._make()
        return self.made

    async def __call__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        representation: str = "raw",
        derive: Derive | None = None,
        method: str = "GET",
        body: bytes | None = None,
        scope: str | None = None,
    ) -> FetchResponse:
        """``Fetcher.__call__``: the response to ``method url`` (``scope``: its token scope)."""
        return await self.fetcher()(
            url,
            headers=headers,
            representation=representation,
            derive=derive,
            method=method,
            body=body,
            scope=scope,
        )

    async def addressed(
        self,
        address: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        representation: str = "raw",
        derive: Derive | None = None,
    ) -> FetchResponse:
        """``Fetcher.addressed``: ``GET url``, cached and shared under ``address`` (content)."""
        return await self.fetcher().addressed(
            address, url, headers=headers, representation=representation, derive=derive
        )

    @contextlib.asynccontextmanager
    async def all_or_nothing(self) -> AsyncIterator[None]:
        """``Fetcher.all_or_nothing``: cache writes in the block apply together or not at all."""
        async with self.fetcher().all_or_nothing():
            yield

    async def release_rows(
        self, source: str, package: str
    ) -> (
        tuple[
            tuple[str, float | None, str | None] | None, list[tuple[str, float | None, str | None]]
        ]
        | None
    ):
        """``Fetcher.release_rows``: the cache's release head and rows (``None``: no cache)."""
        return await self.fetcher().release_rows(source, package)

    async def merge_release_rows(
        self,
        source: str,
        package: str,
        items: Sequence[tuple[str, float | None, str | None]],
        *,
        after: str | None,
    ) -> None:
        """``Fetcher.merge_release_rows``: merge one newest-first page into the release rows."""
        await self.fetcher().merge_release_rows(source, package, items, after=after)

    def credential_source(self, url: str) -> str | None:
        """``Fetcher.credential_source``: the source of the credential for ``url`` (no value)."""
        return self.fetcher().credential_source(url)

    async def fresh_many(
        self, requests: Sequence[tuple[str, Mapping[str, str] | None, str]]
    ) -> list[FetchResponse | None]:
        """``Fetcher.fresh_many``: answers from fresh cache entries (none for no requests)."""
        if not requests:
            return []
        return await self.fetcher().fresh_many(requests)

    def throttle(self, base_url: str, min_interval: float) -> None:
        """``Fetcher.throttle``: space requests under ``base_url``."""
        self.fetcher().throttle(base_url, min_interval)

    def keep_fresh(
        self, representations: Sequence[str], seconds: float, *, unvalidated_only: bool = False
    ) -> None:
        """``Fetcher.keep_fresh``: a freshness floor for cached ``representations``."""
        self.fetcher().keep_fresh(representations, seconds, unvalidated_only=unvalidated_only)

    @property
    def stats(self) -> dict[str, HostStats]:
        """Request statistics per host (``Fetcher.stats``); empty before the fetcher is made."""
        return self.made.stats if self.made is not None else {}

    @property
    def unreachable(self) -> dict[str, str]:
        """``Fetcher.unreachable``; empty before the fetcher is made."""
        return self.made.unreachable if self.made is not None else {}

    @property
    def cache_stats(self) -> CacheUse | None:
        """``Fetcher.cache_stats``; ``None`` before the fetcher is made (no cache was used)."""
        return self.made.cache_stats if self.made is not None else None

    @property
    def not_cached(self) -> list[str]:
        """``Fetcher.not_cached`` (``--offline``: requests with no entry); empty before."""
        return list(self.made.not_cached) if self.made is not None else []

    def limits_used(self) -> set[str]:
        """``Fetcher.limits_used``; empty before the fetcher is made."""
        return self.made.limits_used() if self.made is not None else set()

    async def aclose(self) -> None:
        """Close the fetcher, if one was made."""
        if self.made is not None:
            await self.made.aclose()
