"""``patchula run --offline`` end to end: answers from the cache alone, never a connection.

A checkout with npm, PyPI, a crate whose publish times come lazily from the crates.io API, a
Go module, a digest-pinned and a tracked image (Docker Hub push times) and GitHub actions (a
tag and a SHA pin) is scanned once against the loopback fake registry (the warm-up), then the
registry is stopped and every way of opening a connection is made to fail the test
(``socket.socket.connect``/``connect_ex``, ``socket.create_connection``,
``socket.getaddrinfo``, the asyncio loop's ``create_connection``/``sock_connect``/
``getaddrinfo``) before the offline run, in process.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry
from tests.fake_registry.github import GitHub

runner = CliRunner()
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
OLD = datetime(2025, 1, 1, tzinfo=UTC)
PINNED = "sha256:" + "e" * 64
NOT_CACHED = "not in cache (offline)"
# No token of the machine running the tests reaches the fake (or the output).
_NO_TOKEN = {"GH_TOKEN": "", "GITHUB_TOKEN": "", "GITHUB_API_URL": ""}


def _registry(registry: FakeRegistry) -> None:
    registry.crates.add(
        "lazycrate",
        {"1.0.0": OLD, "1.1.0": OLD + timedelta(days=90), "1.2.0": NOW - timedelta(days=1)},
        pubtime=False,  # dates only from the web API, asked lazily
    )
    registry.docker_hub.add(
        "library/nginx", {"1.26": OLD, "1.27": OLD + timedelta(days=60), "latest": OLD}
    )


def _checkout(root: Path) -> Path:
    repo = root / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / "package.json").write_text('{"dependencies": {"left-pad": "1.2.0"}}\n')
    (repo / "requirements.txt").write_text("requests==2.31.0\n")
    (repo / "Cargo.toml").write_text(
        '[package]\nname = "app"\n[dependencies]\nserde = "=1.0.210"\nlazycrate = "=1.0.0"\n'
    )
    (repo / "go.mod").write_text(
        "module example.com/app\n\ngo 1.22\n\nrequire golang.org/x/text v0.21.0\n"
    )
    (repo / "Dockerfile").write_text(f"FROM nginx:1.26@{PINNED}\nFROM nginx\n")
    sha = GitHub.commit_of("actions", "checkout", "v4.2.1")
    (repo / ".github" / "workflows" / "ci.yml").write_text(
        "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4.2.1\n"
        f"      - uses: actions/checkout@{sha} # v4.2.1\n"
    )
    return repo


def _args(registry: FakeRegistry, repo: Path, cache: Path, *more: str) -> list[str]:
    return [
        "run",
        str(repo),
        "--format",
        "json",
        "--now",
        NOW.isoformat(),
        "--min-release-age",
        "3d",
        "--cache",
        str(cache),
        "--registry",
        f"npm={registry.url('npm')}",
        "--registry",
        f"pypi={registry.url('pypi')}",
        "--registry",
        f"crates={registry.url('crates-index')}",
        "--registry",
        f"crates-api={registry.url('crates-api')}",
        "--registry",
        f"goproxy={registry.url('goproxy')}",
        "--registry",
        f"docker={registry.url('oci')}",
        "--registry",
        f"docker-hub={registry.url('docker-hub')}",
        "--registry",
        f"github={registry.url('github')}",
        *more,
    ]


def _run(args: list[str]) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(app, args, env=_NO_TOKEN, catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout), result.stderr


def _rows(report: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    rows = [row for repo in report["repositories"] for row in repo["dependencies"]]
    return {(row["file"], row["line"]): row for row in rows}


def _verdict(row: dict[str, Any]) -> tuple[Any, ...]:
    return (
        row["status"],
        row["current"],
        row["latest"],
        row["eligible"],
        row.get("currentDigest"),
        row.get("newDigest"),
        tuple(h["version"] for h in row.get("heldBack") or ()),
    )


class _Attempts:
    """Every connection attempt made while installed: each is recorded and refused."""

    def __init__(self) -> None:
        self.made: list[str] = []

    def refuse(self, name: str) -> Any:
        """A stand-in for ``name`` (a ``loop.`` method is a coroutine function) that refuses."""

        def refused(*args: object, **_: object) -> Any:
            self.made.append(f"{name}{args[1:2]!r}")
            msg = f"offline test: {name} was called"
            raise OSError(msg)

        async def refused_async(*args: object, **kwargs: object) -> Any:
            return refused(*args, **kwargs)

        return refused_async if name.startswith("loop.") else refused


def _trap(monkeypatch: pytest.MonkeyPatch, found: _Attempts) -> None:
    """Make every way of resolving a name or opening a connection fail, recorded in ``found``."""
    monkeypatch.setattr(socket.socket, "connect", found.refuse("socket.connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", found.refuse("socket.connect_ex"))
    monkeypatch.setattr(socket, "create_connection", found.refuse("socket.create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", found.refuse("socket.getaddrinfo"))
    loop = asyncio.base_events.BaseEventLoop
    monkeypatch.setattr(loop, "create_connection", found.refuse("loop.create_connection"))
    monkeypatch.setattr(loop, "sock_connect", found.refuse("loop.sock_connect"))
    monkeypatch.setattr(loop, "getaddrinfo", found.refuse("loop.getaddrinfo"))


def test_offline_after_a_warm_up_gives_the_same_rows_without_a_connection(
    fake_registry: FakeRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Warm, then offline with the registry stopped and sockets trapped: every verdict again.

    A last online run under the same trap records attempts: the trap does catch them.
    """
    _registry(fake_registry)
    repo = _checkout(tmp_path)
    cache = tmp_path / "c.sqlite3"
    args = _args(fake_registry, repo, cache)
    code, warm, _ = _run(args)
    assert code == 0
    warm_rows = _rows(warm)
    ecosystems = {row["ecosystem"] for row in warm_rows.values()}
    # ``go``: the go.mod ``go`` line, a Go release (go.dev's list), skipped.
    assert ecosystems == {"npm", "pypi", "crates", "goproxy", "go", "docker", "github-actions"}
    assert all(row["status"] != "error" for row in warm_rows.values()), warm_rows
    lazy = warm_rows[("Cargo.toml", 5)]
    assert (lazy["eligible"], lazy["heldBack"][0]["version"]) == ("1.1.0", "1.2.0")
    assert warm_rows[("Dockerfile", 1)]["currentDigest"] is not None
    # Lazily read publish times were asked for: the crates.io API, Docker Hub, Go ``.info``.
    assert fake_registry.host("crates-api").requests >= 1
    assert fake_registry.host("docker-hub").requests >= 1
    assert any(route.endswith(".info") for route in fake_registry.host("goproxy").requests_by_route)
    fake_registry.stop()
    attempts = _Attempts()
    _trap(monkeypatch, attempts)

    code, offline, stderr = _run([*args, "--offline"])

    assert attempts.made == []
    rows = _rows(offline)
    assert {key: _verdict(row) for key, row in rows.items()} == {
        key: _verdict(row) for key, row in warm_rows.items()
    }
    # The same words: with a wait, the warm-up kept every catalog as a view, and offline
    # reuses views of any age (the Go catalog with its successor check's answer too).
    reasons = {key: row["reason"] for key, row in rows.items()}
    assert reasons == {key: row["reason"] for key, row in warm_rows.items()}
    # left-pad, requests, serde, lazycrate, x/text, nginx, actions/checkout
    assert offline["cache"]["viewHits"] == 7
    assert offline["hosts"] == {}
    assert offline["summary"]["notCached"] == 0
    assert offline["cache"]["misses"] == 0
    assert offline["cache"]["hits"] > 0
    assert code == 0
    # Nothing is sent, so there is no request budget to warn about.
    assert "GitHub" not in stderr

    # Without the views, offline answers from the stored HTTP entries alone: the same
    # verdicts, but for what online learnt from an answer that is never stored: the Go
    # proxy's 404 for the next major module path (only successes are cached) is not known.
    with sqlite3.connect(cache) as conn:
        conn.execute("DELETE FROM catalog_views")
    conn.close()
    code, entries, _ = _run([*args, "--offline"])
    assert attempts.made == []
    assert entries["cache"]["viewHits"] == 0
    rows = _rows(entries)
    assert {key: _verdict(row) for key, row in rows.items()} == {
        key: _verdict(row) for key, row in warm_rows.items()
    }
    reasons = {key: row["reason"] for key, row in rows.items()}
    assert reasons.pop(("go.mod", 5)) == (
        f"could not check for a newer major (golang.org/x/text/v2): {NOT_CACHED}"
    )
    assert reasons == {key: row["reason"] for key, row in warm_rows.items() if key != ("go.mod", 5)}
    # That row's verdict is incomplete: the summary counts it as not cached, and the run exits
    # 3 as for any lookup the cache could not answer (not "every answer from the cache").
    assert rows[("go.mod", 5)]["failedLookup"] == (
        f"could not check for a newer major (golang.org/x/text/v2): {NOT_CACHED}"
    )
    assert entries["summary"]["notCached"] == 1
    assert entries["summary"]["failedLookups"] == 0
    assert code == 3

    # The trap is real: the same run online tries to connect (and fails on it).
    _run(args)
    assert attempts.made


