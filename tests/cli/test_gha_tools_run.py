"""``patchula run`` on a workflow's ``actions/setup-*`` version inputs (fake tool-release hosts)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

OLD = datetime(2024, 1, 1, tzinfo=UTC)
NOW = "2025-06-01T00:00:00Z"

WORKFLOW = """\
on: push
jobs:
  test:
    runs-on: x
    strategy:
      matrix:
        node: [18, 20]
    steps:
      - uses: actions/setup-node@v4
        with:
          node-version: '20.9.0'
      - uses: actions/setup-node@v4
        with:
          node-version: 20.x
      - uses: actions/setup-node@v4
        with:
          node-version: lts/*
      - uses: actions/setup-node@v4
        with:
          node-version: ${{ matrix.node }}
      - uses: actions/setup-python@v5
        with:
          python-version: '3.12'
      - uses: actions/setup-python@v5
        with:
          python-version: 3.10
      - uses: actions/setup-go@v5
        with:
          go-version: '1.22'
"""


def _run(registry: FakeRegistry, root: Path) -> dict[str, Any]:
    args = ["run", str(root), "--format", "json", "--now", NOW]
    for name, host in (
        ("node", "nodejs"),
        ("python", "python-org"),
        ("go", "go-dev"),
        ("github", "github"),
    ):
        args += ["--registry", f"{name}={registry.url(host)}"]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_setup_inputs_are_tool_rows_judged_like_mise_versions(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A pin, a ``20.x`` line, ``lts/*``, a Python line and a Go line are looked up as tools."""
    for version, lts, days in (
        ("20.9.0", "Iron", 20),
        ("20.18.1", "Iron", 300),
        ("22.12.0", "Jod", 330),
    ):
        fake_registry.nodejs.add(version, OLD + timedelta(days=days), lts=lts)
    fake_registry.python_org.add("3.12.8", OLD)
    fake_registry.python_org.add("3.13.1", OLD + timedelta(days=70))
    fake_registry.go_dev.add("1.22.10")
    fake_registry.go_dev.add("1.23.4")
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    report = _run(fake_registry, tmp_path)
    deps = report["repositories"][0]["dependencies"]
    rows = {(d["depType"], d["declared"]): d for d in deps if d["depType"].startswith("setup-")}

    pin = rows[("setup-node", "20.9.0")]
    assert (pin["ecosystem"], pin["datasource"], pin["name"], pin["line"]) == (
        "tool",
        "node",
        "node",
        11,
    )
    assert (pin["current"], pin["latest"], pin["proposed"], pin["status"]) == (
        "20.9.0",
        "22.12.0",
        "22.12.0",
        "outdated",
    )
    line = rows[("setup-node", "20.x")]
    assert (line["current"], line["proposed"], line["updateType"]) == ("20.18.1", "22.x", "major")
    lts = rows[("setup-node", "lts/*")]
    assert (lts["current"], lts["status"]) == ("22.12.0", "up-to-date")
    matrix = rows[("setup-node", "${{ matrix.node }}")]
    assert matrix["status"] == "skipped"
    assert "matrix" in matrix["reason"]
    python = rows[("setup-python", "3.12")]
    assert (python["current"], python["proposed"], python["status"]) == (
        "3.12.8",
        "3.13",
        "outdated",
    )
    lost = rows[("setup-python", "3.10")]
    assert lost["status"] == "skipped"
    assert "YAML number 3.1" in lost["reason"]
    go = rows[("setup-go", "1.22")]
    assert (go["ecosystem"], go["current"], go["proposed"]) == ("tool", "1.22.10", "1.23")
    # The setup actions themselves stay action rows beside the tool rows.
    assert sum(d["depType"] == "action" for d in deps) == 7
