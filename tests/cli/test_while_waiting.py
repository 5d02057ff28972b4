"""What the report needs is prepared while a run waits for answers (``WhileWaiting``)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from patchula.cli.run import WhileWaiting
from tests.fake_registry import FakeRegistry


def _run_loop(body: Any) -> Any:
    return asyncio.run(body())


def test_steps_run_in_order_while_busy_and_a_failing_step_is_skipped() -> None:
    """Each step runs once, in order, while ``busy()``; a step that raises costs only itself."""
    ran: list[str] = []

    async def body() -> None:
        done = asyncio.Event()

        def boom() -> None:
            ran.append("boom")
            raise RuntimeError

        def last() -> None:
            ran.append("c")
            done.set()

        waiting = WhileWaiting([lambda: ran.append("a"), boom, last], busy=lambda: True)
        await asyncio.wait_for(done.wait(), 10)
        waiting.stop()

    _run_loop(body)
    assert ran == ["a", "boom", "c"]


def test_no_step_runs_while_nothing_is_on_the_network() -> None:
    """With ``busy()`` false no step runs, however long the loop idles; ``stop`` ends it."""
    ran: list[str] = []
    asked: list[bool] = []

    async def body() -> None:
        thrice = asyncio.Event()

        def busy() -> bool:
            asked.append(True)
            if len(asked) == 3:
                thrice.set()
            return False

        waiting = WhileWaiting([lambda: ran.append("a")], busy=busy)
        await asyncio.wait_for(thrice.wait(), 10)
        waiting.stop()
        before = len(asked)
        await asyncio.sleep(3 * WhileWaiting.QUIET)
        assert len(asked) == before  # stopped: no timer left

    _run_loop(body)
    assert len(asked) >= 3
    assert ran == []


def test_a_late_timer_runs_no_step() -> None:
    """A timer that fires late (the loop was busy) runs nothing: the step waits for idle time."""
    ran: list[float] = []

    async def body() -> float:
        loop = asyncio.get_running_loop()
        done = asyncio.Event()

        def step() -> None:
            ran.append(loop.time())
            done.set()

        waiting = WhileWaiting([step], busy=lambda: True)
        # The loop is busy past the first timer (armed QUIET seconds ahead), by 3 probes.
        time.sleep(WhileWaiting.QUIET + 3 * WhileWaiting.PROBE)  # noqa: ASYNC251
        busy_until = loop.time()
        await asyncio.wait_for(done.wait(), 10)
        waiting.stop()
        return busy_until

    busy_until = _run_loop(body)
    # The late timer re-armed instead of running the step: it ran a probe later.
    assert ran
    assert ran[0] >= busy_until + WhileWaiting.PROBE * 0.9


def _stable(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` without the real times of its fetches (the rest is fixed by ``--now``)."""
    for repository in report["repositories"]:
        for row in repository["dependencies"]:
            row["metadata"]["lookup"]["catalog"].pop("fetchedAt")
    return report


# Run ``patchula ARGS`` in a fresh interpreter through the console script's ``main``, counting
# the steps ``WhileWaiting`` ran (``PROBE`` and ``QUIET`` from the first argument); the count goes
# to stderr.
_PROBE = """
import sys
from patchula.cli import main, run
run.WhileWaiting.PROBE = run.WhileWaiting.QUIET = float(sys.argv.pop(1))
ran = []
tick = run.WhileWaiting._tick
def counting(self):
    before = len(self._steps)
    tick(self)
    ran.extend([1] * (before - len(self._steps)))
run.WhileWaiting._tick = counting
sys.argv = ["patchula", *sys.argv[1:]]
try:
    main()
finally:
    print(f"steps {len(ran)}", file=sys.stderr)
"""


def _probe(tmp_path: Path, probe: float, *args: str) -> tuple[str, int]:
    """``patchula ARGS`` with ``WhileWaiting``'s timers at ``probe`` s: stdout and steps run."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PATCHULA_")}
    env |= {"HOME": str(home), "NO_COLOR": "1"}
    done = subprocess.run(  # noqa: S603 - our own interpreter and probe
        [sys.executable, "-c", _PROBE, str(probe), *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, int(done.stderr.rsplit("steps ", 1)[1])


@pytest.mark.parametrize("output", ["json", "table"])
def test_the_report_is_the_same_whether_prepared_while_waiting_or_not(
    fake_registry: FakeRegistry, tmp_path: Path, output: str
) -> None:
    """A run whose steps ran while it waited reports exactly what one whose steps never ran does.

    ``--report`` writes the JSON report whatever the printed format (the table builds no
    serializer of its own, JSON does); the answers wait 200 ms, so the loop idles meanwhile.
    Both runs are cold, with the same paths.
    """
    fake_registry.set_latency(0.2)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text('{"dependencies": {"left-pad": "1.2.0"}}\n')
    (repo / "requirements.txt").write_text("requests==2.31.0\n")
    out, cache = tmp_path / "report.json", tmp_path / "c.sqlite3"
    args = ["run", str(repo), "--format", output, "--report", str(out), "--cache", str(cache)]
    args += ["--now", "2026-12-01T00:00:00Z", "--registry", f"npm={fake_registry.url('npm')}"]
    args += ["--registry", f"pypi={fake_registry.url('pypi')}"]
    printed: list[str] = []
    reports: list[dict[str, Any]] = []
    counts: list[int] = []
    for probe in (0.002, 3600.0):  # 3600 s: no timer fires within the run, so no step runs
        for stale in tmp_path.glob("c.sqlite3*"):
            stale.unlink()
        stdout, steps = _probe(tmp_path, probe, *args)
        printed.append(stdout)
        reports.append(_stable(json.loads(out.read_text())))
        counts.append(steps)
    # Some steps ran in the first run (all five when the machine is not loaded: model, rows,
    # record, render, serializers for --report), none in the second.
    assert counts[0] > 0
    assert counts[1] == 0
    assert reports[0] == reports[1]
    if output == "json":
        assert [_stable(json.loads(text)) for text in printed] == reports
    else:
        assert printed[0] == printed[1]
        assert "requests" in printed[0]
    names = {d["packageName"] for r in reports[0]["repositories"] for d in r["dependencies"]}
    assert names == {"left-pad", "requests"}
