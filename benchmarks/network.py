"""Cold lookups against the loopback fake registry: wall time / network lower bound.

1,000 unique packages over 4 hosts (two fake registries, each with an npm and a PyPI host, 250
packages per host), 50 ms latency per request, the default limit of 16 per host. Every package
is looked up through the run's real machinery (shared client, per-host limits, governor,
datasource parsing) the way a cold scan does. The network lower bound is
``ceil(requests_per_host / limit) * latency`` for the slowest host; the ratio of the measured wall
time to it is printed (target <= 1.5), then the same for a whole ``scan`` of repositories
declaring 250 npm and 250 PyPI packages (two hosts). The fake registries run in a child process,
so the peak RSS printed is the scanner's own.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import resource
import tempfile
import time
from datetime import UTC, datetime, timedelta
from multiprocessing.connection import Connection
from pathlib import Path

import anyio

from patchula.clock import FixedClock
from patchula.datasource import npm, pypi
from patchula.http.fetcher import DEFAULT_HOST_CONCURRENCY, Fetcher, make_client
from patchula.scan import scan
from patchula.settings import Settings
from tests.fake_registry import FakeRegistry

LATENCY = float(__import__("os").environ.get("BENCH_LATENCY", "0.05"))
PER_HOST = 250
VERSIONS = 30
START = datetime(2024, 1, 1, tzinfo=UTC)


def _serve(conn: Connection, latency: float) -> None:
    """Child process: two seeded fake registries; send their URLs, serve until told to stop."""
    registries = [FakeRegistry(latency=latency), FakeRegistry(latency=latency)]
    versions = {f"1.{i}.0": START + timedelta(days=7 * i) for i in range(VERSIONS)}
    releases = {f"1.{i}": START + timedelta(days=7 * i) for i in range(VERSIONS)}
    for r, registry in enumerate(registries):
        for i in range(PER_HOST):
            registry.npm.add(f"bench-{r}-{i}", versions)
            registry.pypi.add(f"bench-{r}-{i}", releases)
        registry.start()
    conn.send([(reg.url("npm"), reg.url("pypi")) for reg in registries])
    cpu = time.process_time()
    conn.recv()
    print(f"  (fake registry process CPU while serving: {time.process_time() - cpu:.2f} s)")
    for registry in registries:
        registry.stop()
    conn.send([reg.hosts["npm"].peak_concurrency for reg in registries])


async def _lookups(urls: list[tuple[str, str]]) -> tuple[float, int]:
    async with make_client() as client:
        fetcher = Fetcher(client)
        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for r, (npm_url, pypi_url) in enumerate(urls):
                for i in range(PER_HOST):
                    tg.start_soon(npm.get_catalog, fetcher, npm_url, f"bench-{r}-{i}")
                    tg.start_soon(pypi.get_catalog, fetcher, pypi_url, f"bench-{r}-{i}")
        wall = time.perf_counter() - start
        return wall, sum(s.requests for s in fetcher.stats.values())


async def _scan(urls: list[tuple[str, str]], root: Path) -> tuple[float, int]:
    """A whole cold scan of 10 repositories (25 npm + 25 PyPI packages each, none shared)."""
    npm_url, pypi_url = urls[0]
    targets = []
    for repo in range(10):
        path = root / f"repo{repo}"
        path.mkdir()
        names = [f"bench-0-{i}" for i in range(repo * 25, repo * 25 + 25)]
        deps = dict.fromkeys(names, "^1.0.0")
        (path / "package.json").write_text(json.dumps({"dependencies": deps}))
        (path / "requirements.txt").write_text("".join(f"{n}>=1.0\n" for n in names))
        targets.append(str(path))
    settings = Settings.model_validate({"registries": {"npm": npm_url, "pypi": pypi_url}})
    async with make_client() as client:
        fetcher = Fetcher(client)
        start = time.perf_counter()
        result = await scan(targets, settings, fetcher, FixedClock(datetime.now(UTC)))
        wall = time.perf_counter() - start
        errors = sum(1 for r in result.repos for row in r.rows if row.finding.status == "error")
        return wall, errors


def main(_argv: list[str]) -> None:
    """Run the benchmark and print its ratios and peak RSS."""
    parent, child = multiprocessing.Pipe()
    server = multiprocessing.get_context("fork").Process(target=_serve, args=(child, LATENCY))
    server.start()
    try:
        urls: list[tuple[str, str]] = parent.recv()
        wall, requests = anyio.run(_lookups, urls)
        per_host = PER_HOST
        bound = math.ceil(per_host / DEFAULT_HOST_CONCURRENCY) * LATENCY
        limit = DEFAULT_HOST_CONCURRENCY
        print(
            f"cold lookups: {requests} requests over 4 hosts ({per_host} per host), "
            f"limit {limit}, latency {LATENCY * 1000:.0f} ms"
        )
        print(
            f"  network lower bound {bound:.3f} s, wall {wall:.3f} s, "
            f"ratio {wall / bound:.2f} "
            f"(target <= 1.5: {'met' if wall / bound <= 1.5 else 'MISSED'})"
        )
        with tempfile.TemporaryDirectory() as tmp:
            scan_wall, errors = anyio.run(_scan, urls, Path(tmp))
        print(
            f"cold scan: 10 repositories, 250 npm + 250 PyPI packages on 2 hosts, {errors} errors"
        )
        scan_bound = math.ceil(PER_HOST / limit) * LATENCY
        print(
            f"  network lower bound {scan_bound:.3f} s, wall {scan_wall:.3f} s, "
            f"ratio {scan_wall / scan_bound:.2f} "
            f"(target <= 1.5: {'met' if scan_wall / scan_bound <= 1.5 else 'MISSED'})"
        )
    finally:
        parent.send("stop")
        peaks = parent.recv()
        server.join()
    print(f"server-side peak concurrency per npm host: {peaks}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of the scanner process: {rss:.1f} MiB")
