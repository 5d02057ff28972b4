"""End to end: hostile input and an unwritable report path still give a complete report."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from tests.hang import fail_if_blocked

runner = CliRunner()
SURROGATES = (
    '{\n  "dependencies": {\n    "pkg\\ud800": "^1",\n    "left-pad": "^1\\udc00"\n  }\n}\n'
)


def _checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text(SURROGATES)
    return repo


def test_lone_surrogates_end_to_end_json(tmp_path: Path) -> None:
    """A surrogate name and a surrogate range are problems with lines in the JSON report."""
    result = runner.invoke(app, ["run", str(_checkout(tmp_path)), "--format", "json", "--no-cache"])
    assert result.exit_code == 3, result.output
    report = json.loads(result.stdout)
    problems = [(p["line"], p["message"]) for p in report["repositories"][0]["problems"]]
    assert problems == [
        (3, "invalid Unicode: lone surrogate in the name of 'pkg\\ud800'"),
        (4, "invalid Unicode: lone surrogate in the declared value of 'left-pad'"),
    ]
    assert report["repositories"][0]["dependencies"] == []


def test_lone_surrogates_end_to_end_table(tmp_path: Path) -> None:
    """The table (piped) shows both problems and the summary; nothing fails to encode."""
    result = runner.invoke(app, ["run", str(_checkout(tmp_path)), "--no-cache"])
    assert result.exit_code == 3, result.output
    assert "package.json:3: invalid Unicode: lone surrogate" in result.stdout
    assert "package.json:4: invalid Unicode: lone surrogate" in result.stdout
    assert "2 manifest errors" in result.stdout


def test_unwritable_report_prints_results_then_fails(tmp_path: Path) -> None:
    """``--report`` naming a directory: the results are printed, the failure named, exit 2."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text("{ not json")
    target = tmp_path / "out"
    target.mkdir()
    result = runner.invoke(app, ["run", str(repo), "--no-cache", "-q", "--report", str(target)])
    assert result.exit_code == 2
    assert "1 manifest error" in result.stdout
    assert f"cannot write report {target}: Is a directory" in result.stderr


def test_report_under_a_file_prints_results_then_fails(tmp_path: Path) -> None:
    """``--report`` whose parent is a regular file fails after printing the JSON results."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text("{}")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    path = blocker / "report.json"
    result = runner.invoke(
        app, ["run", str(repo), "--no-cache", "--format", "json", "--report", str(path)]
    )
    assert result.exit_code == 2
    assert json.loads(result.stdout)["summary"]["dependencies"] == 0
    assert f"cannot write report {path}" in result.stderr


@pytest.fixture
def no_hang() -> Iterator[None]:
    """Fail a test that blocks (a FIFO opened by a regression) instead of hanging the suite."""
    with fail_if_blocked(10):
        yield


def test_report_to_a_fifo_without_a_reader_fails_at_once(tmp_path: Path, no_hang: None) -> None:
    """``--report`` naming a FIFO nobody reads: results printed, the failure named, exit 2."""
    repo = tmp_path / "repo"
    repo.mkdir()
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    result = runner.invoke(app, ["run", str(repo), "--no-cache", "-q", "--report", str(fifo)])
    assert result.exit_code == 2
    assert "0 dependencies" in result.stdout
    assert f"cannot write report {fifo}: a FIFO that nobody reads" in result.stderr


@pytest.mark.parametrize(
    "content",
    [
        b"[tool.other]\nx = " + b"9" * 5000 + b"\n",
        b"a = " + b"[" * 50_000 + b"\n",
        b"\xff\xfe[tool.patchula]\n",
    ],
    ids=["huge-integer", "deep-nesting", "not-utf8"],
)
def test_a_hostile_pyproject_in_the_current_directory_never_crashes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    """The config file read from the cwd is a manifest too: the scan runs and reports it."""
    (tmp_path / "pyproject.toml").write_bytes(content)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["run", ".", "--no-cache", "--format", "json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 3
    problems = json.loads(result.stdout)["repositories"][0]["problems"]
    assert [p["file"] for p in problems] == ["pyproject.toml"]
    # Given as --config, the same file is a configuration error naming it (exit 2).
    given = runner.invoke(app, ["run", ".", "--no-cache", "--config", "pyproject.toml"])
    assert given.exception is None or isinstance(given.exception, SystemExit), given.exception
    assert given.exit_code == 2
    assert "pyproject.toml" in given.stderr


def test_a_config_file_that_is_a_fifo_is_refused_without_blocking(
    tmp_path: Path, no_hang: None
) -> None:
    """``--config`` naming a FIFO: a configuration error at once, never a hang."""
    fifo = tmp_path / "patchula.toml"
    os.mkfifo(fifo)
    result = runner.invoke(app, ["run", str(tmp_path), "--no-cache", "--config", str(fifo)])
    assert result.exit_code == 2
    assert "not a regular file (FIFO)" in result.stderr


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://u:PASSWORD@127.0.0.1:99999", "Port out of range 0-65535"),
        ("http://u:PASSWORD@[::1", "Invalid IPv6 URL"),
    ],
)
def test_an_unusable_registry_url_is_a_usage_error(tmp_path: Path, url: str, says: str) -> None:
    """A port out of range or a broken IPv6 literal: exit 2 naming the flag, password hidden."""
    result = runner.invoke(app, ["run", str(tmp_path), "--no-cache", "--registry", f"npm={url}"])
    assert result.exit_code == 2
    assert "--registry: unusable npm URL" in result.stderr
    assert says in result.stderr
    assert "PASSWORD" not in result.stdout + result.stderr
