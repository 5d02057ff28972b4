"""The fetch facade with the SQLite cache, against the loopback fake registry."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cache import Cache
from patchula.cli import app
from patchula.clock import FixedClock
from patchula.datasource import npm
from patchula.http.caching import cache_key
from patchula.http.fetcher import Fetcher, Timer, make_client
from patchula.models import Status
from patchula.scan import scan
from patchula.settings import Settings
from tests.fake_registry import FakeRegistry

OLD = datetime(2025, 1, 1, tzinfo=UTC)


class CountingDerive:
    """Wraps npm's derive and counts how often a body is parsed."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, content: bytes) -> bytes:
        """Derive the compact packument, counting the call."""
        self.calls += 1
        return npm.derive(content, package_name="left-pad")


async def _get(
    fetcher: Fetcher, registry: FakeRegistry, derive: CountingDerive
) -> tuple[str, bytes]:
    response = await fetcher(
        f"{registry.url('npm')}/left-pad",
        headers={"Accept": "application/json"},
        representation=npm.REPRESENTATION,
        derive=derive,
    )
    assert response.status == 200
    return response.cache, response.content


@pytest.mark.anyio
async def test_fresh_entry_is_served_without_a_request(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Within max-age the second lookup sends nothing and parses nothing."""
    cache = Cache.open(tmp_path / "c.sqlite3")
    derive = CountingDerive()
    async with make_client() as client:
        fetcher = Fetcher(client, cache=cache)
        first = await _get(fetcher, fake_registry, derive)
        second = await _get(fetcher, fake_registry, derive)
    await cache.aclose()
    assert (first[0], second[0]) == ("miss", "fresh")
    assert first[1] == second[1]
    assert fake_registry.host("npm").requests == 1
    assert derive.calls == 1
    assert (fetcher.cache_stats.hits, fetcher.cache_stats.misses) == (1, 1)


@pytest.mark.anyio
async def test_expired_entry_is_revalidated_and_reused_without_reparse(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """An expired entry is revalidated with its ETag; the 304 reuses the stored compact body."""
    fake_registry.host("npm").cache_control = "max-age=0"
    cache = Cache.open(tmp_path / "c.sqlite3")
    derive = CountingDerive()
    async with make_client() as client:
        fetcher = Fetcher(client, cache=cache)
        first = await _get(fetcher, fake_registry, derive)
        second = await _get(fetcher, fake_registry, derive)
    await cache.aclose()
    assert (first[0], second[0]) == ("miss", "revalidated")
    assert first[1] == second[1]
    assert fake_registry.host("npm").not_modified == 1
    assert derive.calls == 1
    conditional = fake_registry.host("npm").log[-1]
    assert conditional.status == 304


@pytest.mark.anyio
async def test_no_store_deletes_the_entry(fake_registry: FakeRegistry, tmp_path: Path) -> None:
    """A no-store answer removes a stored body and its validators."""
    host = fake_registry.host("npm")
    host.cache_control = "max-age=0"
    path = tmp_path / "c.sqlite3"
    cache = Cache.open(path)
    derive = CountingDerive()
    key = cache_key(
        "GET",
        f"{fake_registry.url('npm')}/left-pad",
        vary={"Accept": "application/json"},
        representation=npm.REPRESENTATION,
    )
    async with make_client() as client:
        fetcher = Fetcher(client, cache=cache)
        await _get(fetcher, fake_registry, derive)
        assert await cache.get_http(key) is not None
        host.cache_control = "no-store"
        host.validators = False
        result = await _get(fetcher, fake_registry, derive)
        assert await cache.get_http(key) is None
    await cache.aclose()
    assert result[0] == "miss"


def _repo(root: Path, count: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    deps = {f"pkg{i}": "1.0.0" for i in range(count)}
    (root / "package.json").write_text(json.dumps({"dependencies": deps}))
    return root


def test_warm_run_sends_nothing_and_reports_the_same(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A second run within max-age sends no request and reports exactly what the first did."""
    for i in range(10):
        fake_registry.npm.add(f"pkg{i}", {"1.0.0": OLD, "1.1.0": OLD + timedelta(days=9)})
    repo = _repo(tmp_path / "repo", 10)
    args = ["run", str(repo), "--format", "json", "--registry", f"npm={fake_registry.url('npm')}"]
    runner = CliRunner()
    cold = json.loads(runner.invoke(app, args, catch_exceptions=False).stdout)
    warm = json.loads(runner.invoke(app, args, catch_exceptions=False).stdout)
    assert fake_registry.host("npm").requests == 10
    assert (cold["cache"]["misses"], warm["cache"]["hits"], warm["cache"]["misses"]) == (10, 10, 0)
    strip = ("metadata",)
    rows = [
        [
            {k: v for k, v in d.items() if k not in strip}
            for d in r["repositories"][0]["dependencies"]
        ]
        for r in (cold, warm)
    ]
    assert rows[0] == rows[1]
    assert warm["hosts"] == {}

    def reused(report: dict[str, Any]) -> set[bool]:
        deps = report["repositories"][0]["dependencies"]
        return {d["metadata"]["lookup"]["catalog"]["reused"] for d in deps}

    assert (reused(cold), reused(warm)) == ({False}, {True})


def test_no_cache_flag_bypasses_the_cache(fake_registry: FakeRegistry, tmp_path: Path) -> None:
    """--no-cache sends every request and reports no cache section."""
    fake_registry.npm.add("pkg0", {"1.0.0": OLD})
    repo = _repo(tmp_path / "repo", 1)
    args = [
        "run",
        str(repo),
        "--format",
        "json",
        "--no-cache",
        "--registry",
        f"npm={fake_registry.url('npm')}",
    ]
    runner = CliRunner()
    for _ in range(2):
        report = json.loads(runner.invoke(app, args, catch_exceptions=False).stdout)
        assert report["cache"] is None
    assert fake_registry.host("npm").requests == 2


@pytest.mark.anyio
async def test_scan_answers_fresh_entries_together_and_fetches_the_rest(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Warm scan: fresh entries answered from the cache in one go, new and expired ones fetched.

    Five packages cached, two added to the manifest; then, ten minutes on (max-age 300), all
    seven are revalidated with conditional requests.
    """
    for i in range(7):
        fake_registry.npm.add(f"pkg{i}", {"1.0.0": OLD, "1.1.0": OLD + timedelta(days=9)})
    fake_registry.pypi.add("lib", {"1.0": OLD})
    settings = Settings.model_validate(
        {"registries": {"npm": fake_registry.url("npm"), "pypi": fake_registry.url("pypi")}}
    )
    cache = Cache.open(tmp_path / "c.sqlite3")
    repo = _repo(tmp_path / "repo", 5)
    (repo / "requirements.txt").write_text("lib>=1.0\n")
    later = 0.0
    timer = Timer(wall=lambda: datetime.now(UTC) + timedelta(seconds=later))

    async def run() -> tuple[dict[str, Status], Fetcher]:
        async with make_client() as client:
            fetcher = Fetcher(client, cache=cache, timer=timer)
            result = await scan([str(repo)], settings, fetcher, FixedClock(datetime.now(UTC)))
        rows = {row.dependency.name: row.finding.status for row in result.repos[0].rows}
        return rows, fetcher

    cold, first = await run()
    _repo(repo, 7)
    warm, second = await run()
    later = 600.0
    expired, third = await run()
    await cache.aclose()
    assert cold == {**dict.fromkeys((f"pkg{i}" for i in range(5)), "outdated"), "lib": "up-to-date"}
    assert warm == expired == {**cold, "pkg5": "outdated", "pkg6": "outdated"}
    use = [
        (f.cache_stats.hits, f.cache_stats.revalidated, f.cache_stats.misses)
        for f in (first, second, third)
    ]
    assert use == [(0, 0, 6), (6, 0, 2), (0, 8, 0)]
    assert fake_registry.host("npm").requests == 5 + 2 + 7
    assert fake_registry.host("npm").not_modified == 7


@pytest.mark.parametrize(
    ("validators", "cache_control", "floor", "counted"),
    [
        (False, None, 0.0, 1),  # nothing to revalidate with, nothing to reuse: counted
        (False, "no-cache", 0.0, 1),
        (False, "no-cache", 3600.0, 1),  # a floor never covers no-cache
        (True, None, 0.0, 0),  # an ETag: the next run revalidates (304)
        (False, "max-age=300", 0.0, 0),  # a lifetime: the next run reuses it
        (False, None, 3600.0, 0),  # a configured floor reuses it
    ],
)
@pytest.mark.anyio
async def test_answers_without_validators_or_freshness_are_counted_per_host(
    fake_registry: FakeRegistry,
    tmp_path: Path,
    validators: bool,  # noqa: FBT001 - a parametrized case
    cache_control: str | None,
    floor: float,
    counted: int,
) -> None:
    """A success the cache can neither revalidate nor reuse counts in its host's statistics."""
    host = fake_registry.host("npm")
    host.validators = validators
    host.cache_control = cache_control
    cache = Cache.open(tmp_path / "c.sqlite3")
    async with make_client() as client:
        fetcher = Fetcher(
            client, cache=cache, freshness_floors={npm.REPRESENTATION: floor} if floor else None
        )
        await _get(fetcher, fake_registry, CountingDerive())
    await cache.aclose()
    [stats] = fetcher.stats.values()
    assert stats.unvalidated == counted


def test_a_registry_without_validators_or_freshness_is_named_once(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Summary and -v say once per host that its answers are refetched, and what would help."""
    for i in range(3):
        fake_registry.npm.add(f"pkg{i}", {"1.0.0": OLD})
    npm_host = fake_registry.host("npm")
    npm_host.validators = False
    npm_host.cache_control = None
    repo = _repo(tmp_path / "repo", 3)
    args = ["run", str(repo), "--cache", str(tmp_path / "c.sqlite3"), "-v"]
    args += ["--registry", f"npm={fake_registry.url('npm')}"]
    runner = CliRunner()
    runner.invoke(app, args, catch_exceptions=False)
    out = runner.invoke(app, args, catch_exceptions=False).stdout
    assert npm_host.requests == 6  # the warm run refetched everything
    where = fake_registry.url("npm").split("//", 1)[1]
    summary = [line for line in out.splitlines() if line.startswith("3 dependencies")]
    assert summary == [
        (
            f"3 dependencies in 1 repository: 3 up-to-date; 0.0 libyears; {where} sent no ETag, "
            "Last-Modified or Cache-Control lifetime: 3 documents are refetched every run "
            "(-v says what helps)"
        )
    ]
    detail = [line for line in out.splitlines() if line.startswith(f"{where}: 3 answers")]
    assert len(detail) == 1
    assert "a registry or proxy that passes those headers through" in detail[0]
    report = json.loads(
        runner.invoke(app, [*args, "--format", "json"], catch_exceptions=False).stdout
    )
    assert report["hosts"][where]["unvalidated"] == 3
