"""Whole-process cold scans against the loopback fake registry: wall time / network bound.

1. ``scan.nN`` (N = 40, 400, 5,000): ``patchula run --format json`` in a fresh process (start-up
   included) over one generated checkout declaring N dependencies, half npm (``package.json``,
   exact pins) and half PyPI (``requirements.txt``, ``==`` pins), into a fresh, empty cache file
   (cold: every lookup is a request). The fake registry answers each request after 50 ms
   (``BENCH_LATENCY``) with Nagle off (TCP_NODELAY), npm packuments and PEP 691 pages of 30
   releases. Each fake host gets ``--host-concurrency 127.0.0.1:PORT=16``, the default limit,
   given explicitly so the limit in the bound is the one the run used. The two hosts are served
   in parallel, so the bound is the busiest host's: ``max over hosts of ceil(requests on the
   host / 16) x 50 ms`` with the requests the fake registry counted (N/2 each, one per lookup).
   Targets: <= 1.5 at 40, <= 1.15 at 400 and 5,000; the median of the runs is judged.
   ``scan.nN.server-floor`` (no target) sends the same requests from ``floor_client``, a
   client that only reads the answers, over the same number of connections per host: what the
   fake registry (a Python ``ThreadingHTTPServer`` on the same two cores) allows a scan whose
   own work costs nothing. The scan can never be below it.
2. In-process, the network machinery alone (no start-up, no rendering):
   ``network.lookups`` -- 1,000 unique packages over 4 hosts (two fake registries, each with an
   npm and a PyPI host), each looked up through the run's real machinery (shared client,
   per-host limits, governor, datasource parsing); ``network.scan`` -- ``scan`` of 10
   repositories declaring 1,000 unique packages over 4 hosts (npm, PyPI, crates, Go modules; a
   Go module costs several requests). Bound as above with the default limit; target <= 1.5.
   The fake registries of these two run in a child process.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from multiprocessing.connection import Connection
from pathlib import Path

import anyio

from benchmarks.harness import (
    RELEASES,
    VERSIONS,
    Figure,
    emit,
    isolated_env,
    median,
    note,
    report_summary,
    rounds,
    run_patchula,
    write_checkout,
)
from patchula.clock import FixedClock
from patchula.datasource import npm, pypi
from patchula.http.fetcher import DEFAULT_HOST_CONCURRENCY, Fetcher, make_client
from patchula.scan import freeze_startup_objects, scan
from patchula.settings import Settings
from tests.fake_registry import FakeRegistry

LATENCY = float(os.environ.get("BENCH_LATENCY", "0.05"))
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
LIMIT = 16  # the default per-host limit, passed explicitly to every fake host
SIZES = (40, 400, 5_000)
TARGETS = {40: 1.5, 400: 1.15, 5_000: 1.15}
RUNS = {40: 5, 400: 3, 5_000: 3}
BUDGET = 40.0  # seconds for the runs of one size (at least one)
PER_HOST = 250
REPOSITORIES = 10
TARGET = 1.5
START = datetime(2024, 1, 1, tzinfo=UTC)


def scan_bound(requests: Mapping[str, int], limit: int, latency: float) -> tuple[float, str]:
    """The network lower bound of a run whose hosts are served in parallel, and how it is made.

    It is the busiest host's ``ceil(requests / limit)`` rounds of ``latency`` seconds.
    """
    host, most = max(requests.items(), key=lambda item: item[1])
    rounds = math.ceil(most / limit)
    spread = ", ".join(f"{name} {count}" for name, count in sorted(requests.items()))
    how = (
        f"max over {len(requests)} hosts ({spread} requests) of ceil(requests / {limit}) x "
        f"{latency * 1000:.0f} ms = {rounds} rounds on {host}"
    )
    return rounds * latency, how


def whole_process(sizes: tuple[int, ...], runs: Mapping[int, int], latency: float) -> None:
    """The ``scan.nN`` figures: cold ``patchula run`` processes against the fake registry."""
    largest = max(sizes)
    with tempfile.TemporaryDirectory() as tmp, FakeRegistry(latency=latency) as registry:
        root = Path(tmp)
        env = isolated_env(root)
        for i in range((largest + 1) // 2):
            registry.npm.add(f"bench-{i}", VERSIONS)
            registry.pypi.add(f"bench-{i}", RELEASES)
        hosts = {"npm": registry.host("npm"), "pypi": registry.host("pypi")}
        args = ["run", "--format", "json", "--registry", f"npm={registry.url('npm')}"]
        args += ["--registry", f"pypi={registry.url('pypi')}"]
        for host in hosts.values():
            args += ["--host-concurrency", f"{host.url.removeprefix('http://')}={LIMIT}"]
        for size in sizes:
            npm_count = (size + 1) // 2
            checkout = write_checkout(
                root / f"n{size}",
                npm={f"bench-{i}": "1.3.0" for i in range(npm_count)},
                pypi={f"bench-{i}": "==1.3" for i in range(size - npm_count)},
            )
            ratios: list[float] = []
            walls: list[float] = []
            how = ""
            bound = 0.0
            for attempt in rounds(runs[size], BUDGET):
                registry.reset_stats()
                cache = root / f"cache-n{size}-{attempt}.sqlite3"  # fresh: a cold run
                out = root / f"n{size}-{attempt}.json"
                done = run_patchula([*args, "--cache", str(cache), str(checkout)], env, output=out)
                summary = report_summary(out)
                requests = {name: host.requests for name, host in hosts.items()}
                peaks = {name: host.peak_concurrency for name, host in hosts.items()}
                bound, how = scan_bound(requests, LIMIT, latency)
                walls.append(done.wall)
                ratios.append(done.wall / bound)
                note(
                    f"scan.n{size} run {attempt + 1}: wall {done.wall:.3f} s, ratio "
                    f"{done.wall / bound:.2f}; rows {summary['dependencies']}, errors "
                    f"{summary['errors']}; server-side peak concurrency "
                    + ", ".join(f"{h} {p}" for h, p in peaks.items())
                )
            emit(
                Figure(
                    f"scan.n{size}",
                    f"median wall {median(walls):.3f} s over {len(walls)} cold runs, bound "
                    f"{bound:.3f} s ({how})",
                    median(ratios),
                    TARGETS.get(size, TARGET),
                )
            )
            # The same requests from the least client (``floor_client``): what this server,
            # on these cores, allows a run whose own work costs nothing. No target: what the
            # scan measures above it is patchula's own (start-up included).
            registry.reset_stats()
            floor = _server_floor(
                env,
                {
                    hosts["npm"].url: [f"/bench-{i}" for i in range(npm_count)],
                    hosts["pypi"].url: [f"/simple/bench-{i}/" for i in range(size - npm_count)],
                },
            )
            emit(
                Figure(
                    f"scan.n{size}.server-floor",
                    f"the same {size} requests from a client that only reads the answers, "
                    f"{floor:.3f} s / bound {bound:.3f} s (the least the scan can take here)",
                    floor / bound,
                )
            )


def _server_floor(env: Mapping[str, str], paths: Mapping[str, list[str]]) -> float:
    """Wall seconds of ``benchmarks.floor_client`` sending ``paths`` (base URL → paths).

    In a child process, as the scan is, with the scan's per-host limit. Raises
    ``RuntimeError`` when an answer is not a 200.
    """
    specs = [f"{url.removeprefix('http://')}={','.join(items)}" for url, items in paths.items()]
    done = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "benchmarks.floor_client", str(LIMIT), *specs],
        env=dict(env),
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
        cwd=Path(__file__).resolve().parent.parent,
    )
    wall, requests, errors = done.stdout.split()
    if int(errors) or int(requests) != sum(map(len, paths.values())):
        msg = f"floor client: {errors} errors in {requests} answers"
        raise RuntimeError(msg)
    return float(wall)


def _serve(conn: Connection, latency: float, per_host: int) -> None:
    """Child process: two seeded fake registries; answer commands until told to stop.

    Commands: ``"counts"`` (requests and peak concurrency per host since the last reset, then
    reset), ``"stop"``.
    """
    registries = [FakeRegistry(latency=latency), FakeRegistry(latency=latency)]
    modules = {f"v1.{i}.0": START + timedelta(days=7 * i) for i in range(30)}
    for r, registry in enumerate(registries):
        for i in range(per_host):
            registry.npm.add(f"bench-{r}-{i}", VERSIONS)
            registry.pypi.add(f"bench-{r}-{i}", RELEASES)
            registry.crates.add(f"bench-{r}-{i}", VERSIONS)
            registry.goproxy.add(f"example.com/bench/m{r}x{i}", modules)
        registry.reset_stats()
        registry.start()
    conn.send([reg.urls() for reg in registries])
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
    for registry in registries:
        registry.stop()


async def _lookups(urls: list[dict[str, str]], per_host: int) -> float:
    async with make_client() as client:
        fetcher = Fetcher(client)
        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for r, hosts in enumerate(urls):
                for i in range(per_host):
                    tg.start_soon(npm.get_catalog, fetcher, hosts["npm"], f"bench-{r}-{i}")
                    tg.start_soon(pypi.get_catalog, fetcher, hosts["pypi"], f"bench-{r}-{i}")
        return time.perf_counter() - start


def _write_repositories(root: Path, per_host: int) -> list[str]:
    """10 repositories sharing ``per_host`` each of npm, PyPI, crates and Go modules."""
    targets = []
    share = max(1, per_host // REPOSITORIES)
    for repo in range(min(REPOSITORIES, per_host)):
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


def _measure(
    name: str,
    conn: Connection,
    run: Callable[[], float],
    describe: Callable[[], str],
    *,
    repeats: int,
    latency: float,
) -> None:
    ratios: list[float] = []
    how = ""
    for attempt in range(repeats):
        wall = run()
        conn.send("counts")
        counts: dict[str, int]
        peaks: dict[str, int]
        counts, peaks = conn.recv()
        bound, how = scan_bound(
            {h: n for h, n in counts.items() if n}, DEFAULT_HOST_CONCURRENCY, latency
        )
        ratios.append(wall / bound)
        if attempt == 0:
            peak = ", ".join(f"{h} {n}" for h, n in sorted(peaks.items()) if n)
            note(f"{name}: {describe()}; server-side peak concurrency per host: {peak}")
        note(f"{name} run {attempt + 1}: wall {wall:.3f} s, ratio {wall / bound:.2f}")
    emit(
        Figure(
            name,
            f"in-process, median of {repeats} runs, bound {bound:.3f} s ({how})",
            median(ratios),
            TARGET,
        )
    )


def in_process(per_host: int, repeats: int, latency: float) -> None:
    """The ``network.lookups`` and ``network.scan`` figures (the machinery, in this process)."""
    parent, child = multiprocessing.Pipe()
    server = multiprocessing.get_context("fork").Process(
        target=_serve, args=(child, latency, per_host)
    )
    server.start()
    freeze_startup_objects()  # as the CLI does before it scans
    try:
        urls: list[dict[str, str]] = parent.recv()
        _measure(
            "network.lookups",
            parent,
            lambda: anyio.run(_lookups, urls, per_host),
            lambda: f"{per_host * 4} packages over 4 hosts (npm and PyPI on two registries)",
            repeats=repeats,
            latency=latency,
        )
        with tempfile.TemporaryDirectory() as tmp:
            summary: list[tuple[int, int]] = []

            def one_scan() -> float:
                with tempfile.TemporaryDirectory(dir=tmp) as repos:
                    targets = _write_repositories(Path(repos), per_host)
                    wall, rows, errors = anyio.run(_scan, urls, targets)
                summary.append((rows, errors))
                return wall

            _measure(
                "network.scan",
                parent,
                one_scan,
                lambda: (
                    f"{per_host} each of npm, PyPI, crates and Go modules on 4 hosts; rows "
                    f"{summary[0][0]}, errors {summary[0][1]}"
                ),
                repeats=repeats,
                latency=latency,
            )
    finally:
        parent.send("stop")
        server.join()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    note(f"peak RSS of this benchmark process (fake registries included): {rss:.1f} MiB")


def main(*, quick: bool = False) -> None:
    """Print the whole-process ``scan.nN`` figures, then the in-process ones."""
    if quick:  # the smoke test's configuration: every code path, no meaningful timing
        whole_process((10,), {10: 1}, 0.01)
        in_process(4, 1, 0.01)
        return
    whole_process(SIZES, RUNS, LATENCY)
    in_process(PER_HOST, REPEATS, LATENCY)
