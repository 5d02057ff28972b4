"""``patchula run`` on ``runs-on`` runner images: outdated images, retired ones said clearly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from patchula.cli import app

WORKFLOW = """\
on: push
jobs:
  old:
    runs-on: ubuntu-20.04
    steps: [{run: make}]
  fine:
    runs-on: ubuntu-24.04
    steps: [{run: make}]
  arm:
    runs-on: ubuntu-22.04-arm
    steps: [{run: make}]
  mac:
    runs-on: macos-14-xlarge
    steps: [{run: make}]
  latest:
    runs-on: windows-latest
    steps: [{run: make}]
"""


def test_runner_images_are_judged_on_the_table(tmp_path: Path) -> None:
    """An old image is outdated and its retirement said; a variant moves within itself."""
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    args = ["run", str(tmp_path), "--no-cache", "--format", "json", "--now", "2026-12-01T00:00:00Z"]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    report: dict[str, Any] = json.loads(result.stdout)
    rows = {d["declared"]: d for d in report["repositories"][0]["dependencies"]}
    old = rows["ubuntu-20.04"]
    assert (old["datasource"], old["depType"], old["current"], old["latest"]) == (
        "github-runners",
        "runs-on",
        "20.04",
        "24.04",
    )
    assert (old["status"], old["proposed"]) == ("outdated", "ubuntu-24.04")
    assert "GitHub retired the ubuntu-20.04 runner image" in old["reason"]
    assert "does not run" in old["reason"]
    assert (rows["ubuntu-24.04"]["status"], rows["ubuntu-24.04"]["reason"]) == ("up-to-date", None)
    # A variant moves within itself: -arm to the newer -arm, -xlarge to the newer -xlarge.
    assert (rows["ubuntu-22.04-arm"]["eligible"], rows["ubuntu-22.04-arm"]["proposed"]) == (
        "24.04-arm",
        "ubuntu-24.04-arm",
    )
    assert rows["macos-14-xlarge"]["proposed"] == "macos-26-xlarge"
    assert rows["windows-latest"]["status"] == "skipped"
    assert report["hosts"] == [] or all(h["requests"] == 0 for h in report["hosts"])
