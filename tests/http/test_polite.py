"""Politeness against the loopback fake registry, counted by the server itself.

Cool-downs, host limits and single-flight; time is fake, so nobody sleeps through a cool-down.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import httpx
import pytest
import respx
from typer.testing import CliRunner

from patchula.cli import app
from patchula.clock import FixedClock
from patchula.http.fetcher import Fetcher, make_client
from patchula.scan import scan
from patchula.settings import Settings, load_settings
from tests.fake_registry import FakeRegistry, index_path
from tests.faketime import FakeTime

OLD = datetime(2025, 1, 1, tzinfo=UTC)
runner = CliRunner()


def _seed(registry: FakeRegistry, count: int) -> None:
    """Register ``count`` npm packages and PyPI projects named pkg0… with two old releases."""
    for i in range(count):
        registry.npm.add(f"pkg{i}", {"1.0.0": OLD, "1.1.0": OLD + timedelta(days=30)})
        registry.pypi.add(f"proj{i}", {"1.0": OLD, "1.1": OLD + timedelta(days=30)})


def _busy(registry: FakeRegistry, fetcher: Fetcher) -> bool:
    """Real I/O is pending: a request in flight in the client or still being served."""
    if any(s.in_flight for s in fetcher.stats.values()):
        return True
    return any(host._in_flight for host in registry.hosts.values())


@pytest.fixture
def registry() -> Iterator[FakeRegistry]:
    """A started fake registry with 20 npm packages and 20 PyPI projects."""
    with FakeRegistry() as fake:
        _seed(fake, 20)
        yield fake
        assert fake.errors == []


@pytest.mark.anyio
@pytest.mark.parametrize("npm_limit", [1, 4])
async def test_429_storm_cools_one_host_and_spares_the_others(
    registry: FakeRegistry, npm_limit: int
) -> None:
    """A 429 (Retry-After: 2) on one of three hosts: none reaches it for 2 s; the others go on.

    Requests already sent when the 429 arrives were sent before the cool-down began; none is
    sent during it.
    """
    registry.set_latency(0.005)
    registry.host("npm").fail_next(1, 429, {"Retry-After": "2"})
    crates = registry.host("crates-index")
    for i in range(20):
        registry.crates.add(f"crate{i}", {"1.0.0": OLD})
    time = FakeTime(busy=lambda: _busy(registry, fetcher))
    async with make_client() as client:
        npm_host = _hostport(registry.url("npm"))
        fetcher = Fetcher(
            client, default_limit=4, host_limits={npm_host: npm_limit}, timer=time.timer()
        )
        snapshots: list[tuple[float, dict[str, int]]] = []
        time.on_advance = lambda old, _new: snapshots.append(
            (old, {name: h.requests for name, h in registry.hosts.items()})
        )
        urls = [f"{registry.url('npm')}/pkg{i}" for i in range(20)]
        urls += [f"{registry.url('pypi')}/simple/proj{i}/" for i in range(20)]
        urls += [f"{registry.url('crates-index')}/{index_path(f'crate{i}')}" for i in range(20)]
        statuses: list[int] = []

        async def get(url: str) -> None:
            statuses.append((await fetcher(url)).status)

        async with time.driving(), anyio.create_task_group() as tg:
            for url in urls:
                tg.start_soon(get, url)
    assert statuses == [200] * 60
    # The only moment time moved: the cool-down's end, with the other hosts already done.
    assert len(snapshots) == 1
    moment, counts = snapshots[0]
    assert moment == 0.0
    # With one slot the count is exact: the 429'd request alone. With four, requests sent before
    # the client had read the 429 (at most the slots in use, plus those freed by answers that
    # landed first) were legitimately on their way; nothing else went out until time moved.
    sent_before = counts.pop("npm")
    assert sent_before == 1 if npm_limit == 1 else 1 <= sent_before <= 2 * npm_limit
    others = {name: n for name, n in counts.items() if n}
    assert others == {"pypi": 20, "crates-index": 20}
    assert registry.host("npm").requests == 21  # 20 packages + the retry of the 429'd one
    assert crates.requests == 20
    assert time.t == 2.0
    assert fetcher.stats[_hostport(registry.url("npm"))].cooldown_seconds == 2.0


def _hostport(url: str) -> str:
    return url.removeprefix("http://")


@pytest.mark.anyio
async def test_scan_through_a_cool_down_gives_correct_results(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    """A whole scan survives a 429 on npm: every row correct, PyPI untouched by the wait."""
    registry.host("npm").fail_next(1, 429, {"Retry-After": "2"})
    settings = Settings.model_validate(
        {"registries": {"npm": registry.url("npm"), "pypi": registry.url("pypi")}}
    )
    target = _repo(tmp_path, npm=range(20), pypi=range(20))
    time = FakeTime(busy=lambda: _busy(registry, fetcher))
    pypi_done_before_cool_down_ended: list[int] = []
    time.on_advance = lambda _old, _new: pypi_done_before_cool_down_ended.append(
        registry.host("pypi").requests
    )
    async with make_client() as client:
        fetcher = Fetcher(client, timer=time.timer())
        async with time.driving():
            result = await scan([str(target)], settings, fetcher, FixedClock(datetime.now(UTC)))
    rows = result.repos[0].rows
    assert len(rows) == 40
    assert {(r.finding.status, r.finding.current, r.finding.latest) for r in rows} == {
        ("outdated", "1.0.0", "1.1.0"),
        ("outdated", "1.0", "1.1"),
    }
    assert registry.host("npm").requests == 21
    assert pypi_done_before_cool_down_ended == [20]


def _repo(root: Path, *, npm: range, pypi: range) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.json").write_text(
        json.dumps({"dependencies": {f"pkg{i}": "1.0.0" for i in npm}})
    )
    (root / "requirements.txt").write_text("".join(f"proj{i}==1.0\n" for i in pypi))
    return root


def _cli(*args: str) -> tuple[int, dict[str, object]]:
    result = runner.invoke(app, ["run", *args, "--format", "json"], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


def _registries(registry: FakeRegistry) -> list[str]:
    return [
        "--registry",
        f"npm={registry.url('npm')}",
        "--registry",
        f"pypi={registry.url('pypi')}",
    ]


def test_retry_after_120_fails_the_lookup_at_once(registry: FakeRegistry, tmp_path: Path) -> None:
    """Retry-After: 120 fails npm lookups at once naming host and wait; PyPI completes; exit 3."""
    registry.host("npm").fail_next(1, 429, {"Retry-After": "120"})
    one_at_a_time = ["--host-concurrency", f"{_hostport(registry.url('npm'))}=1"]
    target = str(_repo(tmp_path, npm=range(3), pypi=range(3)))
    code, report = _cli(target, *_registries(registry), *one_at_a_time)
    assert code == 3
    rows = report["repositories"][0]["dependencies"]  # type: ignore[index]
    npm_rows = [r for r in rows if r["datasource"] == "npm"]
    pypi_rows = [r for r in rows if r["datasource"] == "pypi"]
    assert {r["status"] for r in npm_rows} == {"error"}
    assert all(
        "asked to wait 120 s, more than the 60 s patchula waits" in r["reason"]
        or "120 s of its cool-down left, more than the 60 s patchula waits" in r["reason"]
        for r in npm_rows
    )
    assert all(r["reason"].startswith(_hostport(registry.url("npm"))) for r in npm_rows)
    assert {r["status"] for r in pypi_rows} == {"outdated"}
    assert registry.host("npm").requests == 1  # queued lookups did not bypass the cool-down


@pytest.mark.parametrize(("limit", "expected_peak"), [(None, 16), (5, 5)])
def test_peak_concurrency_never_exceeds_the_host_limit(
    registry: FakeRegistry, tmp_path: Path, limit: int | None, expected_peak: int
) -> None:
    """The server never sees more concurrent requests than the default or overridden limit."""
    _seed_more(registry, 60)
    registry.set_latency(0.05)
    host = _hostport(registry.url("npm"))
    extra = ["--host-concurrency", f"{host}={limit}"] if limit else []
    code, report = _cli(
        str(_repo(tmp_path, npm=range(60), pypi=range(0))), *_registries(registry), *extra
    )
    assert code == 0
    assert registry.host("npm").peak_concurrency == expected_peak
    assert report["hosts"][host]["maxConcurrency"] == expected_peak  # type: ignore[index]


def _seed_more(registry: FakeRegistry, count: int) -> None:
    for i in range(20, count):
        registry.npm.add(f"pkg{i}", {"1.0.0": OLD, "1.1.0": OLD + timedelta(days=30)})


def test_single_flight_across_50_repositories(registry: FakeRegistry, tmp_path: Path) -> None:
    """50 repositories declaring the same 20 packages cost exactly 20 registry requests."""
    targets = [str(_repo(tmp_path / f"r{i}", npm=range(10), pypi=range(10))) for i in range(50)]
    code, report = _cli(*targets, *_registries(registry), "--concurrency", "8")
    assert code == 0
    assert registry.host("npm").requests + registry.host("pypi").requests == 20
    assert set(registry.host("npm").requests_by_route.values()) == {1}
    assert report["summary"]["dependencies"] == 1000  # type: ignore[index]


@pytest.mark.anyio
async def test_github_override_is_honoured() -> None:
    """``--host-concurrency api.github.com=8`` bounds requests to api.github.com at 8."""
    settings = load_settings({"host_concurrency": ["api.github.com=8"]}, env={})
    in_flight = 0
    peak = 0

    async def slow(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await anyio.sleep(0.01)
        in_flight -= 1
        return httpx.Response(200, json=[])

    with respx.mock(assert_all_called=True) as router:
        router.get(url__regex=r"https://api\.github\.com/repos/o/r\d+/tags").mock(side_effect=slow)
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, host_limits=settings.host_concurrency)
            async with anyio.create_task_group() as tg:
                for i in range(40):
                    tg.start_soon(fetcher, f"https://api.github.com/repos/o/r{i}/tags")
    assert peak == 8
    assert fetcher.stats["api.github.com"].max_concurrency == 8


def test_lookups_do_not_wait_for_a_repository_slot(registry: FakeRegistry, tmp_path: Path) -> None:
    """With --concurrency 1, lookups of several repositories still run at once (server peak)."""
    registry.set_latency(0.2)
    targets = [str(_repo(tmp_path / f"r{i}", npm=range(i, i + 1), pypi=range(0))) for i in range(5)]
    code, _ = _cli(*targets, *_registries(registry), "--concurrency", "1")
    assert code == 0
    assert registry.host("npm").peak_concurrency == 5


@pytest.mark.parametrize("fault", ["reset", "truncate", "server_error"])
def test_transient_failures_are_retried(registry: FakeRegistry, tmp_path: Path, fault: str) -> None:
    """A reset connection, a truncated body or a 503 is retried and the lookup succeeds."""
    host = registry.host("npm")
    {
        "reset": host.reset_next,
        "truncate": host.truncate_next,
        "server_error": host.server_error_next,
    }[fault](1)
    code, report = _cli(str(_repo(tmp_path, npm=range(1), pypi=range(0))), *_registries(registry))
    assert code == 0
    rows = report["repositories"][0]["dependencies"]  # type: ignore[index]
    assert [(r["status"], r["latest"]) for r in rows] == [("outdated", "1.1.0")]
    npm_stats = report["hosts"][_hostport(registry.url("npm"))]  # type: ignore[index]
    assert (npm_stats["requests"], npm_stats["retries"]) == (2, 1)


def test_bare_host_limit_applies_to_its_ports(registry: FakeRegistry, tmp_path: Path) -> None:
    """``127.0.0.1=3`` bounds npm on 127.0.0.1:PORT at 3; only an idle limit gets the note."""
    _seed_more(registry, 60)
    registry.set_latency(0.05)
    result = runner.invoke(
        app,
        [
            "run",
            str(_repo(tmp_path, npm=range(60), pypi=range(0))),
            *_registries(registry),
            *("--host-concurrency", "127.0.0.1=3", "--host-concurrency", "idle.test=2"),
            *("--format", "json"),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0
    assert registry.host("npm").peak_concurrency == 3
    assert (
        "note: no request went to idle.test: its --host-concurrency limit was not used"
        in result.stderr
    )
    assert "127.0.0.1" not in result.stderr


def test_a_bare_limit_overridden_by_every_port_is_said_so(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    """Requests went to the host, but only to a port with its own limit: the note says that."""
    _seed_more(registry, 8)
    npm = _hostport(registry.url("npm"))
    result = runner.invoke(
        app,
        [
            "run",
            str(_repo(tmp_path, npm=range(8), pypi=range(0))),
            *_registries(registry),
            *("--host-concurrency", "127.0.0.1=2", "--host-concurrency", f"{npm}=5"),
            *("--format", "json"),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0
    assert "no request went to 127.0.0.1" not in result.stderr
    assert (
        f"note: the --host-concurrency limit for 127.0.0.1 governed no request: {npm} had "
        "limits of their own" in result.stderr
    )


@pytest.mark.anyio
async def test_api_pacing_leaves_the_index_on_the_same_host_alone(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    """A mirror serving the sparse index and the API on one host: index lookups are not paced."""
    for name in ("serde", "syn", "log", "rand", "regex"):
        registry.crates.add(name, {"1.0.0": OLD, "1.1.0": OLD + timedelta(days=30)})
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "app"\n[dependencies]\n'
        'serde = "1.0"\nsyn = "1.0"\nlog = "1.0"\nrand = "1.0"\nregex = "1.0"\n'
    )
    mirror = registry.url("crates-index")
    settings = Settings.model_validate({"registries": {"crates": mirror, "crates-api": mirror}})
    time = FakeTime(busy=lambda: _busy(registry, fetcher))
    async with make_client() as client:
        fetcher = Fetcher(client, timer=time.timer())
        async with time.driving():
            result = await scan([str(tmp_path)], settings, fetcher, FixedClock(datetime.now(UTC)))
    assert [r.finding.latest for r in result.repos[0].rows] == ["1.1.0"] * 5
    assert registry.host("crates-index").requests == 5
    assert time.sleeps == []


@pytest.mark.anyio
async def test_crates_api_is_still_paced_at_one_request_a_second(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    """Three crates whose index has no pubtime cost three API pages, one second apart."""
    for name in ("serde", "syn", "log"):
        registry.crates.add(name, {"1.0.0": OLD, "1.1.0": OLD + timedelta(days=30)}, pubtime=False)
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "app"\n[dependencies]\n'
        'serde = "=1.0.0"\nsyn = "=1.0.0"\nlog = "=1.0.0"\n'
    )
    settings = Settings.model_validate(
        {
            "registries": {
                "crates": registry.url("crates-index"),
                "crates-api": registry.url("crates-api"),
            },
            "min_release_age": "3d",
        }
    )
    time = FakeTime(busy=lambda: _busy(registry, fetcher))
    async with make_client() as client:
        fetcher = Fetcher(client, timer=time.timer())
        async with time.driving():
            result = await scan([str(tmp_path)], settings, fetcher, FixedClock(datetime.now(UTC)))
    assert [r.finding.latest for r in result.repos[0].rows] == ["1.1.0"] * 3
    assert registry.host("crates-api").requests == 3
    assert time.sleeps == [1.0, 1.0]


def test_a_dripping_host_costs_one_wave_and_the_run_completes(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    """The npm host drips every body: 3 lookups run out of the deadline, 9 fail as too slow.

    PyPI's rows are done, the run exits 3, and the summary counts npm's given-up lookups on
    one host line.
    """
    npm = registry.host("npm")
    npm.drip_next(100, 20.0)
    host = _hostport(registry.url("npm"))
    target = str(_repo(tmp_path, npm=range(12), pypi=range(3)))
    args = [*_registries(registry), "--host-concurrency", f"{host}=2", "--request-deadline", "0.3"]
    code, report = _cli(target, "--no-cache", *args)
    assert code == 3
    rows = report["repositories"][0]["dependencies"]  # type: ignore[index]
    npm_reasons = [r["reason"] for r in rows if r["datasource"] == "npm"]
    too_slow = (
        f"{host} is too slow: 3 requests in a row ran out of the 0.3 s deadline; "
        "its other lookups were given up"
    )
    assert (
        sorted(npm_reasons, key=lambda r: r == too_slow)
        == [f"no complete answer from {host} within 0.3 s (deadline)"] * 3 + [too_slow] * 9
    )
    assert {r["status"] for r in rows if r["datasource"] == "pypi"} == {"outdated"}
    assert report["hosts"][host]["errors"] == 12  # type: ignore[index]
    assert npm.requests <= 2 * 2  # the wave, and the one that took the first freed slot
    table = runner.invoke(app, ["run", target, "--no-cache", *args], catch_exceptions=False)
    assert table.exit_code == 3
    assert (
        f"{host} too slow (3 requests in a row ran out of the 0.3 s deadline): 9 lookups not done"
    ) in table.stdout


def test_an_hours_retry_after_is_said_not_to_have_been_waited(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    """Retry-After: 3600 under -v: the host line says the wait was asked, not that it was spent."""
    registry.host("npm").fail_next(1, 429, {"Retry-After": "3600"})
    host = _hostport(registry.url("npm"))
    target = str(_repo(tmp_path, npm=range(2), pypi=range(0)))
    args = [*_registries(registry), "--host-concurrency", f"{host}=1", "--no-cache", "-v"]
    result = runner.invoke(app, ["run", target, *args], catch_exceptions=False)
    assert result.exit_code == 3
    assert (
        "errors 2, cool-down 0 s (asked to wait 3600 s, more than the 60 s patchula waits: "
        "not waited, its lookups failed), peak concurrency 1;"
    ) in result.output
    assert "3600.0" not in result.output
    assert (
        f"{host} rate limited (HTTP 429 with Retry-After) for longer than the 60 s patchula "
        "waits: 2 lookups not done"
    ) in result.output
