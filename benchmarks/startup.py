"""Start-up: ``patchula --version`` and ``patchula run EMPTY_DIR`` against a bare interpreter.

The baseline is ``python -c "import ssl, sqlite3"`` with the same interpreter: the least a
process that speaks TLS and keeps an SQLite cache must import. The three commands run
interleaved (baseline, ``--version``, ``run``; again and again) so the VM's drifting speed
touches all three alike; one unmeasured round first warms the file system cache and creates the
cache file of ``run``. Figures: median wall / median baseline wall over ``ROUNDS`` rounds.
Targets (issue 12): ``run`` on a checkout without manifests within 5x, ``--version`` within 3x.

``startup.floor`` (no target) runs, in the same rounds, the libraries design.md prescribes for a
run doing nothing with them: a typer app parsing one option (typer builds a pydantic
``TypeAdapter`` for every option it parses), one pydantic model validated (the settings), one
``anyio.run`` of an empty coroutine (the scan's event loop), an SQLite connection. No ``patchula``
code runs in it, so ``run-empty`` can never be below it; what ``run-empty`` measures above it is
patchula's own.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from benchmarks.harness import (
    Figure,
    emit,
    isolated_env,
    median,
    note,
    patchula_command,
    run_process,
)

ROUNDS = 15
TARGETS = {"version": 3.0, "run-empty": 5.0}

#: The libraries a run cannot do without, each doing (almost) nothing: see the module docstring.
FLOOR = """
import sqlite3, ssl
import anyio, typer
from pydantic import BaseModel

class Settings(BaseModel):
    concurrency: int = 8

app = typer.Typer()

@app.command()
def run(concurrency: int = 8) -> None:
    Settings.model_validate({"concurrency": concurrency})

    async def scan() -> None:
        await anyio.sleep(0)

    anyio.run(scan)
    sqlite3.connect(":memory:").close()

app(["--concurrency", "8"], standalone_mode=False)
"""


def main(*, quick: bool = False) -> None:
    """Print the ``startup.version`` and ``startup.run-empty`` figures."""
    rounds = 1 if quick else ROUNDS
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = isolated_env(root)
        empty = root / "empty"
        empty.mkdir()
        commands = {
            "baseline": [sys.executable, "-c", "import ssl, sqlite3"],
            "version": [*patchula_command(), "--version"],
            # The default cache file (under the isolated XDG cache directory) is opened, as a
            # user's run does; the warm-up round has created it.
            "run-empty": [*patchula_command(), "run", str(empty)],
            "floor": [sys.executable, "-c", FLOOR],
        }
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        warmup = 0 if quick else 1
        for attempt in range(warmup + rounds):
            for name, command in commands.items():
                done = run_process(command, env)
                if attempt >= warmup:
                    walls[name].append(done.wall)
                    cpus[name].append(done.cpu)
        base = median(walls["baseline"])
        base_cpu = median(cpus["baseline"])
        note(
            f"baseline `{Path(sys.executable).name} -c 'import ssl, sqlite3'`: median "
            f"{base * 1000:.1f} ms over {rounds} interleaved rounds"
        )
        # CPU time moves least with the load of other processes on a shared machine.
        note(
            "CPU time medians: "
            + ", ".join(
                f"{name} {median(cpus[name]) * 1000:.1f} ms ({median(cpus[name]) / base_cpu:.2f}x)"
                for name in commands
            )
        )
        for name, label in (("version", "patchula --version"), ("run-empty", "patchula run EMPTY")):
            wall = median(walls[name])
            emit(
                Figure(
                    f"startup.{name}",
                    f"`{label}` median {wall * 1000:.1f} ms / baseline {base * 1000:.1f} ms "
                    f"({rounds} interleaved rounds)",
                    wall / base,
                    TARGETS[name],
                )
            )
        floor = median(walls["floor"])
        emit(
            Figure(
                "startup.floor",
                f"typer + pydantic + anyio + sqlite3 doing nothing, median {floor * 1000:.1f} ms / "
                f"baseline {base * 1000:.1f} ms (the least `run EMPTY` can be; above it, "
                f"patchula's own: {(median(walls['run-empty']) - floor) * 1000:.1f} ms)",
                floor / base,
            )
        )
