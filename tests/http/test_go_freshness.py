"""``--go-freshness-secs``: a freshness floor for the Go proxy's @v/list and @latest only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from patchula.cache import Cache
from patchula.datasource import goproxy
from patchula.http.fetcher import Fetcher, Timer, make_client
from tests.fake_registry import FakeRegistry

START = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
MODULE = "example.com/m"


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        """Return the time the test set."""
        return self.now


async def _lookup(registry: FakeRegistry, cache: Cache, clock: Clock, floor: float) -> list[str]:
    """Look the module up once and return the routes the proxy saw."""
    before = dict(registry.host("goproxy").requests_by_route)
    async with make_client() as client:
        fetcher = Fetcher(
            client,
            cache=cache,
            timer=Timer(wall=clock),
            freshness_floors=dict.fromkeys(goproxy.FRESHNESS_FLOOR_REPRESENTATIONS, floor),
        )
        await goproxy.get_catalog(fetcher, registry.url("goproxy"), MODULE)
    after = registry.host("goproxy").requests_by_route
    seen = (r for r in after if after[r] != before.get(r, 0) and "/v2/" not in r)  # not the probe
    return sorted(r.rsplit("/", 1)[-1] for r in seen)


@pytest.mark.anyio
async def test_floor_counts_from_the_fetch_and_zero_restores_upstream(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """list/@latest stay fresh for the floor from their fetch; .mod keeps max-age; 0 undoes it."""
    fake_registry.goproxy.add(MODULE, {"v1.0.0": START - timedelta(days=9)})
    fake_registry.host("goproxy").cache_control = "max-age=60"
    cache = Cache.open(tmp_path / "c.sqlite3")
    clock = Clock()
    assert await _lookup(fake_registry, cache, clock, 3600) == ["@latest", "list", "v1.0.0.mod"]
    clock.now = START + timedelta(seconds=600)
    assert await _lookup(fake_registry, cache, clock, 3600) == ["v1.0.0.mod"]  # only the .mod
    clock.now = START + timedelta(seconds=1200)
    assert await _lookup(fake_registry, cache, clock, 0) == ["@latest", "list", "v1.0.0.mod"]
    clock.now = START + timedelta(seconds=1200 + 3000)  # 3000 s after the last fetch: still fresh
    assert await _lookup(fake_registry, cache, clock, 3600) == ["v1.0.0.mod"]
    clock.now = START + timedelta(seconds=1200 + 3700)  # reads did not extend the floor
    assert await _lookup(fake_registry, cache, clock, 3600) == ["@latest", "list", "v1.0.0.mod"]
    await cache.aclose()
