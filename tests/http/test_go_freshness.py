"""``--go-freshness-secs``: a freshness floor for the Go proxy's @v/list and @latest only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from patchula.cache import Cache
from patchula.clock import FixedClock
from patchula.datasource import goproxy
from patchula.http.fetcher import Fetcher, Timer, make_client
from patchula.scan import scan
from patchula.settings import Settings
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


async def _scan_routes(
    registry: FakeRegistry, checkout: Path, cache: Cache, clock: Clock, secs: int
) -> list[str]:
    """Scan ``checkout`` once with ``go_freshness_secs=secs``; the routes the proxy saw."""
    before = dict(registry.host("goproxy").requests_by_route)
    settings = Settings.model_validate(
        {"registries": {"goproxy": registry.url("goproxy")}, "go_freshness_secs": secs}
    )
    async with make_client() as client:
        fetcher = Fetcher(client, cache=cache, timer=Timer(wall=clock))
        result = await scan([str(checkout)], settings, fetcher, FixedClock(clock.now))
    rows = [r for r in result.repos[0].rows if r.dependency.package_name == MODULE]
    assert [r.finding.latest for r in rows] == ["v1.0.0"]
    after = registry.host("goproxy").requests_by_route
    seen = (r for r in after if after[r] != before.get(r, 0) and "/v2/" not in r)
    return sorted(r.rsplit("/", 1)[-1] for r in seen)


@pytest.mark.anyio
async def test_a_scan_applies_go_freshness_secs_before_its_first_go_lookup(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """The scan sets the Go floor from settings before its first Go lookup.

    The fetcher was given none: 600 s later list and @latest are still fresh at the default
    3600, and refetched at 0.
    """
    fake_registry.goproxy.add(MODULE, {"v1.0.0": START - timedelta(days=9)})
    fake_registry.host("goproxy").cache_control = "max-age=60"
    checkout = tmp_path / "app"
    checkout.mkdir()
    (checkout / "go.mod").write_text(
        f"module example.com/app\n\ngo 1.22\n\nrequire {MODULE} v1.0.0\n"
    )
    cache = Cache.open(tmp_path / "c.sqlite3")
    clock = Clock()
    first = await _scan_routes(fake_registry, checkout, cache, clock, 3600)
    assert first == ["@latest", "list", "v1.0.0.mod"]
    clock.now = START + timedelta(seconds=600)
    assert await _scan_routes(fake_registry, checkout, cache, clock, 3600) == ["v1.0.0.mod"]
    clock.now = START + timedelta(seconds=1200)
    again = await _scan_routes(fake_registry, checkout, cache, clock, 0)
    assert again == ["@latest", "list", "v1.0.0.mod"]
    await cache.aclose()


def test_a_floor_given_to_the_fetcher_wins_over_keep_fresh() -> None:
    """``keep_fresh`` fills in floors; one given to the constructor is kept."""
    fetcher = Fetcher(freshness_floors={"goproxy-list-v1": 5.0})
    fetcher.keep_fresh(goproxy.FRESHNESS_FLOOR_REPRESENTATIONS, 3600.0)
    assert fetcher.freshness_floors == {"goproxy-list-v1": 5.0, "goproxy-latest-raw": 3600.0}
