"""What every benchmark shares: the figure line it prints, and running ``patchula`` as users do.

A figure is one line, ``NAME | measured values | ratio R [unit] | target OP T [unit] | VERDICT``,
e.g. ``scan.n400 | wall 0.731 s, bound 0.650 s (…) | ratio 1.12 | target <= 1.15 | PASS``.
``R`` is a quotient measured in this run, not a wall time on its own (this 2-core VM is shared
and its speed varies by tens of percent); the few figures judged against a fixed amount say so
(``seconds / 1 s``, ``requests / run``). ``> R`` says the measurement was stopped at a time
limit and ``R`` is a lower bound. ``VERDICT`` is PASS or MISS against the target, INFO where
the figure has none (``target none``). :data:`FIGURE_LINE` parses such a line (the smoke test
does, so a benchmark never rots unnoticed).

Whole-process benchmarks start the installed ``patchula`` console script (``python -m
patchula`` when there is none) with an isolated environment: a temporary ``HOME`` and cache
directory and none of the variables that name registries or credentials.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any, Final, Literal

import zstandard

DATA_DIR: Final = Path(__file__).parent / "data"
START: Final = datetime(2024, 1, 1, tzinfo=UTC)
#: ``1.0.0`` … ``1.29.0`` one week apart: the synthetic packages of the loopback benchmarks.
VERSIONS: Final = {f"1.{i}.0": START + timedelta(days=7 * i) for i in range(30)}
RELEASES: Final = {f"1.{i}": START + timedelta(days=7 * i) for i in range(30)}

FIGURE_LINE: Final = re.compile(
    r"^(?P<name>[a-z0-9][\w.-]*) \| (?P<values>.+) \| ratio (?P<bound>> )?(?P<ratio>\d+(?:\.\d+)?)"
    r"(?: (?P<unit>\S+))? \| target (?:(?P<op><=|>=) (?P<target>\d+(?:\.\d+)?)(?: \S+)?|none)"
    r" \| (?P<verdict>PASS|MISS|INFO)$"
)

# Variables that would point a child at other registries, credentials or settings.
_SCRUBBED_PREFIXES = ("PATCHULA_", "NPM_CONFIG_", "npm_config_", "PIP_")
_SCRUBBED = frozenset(
    {"NETRC", "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL", "GOPROXY", "XDG_CONFIG_HOME"}
    # An installed patchula has its bytecode (pip compiles it at install time): with this
    # variable the child of an editable install would compile every module it imports on every
    # start (measured: ``run EMPTY`` 13.9x the baseline with it, 7.0x without), while the
    # baseline's standard library has its bytecode either way.
    | {"PYTHONDONTWRITEBYTECODE"}
)


@dataclass(frozen=True)
class Figure:
    """One measured figure; ``lower_bound`` when a time limit stopped the measurement."""

    name: str
    values: str
    ratio: float
    target: float | None = None
    op: Literal["<=", ">="] = "<="
    unit: str = ""
    lower_bound: bool = False

    @property
    def verdict(self) -> str:
        """PASS or MISS against the target (INFO without one)."""
        if self.target is None:
            return "INFO"
        met = self.ratio <= self.target if self.op == "<=" else self.ratio >= self.target
        if self.lower_bound and self.op == "<=":
            met = False  # the true ratio is higher still
        return "PASS" if met else "MISS"

    def line(self) -> str:
        """The printed line (see the module docstring)."""
        unit = f" {self.unit}" if self.unit else ""
        bound = "> " if self.lower_bound else ""
        ratio = f"{self.ratio:.2f}"
        target = "none" if self.target is None else f"{self.op} {self.target:g}{unit}"
        return f"{self.name} | {self.values} | ratio {bound}{ratio}{unit} | target {target} | " + (
            self.verdict
        )


#: Every figure emitted in this process, in order (``python -m benchmarks`` repeats them).
EMITTED: list[Figure] = []


def emit(figure: Figure) -> Figure:
    """Print ``figure``'s line (flushed: a long benchmark shows progress), record and return it."""
    print(figure.line(), flush=True)
    EMITTED.append(figure)
    return figure


def note(text: str) -> None:
    """Print an indented detail line under the figures (how a bound is computed, each run)."""
    print(f"  {text}", flush=True)


def median(values: Iterable[float]) -> float:
    """The median (a shared VM's outliers move it least)."""
    return statistics.median(list(values))


def rounds(most: int, budget: float) -> Iterator[int]:
    """Yield round numbers 0, 1, …: at least one, at most ``most``.

    Another round starts only while it is likely to end within ``budget`` seconds of the first,
    so a slow build's benchmark stays short (its figure says how many rounds its medians are of).
    """
    start = time.perf_counter()
    for number in range(most):
        elapsed = time.perf_counter() - start
        if number and elapsed + elapsed / number > budget:
            return
        yield number


