"""The SQLite cache on repeated runs, against the loopback fake registry (50 ms latency).

(a) warm runs whose entries are fresh: requests sent (target 0) and warm / cold wall time
    (target <= 0.1; three cold and five warm runs, each printed, the medians compared);
(b) a run whose entries have expired: every request is conditional and answered 304, bodies are
    reused without being derived again (figure: 304s / requests, target >= 1).

In-process (``scan`` with a ``Cache`` and the run's fetcher), so start-up is not in the warm run.
Stored compact / raw sizes on real documents are the ``compact`` benchmark.
"""

from __future__ import annotations

import json
import multiprocessing
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from multiprocessing.connection import Connection
from pathlib import Path

import anyio

from benchmarks.harness import Figure, emit, note
from patchula.cache import Cache
from patchula.clock import FixedClock
from patchula.http.fetcher import Fetcher, Timer, make_client
from patchula.scan import freeze_startup_objects, scan
from patchula.settings import Settings
from tests.fake_registry import FakeRegistry

LATENCY = 0.05
PACKAGES = 250
WARM_RUNS = 5
COLD_RUNS = 3
WARM_TARGET = 0.1
START = datetime(2024, 1, 1, tzinfo=UTC)


def _serve(conn: Connection, packages: int) -> None:
    """Child process: one seeded fake registry; answers "stats" (and resets them) until "stop"."""
    registry = FakeRegistry(latency=LATENCY)
    versions = {f"1.{i}.0": START + timedelta(days=7 * i) for i in range(30)}
    releases = {f"1.{i}": START + timedelta(days=7 * i) for i in range(30)}
    for i in range(packages):
        registry.npm.add(f"bench-{i}", versions)
        registry.pypi.add(f"bench-{i}", releases)
    registry.start()
    conn.send((registry.url("npm"), registry.url("pypi")))
    while conn.recv() != "stop":
        hosts = (registry.host("npm"), registry.host("pypi"))
        conn.send((sum(h.requests for h in hosts), sum(h.not_modified for h in hosts)))
        registry.reset_stats()
    registry.stop()


def _repos(root: Path, packages: int) -> list[str]:
    targets = []
    share = max(1, packages // 10)
    for repo in range(min(10, packages)):
        path = root / f"repo{repo}"
        path.mkdir()
        names = [f"bench-{i}" for i in range(repo * share, repo * share + share)]
        (path / "package.json").write_text(
            json.dumps({"dependencies": dict.fromkeys(names, "^1.0.0")})
        )
        (path / "requirements.txt").write_text("".join(f"{n}>=1.0\n" for n in names))
        targets.append(str(path))
    return targets


async def _run(
    targets: list[str], settings: Settings, cache_path: Path, later: float = 0.0
) -> tuple[float, int]:
    """Scan with the cache at ``cache_path``; ``later`` (seconds) moves the clock forward."""
    cache = Cache.open(cache_path)
    timer = Timer(wall=lambda: datetime.now(UTC) + timedelta(seconds=later))
    try:
        async with make_client() as client:
            fetcher = Fetcher(client, cache=cache, timer=timer)
            start = time.perf_counter()
            result = await scan(targets, settings, fetcher, FixedClock(datetime.now(UTC)))
            wall = time.perf_counter() - start
    finally:
        await cache.aclose()
    errors = sum(1 for r in result.repos for row in r.rows if row.finding.status == "error")
    return wall, errors


def main(*, quick: bool = False) -> None:
    """Print the ``cache.warm-cold`` and ``cache.expired`` figures."""
    packages, cold_count, warm_count = (4, 1, 1) if quick else (PACKAGES, COLD_RUNS, WARM_RUNS)
    parent, child = multiprocessing.Pipe()
    server = multiprocessing.get_context("fork").Process(target=_serve, args=(child, packages))
    server.start()
    freeze_startup_objects()  # as the CLI does before it scans
    npm_url, pypi_url = parent.recv()
    settings = Settings.model_validate({"registries": {"npm": npm_url, "pypi": pypi_url}})
    try:
        with tempfile.TemporaryDirectory() as tmp:
            targets = _repos(Path(tmp), packages)
            # Cold runs, each into an empty cache file; the last file serves the warm runs.
            cold_runs: list[float] = []
            cold_requests = 0
            for attempt in range(cold_count):
                cache_path = Path(tmp) / f"cache-{attempt}.sqlite3"
                cold_runs.append(anyio.run(_run, targets, settings, cache_path)[0])
                parent.send("stats")
                cold_requests, _ = parent.recv()
            cold = statistics.median(cold_runs)
            each_cold = ", ".join(f"{c:.3f}" for c in cold_runs)
            note(f"cache: cold runs {cold_requests} requests each, {each_cold} s")
            # This VM's speed varies by tens of percent from one second to the next, and a warm
            # run is pure CPU (the cold one mostly waits): five warm runs, the median judged.
            warm_runs: list[float] = []
            warm_requests = errors = 0
            for _ in range(warm_count):
                warm, run_errors = anyio.run(_run, targets, settings, cache_path)
                parent.send("stats")
                requests, _ = parent.recv()
                warm_runs.append(warm)
                warm_requests += requests
                errors += run_errors
            warm = statistics.median(warm_runs)
            each = ", ".join(f"{w / cold:.3f}" for w in warm_runs)  # against the cold median
            note(f"cache: warm / cold per run {each}; {errors} error rows")
            emit(
                Figure(
                    "cache.warm-cold",
                    f"in-process scan, {cold_requests} lookups: median warm {warm:.3f} s / cold "
                    f"{cold:.3f} s",
                    warm / cold,
                    WARM_TARGET,
                )
            )
            emit(
                Figure(
                    "cache.warm-requests",
                    f"{warm_requests} requests in {warm_count} warm runs of {cold_requests} "
                    "fresh entries (requests / run)",
                    warm_requests / warm_count,
                    0.0,
                )
            )
            # The fake registry says max-age=300: ten minutes later every entry has expired.
            expired, _ = anyio.run(_run, targets, settings, cache_path, 600.0)
            parent.send("stats")
            requests, not_modified = parent.recv()
            emit(
                Figure(
                    "cache.expired",
                    f"{requests} requests after expiry, {not_modified} answered 304, "
                    f"{expired:.3f} s (304s / requests)",
                    not_modified / requests if requests else 0.0,
                    1.0,
                    op=">=",
                )
            )
    finally:
        parent.send("stop")
        server.join()
