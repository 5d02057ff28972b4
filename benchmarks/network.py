"""Cold lookups and a cold scan against the loopback fake registry: wall time / network bound.

The network lower bound is ``ceil(requests_per_host / limit) * latency`` for the slowest host,
with ``requests_per_host`` as the fake registry counted them, the default limit of 16 per host
and 50 ms latency per request. Two measurements, each repeated ``REPEATS`` times in this run
(this VM's speed varies by tens of percent from one second to the next; the median is judged,
every value printed):

1. cold lookups: 1,000 unique packages over 4 hosts (two fake registries, each with an npm and
   a PyPI host, 250 packages per host), each looked up through the run's real machinery
   (shared client, per-host limits, governor, datasource parsing) -- the client's CPU per
   request is what this measures;
2. cold scan: ``scan`` of 10 repositories declaring 1,000 unique packages over 4 hosts (250
   npm, 250 PyPI, 250 crates, 250 Go modules): extraction, lookups (a Go module costs several
   requests: version list, latest, go.mod, publish times), evaluation.

Target: ratio <= 1.5 for both. The fake registries run in a child process, so the peak RSS
printed is the scanner's own.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from multiprocessing.connection import Connection
from pathlib import Path

import anyio

from patchula.clock import FixedClock
from patchula.datasource import npm, pypi
from patchula.http.fetcher import DEFAULT_HOST_CONCURRENCY, Fetcher, make_client
from patchula.scan import freeze_startup_objects, scan
from patchula.settings import Settings
from tests.fake_registry import FakeRegistry

LATENCY = float(os.environ.get("BENCH_LATENCY", "0.05"))
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
PER_HOST = 250
VERSIONS = 30
REPOSITORIES = 10
TARGET = 1.5
START = datetime(2024, 1, 1, tzinfo=UTC)
SCAN_HOSTS = ("npm", "pypi", "crates-index", "goproxy")


def _serve(conn: Connection, latency: float) -> None:
    """Child process: two seeded fake registries; answer commands until told to stop.

    Commands: ``"counts"`` (requests and peak concurrency per host since the last reset, then
    reset), ``"stop"``.
    """
    registries = [FakeRegistry(latency=latency), FakeRegistry(latency=latency)]
    versions = {f"1.{i}.0": START + timedelta(days=7 * i) for i in range(VERSIONS)}
    releases = {f"1.{i}": START + timedelta(days=7 * i) for i in range(VERSIONS)}
    modules = {f"v1.{i}.0": START + timedelta(days=7 * i) for i in range(VERSIONS)}
    for r, registry in enumerate(registries):
        for i in range(PER_HOST):
            registry.npm.add(f"bench-{r}-{i}", versions)
            registry.pypi.add(f"bench-{r}-{i}", releases)
            registry.crates.add(f"bench-{r}-{i}", versions)
            registry.goproxy.add(f"example.com/bench/m{r}x{i}", modules)
        registry.reset_stats()
        registry.start()
    conn.send([reg.urls() for reg in registries])
    cpu = time.process_time()
    while conn.recv() != "stop":
        hosts = {
            f"{r}:{name}": host
            for r, reg in enumerate(registries)
            for name, host in reg.hosts.items()
        }
        conn.send(
            (
                {key: host.requests for key, host in hosts.items()},
                {key: host.peak_concurrency for key, host in hosts.items()},
            )
        )
        for registry in registries:
            registry.reset_stats()
    print(f"  (fake registry process CPU while serving: {time.process_time() - cpu:.2f} s)")
    for registry in registries:
        registry.stop()


async def _lookups(urls: list[dict[str, str]]) -> float:
    async with make_client() as client:
        fetcher = Fetcher(client)
        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for r, hosts in enumerate(urls):
                for i in range(PER_HOST):
                    tg.start_soon(npm.get_catalog, fetcher, hosts["npm"], f"bench-{r}-{i}")
                    tg.start_soon(pypi.get_catalog, fetcher, hosts["pypi"], f"bench-{r}-{i}")
        return time.perf_counter() - start


def _write_repositories(root: Path) -> list[str]:
    """10 repositories, each declaring 25 npm, 25 PyPI, 25 crates and 25 Go modules."""
    targets = []
    share = PER_HOST // REPOSITORIES
    for repo in range(REPOSITORIES):
        path = root / f"repo{repo}"
        path.mkdir()
        numbers = range(repo * share, repo * share + share)
        names = [f"bench-0-{i}" for i in numbers]
        deps = dict.fromkeys(names, "^1.0.0")
        (path / "package.json").write_text(json.dumps({"dependencies": deps}))
        (path / "requirements.txt").write_text("".join(f"{n}>=1.0\n" for n in names))
        crates = "".join(f'{n} = "1.0"\n' for n in names)
        (path / "Cargo.toml").write_text(
            f'[package]\nname = "repo{repo}"\nversion = "0.1.0"\n\n[dependencies]\n{crates}'
        )
        requires = "".join(f"\texample.com/bench/m0x{i} v1.0.0\n" for i in numbers)
        (path / "go.mod").write_text(
            f"module example.com/repo{repo}\n\ngo 1.22\n\nrequire (\n{requires})\n"
        )
        targets.append(str(path))
    return targets


async def _scan(urls: list[dict[str, str]], targets: list[str]) -> tuple[float, int, int]:
    """A whole cold scan; returns wall seconds, rows and error rows."""
    hosts = urls[0]
    registries = {
        "npm": hosts["npm"],
        "pypi": hosts["pypi"],
        "crates": hosts["crates-index"],
        "crates-api": hosts["crates-api"],
        "goproxy": hosts["goproxy"],
    }
    settings = Settings.model_validate({"registries": registries})
    async with make_client() as client:
        fetcher = Fetcher(client)
        start = time.perf_counter()
        result = await scan(targets, settings, fetcher, FixedClock(datetime.now(UTC)))
        wall = time.perf_counter() - start
    rows = [row for r in result.repos for row in r.rows]
    return wall, len(rows), sum(1 for row in rows if row.finding.status == "error")


def _bound(counts: dict[str, int]) -> tuple[float, str, int]:
    """The network lower bound of one measurement: the slowest host's rounds times latency."""
    host, requests = max(counts.items(), key=lambda item: item[1])
    return math.ceil(requests / DEFAULT_HOST_CONCURRENCY) * LATENCY, host, requests


