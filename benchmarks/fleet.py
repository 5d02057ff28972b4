"""Memory of one run over a fleet: 1,000 local checkouts of 40 dependencies each (issue 19).

``REPOSITORIES`` generated checkouts, plain directories without ``.git`` (a checkout scans the
same with or without one; ``git init`` of a thousand directories would only slow the set-up),
each declaring 40 dependencies in two of ``package.json`` (npm, exact pins, ``^`` and ``~``
ranges), ``requirements.txt`` (PyPI, ``==``, ``>=``, ``~=``), ``Cargo.toml`` (crates, caret
requirements) and ``go.mod`` (Go modules, and the ``go`` directive's row): 28 in one ecosystem,
12 in the next, drawn without repetition from a shared pool of ``POOL`` packages per ecosystem,
as real fleets share their packages. One whole ``patchula run --concurrency 8 --format json``
process scans them all against the loopback fake registry (no latency) into a fresh cache file
(cold: every package is fetched once), then a second process the same targets on the now warm
cache.

Figure ``memory.fleet``: peak RSS (``ru_maxrss`` of the child, see ``harness.run_process``) of
the cold run, in MB (10^6 bytes), target <= 500 (issue 19). The details give KiB per row (peak
RSS / rows, and above the peak of ``patchula run`` on an empty directory) and the warm run's.
"""

from __future__ import annotations

import json
import random
import tempfile
from datetime import timedelta
from pathlib import Path

from benchmarks.harness import (
    RELEASES,
    START,
    VERSIONS,
    Figure,
    emit,
    isolated_env,
    note,
    report_summary,
    run_patchula,
)
from tests.fake_registry import FakeRegistry

REPOSITORIES = 1_000
PER_REPOSITORY = 40
MAIN_SHARE = 28  # dependencies in the checkout's main ecosystem; the rest in the next one
POOL = 100  # packages per ecosystem: 400 in all, each declared by about 100 checkouts
CONCURRENCY = 8
TARGET_MB = 500.0
ECOSYSTEMS = ("npm", "pypi", "crates", "go")
GO_VERSIONS = {f"v1.{i}.0": START + timedelta(days=7 * i) for i in range(30)}


def _package_json(names: list[str], pick: random.Random) -> str:
    deps = {name: pick.choice(("1.3.0", "^1.0.0", "~1.2.0")) for name in names}
    return json.dumps({"name": "fleet", "version": "1.0.0", "dependencies": deps}, indent=2)


def _requirements(names: list[str], pick: random.Random) -> str:
    return "".join(f"{name}{pick.choice(('==1.3', '>=1.0', '~=1.2'))}\n" for name in names)


def _cargo_toml(names: list[str], _: random.Random) -> str:
    deps = "".join(f'{name} = "1.0"\n' for name in names)
    return f'[package]\nname = "fleet"\nversion = "0.1.0"\n\n[dependencies]\n{deps}'


def _go_mod(names: list[str], _: random.Random) -> str:
    requires = "".join(f"\texample.com/fleet/{name} v1.0.0\n" for name in names)
    return f"module example.com/fleet\n\ngo 1.22\n\nrequire (\n{requires})\n"


MANIFESTS = {
    "npm": ("package.json", _package_json),
    "pypi": ("requirements.txt", _requirements),
    "crates": ("Cargo.toml", _cargo_toml),
    "go": ("go.mod", _go_mod),
}


def write_fleet(root: Path, count: int, pool: int) -> list[str]:
    """Write ``count`` checkouts under ``root`` (see the module docstring); their paths.

    Checkout ``r``'s main ecosystem is ``ECOSYSTEMS[r % 4]``; its packages are drawn with a
    generator seeded by ``r``, so every run writes the same fleet.
    """
    targets = []
    for r in range(count):
        pick = random.Random(r)  # noqa: S311 - a reproducible fleet, not a secret
        checkout = root / f"repo{r:04d}"
        checkout.mkdir(parents=True)
        main = r % len(ECOSYSTEMS)
        shares = {
            ECOSYSTEMS[main]: MAIN_SHARE,
            ECOSYSTEMS[(main + 1) % len(ECOSYSTEMS)]: PER_REPOSITORY - MAIN_SHARE,
        }
        for ecosystem, share in shares.items():
            # go.mod's ``go`` directive is a dependency too (the Go toolchain's version).
            wanted = share - 1 if ecosystem == "go" else share
            numbers = sorted(pick.sample(range(pool), min(wanted, pool)))
            filename, render = MANIFESTS[ecosystem]
            text = render([f"fleet-{i}" for i in numbers], pick)
            (checkout / filename).write_text(text, encoding="utf-8")
        targets.append(str(checkout))
    return targets


def seed(registry: FakeRegistry, pool: int) -> None:
    """Register ``pool`` packages of each ecosystem (30 releases a week apart)."""
    for i in range(pool):
        registry.npm.add(f"fleet-{i}", VERSIONS)
        registry.pypi.add(f"fleet-{i}", RELEASES)
        registry.crates.add(f"fleet-{i}", VERSIONS)
        registry.goproxy.add(f"example.com/fleet/fleet-{i}", GO_VERSIONS)


def main(*, quick: bool = False) -> None:
    """Print the ``memory.fleet`` figure."""
    count, pool = (8, 12) if quick else (REPOSITORIES, POOL)
    with tempfile.TemporaryDirectory() as tmp, FakeRegistry() as registry:
        root = Path(tmp)
        env = isolated_env(root)
        seed(registry, pool)
        targets = write_fleet(root / "fleet", count, pool)
        args = ["run", "--concurrency", str(CONCURRENCY), "--format", "json"]
        args += ["--cache", str(root / "cache.sqlite3")]
        for name in ("npm", "pypi", "crates-index", "crates-api", "goproxy"):
            datasource = "crates" if name == "crates-index" else name
            args += ["--registry", f"{datasource}={registry.url(name)}"]
        empty = root / "empty"
        empty.mkdir()
        baseline = run_patchula([*args, str(empty)], env, output=root / "empty.json")
        # Every target on the command line, as a CI job over a fleet would pass them (or a
        # targets file: the same list once read).
        cold = run_patchula([*args, *targets], env, output=root / "cold.json")
        summary = report_summary(root / "cold.json")
        requests = sum(registry.host(name).requests for name in registry.hosts)
        warm = run_patchula([*args, *targets], env, output=root / "warm.json")
        warm_summary = report_summary(root / "warm.json")
        rows = int(summary["dependencies"])
        per_row = cold.max_rss_kib / max(rows, 1)
        above = (cold.max_rss_kib - baseline.max_rss_kib) / max(rows, 1)
        note(
            f"fleet: {count} checkouts, {rows} rows ({summary['errors']} errors), "
            f"{requests} requests; cold run {cold.wall:.1f} s"
        )
        note(
            f"fleet: `run EMPTY` peak RSS {baseline.max_rss_kib / 1024:.1f} MiB; warm run "
            f"{warm.max_rss_kib / 1024:.1f} MiB, {warm.wall:.1f} s, "
            f"{warm_summary['dependencies']} rows"
        )
        megabytes = cold.max_rss_kib * 1024 / 1e6
        emit(
            Figure(
                "memory.fleet",
                f"peak RSS of one cold `run --concurrency {CONCURRENCY} --format json` over "
                f"{count} checkouts x {PER_REPOSITORY} dependencies: {megabytes:.1f} MB "
                f"({per_row:.2f} KiB per row; {above:.2f} KiB per row above `run EMPTY`)",
                megabytes,
                TARGET_MB,
                unit="MB",
            )
        )