def real_document(name: str) -> bytes:
    """One of the real registry documents in ``benchmarks/data`` (``npm-react`` …), raw JSON."""
    blob = (DATA_DIR / f"{name}.json.zst").read_bytes()
    return zstandard.ZstdDecompressor().decompress(blob, max_output_size=64 << 20)


def patchula_command() -> list[str]:
    """The installed console script beside this interpreter, else ``python -m patchula``."""
    script = Path(sys.executable).with_name("patchula")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "patchula"]


def isolated_env(root: Path) -> dict[str, str]:
    """This environment, isolated: ``HOME`` and the cache directory under ``root``.

    Variables naming registries, credentials or patchula settings are left out, so a benchmark
    never reads the user's ``.npmrc``, tokens or cache; so is ``PYTHONDONTWRITEBYTECODE``, so
    patchula starts from bytecode as an installed copy does.
    """
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in _SCRUBBED and not key.startswith(_SCRUBBED_PREFIXES)
    }
    (root / "home").mkdir(parents=True, exist_ok=True)
    env |= {"HOME": str(root / "home"), "XDG_CACHE_HOME": str(root / "xdg"), "NO_COLOR": "1"}
    return env


@dataclass(frozen=True)
class Process:
    """A finished child: wall seconds, peak RSS (KiB, ``ru_maxrss``), exit status, stderr.

    ``cpu`` is its user + system CPU seconds: unlike wall time, barely moved by the load of
    other processes on the machine.
    """

    wall: float
    max_rss_kib: int
    returncode: int
    stderr: str
    cpu: float


# Runs one command and writes "<wall s> <ru_maxrss KiB> <CPU s>" to the file argv[1]. Linux
# keeps the peak RSS of a process across fork and exec, so a child started straight from this
# large benchmark process would report the benchmark's own peak; started from this small
# launcher it reports its own. The wall time excludes the launcher's start-up.
_LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(sys.argv[1], "w") as out:
    out.write(f"{wall!r} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime!r}")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_process(
    command: Sequence[str],
    env: Mapping[str, str],
    *,
    stdout: IO[bytes] | None = None,
    ok: Iterable[int] = (0,),
) -> Process:
    """Run ``command`` to its end; its stdout goes to ``stdout`` (default: discarded).

    Wall time and peak RSS are the command's own, measured by a small launcher process (see
    ``_LAUNCHER``). Raises ``RuntimeError`` (with the end of its stderr) when the exit status
    is not in ``ok``.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".measure", encoding="ascii") as measure:
        done = subprocess.run(  # noqa: S603 - our own interpreter and console script
            [sys.executable, "-S", "-c", _LAUNCHER, measure.name, *command],
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=stdout if stdout is not None else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=False,
        )
        measured = measure.read().split()
    text = done.stderr.decode(errors="replace")
    if done.returncode not in set(ok) or len(measured) != 3:
        tail = text.strip().splitlines()[-5:]
        msg = f"{' '.join(command[:3])} … exited {done.returncode}: {' / '.join(tail)}"
        raise RuntimeError(msg)
    return Process(float(measured[0]), int(measured[1]), done.returncode, text, float(measured[2]))


def run_patchula(
    args: Sequence[str], env: Mapping[str, str], *, output: Path | None = None
) -> Process:
    """Run ``patchula ARGS`` (stdout to ``output`` when given); exit 0 or 1 is a finished scan."""
    if output is None:
        return run_process([*patchula_command(), *args], env, ok=(0, 1))
    with output.open("wb") as handle:
        return run_process([*patchula_command(), *args], env, stdout=handle, ok=(0, 1))


def report_summary(path: Path) -> dict[str, Any]:
    """The ``summary`` and ``hosts`` of a JSON report, with ``errors`` (error rows) added."""
    report = json.loads(path.read_bytes())
    summary: dict[str, Any] = dict(report["summary"])
    summary["errors"] = summary["byStatus"]["error"]
    summary["hosts"] = report.get("hosts", {})
    return summary


def write_checkout(
    path: Path, npm: Mapping[str, str] | None = None, pypi: Mapping[str, str] | None = None
) -> Path:
    """Write a checkout at ``path`` and return it.

    ``npm`` (name → range) becomes a ``package.json``, ``pypi`` (name → PEP 440 specifier) a
    ``requirements.txt``; either is left out when not given.
    """
    path.mkdir(parents=True, exist_ok=True)
    if npm:
        (path / "package.json").write_text(
            json.dumps({"name": path.name, "version": "1.0.0", "dependencies": dict(npm)}),
            encoding="utf-8",
        )
    if pypi:
        lines = "".join(f"{name}{spec}\n" for name, spec in pypi.items())
        (path / "requirements.txt").write_text(lines, encoding="utf-8")
    return path
