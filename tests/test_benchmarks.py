"""Smoke tests of ``benchmarks/``: each runs its smallest configuration, so none rots unnoticed.

No timing is asserted (speed is proved by ``nox -s bench``, never by tests): only that every
benchmark still runs against today's code and prints figure lines that parse, with values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks import (
    cache,
    compact,
    fleet,
    lockfiles,
    network,
    offline,
    ranges,
    rendering,
    startup,
)
from benchmarks.__main__ import main as bench_main
from benchmarks.harness import FIGURE_LINE, Figure, isolated_env
from patchula.errors import ManifestError
from patchula.manager import MANAGERS

QUICK: dict[str, Callable[..., None]] = {
    "network": network.main,
    "startup": startup.main,
    "ranges": ranges.main,
    "lockfiles": lockfiles.main,
    "rendering": rendering.main,
    "compact": compact.main,
    "cache": cache.main,
    "offline": offline.main,
    "fleet": fleet.main,
}
# The figures each benchmark prints in its smallest configuration.
EXPECTED = {
    "network": {"scan.n10", "scan.n10.server-floor", "network.lookups", "network.scan"},
    "startup": {"startup.version", "startup.run-empty", "startup.floor"},
    "ranges": {"ranges.typescript"},
    "lockfiles": {
        f"lockfiles.{name}.{suffix}"
        for name in ("package-lock", "poetry-lock", "cargo-lock")
        for suffix in ("scaling", "40")
    },
    "rendering": {"rendering.table-json", "memory.rss-per-row"},
    "compact": {"compact.npm-left-pad", "compact.pypi-requests"},
    "cache": {"cache.warm-cold", "cache.warm-requests", "cache.expired"},
    "offline": {"offline.scan-extraction"},
    "fleet": {"memory.fleet"},
}
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _figures(text: str) -> dict[str, re.Match[str]]:
    """The figure lines of a benchmark's output by name; every other line is an indented detail."""
    figures = {}
    for line in text.splitlines():
        if not line or line.startswith(("  ", "==")):
            continue
        match = FIGURE_LINE.match(line)
        assert match is not None, f"not a figure line: {line!r}"
        figures[match["name"]] = match
    return figures


@pytest.mark.parametrize("name", sorted(QUICK))
def test_benchmark_runs_in_its_smallest_configuration(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each benchmark's quick configuration prints its figures, each with measured values."""
    QUICK[name](quick=True)
    figures = _figures(capsys.readouterr().out)
    assert set(figures) == EXPECTED[name]
    for figure in figures.values():
        ratio = float(figure["ratio"])
        assert math.isfinite(ratio)
        assert ratio >= 0
        values = [float(n.replace(",", "")) for n in _NUMBER.findall(figure["values"])]
        assert any(value > 0 for value in values), figure["values"]


def test_figure_line_round_trips_through_the_parser() -> None:
    """A printed figure parses back to its name, ratio, target and verdict."""
    line = Figure("scan.n400", "wall 0.731 s, bound 0.650 s", 1.1246, 1.15).line()
    match = FIGURE_LINE.match(line)
    assert line == "scan.n400 | wall 0.731 s, bound 0.650 s | ratio 1.12 | target <= 1.15 | PASS"
    assert match is not None
    assert (match["name"], match["ratio"], match["target"], match["verdict"]) == (
        "scan.n400",
        "1.12",
        "1.15",
        "PASS",
    )


def test_lower_bound_below_an_upper_target_is_a_miss() -> None:
    """A measurement stopped at a time limit proves nothing under a <= target: it is a MISS."""
    figure = Figure("lockfiles.x.32k", "> 2.0 s", 0.5, 1.0, lower_bound=True)
    assert figure.verdict == "MISS"
    assert " | ratio > 0.50 | " in figure.line()


def test_at_least_target_and_no_target_verdicts() -> None:
    """``>=`` targets pass at or above the target; a figure without a target is INFO."""
    assert Figure("compact.a", "raw 2 B", 20.0, 20.0, op=">=").verdict == "PASS"
    assert Figure("compact.b", "raw 2 B", 19.99, 20.0, op=">=").verdict == "MISS"
    line = Figure("offline.c", "1 s", 2.5).line()
    assert line.endswith("| target none | INFO")
    assert FIGURE_LINE.match(line) is not None


def test_main_runs_only_the_named_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m benchmarks compact --quick`` runs the compact benchmark alone."""
    bench_main(["compact", "--quick"])
    out = capsys.readouterr().out
    assert "== compact:" in out
    assert "== network" not in out
    assert set(_figures(out)) == EXPECTED["compact"]


def test_main_refuses_an_unknown_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown name is a usage error (exit 2) that lists the benchmarks."""
    with pytest.raises(SystemExit) as exit_info:
        bench_main(["nonsense"])
    assert exit_info.value.code == 2
    assert "unknown benchmark nonsense (choose from network, startup" in capsys.readouterr().err


def test_scan_bound_is_the_busiest_hosts_rounds() -> None:
    """Hosts are served in parallel: the bound is the busiest host's ceil(requests / limit)."""
    bound, how = network.scan_bound({"npm": 21, "pypi": 16}, 16, 0.05)
    assert bound == pytest.approx(0.10)
    assert "= 2 rounds on npm" in how


@pytest.mark.parametrize("name", sorted(lockfiles.FORMATS))
def test_generated_lockfiles_are_read_whole(name: str) -> None:
    """Each generated lockfile is one its manager reads without a problem, every package kept."""
    manager_id, path, generate = lockfiles.FORMATS[name]
    result = MANAGERS[manager_id].extract(path, generate(25), lockfiles.unreadable)
    assert result.problems == ()
    assert result.lockfile is not None
    assert len(result.lockfile.packages) == 25


def _no_other_file(path: str) -> str:
    """The ``read`` of a manager in a checkout holding only its manifest (as the scan says it)."""
    raise ManifestError("cannot read: No such file or directory", file=path)


def test_the_fleet_checkouts_declare_40_dependencies_in_two_ecosystems(tmp_path: Path) -> None:
    """Each generated checkout of the fleet benchmark has 40 rows over two manifests, no problem.

    The main ecosystem rotates over the four, so a fleet of four uses all of them.
    """
    manager_of = {
        "package.json": "package_json",
        "requirements.txt": "requirements_txt",
        "Cargo.toml": "cargo_toml",
        "go.mod": "go_mod",
    }
    seen: set[str] = set()
    for checkout in fleet.write_fleet(tmp_path, 4, fleet.POOL):
        counts = {}
        for path in sorted(Path(checkout).iterdir()):
            result = MANAGERS[manager_of[path.name]].extract(
                path.name, path.read_text(encoding="utf-8"), _no_other_file
            )
            assert result.problems == ()
            counts[path.name] = len(result.dependencies)
            seen |= {dep.datasource for dep in result.dependencies}
        assert sorted(counts.values()) == [12, 28]
    assert seen >= {"npm", "pypi", "crates", "goproxy"}


def test_isolated_env_lets_the_child_keep_its_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Children start from bytecode, as an installed patchula does: no PYTHONDONTWRITEBYTECODE.

    Registry and credential variables stay scrubbed.
    """
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("GITHUB_TOKEN", "not-a-real-token")
    monkeypatch.setenv("PATH", "/usr/bin")
    env = isolated_env(tmp_path)
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert "GITHUB_TOKEN" not in env
    assert (env["PATH"], env["HOME"]) == ("/usr/bin", str(tmp_path / "home"))
