"""``patchula cache warm|status|failed|retry`` and the run's lookup record: the CLI."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Mapping
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

OLD = datetime(2025, 1, 1, tzinfo=UTC)
runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def _add(registry: FakeRegistry, name: str, deps: Mapping[str, str] | None = None) -> None:
    registry.npm.add(name, {"1.0.0": OLD}, dependencies={"1.0.0": deps or {}})


def _checkout(root: Path, deps: Mapping[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.json").write_text(json.dumps({"dependencies": dict(deps)}))
    return root


def _invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def _json(*args: str) -> tuple[int, Any]:
    code, out = _invoke(*args, "--format", "json")
    return code, json.loads(out)


def _tasks(cache: Path) -> dict[str, str]:
    with closing(sqlite3.connect(cache)) as conn:
        return dict(conn.execute("SELECT package, status FROM lookup_tasks").fetchall())


def test_warm_then_status_in_the_seed_shape(fake_registry: FakeRegistry, tmp_path: Path) -> None:
    """``cache warm`` follows dependencies; ``cache status --format json`` has the seed's keys."""
    _add(fake_registry, "app", {"dep": "^1.0.0"})
    _add(fake_registry, "dep")
    repo = _checkout(tmp_path / "repo", {"app": "^1.0.0"})
    cache = tmp_path / "cache.sqlite3"
    npm = f"npm={fake_registry.url('npm')}"
    code, warmed = _json("cache", "warm", str(repo), "--cache", str(cache), "--registry", npm)
    assert code == 0
    assert (warmed["enqueued"], warmed["completed"], warmed["failed"]) == (1, 2, 0)
    code, status = _json("cache", "status", "--cache", str(cache))
    assert code == 0
    views = status.pop("views")
    assert status == {
        "pending": 0,
        "in_progress": 0,
        "completed": 2,
        "failed": 0,
        "oldest_pending": None,
        "next_retry_at": None,
        "dependencies_unknown": 0,
    }
    assert views["count"] == 0  # warm keeps HTTP entries, no catalog view
    code, table = _invoke("cache", "status", "--cache", str(cache))
    assert "completed       2" in table.splitlines()
    assert _tasks(cache) == {"app": "completed", "dep": "completed"}