def _measure(
    name: str, conn: Connection, run: Callable[[], float], describe: Callable[[], str]
) -> None:
    ratios: list[float] = []
    for attempt in range(REPEATS):
        wall = run()
        conn.send("counts")
        counts: dict[str, int]
        peaks: dict[str, int]
        counts, peaks = conn.recv()
        bound, host, requests = _bound(counts)
        ratios.append(wall / bound)
        if attempt == 0:
            busy = ", ".join(f"{h} {n}" for h, n in sorted(counts.items()) if n)
            print(f"{name}: {describe()}")
            print(f"  requests per host: {busy}")
            peak = ", ".join(f"{h} {n}" for h, n in sorted(peaks.items()) if n)
            print(f"  server-side peak concurrency per host: {peak}")
            print(f"  network lower bound {bound:.3f} s (slowest host {host}: {requests} requests)")
        print(f"  run {attempt + 1}: wall {wall:.3f} s, ratio {wall / bound:.2f}")
    median = statistics.median(ratios)
    verdict = "met" if median <= TARGET else "MISSED"
    print(f"  median ratio {median:.2f} over {REPEATS} runs (target <= {TARGET}: {verdict})")


def main(_argv: list[str]) -> None:
    """Run both measurements and print their ratios and the peak RSS."""
    parent, child = multiprocessing.Pipe()
    server = multiprocessing.get_context("fork").Process(target=_serve, args=(child, LATENCY))
    server.start()
    freeze_startup_objects()  # as the CLI does before it scans
    try:
        urls: list[dict[str, str]] = parent.recv()
        _measure(
            "cold lookups",
            parent,
            lambda: anyio.run(_lookups, urls),
            lambda: (
                f"{PER_HOST * 4} packages over 4 hosts (npm and PyPI on two registries), "
                f"limit {DEFAULT_HOST_CONCURRENCY}, latency {LATENCY * 1000:.0f} ms"
            ),
        )
        with tempfile.TemporaryDirectory() as tmp:
            summary: list[tuple[int, int]] = []

            def one_scan() -> float:
                with tempfile.TemporaryDirectory(dir=tmp) as repos:
                    targets = _write_repositories(Path(repos))
                    wall, rows, errors = anyio.run(_scan, urls, targets)
                summary.append((rows, errors))
                return wall

            _measure(
                "cold scan",
                parent,
                one_scan,
                lambda: (
                    f"{REPOSITORIES} repositories, {PER_HOST} each of npm, PyPI, crates and Go "
                    f"modules on 4 hosts; rows {summary[0][0]}, errors {summary[0][1]}"
                ),
            )
    finally:
        parent.send("stop")
        server.join()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of the scanner process: {rss:.1f} MiB")
