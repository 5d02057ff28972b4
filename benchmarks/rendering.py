"""Rendering and memory at 16,000 rows: whole ``patchula run`` processes on a warm cache.

400 generated checkouts of 40 exact pins each (20 npm, 20 PyPI) make 16,000 rows over 1,000
packages (500 per registry, each declared by 16 checkouts); 25 of those checkouts make 1,000
rows over the same 1,000 packages. One cold run over the 25 fills a cache file from the
loopback fake registry (no latency); every measured run is warm (fresh entries, no request), so
the runs differ only in rows and output. Interleaved, ``REPEATS`` times: the default table and
``--format json`` at 16,000 rows, ``--format json`` at 1,000 rows; stdout goes to a file (not a
terminal), as in CI.

Figures: ``rendering.table-json`` = median wall of the table run / of the JSON run at 16,000
rows (target <= 1.5, issue 12); ``memory.rss-per-row`` = (median peak RSS of the JSON run at
16,000 rows - at 1,000 rows) / 15,000, in KiB (``ru_maxrss`` of each fresh process; target
<= 4, so 1,000 repositories of 40 dependencies fit in 300 MB).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

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
from tests.fake_registry import FakeRegistry

PER_REGISTRY = 500
PER_CHECKOUT = 20  # per registry: 40 rows a checkout
ROWS = (1_000, 16_000)
REPEATS = 3
BUDGET = 75.0  # seconds for the measured rounds (at least one)
RENDER_TARGET = 1.5
RSS_TARGET = 4.0


def _checkouts(root: Path, count: int, per_registry: int) -> list[str]:
    """``count`` checkouts; checkout ``r`` pins packages ``r*20 … r*20+19`` (mod the total)."""
    targets = []
    for r in range(count):
        numbers = [(r * PER_CHECKOUT + j) % per_registry for j in range(PER_CHECKOUT)]
        checkout = write_checkout(
            root / f"repo{r}",
            npm={f"bench-{i}": "1.3.0" for i in numbers},
            pypi={f"bench-{i}": "==1.3" for i in numbers},
        )
        targets.append(str(checkout))
    return targets


def main(*, quick: bool = False) -> None:
    """Print the ``rendering.table-json`` and ``memory.rss-per-row`` figures."""
    per_registry, (small, large), repeats = (
        (PER_CHECKOUT, (40, 80), 1) if quick else (PER_REGISTRY, ROWS, REPEATS)
    )
    with tempfile.TemporaryDirectory() as tmp, FakeRegistry() as registry:
        root = Path(tmp)
        env = isolated_env(root)
        for i in range(per_registry):
            registry.npm.add(f"bench-{i}", VERSIONS)
            registry.pypi.add(f"bench-{i}", RELEASES)
        for host in ("npm", "pypi"):
            registry.host(host).cache_control = "max-age=86400"  # warm runs stay fresh
        targets = _checkouts(root, large // (2 * PER_CHECKOUT), per_registry)
        fewer = targets[: small // (2 * PER_CHECKOUT)]
        args = ["run", "--cache", str(root / "cache.sqlite3")]
        args += ["--registry", f"npm={registry.url('npm')}"]
        args += ["--registry", f"pypi={registry.url('pypi')}"]
        filled = run_patchula([*args, "--format", "json", *fewer], env, output=root / "fill.json")
        summary = report_summary(root / "fill.json")
        note(
            f"rendering: cold run filling the cache {filled.wall:.3f} s, rows "
            f"{summary['dependencies']}, errors {summary['errors']}"
        )
        runs: dict[str, list[tuple[float, int, float]]] = {
            "table": [],
            "json": [],
            "json-small": [],
        }
        if quick:  # fewer processes: the cold run stands for the small one
            runs["json-small"].append((filled.wall, filled.max_rss_kib, filled.cpu))
        for attempt in rounds(repeats, BUDGET):
            table = run_patchula([*args, *targets], env, output=root / "table.txt")
            as_json = run_patchula(
                [*args, "--format", "json", *targets], env, output=root / "j.json"
            )
            rows = report_summary(root / "j.json")
            runs["table"].append((table.wall, table.max_rss_kib, table.cpu))
            runs["json"].append((as_json.wall, as_json.max_rss_kib, as_json.cpu))
            if not quick:
                few = run_patchula([*args, "--format", "json", *fewer], env, output=root / "s.json")
                runs["json-small"].append((few.wall, few.max_rss_kib, few.cpu))
            few_wall, few_rss, _ = runs["json-small"][-1]
            lines = len((root / "table.txt").read_bytes().splitlines())
            note(
                f"rendering run {attempt + 1}: table {table.wall:.3f} s ({lines} lines, peak RSS "
                f"{table.max_rss_kib / 1024:.0f} MiB), JSON {as_json.wall:.3f} s "
                f"({rows['dependencies']} rows, {rows['errors']} errors, "
                f"{as_json.max_rss_kib / 1024:.0f} MiB), JSON at {small} rows {few_wall:.3f} s "
                f"({few_rss / 1024:.0f} MiB)"
            )
        requests = registry.host("npm").requests + registry.host("pypi").requests
        note(f"rendering: {requests} requests in all (the cold run's only)")
        wall_table = median(wall for wall, _, _ in runs["table"])
        wall_json = median(wall for wall, _, _ in runs["json"])
        cpu_table = median(cpu for _, _, cpu in runs["table"])
        cpu_json = median(cpu for _, _, cpu in runs["json"])
        emit(
            Figure(
                "rendering.table-json",
                f"whole process, stdout to a file, {large} rows: table {wall_table:.3f} s / JSON "
                f"{wall_json:.3f} s (warm cache, medians of {len(runs['json'])}; CPU time "
                f"{cpu_table:.2f} s / {cpu_json:.2f} s = {cpu_table / cpu_json:.2f})",
                wall_table / wall_json,
                RENDER_TARGET,
            )
        )
        rss_large = median(rss for _, rss, _ in runs["json"])
        rss_small = median(rss for _, rss, _ in runs["json-small"])
        emit(
            Figure(
                "memory.rss-per-row",
                f"peak RSS of --format json at {large} rows {rss_large / 1024:.1f} MiB - at "
                f"{small} rows {rss_small / 1024:.1f} MiB, / {large - small} rows "
                "(fresh processes)",
                max(rss_large - rss_small, 0) / (large - small),
                RSS_TARGET,
                unit="KiB",
            )
        )
