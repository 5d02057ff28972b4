"""Range scaling: 100 repositories x 3 npm ranges on the real 3,478-version typescript catalog.

The loopback fake registry serves the real typescript packument (``benchmarks/data``) under three
names; each of 100 generated checkouts declares all three, with ranges drawn from a pool of 20
real-world shapes (carets, tildes, x-ranges, hyphen-free comparator sets, unions, prerelease
ranges), so every package meets 20 distinct ranges: 300 rows, 60 distinct (package, range)
pairs. One cold run over one checkout fills a cache file; every measured run is warm (fresh
entries, no request), so what grows with the rows is extraction, range evaluation and the
report, not the network.

Lower bound: the same ``patchula run --format json`` over ONE of those checkouts (3 rows). It
starts the same process and decodes the same three catalogs once each, so the 100-checkout run
can never take less; ``ratio = wall(100 checkouts) / wall(1 checkout)``, runs interleaved,
medians. Also printed: rows/s of the whole run and of the 297 extra rows alone. Target <= 1.5
(issue 12 asks for "rows/s" and measured 4.16 s here against 0.51 s for ``ncu --deep``; 1.5 is
ours: 297 more rows may cost at most half of one run's fixed work).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from benchmarks.harness import (
    Figure,
    emit,
    isolated_env,
    median,
    note,
    real_document,
    report_summary,
    rounds,
    run_patchula,
    write_checkout,
)
from tests.fake_registry import FakeRegistry

REPOSITORIES = 100
REPEATS = 3
BUDGET = 40.0  # seconds for the measured rounds (at least one)
TARGET = 1.5
PACKAGES = ("typescript", "typescript-b", "typescript-c")
RANGES = (
    "^5.4.5",
    "~5.3.3",
    "^4.9.5",
    ">=4.0.0 <5.0.0",
    "5.x",
    "^3.9.10",
    "~4.1.0",
    ">=2.0.0",
    "^5.0.0-beta",
    "4.9.5 || 5.0.4",
    "<5.2",
    "^2.9.2",
    "~5.5.0-rc",
    "*",
    ">=5.0.0 <5.4.0-0",
    "^4",
    "~3.7",
    "4.x || 5.x",
    ">3.9.0 <=4.9.5",
    "^5.7.0-dev.20240901",
)


def main(*, quick: bool = False) -> None:
    """Print the ``ranges.typescript`` figure."""
    document_name = "npm-left-pad" if quick else "npm-typescript"
    repositories, repeats = (2, 1) if quick else (REPOSITORIES, REPEATS)
    document = json.loads(real_document(document_name))
    versions = len(document["versions"])
    with tempfile.TemporaryDirectory() as tmp, FakeRegistry() as registry:
        root = Path(tmp)
        env = isolated_env(root)
        for name in PACKAGES:
            registry.npm.add_document(document | {"_id": name, "name": name})
        registry.host("npm").cache_control = "max-age=86400"  # warm runs stay fresh
        checkouts = [
            str(
                write_checkout(
                    root / f"repo{r}",
                    npm={
                        name: RANGES[(3 * r + k) % len(RANGES)] for k, name in enumerate(PACKAGES)
                    },
                )
            )
            for r in range(repositories)
        ]
        cache = str(root / "cache.sqlite3")
        args = ["run", "--format", "json", "--registry", f"npm={registry.url('npm')}"]
        args += ["--cache", cache]
        # A cold run over one checkout fetches the three catalogs into the cache file.
        filled = run_patchula([*args, checkouts[0]], env, output=root / "fill.json")
        rows = report_summary(root / "fill.json")
        note(
            f"ranges: cold run filling the cache {filled.wall:.3f} s; rows {rows['dependencies']}, "
            f"errors {rows['errors']}; {len(PACKAGES)} packages x {versions} versions"
        )
        # (wall, CPU) seconds of each run; quick: the cold run stands for the one-checkout run.
        one: list[tuple[float, float]] = [(filled.wall, filled.cpu)] if quick else []
        many: list[tuple[float, float]] = []
        for attempt in rounds(repeats, BUDGET):
            if not quick:
                done = run_patchula([*args, checkouts[0]], env, output=root / "one.json")
                one.append((done.wall, done.cpu))
            done = run_patchula([*args, *checkouts], env, output=root / "many.json")
            many.append((done.wall, done.cpu))
            errors = report_summary(root / "many.json")["errors"]
            note(
                f"ranges run {attempt + 1}: 1 checkout {one[-1][0]:.3f} s, all {many[-1][0]:.3f} s "
                f"({errors} error rows)"
            )
        requests = registry.host("npm").requests
        wall_one, wall_many = median(w for w, _ in one), median(w for w, _ in many)
        cpu_one, cpu_many = median(c for _, c in one), median(c for _, c in many)
        total = len(PACKAGES) * repositories
        extra = total - len(PACKAGES)
        marginal = extra / (wall_many - wall_one) if wall_many > wall_one else float("inf")
        note(f"ranges: {requests} requests in all (the cold run's {len(PACKAGES)} only)")
        emit(
            Figure(
                "ranges.typescript",
                f"{repositories} checkouts x {len(PACKAGES)} ranges on {versions} versions "
                f"({total} rows): {wall_many:.3f} s, {total / wall_many:.0f} rows/s; bound = 1 "
                f"checkout ({len(PACKAGES)} rows, same catalogs): {wall_one:.3f} s; extra "
                f"{extra} rows at {marginal:.0f} rows/s; warm cache, medians of {len(many)}; CPU "
                f"time {cpu_many:.2f} s / {cpu_one:.2f} s = {cpu_many / cpu_one:.2f}",
                wall_many / wall_one,
                TARGET,
            )
        )
