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


def test_two_locked_versions_each_requirement_at_the_newest_it_admits(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Locked foo 0.0.3 and 0.1.0: ``foo_b = "0"`` is at 0.1.0, up to date; ``0.0`` ones at 0.0.3.

    The trial's case: every row was judged at the oldest locked, so ``foo_b`` claimed an update
    already in the lockfile.
    """
    fake_registry.crates.add(
        "foo",
        {"0.0.3": OLD, "0.0.4": OLD + timedelta(days=1), "0.1.0": OLD + timedelta(days=2)},
    )
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "root"\nversion = "0.1.0"\n[dependencies]\nfoo = "0.0"\n'
        'foo_b = { package = "foo", version = "0" }\n'
        'foo_c = { package = "foo", version = "~0.0.3" }\n'
        '[dev-dependencies]\nfoo_d = { package = "foo", version = "^0.0" }\n'
    )
    source = 'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
    (tmp_path / "Cargo.lock").write_text(
        'version = 4\n[[package]]\nname = "root"\nversion = "0.1.0"\n'
        'dependencies = ["foo 0.0.3", "foo 0.1.0"]\n'
        f'[[package]]\nname = "foo"\nversion = "0.0.3"\n{source}'
        f'[[package]]\nname = "foo"\nversion = "0.1.0"\n{source}'
    )
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(tmp_path),
            "--format",
            "json",
            "--no-cache",
            "--registry",
            f"crates={fake_registry.url('crates-index')}",
        ],
        catch_exceptions=False,
    )
    rows = {d["name"]: d for d in json.loads(result.stdout)["repositories"][0]["dependencies"]}
    verdicts = {n: (r["current"], r["status"], r["eligible"]) for n, r in rows.items()}
    assert verdicts == {
        "foo": ("0.0.3", "outdated", "0.1.0"),
        "foo_b": ("0.1.0", "up-to-date", None),
        "foo_c": ("0.0.3", "outdated", "0.1.0"),
        "foo_d": ("0.0.3", "outdated", "0.1.0"),
    }
    assert rows["foo_b"]["reason"] == (
        "Cargo.lock also locks foo 0.0.3, which 0 admits too; judged at the newest locked "
        "(cargo builds against the highest compatible version)"
    )