def test_failed_lists_the_error_and_retry_runs_it_again(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A task failed for good is in ``cache failed``; ``cache retry NAME`` completes it."""
    _add(fake_registry, "app", {"missing": "^1.0.0"})
    repo = _checkout(tmp_path / "repo", {"app": "^1.0.0"})
    cache = tmp_path / "cache.sqlite3"
    npm = f"npm={fake_registry.url('npm')}"
    common = ("--cache", str(cache), "--registry", npm)
    code, warmed = _json("cache", "warm", str(repo), *common, "--cache-max-attempts", "1")
    assert code == 3  # a task failed for good
    assert warmed["failed"] == 1
    code, failed = _json("cache", "failed", "--cache", str(cache))
    assert code == 0
    [entry] = failed
    assert set(entry) == {
        "package",
        "datasource",
        "error",
        "attempts",
        "failed_at",
        "triggered_by",
        "depth",
    }
    assert (entry["package"], entry["datasource"], entry["attempts"]) == ("missing", "npm", 1)
    assert (entry["triggered_by"], entry["depth"]) == ("npm:app@1.0.0", 1)
    assert warmed["failed_tasks"] == [
        {"package": "missing", "datasource": "npm", "error": entry["error"]}
    ]
    assert {"already_warm", "taken_back", "dependencies_unknown"} <= set(warmed)
    assert "views" in warmed["status"]
    assert "not found (404" in entry["error"]
    assert entry["failed_at"].endswith("Z")
    table = _invoke("cache", "failed", "--cache", str(cache))[1]
    assert "triggered by" in table.splitlines()[0]
    assert "npm:app@1.0.0" in table.splitlines()[1]
    other = ("--cache", str(tmp_path / "other.sqlite3"), "--registry", npm)
    code, printed = _invoke("cache", "warm", str(repo), *other, "--cache-max-attempts", "1")
    assert printed.splitlines()[0] == f"failed: missing (npm): {entry['error']}"
    _add(fake_registry, "missing")
    code, retried = _json("cache", "retry", "missing", *common)
    assert code == 0
    assert (retried["retried"], retried["completed"]) == (["missing"], 1)
    assert _json("cache", "failed", "--cache", str(cache))[1] == []
    code, _ = _invoke("cache", "retry", "missing", *common)
    assert code == 2  # nothing failed any more


def test_retry_all_puts_every_failed_task_back(fake_registry: FakeRegistry, tmp_path: Path) -> None:
    """``cache retry --all`` retries each failed task; a 404 again fails at once, one attempt."""
    repo = _checkout(tmp_path / "repo", {"gone-a": "^1.0.0", "gone-b": "^1.0.0"})
    cache = tmp_path / "cache.sqlite3"
    common = ("--cache", str(cache), "--registry", f"npm={fake_registry.url('npm')}")
    _json("cache", "warm", str(repo), *common, "--cache-max-attempts", "1")
    assert _tasks(cache) == {"gone-a": "failed", "gone-b": "failed"}
    _add(fake_registry, "gone-a")
    code, retried = _json("cache", "retry", "--all", *common, "--no-wait")
    assert sorted(retried["retried"]) == ["gone-a", "gone-b"]
    assert code == 3  # gone-b is still not found: permanent, failed again on its one attempt
    assert _tasks(cache) == {"gone-a": "completed", "gone-b": "failed"}
    assert retried["status"]["next_retry_at"] is None
    assert _invoke("cache", "retry", *common)[0] == 2  # neither NAME nor --all


def test_a_run_records_its_lookups(fake_registry: FakeRegistry, tmp_path: Path) -> None:
    """``patchula run`` records every lookup: completed, failed for good, or due a retry.

    A 404 cannot mend: ``cache failed`` lists it at once; a 503 is an attempt, pending.
    """
    _add(fake_registry, "here")
    _add(fake_registry, "busy")
    fake_registry.host("npm").server_error_next(1000, 503, route="GET /busy")
    deps = {"here": "1.0.0", "not-here": "1.0.0", "busy": "1.0.0"}
    repo = _checkout(tmp_path / "repo", deps)
    cache = tmp_path / "cache.sqlite3"
    args = ["run", str(repo), "--cache", str(cache), "--format", "json"]
    runner.invoke(app, [*args, "--registry", f"npm={fake_registry.url('npm')}"])
    assert _tasks(cache) == {"here": "completed", "not-here": "failed", "busy": "pending"}
    status = _json("cache", "status", "--cache", str(cache))[1]
    assert (status["completed"], status["pending"], status["failed"]) == (1, 1, 1)
    assert status["next_retry_at"] is not None
    [failed] = _json("cache", "failed", "--cache", str(cache))[1]
    assert (failed["package"], failed["attempts"]) == ("not-here", 1)
    assert failed["triggered_by"] == "patchula run"


def test_after_warm_an_offline_run_reports_every_row(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """After ``cache warm``, ``patchula run --offline`` on the same targets has no unknown row."""
    for name in ("a", "b", "c"):
        _add(fake_registry, name)
    # Stale at once: without --offline the run would have to ask the (stopped) registry.
    fake_registry.host("npm").cache_control = "max-age=0"
    repo = _checkout(tmp_path / "repo", {"a": "^1.0.0", "b": "1.0.0", "c": "~1.0.0"})
    cache = tmp_path / "cache.sqlite3"
    npm = f"npm={fake_registry.url('npm')}"
    assert _json("cache", "warm", str(repo), "--cache", str(cache), "--registry", npm)[0] == 0
    fake_registry.stop()  # nothing is there to answer any more
    result = runner.invoke(
        app,
        [
            "run",
            str(repo),
            "--offline",
            "--cache",
            str(cache),
            "--registry",
            npm,
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    rows = report["repositories"][0]["dependencies"]
    assert len(rows) == 3
    assert {row["status"] for row in rows} == {"up-to-date"}
    assert report["summary"]["notCached"] == 0


def _warm_process(
    cache: Path, repo: Path, registry: FakeRegistry, *extra: str
) -> subprocess.Popen[bytes]:
    """``python -m patchula cache warm`` in a child process (it can be killed)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1"}
    command = [sys.executable, "-m", "patchula", "cache", "warm", str(repo), "--cache", str(cache)]
    command += ["--registry", f"npm={registry.url('npm')}", "--format", "json", *extra]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # noqa: S603 - our own CLI


def _wide_graph(registry: FakeRegistry, width: int) -> dict[str, str]:
    """``width`` top-level packages, each with one child of its own."""
    deps = {}
    for index in range(width):
        _add(registry, f"top-{index}", {f"leaf-{index}": "^1.0.0"})
        _add(registry, f"leaf-{index}")
        deps[f"top-{index}"] = "^1.0.0"
    return deps


def _statuses(cache: Path) -> dict[str, int]:
    """Tasks per status in ``cache`` (none while the file is being created)."""
    try:
        with closing(sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=10)) as conn:
            rows = conn.execute("SELECT status, count(*) FROM lookup_tasks GROUP BY status")
            return dict(rows.fetchall())
    except sqlite3.OperationalError:
        return {}