def test_offline_without_a_warm_up_is_unknown_everywhere_and_exits_3(
    fake_registry: FakeRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An empty cache: each looked-up row ``unknown``, "not in cache (offline)", exit 3."""
    repo = _checkout(tmp_path)
    args = _args(fake_registry, repo, tmp_path / "empty.sqlite3", "--offline", "-v")
    fake_registry.stop()
    attempts = _Attempts()
    _trap(monkeypatch, attempts)

    code, report, stderr = _run(args)

    assert attempts.made == []
    rows = _rows(report)
    assert rows.pop(("go.mod", 3))["status"] == "skipped"  # the go directive: never looked up
    # ``runs-on: ubuntu-latest`` names no image version: skipped, never looked up.
    assert rows.pop((".github/workflows/ci.yml", 4))["status"] == "skipped"
    assert len(rows) == 9
    assert {row["status"] for row in rows.values()} == {"unknown"}
    assert all(NOT_CACHED in row["reason"] for row in rows.values()), rows
    # What the checkout says is kept: the exact pins.
    assert rows[("requirements.txt", 1)]["current"] == "2.31.0"
    assert rows[("requirements.txt", 1)]["reason"] == NOT_CACHED
    assert report["summary"]["notCached"] == 9
    assert report["summary"]["failedLookups"] == 0
    assert report["hosts"] == {}
    assert code == 3
    # -v names what was missing, redacted, one line each.
    assert f"patchula: offline: not in cache: GET {fake_registry.url('pypi')}/" in stderr


def test_publish_times_missing_from_the_cache_say_so_on_the_row(
    fake_registry: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The crate's index is stored, its API pages are not: its dates are "not in cache"."""
    _registry(fake_registry)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Cargo.toml").write_text(
        '[package]\nname = "app"\n[dependencies]\nlazycrate = "=1.0.0"\n'
    )
    cache = tmp_path / "c.sqlite3"
    args = _args(fake_registry, repo, cache)
    code, warm, _ = _run(args)
    assert code == 0
    assert fake_registry.host("crates-api").requests >= 1
    (warm_row,) = _rows(warm).values()
    assert "publish times" not in (warm_row["reason"] or "")
    with sqlite3.connect(cache) as db:
        gone = db.execute("DELETE FROM http_entries WHERE key LIKE '%/api/v1/crates/%'").rowcount
        # The warm-up's view holds the dates it found: without it, only HTTP entries answer.
        db.execute("DELETE FROM catalog_views")
    db.close()
    assert gone >= 1
    fake_registry.stop()
    attempts = _Attempts()
    _trap(monkeypatch, attempts)

    code, offline, _ = _run([*args, "--offline"])

    assert attempts.made == []
    (row,) = _rows(offline).values()
    # The catalog is known; the dates the policy needs are not (unknown age holds back).
    assert (row["current"], row["latest"]) == ("1.0.0", "1.2.0")
    assert row["reason"].endswith(f"publish times unavailable: {NOT_CACHED}")
    assert row["status"] != "unknown"
    # The wait lacks the dates it needs: not in the cache, so the run is incomplete (exit 3).
    assert row["failedLookup"] == f"publish times unavailable: {NOT_CACHED}"
    assert offline["summary"]["notCached"] == 1
    assert offline["summary"]["failedLookups"] == 0
    assert code == 3


