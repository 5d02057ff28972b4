"""``patchula run`` on a Cargo workspace against the fake crates.io sparse index."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

OLD = datetime(2025, 1, 1, tzinfo=UTC)


def test_cargo_workspace_with_lock(fake_registry: FakeRegistry, tmp_path: Path) -> None:
    """Versions come from Cargo.lock; an inherited requirement is the root's row; no yanks."""
    fake_registry.crates.add(
        "serde",
        {"1.0.100": OLD, "1.0.200": OLD + timedelta(days=30), "1.0.201": OLD + timedelta(days=40)},
        yanked={"1.0.201"},
    )
    fake_registry.crates.add("regex", {"1.9.0": OLD, "1.10.0": OLD + timedelta(days=10)})
    (tmp_path / "Cargo.toml").write_text(
        '[workspace]\nmembers = ["app"]\n[workspace.dependencies]\nserde = "1.0.100"\n'
    )
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\n[dependencies]\nserde = { workspace = true }\n'
        'regex = "1.9"\nlocal = { path = "../local" }\n'
    )
    (tmp_path / "Cargo.lock").write_text(
        'version = 4\n[[package]]\nname = "app"\nversion = "0.1.0"\n'
        '[[package]]\nname = "serde"\nversion = "1.0.100"\n'
        'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
        '[[package]]\nname = "regex"\nversion = "1.9.0"\n'
        'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
    )
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(tmp_path),
            "--format",
            "json",
            "--registry",
            f"crates={fake_registry.url('crates-index')}",
        ],
        catch_exceptions=False,
    )
    report = json.loads(result.stdout)
    rows = {(d["file"], d["name"]): d for d in report["repositories"][0]["dependencies"]}
    # One declaration, one row: the root's, naming the member that inherits it.
    assert [key for key in rows if key[1] == "serde"] == [("Cargo.toml", "serde")]
    serde = rows[("Cargo.toml", "serde")]
    assert (serde["current"], serde["currentSource"], serde["latest"], serde["eligible"]) == (
        "1.0.100",
        "lockfile",
        "1.0.200",
        "1.0.200",
    )
    assert serde["reason"] == "inherited by app"
    regex = rows[("app/Cargo.toml", "regex")]
    assert (regex["current"], regex["latest"], regex["updateType"]) == ("1.9.0", "1.10.0", "minor")
    assert rows[("app/Cargo.toml", "local")]["status"] == "skipped"
    assert rows[("Cargo.toml", "serde")]["depType"] == "workspace.dependencies"
    assert result.exit_code == 0


def test_a_yanked_locked_crate_with_nothing_newer_is_outdated(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Cargo.lock on yanked 1.2.0, 1.1.0 the newest usable: outdated, shown, --fail-on exits 1."""
    fake_registry.crates.add("yankme", {"1.1.0": OLD, "1.2.0": OLD}, yanked={"1.2.0"})
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\n[dependencies]\nyankme = "1.1"\n'
    )
    (tmp_path / "Cargo.lock").write_text(
        'version = 4\n[[package]]\nname = "app"\nversion = "0.1.0"\n'
        '[[package]]\nname = "yankme"\nversion = "1.2.0"\n'
        'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
    )
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(tmp_path),
            "--format",
            "json",
            "--no-cache",
            "--fail-on",
            "outdated",
            "--registry",
            f"crates={fake_registry.url('crates-index')}",
        ],
        catch_exceptions=False,
    )
    (row,) = json.loads(result.stdout)["repositories"][0]["dependencies"]
    assert (row["status"], row["current"], row["latest"], row["eligible"]) == (
        "outdated",
        "1.2.0",
        "1.1.0",
        "1.1.0",
    )
    assert row["reason"] == "current 1.2.0 is yanked; latest usable is 1.1.0"
    assert result.exit_code == 1
