"""A failed publish-time lookup under a release-age wait is a failed lookup of the run.

The crate ``lazycrate`` has no ``pubtime`` in the sparse index, so its dates come from the
crates.io web API, asked lazily; the API answering 500 leaves the wait without the dates it
needs. The row keeps the safe verdict (held back, or admitted by ``unknown-age = "admit"``),
says why the dates are missing, and counts in ``summary.failedLookups`` (exit 3) — a mirror
outage never quietly bypasses the wait (trial finding 9).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

runner = CliRunner()
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
OLD = datetime(2025, 1, 1, tzinfo=UTC)


def _checkout(registry: FakeRegistry, tmp_path: Path) -> Path:
    registry.crates.add(
        "lazycrate",
        {"1.0.0": OLD, "1.1.0": OLD + timedelta(days=90), "1.2.0": NOW - timedelta(days=1)},
        pubtime=False,
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Cargo.toml").write_text(
        '[package]\nname = "app"\n[dependencies]\nlazycrate = "=1.0.0"\n'
    )
    return repo


def _run(registry: FakeRegistry, repo: Path, *more: str) -> tuple[int, dict[str, Any]]:
    args = ["run", str(repo), "--format", "json", "--no-cache", "--now", NOW.isoformat()]
    args += ["--min-release-age", "3d", "--fail-on", "outdated"]
    args += ["--registry", f"crates={registry.url('crates-index')}"]
    args += ["--registry", f"crates-api={registry.url('crates-api')}", *more]
    result = runner.invoke(app, args, catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


def _row(report: dict[str, Any]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = [d for r in report["repositories"] for d in r["dependencies"]]
    assert len(rows) == 1
    return rows[0]


def test_a_failed_api_holds_the_release_back_and_fails_the_run(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Held back (safe), saying why, and a failed lookup: exit 3 even with --fail-on."""
    repo = _checkout(fake_registry, tmp_path)
    fake_registry.host("crates-api").fail_next(50, 500, {}, b"")
    code, report = _run(fake_registry, repo)
    row = _row(report)
    assert row["status"] == "held-back"
    assert [h["version"] for h in row["heldBack"]] == ["1.1.0", "1.2.0"]
    assert "publish times unavailable: " in row["reason"]
    assert "500" in row["reason"]
    assert row["failedLookup"].startswith("publish times unavailable: ")
    assert report["summary"]["failedLookups"] == 1
    assert code == 3


def test_admitted_by_policy_still_says_the_dates_failed_and_fails_the_run(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``admit`` lets the release through, never without saying the outage."""
    repo = _checkout(fake_registry, tmp_path)
    config = tmp_path / "patchula.toml"
    config.write_text('unknown-age = "admit"\n')
    fake_registry.host("crates-api").fail_next(50, 500, {}, b"")
    code, report = _run(fake_registry, repo, "--config", str(config))
    row = _row(report)
    assert (row["status"], row["eligible"]) == ("outdated", "1.2.0")
    assert "1.2.0: age unknown, admitted by policy" in row["reason"]
    assert "publish times unavailable: " in row["reason"]
    assert row["failedLookup"] == row["reason"][row["reason"].index("publish times") :]
    assert report["summary"]["failedLookups"] == 1
    assert code == 3


def test_admit_asks_the_age_it_can_know_and_the_wait_applies(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``admit`` is for an age that cannot be known, never a reason not to ask for it."""
    repo = _checkout(fake_registry, tmp_path)
    config = tmp_path / "patchula.toml"
    config.write_text('unknown-age = "admit"\n')
    code, report = _run(fake_registry, repo, "--config", str(config))
    row = _row(report)
    # 1.2.0 is a day old: held by the 3-day wait; 1.1.0 is old enough.
    assert (row["status"], row["eligible"]) == ("outdated", "1.1.0")
    assert [h["version"] for h in row["heldBack"]] == ["1.2.0"]
    assert row["heldBack"][0]["releasedAt"] is not None
    assert "admitted by policy" not in (row["reason"] or "")
    assert row["failedLookup"] is None
    assert report["summary"]["failedLookups"] == 0
    assert fake_registry.host("crates-api").requests >= 1
    assert code == 1


def test_without_a_wait_a_failed_api_is_no_failed_lookup(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """No wait: no publish time is needed for the verdict, and none is asked."""
    repo = _checkout(fake_registry, tmp_path)
    fake_registry.host("crates-api").fail_next(50, 500, {}, b"")
    code, report = _run(fake_registry, repo, "--min-release-age", "0")
    row = _row(report)
    assert (row["status"], row["eligible"]) == ("outdated", "1.2.0")
    assert row["failedLookup"] is None
    assert report["summary"]["failedLookups"] == 0
    assert code == 1