def test_offline_summary_counts_what_was_not_cached_and_never_says_unreachable(
    fake_registry: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The summary line says the run was offline and how many were not in the cache."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text('{"dependencies": {"left-pad": "1.2.0"}}\n')
    cache = tmp_path / "c.sqlite3"
    base = ["run", str(repo), "--cache", str(cache), "--registry"]
    warm = runner.invoke(app, [*base, f"npm={fake_registry.url('npm')}", "-q"])
    assert "offline" not in warm.stdout
    assert warm.exit_code == 0
    (repo / "requirements.txt").write_text("requests==2.31.0\n")
    fake_registry.stop()
    _trap(monkeypatch, _Attempts())
    registries = [f"npm={fake_registry.url('npm')}", "--registry"]
    registries.append(f"pypi={fake_registry.url('pypi')}")
    result = runner.invoke(app, [*base, *registries, "--offline", "-q"])
    # Every left-pad release is deprecated: 1.3.0 is not proposed, so it counts no libyears.
    assert result.stdout.strip() == (
        "2 dependencies in 1 repository: 1 up-to-date, 1 unknown; 0.0 libyears; "
        "offline: 1 dependency not in the cache"
    )
    assert "unreachable" not in result.stdout + result.stderr
    assert result.exit_code == 3


# Run in a fresh interpreter: ``patchula ARGS``, then the names of every module imported.
_PROBE = """
import json, sys
from patchula.cli import main
sys.argv = ["patchula", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""
NETWORK = ("httpx", "httpcore", "h2", "patchula.http.transport")


def test_an_offline_run_never_imports_the_client_the_transport_or_its_resolver(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A warm offline run in a fresh interpreter: no httpx, no transport (the resolver's home).

    The same run online without the cache imports them: the check can fail.
    """
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "requirements.txt").write_text("requests==2.31.0\n")
    cache = tmp_path / "c.sqlite3"
    args = ["run", str(repo), "--cache", str(cache), "--format", "json", "-q"]
    args += ["--registry", f"pypi={fake_registry.url('pypi')}"]
    assert runner.invoke(app, args).exit_code == 0

    def modules(*more: str) -> set[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PATCHULA_")}
        done = subprocess.run(  # noqa: S603 - our own interpreter and probe
            [sys.executable, "-c", _PROBE, *args, *more],
            env={**env, "HOME": str(tmp_path)},
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        report, _, imported = done.stdout.rpartition("\n[")
        assert json.loads(report)["repositories"][0]["dependencies"][0]["status"] == "outdated"
        return set(json.loads(f"[{imported}"))

    offline = modules("--offline")
    assert "patchula.datasource.pypi" in offline
    assert sorted(offline & set(NETWORK)) == []
    assert "httpx" in modules("--no-cache")  # online and cold: it sends a request


def test_offline_with_no_cache_is_a_usage_error(tmp_path: Path) -> None:
    """``--offline --no-cache`` (flags or environment) exits 2 with a clear message."""
    result = runner.invoke(app, ["run", str(tmp_path), "--offline", "--no-cache"])
    assert result.exit_code == 2
    assert (
        "patchula: error: --offline and --no-cache cannot be combined: --offline answers from "
        "the cache alone"
    ) in result.stderr
    env = {"PATCHULA_OFFLINE": "1", "PATCHULA_NO_CACHE": "1"}
    result = runner.invoke(app, ["run", str(tmp_path)], env=env)
    assert result.exit_code == 2
    assert "environment variable PATCHULA_OFFLINE and environment variable" in result.stderr
