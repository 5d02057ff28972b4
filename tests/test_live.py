"""Smoke tests against the real npm registry and PyPI (``pytest -m live``; off in CI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from patchula.cli import app

pytestmark = pytest.mark.live


def test_live_scan_reports_registry_latest(tmp_path: Path) -> None:
    """A real scan finds left-pad's and six's latest versions as the registries state them."""
    (tmp_path / "package.json").write_text(json.dumps({"dependencies": {"left-pad": "1.1.0"}}))
    (tmp_path / "requirements.txt").write_text("six==1.10.0\n")
    result = CliRunner().invoke(app, ["run", str(tmp_path), "--format", "json"])
    rows = {d["name"]: d for d in json.loads(result.stdout)["repositories"][0]["dependencies"]}
    assert rows["left-pad"]["latest"] == "1.3.0"  # the package is frozen and deprecated
    assert rows["left-pad"]["status"] == "outdated"
    assert rows["six"]["current"] == "1.10.0"
    assert rows["six"]["status"] == "outdated"
    assert rows["six"]["latest"] >= "1.17.0"
