"""``patchula run`` on Python rows whose newer releases need a newer Python (Requires-Python).

Real-shaped data: zipp 3.16.0 and later need Python >=3.8, 3.21.0 and later >=3.9
(dependabot-core#8346); pytest 8.0 needs >=3.8, 8.4 >=3.9, 9.0 >=3.10 (dependabot-core#13424,
uv locks 8.3.5 for ``requires-python = ">=3.8"``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

OLD = datetime(2023, 1, 1, tzinfo=UTC)
ZIPP = {
    "3.15.0": ">=3.7",
    "3.16.0": ">=3.8",
    "3.17.0": ">=3.8",
    "3.20.2": ">=3.8",
    "3.21.0": ">=3.9",
    "4.1.2": ">=3.9",
}
PYTEST = {
    "7.0.0": ">=3.6",
    "7.4.4": ">=3.7",
    "8.0.0": ">=3.8",
    "8.3.5": ">=3.8",
    "8.4.0": ">=3.9",
    "9.0.0": ">=3.10",
    "9.2.0": ">=3.10",
}


def _add(fake_registry: FakeRegistry, name: str, pythons: dict[str, str]) -> None:
    releases = {v: OLD + timedelta(days=30 * i) for i, v in enumerate(pythons)}
    fake_registry.pypi.add(name, releases, requires_python=pythons)


def _run(fake_registry: FakeRegistry, root: Path) -> dict[str, Any]:
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(root),
            "--no-cache",
            "--format",
            "json",
            "--registry",
            f"pypi={fake_registry.url('pypi')}",
        ],
        catch_exceptions=False,
    )
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = report["repositories"][0]["dependencies"]
    return rows


def _one(report: dict[str, Any], name: str) -> dict[str, Any]:
    (row,) = (row for row in _rows(report) if row["name"] == name)
    return row


def _view(row: dict[str, Any]) -> tuple[object, ...]:
    return (
        row["status"],
        row.get("current"),
        row.get("latest"),
        row.get("eligible"),
        row.get("reason"),
    )
