"""``patchula run`` on Python ranges that exclude releases by name (PEP 440 ``!=``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

OLD = datetime(2023, 1, 1, tzinfo=UTC)


def _row(fake_registry: FakeRegistry, root: Path) -> dict[str, Any]:
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
    (row,) = json.loads(result.stdout)["repositories"][0]["dependencies"]
    return dict(row)


def _add(fake_registry: FakeRegistry, versions: list[str]) -> None:
    releases = {v: OLD + timedelta(days=30 * i) for i, v in enumerate(versions)}
    fake_registry.pypi.add("urllib3", releases)


def test_an_excluded_release_is_never_proposed_and_the_row_says_so(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``!=2.8.0,>=2``: pip never installs 2.8.0 for it, so it is no update (the trial's case)."""
    _add(fake_registry, ["2.6.0", "2.7.0", "2.8.0"])
    (tmp_path / "requirements.txt").write_text("urllib3!=2.8.0,>=2\n")
    row = _row(fake_registry, tmp_path)
    assert (row["status"], row["current"], row["latest"], row.get("eligible"), row["reason"]) == (
        "up-to-date",
        "2.7.0",
        "2.8.0",
        None,
        "2.8.0 is excluded by the declared range (!=2.8.0): not proposed",
    )


def test_a_newer_release_past_the_exclusion_is_proposed_naming_the_skipped_ones(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A pin with ``!=2.8.*`` moves to 2.9.0 past 2.8.0 and 2.8.1, and names them."""
    _add(fake_registry, ["2.7.0", "2.8.0", "2.8.1", "2.9.0"])
    (tmp_path / "requirements.txt").write_text("urllib3==2.7.0,!=2.8.*\n")
    row = _row(fake_registry, tmp_path)
    assert (row["status"], row["current"], row["eligible"], row["reason"]) == (
        "outdated",
        "2.7.0",
        "2.9.0",
        "2.8.1, 2.8.0 are excluded by the declared range (!=2.8.*): not proposed",
    )


def test_an_exclusion_below_current_changes_nothing(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``!=2.6.0`` names an old release: the row is as without it, and says nothing."""
    _add(fake_registry, ["2.6.0", "2.7.0", "2.8.0"])
    (tmp_path / "requirements.txt").write_text("urllib3==2.7.0,!=2.6.0\n")
    row = _row(fake_registry, tmp_path)
    assert (row["status"], row["eligible"], row["reason"]) == ("outdated", "2.8.0", None)
