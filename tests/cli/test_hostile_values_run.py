"""End to end: values a bad or hostile registry sends are dropped, the good ones still answer."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

runner = CliRunner()
OLD = datetime(2025, 1, 1, tzinfo=UTC)
# Over CPython's 4,300-digit ``int()`` limit (sys.get_int_max_str_digits).
HUGE = "9" * 5000


def _run(path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(
        app, ["run", str(path), "--no-cache", "--format", "json", *args], catch_exceptions=False
    )
    return result.exit_code, json.loads(result.stdout), result.stderr


def _rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for repo in report["repositories"] for row in repo["dependencies"]}


def _npm(registry: FakeRegistry, repo: Path) -> list[str]:
    huge = f"5.{HUGE}.0"
    registry.npm.add("foo", {"1.0.0": OLD, "2.0.0": OLD, huge: OLD}, latest="2.0.0")
    (repo / "package.json").write_text('{"dependencies": {"foo": "1.0.0"}}')
    return ["--registry", f"npm={registry.url('npm')}"]


def _pypi(registry: FakeRegistry, repo: Path) -> list[str]:
    registry.pypi.add("foo", {"1.0.0": OLD, "2.0.0": OLD, f"5.{HUGE}": OLD})
    (repo / "requirements.txt").write_text("foo==1.0.0\n")
    return ["--registry", f"pypi={registry.url('pypi')}"]


def _crates(registry: FakeRegistry, repo: Path) -> list[str]:
    registry.crates.add("foo", {"1.0.0": OLD, "2.0.0": OLD, f"5.{HUGE}.0": OLD})
    (repo / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\n[dependencies]\nfoo = "=1.0.0"\n'
    )
    return ["--registry", f"crates={registry.url('crates-index')}"]


def _go(registry: FakeRegistry, repo: Path) -> list[str]:
    versions = {"v1.0.0": OLD, "v1.2.0": OLD, f"v1.{HUGE}.0": OLD}
    registry.goproxy.add("example.com/foo", versions, latest="v1.2.0")
    go_mod = "module example.com/app\n\ngo 1.22\n\nrequire example.com/foo v1.0.0\n"
    (repo / "go.mod").write_text(go_mod)
    return ["--registry", f"goproxy={registry.url('goproxy')}"]


def _docker(registry: FakeRegistry, repo: Path) -> list[str]:
    registry.oci.add("acme/foo", dict.fromkeys(("1.0.0", "2.0.0", f"5.{HUGE}.0")))
    host = registry.url("oci").removeprefix("http://")
    (repo / "Dockerfile").write_text(f"FROM {host}/acme/foo:1.0.0\n")
    return []


SETUPS: dict[str, tuple[Callable[[FakeRegistry, Path], list[str]], str, str]] = {
    "npm": (_npm, "foo", "2.0.0"),
    "pypi": (_pypi, "foo", "2.0.0"),
    "crates": (_crates, "foo", "2.0.0"),
    "go": (_go, "example.com/foo", "v1.2.0"),
    "docker": (_docker, "", "2.0.0"),
}


@pytest.mark.parametrize("ecosystem", sorted(SETUPS))
def test_a_5000_digit_version_is_dropped_and_the_good_ones_answer(
    fake_registry: FakeRegistry, tmp_path: Path, ecosystem: str
) -> None:
    """A registry version with a 5,000-digit number is dropped: latest is the newest good one."""
    setup, name, latest = SETUPS[ecosystem]
    repo = tmp_path / "repo"
    repo.mkdir()
    args = setup(fake_registry, repo)
    code, report, stderr = _run(repo, *args)
    rows = _rows(report)
    row = rows[name] if name else next(iter(rows.values()))
    assert (row["status"], row["latest"]) == ("outdated", latest), row
    assert all(HUGE not in str(release) for release in row.get("heldBack") or ())
    assert "internal error" not in json.dumps(report)
    assert "int_max_str_digits" not in stderr + json.dumps(report)
    assert code == 0