def test_a_killed_warm_is_finished_by_the_next_and_no_task_ran_twice_at_once(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Kill -9 mid-way: the next ``cache warm`` takes the orphaned tasks back; all end."""
    repo = _checkout(tmp_path / "repo", _wide_graph(fake_registry, 12))
    cache = tmp_path / "cache.sqlite3"
    npm = fake_registry.host("npm")
    npm.latency = 0.3
    first = _warm_process(cache, repo, fake_registry, "--cache-workers", "2")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if cache.exists() and _statuses(cache).get("completed", 0) >= 2:
            break
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    first.stdout.close()  # type: ignore[union-attr]
    first.stderr.close()  # type: ignore[union-attr]
    left = _statuses(cache)
    assert left.get("in_progress", 0) > 0  # the killed process held claims
    while npm.in_flight:  # the dead client's last requests end on the server
        time.sleep(0.05)
    npm.latency = 0.0
    second = _warm_process(cache, repo, fake_registry)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err.decode()
    outcome = json.loads(out)
    assert outcome["taken_back"] == left["in_progress"]
    assert _statuses(cache) == {"completed": 24}
    with npm.lock:
        peaks = dict(npm.peak_by_route)
    assert set(peaks.values()) == {1}


def test_two_warm_processes_on_one_cache_never_take_the_same_task(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Claims are exclusive: two processes warming the same targets fetch each package once."""
    repo = _checkout(tmp_path / "repo", _wide_graph(fake_registry, 10))
    cache = tmp_path / "cache.sqlite3"
    fake_registry.host("npm").latency = 0.05
    runner.invoke(app, ["cache", "status", "--cache", str(cache)])  # nothing there yet
    processes = [_warm_process(cache, repo, fake_registry) for _ in range(2)]
    outcomes = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()
        outcomes.append(json.loads(out))
    assert sum(o["completed"] for o in outcomes) == 20
    assert _statuses(cache) == {"completed": 20}
    npm = fake_registry.host("npm")
    with npm.lock:
        routes = dict(npm.requests_by_route)
    assert set(routes.values()) == {1}
    assert len(routes) == 40  # 20 packuments and 20 version documents


def test_failed_table_escapes_control_characters_in_names() -> None:
    """A registry-given name holding an escape sequence is printed escaped, never raw."""
    from patchula.cli.warm import render_failed  # noqa: PLC0415 - only here

    table = render_failed(
        [
            {
                "package": "evil\x1b[2Jname",
                "datasource": "npm",
                "error": "refusing\x07",
                "attempts": 3,
                "failed_at": None,
            }
        ]
    )
    assert "\x1b" not in table
    assert "\x07" not in table
    assert "evil\\x1b[2Jname" in table


def test_a_terminal_shows_a_progress_bar_of_pending_done_and_failed(
    fake_registry: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal, ``cache warm`` draws pending / done / failed as tasks end; then a summary."""
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    _add(fake_registry, "app", {"dep": "^1.0.0"})
    _add(fake_registry, "dep")
    repo = _checkout(tmp_path / "repo", {"app": "^1.0.0"})
    cache = tmp_path / "cache.sqlite3"
    npm = f"npm={fake_registry.url('npm')}"
    args = ["cache", "warm", str(repo), "--cache", str(cache), "--registry", npm]
    result = runner.invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0
    assert "warming" in result.stderr
    assert "0 pending, 2 done, 0 failed" in result.stderr
    assert result.stdout.startswith("warmed: 2 completed, 0 failed")


def test_warm_summary_says_one_attempt_in_the_singular() -> None:
    """``1 attempt to retry``, ``2 attempts to retry``."""
    from patchula.cli.warm import WarmOutcome  # noqa: PLC0415 - only here
    from patchula.warm import WarmResult  # noqa: PLC0415 - only here

    status = {"pending": 1, "in_progress": 0, "completed": 0, "failed": 0}
    one = WarmOutcome(result=WarmResult(retried=1), status=status).summary()
    two = WarmOutcome(result=WarmResult(retried=2), status=status).summary()
    assert "0 failed, 1 attempt to retry;" in one
    assert "0 failed, 2 attempts to retry;" in two


def test_warm_refuses_a_cache_path_that_is_a_scanned_manifest(tmp_path: Path) -> None:
    """``cache warm --cache package.json`` exits 2 and keeps the file, as ``run`` does."""
    repo = _checkout(tmp_path / "repo", {"a": "^1.0.0"})
    manifest = repo / "package.json"
    before = manifest.read_bytes()
    result = runner.invoke(app, ["cache", "warm", str(repo), "--cache", str(manifest)])
    assert result.exit_code == 2
    assert f"cannot use cache {manifest}: it is package.json of target {repo}" in result.stderr
    assert manifest.read_bytes() == before
    assert sorted(p.name for p in repo.iterdir()) == ["package.json"]


_ROW_FIELDS = (
    "name",
    "current",
    "currentSource",
    "latest",
    "eligible",
    "updateType",
    "status",
    "reason",
    "currentReleasedAt",
    "latestReleasedAt",
    "libyears",
)


def test_warm_follows_a_locked_crate_with_build_metadata_as_run_reads_it(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Cargo.lock's ``wasi 0.11.0+wasi-snapshot-preview1``: warm follows that release's deps.

    The lock reaches warm as the pin ``=0.11.0+wasi-snapshot-preview1``, which Cargo (and the
    versioning) reads up to build metadata; warm used to follow ``0.11.0``, a version the index
    does not name, so wasi's dependencies stayed unknown. Then ``--offline`` after the warm
    gives the online run's rows.
    """
    later = datetime(2025, 3, 1, tzinfo=UTC)
    fake_registry.crates.add(
        "wasi",
        {
            "0.10.0+wasi-snapshot-preview1": OLD,
            "0.11.0+wasi-snapshot-preview1": OLD,
            "0.11.1+wasi-snapshot-preview1": later,
        },
        deps={
            "0.11.0+wasi-snapshot-preview1": [{"name": "wasi-core", "req": "^1", "kind": "normal"}]
        },
    )
    fake_registry.crates.add("wasi-core", {"1.0.0": OLD})
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Cargo.toml").write_text(
        '[package]\nname = "me"\nversion = "0.1.0"\n\n[dependencies]\nwasi = "0.11"\n'
    )
    (repo / "Cargo.lock").write_text(
        'version = 3\n\n[[package]]\nname = "me"\nversion = "0.1.0"\ndependencies = ["wasi"]\n\n'
        '[[package]]\nname = "wasi"\nversion = "0.11.0+wasi-snapshot-preview1"\n'
        'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
    )
    registries = ["--registry", f"crates={fake_registry.url('crates-index')}"]
    registries += ["--registry", f"crates-api={fake_registry.url('crates-api')}"]
    cache = tmp_path / "cache.sqlite3"

    code, online = _json("run", str(repo), "--no-cache", *registries)
    assert code == 0
    code, warmed = _json("cache", "warm", str(repo), "--cache", str(cache), *registries)
    assert code == 0
    assert (warmed["completed"], warmed["dependencies_unknown"]) == (2, [])
    assert _tasks(cache) == {"wasi": "completed", "wasi-core": "completed"}
    with closing(sqlite3.connect(cache)) as conn:
        (result,) = conn.execute(
            "SELECT result FROM lookup_tasks WHERE package = 'wasi'"
        ).fetchone()
    assert json.loads(result)["version"] == "0.11.0+wasi-snapshot-preview1"
    code, offline = _json("run", str(repo), "--offline", "--cache", str(cache), *registries)
    assert code == 0

    def rows(report: Any) -> list[dict[str, Any]]:
        deps = report["repositories"][0]["dependencies"]
        return [{k: d.get(k) for k in _ROW_FIELDS} for d in deps]

    assert rows(online) == rows(offline)
    assert rows(online)[0]["current"] == "0.11.0+wasi-snapshot-preview1"
    assert rows(online)[0]["latest"] == "0.11.1+wasi-snapshot-preview1"


def test_the_summary_counts_packages_warmed_without_their_dependencies(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A 404 of a version document: the summary line says how many lack their dependencies.

    The trial's "38 completed, 0 failed" read as a complete warm-up while none of the
    dependencies of dependencies were.
    """
    _add(fake_registry, "app", {"dep": "^1.0.0"})
    fake_registry.host("npm").server_error_next(1000, 404, route="GET /app/1.0.0")
    repo = _checkout(tmp_path / "repo", {"app": "^1.0.0"})
    cache = tmp_path / "cache.sqlite3"
    npm = f"npm={fake_registry.url('npm')}"
    code, out = _invoke("cache", "warm", str(repo), "--cache", str(cache), "--registry", npm)
    assert code == 0  # the catalog is warm: only what its version needs is unknown
    *said, summary = out.strip().splitlines()
    assert said[0].startswith("dependencies of app@1.0.0 unknown: ")
    assert summary.startswith(
        "warmed: 1 completed (1 of them without their dependencies: see above), 0 failed"
    )
