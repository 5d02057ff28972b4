"""``nox -s bench`` / ``python -m benchmarks [NAME ...] [--quick]``: the benchmarks of issue 12.

Each benchmark prints one figure line per figure (format: ``benchmarks.harness``) with indented
details between them; a run of several ends with every figure line again and the total time.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks import (
    cache,
    compact,
    fleet,
    harness,
    lockfiles,
    network,
    offline,
    ranges,
    rendering,
    startup,
)

BENCHMARKS: dict[str, tuple[str, Callable[..., None]]] = {
    "network": ("whole-process cold scans / network bound; in-process lookups", network.main),
    "startup": ("--version and run EMPTY / python -c 'import ssl, sqlite3'", startup.main),
    "ranges": ("100 checkouts x 3 ranges on the real typescript catalog", ranges.main),
    "lockfiles": ("extraction seconds per MB at 1k / 8k / 32k locked packages", lockfiles.main),
    "rendering": ("table / JSON and RSS per row at 16,000 rows", rendering.main),
    "compact": ("stored raw / stored compact on real npm and PyPI documents", compact.main),
    "cache": ("warm / cold and expired entries, in-process", cache.main),
    "offline": ("extraction and evaluation over the shared corpus", offline.main),
    "fleet": ("peak RSS of one run over 1,000 checkouts x 40 dependencies", fleet.main),
}
ALIASES = {"scan": "network", "memory": "rendering"}


def main(argv: Sequence[str] | None = None) -> None:
    """Run the named benchmarks (default: all) and print their figures."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Issue 12 benchmarks; every figure is a ratio measured in this run.",
        epilog="benchmarks: "
        + "; ".join(f"{name} ({about})" for name, (about, _) in BENCHMARKS.items())
        + "; aliases: "
        + ", ".join(f"{alias} = {name}" for alias, name in ALIASES.items()),
    )
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="benchmarks to run (default: all)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="the smallest configuration of each (what the smoke test runs; no meaningful ratios)",
    )
    parser.add_argument(
        "--corpus",
        action="append",
        type=Path,
        default=[],
        metavar="PATH",
        help="checkouts for the offline benchmark (repeatable; default: ../shared/corpus)",
    )
    args = parser.parse_args(argv)
    unknown = [name for name in args.names if name not in BENCHMARKS and name not in ALIASES]
    if unknown:
        parser.error(
            f"unknown benchmark {', '.join(unknown)} (choose from {', '.join(BENCHMARKS)})"
        )
    chosen = list(dict.fromkeys(ALIASES.get(name, name) for name in args.names)) or list(BENCHMARKS)
    start = time.perf_counter()
    for name in chosen:
        about, run = BENCHMARKS[name]
        print(f"== {name}: {about}", flush=True)
        if name == "offline":
            offline.main([str(path) for path in args.corpus], quick=args.quick)
        else:
            run(quick=args.quick)
        print(flush=True)
    if len(chosen) > 1:
        print("== figures")
        for figure in harness.EMITTED:
            print(figure.line())
    print(f"== total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
