"""The console script ends its process at once after the command (``console_main``, ``leave``)."""

from __future__ import annotations

import json
import os
import pstats
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from patchula import __version__, cli
from tests.fake_registry import FakeRegistry

# Run in a fresh interpreter: every exit handler registered from the first import of patchula
# on is written to the file named by the first argument, then ``patchula ARGS`` runs through
# the console script's entry point.
_HANDLERS = """
import atexit, json, sys
out = sys.argv.pop(1)
seen = []
register = atexit.register
def recording(func, *args, **kwargs):
    seen.append(f"{func.__module__}.{func.__qualname__}")
    with open(out, "w") as handle:
        json.dump(seen, handle)
    return register(func, *args, **kwargs)
atexit.register = recording
sys.argv = ["patchula", *sys.argv[1:]]
from patchula.cli import console_main
console_main()
"""


def _python(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    home = cwd / "home"  # no ~/.npmrc, ~/.netrc or config of the machine's user
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PATCHULA_")}
    env |= {"HOME": str(home), "NO_COLOR": "1"}
    return subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.mark.parametrize("output", ["table", "json", "markdown"])
def test_logging_registers_the_only_exit_handler_a_run_has(
    fake_registry: FakeRegistry, tmp_path: Path, output: str
) -> None:
    """A run's imports register one exit handler, ``logging.shutdown``, which ``leave`` calls.

    A run with lookups over HTTP and a cache: every library a run can import is imported.
    """
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text('{"dependencies": {"left-pad": "1.2.0"}}\n')
    (repo / "requirements.txt").write_text("requests==2.31.0\n")
    out = tmp_path / "handlers.json"
    args = ["run", str(repo), "--cache", str(tmp_path / "c.sqlite3"), "--format", output, "-v"]
    args += ["--registry", f"npm={fake_registry.url('npm')}"]
    args += ["--registry", f"pypi={fake_registry.url('pypi')}"]
    done = _python("-c", _HANDLERS, str(out), *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "left-pad" in done.stdout
    assert "requests" in done.stdout
    assert json.loads(out.read_text()) == ["logging.shutdown"]


def test_python_m_patchula_prints_and_exits_with_the_commands_status(tmp_path: Path) -> None:
    """``python -m patchula`` writes the command's output and ends with its exit status."""
    done = _python("-m", "patchula", "--version", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, f"patchula {__version__}\n")
    done = _python("-m", "patchula", "run", "--format", "nope", str(tmp_path), cwd=tmp_path)
    assert done.returncode == cli.EXIT_USAGE
    assert "--format" in done.stderr


def test_a_profiler_still_writes_its_results(tmp_path: Path) -> None:
    """Under ``python -m cProfile`` the usual exit runs: the profile is written at exit."""
    out = tmp_path / "profile.out"
    done = _python("-m", "cProfile", "-o", str(out), "-m", "patchula", "--version", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, f"patchula {__version__}\n")
    stats = pstats.Stats(str(out))
    assert any(name == "console_main" for _file, _line, name in stats.stats)  # type: ignore[attr-defined]


def test_a_thread_still_running_is_waited_for(tmp_path: Path) -> None:
    """With another thread alive the usual exit runs: the thread finishes before the process."""
    marker = tmp_path / "finished"
    probe = (
        "import sys, threading, time\n"
        "from patchula.cli import console_main\n"
        f"def late():\n    time.sleep(0.2)\n    open({str(marker)!r}, 'w').close()\n"
        "threading.Thread(target=late).start()\n"
        "sys.argv = ['patchula', '--version']\n"
        "console_main()\n"
    )
    done = _python("-c", probe, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, f"patchula {__version__}\n")
    assert marker.exists()


def test_leave_ends_the_process_with_the_status_after_flushing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Alone, ``leave`` flushes and calls ``os._exit``; ``None`` is status 0."""
    ended: list[int] = []

    def fake_exit(status: int) -> None:
        ended.append(status)
        raise RuntimeError

    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(os, "_exit", fake_exit)
    for code, status in ((3, 3), (None, 0), (0, 0)):
        with pytest.raises(RuntimeError):
            cli.leave(code)
        assert ended.pop() == status


@pytest.mark.parametrize("code", ["a message", True])
def test_leave_keeps_pythons_exit_for_a_status_that_is_no_int(
    monkeypatch: pytest.MonkeyPatch, code: object
) -> None:
    """A message (or any non-int status) is ``SystemExit``'s to print and map, as before."""
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(os, "_exit", lambda status: pytest.fail(f"os._exit({status})"))
    with pytest.raises(SystemExit) as raised:
        cli.leave(code)
    assert raised.value.code == code
