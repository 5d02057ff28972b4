"""The lazily made fetch facade: nothing is made until a request, throttle or floor needs it."""

from __future__ import annotations

import httpx
import pytest
import respx

from patchula.http.fetcher import Fetcher
from patchula.http.lazy import LazyFetcher


class _Maker:
    """Counts the fetchers made; each has no credentials and no cache."""

    def __init__(self, client: httpx.AsyncClient | None = None) -> None:
        self.made = 0
        self.client = client

    def __call__(self) -> Fetcher:
        self.made += 1
        return Fetcher(client=self.client)


@pytest.mark.anyio
async def test_a_run_without_requests_makes_no_fetcher() -> None:
    """Statistics, cache use and limits read as empty; closing and empty batches make none."""
    maker = _Maker()
    lazy = LazyFetcher(maker)
    assert await lazy.fresh_many([]) == []
    assert (lazy.stats, lazy.unreachable, lazy.cache_stats, lazy.limits_used()) == (
        {},
        {},
        None,
        set(),
    )
    await lazy.aclose()
    assert (maker.made, lazy.made) == (0, None)


@pytest.mark.anyio
async def test_the_first_request_makes_one_fetcher_that_answers_and_counts() -> None:
    """Requests go through one fetcher, made at the first; its statistics are the facade's."""
    with respx.mock(assert_all_called=True) as router:
        router.get("https://registry.test/a").mock(return_value=httpx.Response(200, text="a"))
        router.get("https://registry.test/b").mock(return_value=httpx.Response(404))
        async with httpx.AsyncClient() as client:
            maker = _Maker(client)
            lazy = LazyFetcher(maker)
            first = await lazy("https://registry.test/a")
            second = await lazy("https://registry.test/b", headers={"Accept": "text/plain"})
            await lazy.aclose()
    assert (first.status, first.content, second.status) == (200, b"a", 404)
    assert maker.made == 1
    assert lazy.made is not None
    assert lazy.stats["registry.test"].requests == 2
    assert lazy.cache_stats is lazy.made.cache_stats


@pytest.mark.anyio
async def test_throttle_and_freshness_floor_make_the_fetcher() -> None:
    """``throttle`` and ``keep_fresh`` reach the fetcher (made then, once)."""
    maker = _Maker()
    lazy = LazyFetcher(maker)
    lazy.keep_fresh(["goproxy-list-v1"], 600.0)
    lazy.throttle("https://crates.test/api/", 1.0)
    assert maker.made == 1
    fetcher = lazy.fetcher()
    # What keep_fresh and throttle set, read from the fetcher itself.
    assert fetcher.freshness_floors == {"goproxy-list-v1": 600.0}
    assert list(fetcher._paces) == ["crates.test"]
    await lazy.aclose()
