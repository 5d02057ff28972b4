"""Extraction records end to end: ``patchula run`` twice on a clean git checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs a git executable")

runner = CliRunner()
OLD = datetime(2025, 1, 1, tzinfo=UTC)


def _git(root: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    done = subprocess.run(  # noqa: S603 - the test's own git commands
        ["git", *identity, *args],  # noqa: S607 - git from PATH, as the product finds it
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path, fake_registry: FakeRegistry) -> Path:
    """A committed checkout declaring one npm package the fake registry serves."""
    fake_registry.npm.add("pkg-r", {"1.0.0": OLD, "1.1.0": OLD + timedelta(days=30)})
    root = tmp_path / "repo"
    root.mkdir()
    (root / "package.json").write_text(json.dumps({"dependencies": {"pkg-r": "1.0.0"}}))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "c")
    return root


def _run(
    checkout: Path, tmp_path: Path, registry: FakeRegistry, *more: str
) -> tuple[int, dict[str, Any], str]:
    args = ["run", "--format", "json", str(checkout), "--cache", str(tmp_path / "c.db")]
    args += ["--registry", f"npm={registry.url('npm')}", *more]
    result = runner.invoke(app, args, catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout), result.stderr


def test_second_run_reports_a_cached_extraction_and_the_commit(
    checkout: Path, tmp_path: Path, fake_registry: FakeRegistry
) -> None:
    """The report says ``fresh`` then ``cached`` with the HEAD commit; -v counts the records."""
    head = _git(checkout, "rev-parse", "HEAD")
    code, first, err = _run(checkout, tmp_path, fake_registry, "-v")
    assert code == 0
    repo = first["repositories"][0]
    assert (repo["commit"], repo["extraction"]["source"]) == (head, "fresh")
    assert "patchula: 0 of 1 repositories from extraction records" in err
    code, second, err = _run(checkout, tmp_path, fake_registry, "-v")
    assert code == 0
    repo = second["repositories"][0]
    assert (repo["commit"], repo["extraction"]["source"]) == (head, "cached")
    assert repo["extraction"]["files"] == ["package.json"]
    assert "patchula: 1 of 1 repositories from extraction records" in err
    rows = [(d["name"], d["status"]) for d in repo["dependencies"]]
    assert rows == [(d["name"], d["status"]) for d in first["repositories"][0]["dependencies"]]
    assert rows == [("pkg-r", "outdated")]


def test_no_cache_uses_no_records(
    checkout: Path, tmp_path: Path, fake_registry: FakeRegistry
) -> None:
    """``--no-cache``: every run extracts afresh."""
    args = ["run", "--format", "json", str(checkout), "--no-cache"]
    args += ["--registry", f"npm={fake_registry.url('npm')}"]
    for _ in range(2):
        result = runner.invoke(app, args, catch_exceptions=False)
        report = json.loads(result.stdout)
        assert report["repositories"][0]["extraction"]["source"] == "fresh"
