"""End to end: hostile input and an unwritable report path still give a complete report."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from patchula.cli import app

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
