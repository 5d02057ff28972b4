"""``patchula run`` never formats the report or its rows with ``repr`` (issue 12 item 7)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx
from pydantic import BaseModel
from typer.testing import CliRunner

from patchula.cli import app
from patchula.report import model

NPM = "http://npm.test"


def _packument() -> dict[str, object]:
    return {
        "name": "left-pad",
        "dist-tags": {"latest": "1.3.0"},
        "versions": {"1.0.0": {}, "1.3.0": {}},
        "time": {"1.0.0": "2020-01-01T00:00:00.000Z", "1.3.0": "2021-01-01T00:00:00.000Z"},
    }


@pytest.mark.parametrize("output", ["json", "table"])
def test_run_never_reprs_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: str
) -> None:
    """The report leaves the event loop without the task's repr (asyncio.Runner formats it)."""
    calls: list[str] = []

    def counting_repr(self: BaseModel) -> str:
        calls.append(type(self).__name__)
        return "<report model>"

    for name in ("ScanReport", "RepositoryReport", "DependencyReport", "Summary"):
        monkeypatch.setattr(getattr(model, name), "__repr__", counting_repr)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text(json.dumps({"dependencies": {"left-pad": "^1.0.0"}}))
    with respx.mock(assert_all_called=True) as router:
        router.get(f"{NPM}/left-pad").mock(return_value=httpx.Response(200, json=_packument()))
        result = CliRunner().invoke(
            app,
            ["run", str(repo), "-v", "--no-cache", "--format", output, "--registry", f"npm={NPM}"],
            catch_exceptions=False,
        )
    assert result.exit_code == 0, result.output
    assert "left-pad" in result.stdout
    assert calls == []
