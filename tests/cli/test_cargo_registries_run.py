"""``patchula run`` with Cargo alternative registries and source replacement."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry
from tests.fake_registry.base import VirtualHost
from tests.fake_registry.crates import Crates

OLD = datetime(2025, 1, 1, tzinfo=UTC)
# A test stand-in, never a real credential.
TOKEN = "STANDIN-cargo-registry-token-q7"  # noqa: S105 - a stand-in


@pytest.fixture
def private() -> Iterator[tuple[VirtualHost, Crates]]:
    """A second sparse index on its own loopback port (the private registry)."""
    host = VirtualHost("private-crates")
    crates = Crates(host.url, host.url)
    crates.add("acme-core", {"1.0.0": OLD, "1.4.0": OLD + timedelta(days=20)})
    # A namesake of a public crate: the private one must be read, never crates.io's.
    crates.add("serde", {"1.0.0": OLD, "9.9.0": OLD + timedelta(days=5)})
    host.handler = crates.handle_index
    host.start()
    try:
        yield host, crates
    finally:
        host.stop()
    assert not host.errors


def _run(repo: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(
        app, ["run", str(repo), "--format", "json", *extra], env=env, catch_exceptions=False
    )
    return result.exit_code, json.loads(result.stdout)


def _rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["name"]: d for d in report["repositories"][0]["dependencies"]}


def _crate_manifest(path: Path, deps: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "Cargo.toml").write_text(
        f'[package]\nname = "app"\nversion = "0.1.0"\n[dependencies]\n{deps}'
    )


def test_alternative_registry_with_token(
    fake_registry: FakeRegistry, private: tuple[VirtualHost, Crates], tmp_path: Path
) -> None:
    """``registry = "private-crates"`` is looked up on its sparse index with its token."""
    host, _ = private
    host.required_authorization = TOKEN
    fake_registry.crates.add("serde", {"1.0.0": OLD, "1.0.5": OLD})
    (tmp_path / ".cargo").mkdir()
    (tmp_path / ".cargo" / "config.toml").write_text(
        f'[registries.private-crates]\nindex = "sparse+{host.url}/"\n'
    )
    _crate_manifest(
        tmp_path / "app",
        'acme-core = { version = "=1.0.0", registry = "private-crates" }\nserde = "1.0"\n',
    )
    crates = f"crates={fake_registry.url('crates-index')}"
    env = {"CARGO_REGISTRIES_PRIVATE_CRATES_TOKEN": TOKEN}
    code, report = _run(tmp_path, "--registry", crates, env=env)
    rows = _rows(report)
    acme = rows["acme-core"]
    assert (acme["status"], acme["current"], acme["latest"]) == ("outdated", "1.0.0", "1.4.0")
    assert acme["datasource"] == "crates"
    # The public crate stays on the crates.io index, not on the private one.
    assert rows["serde"]["latest"] == "1.0.5"
    assert host.authorized_requests >= 1
    assert TOKEN not in json.dumps(report)
    assert code == 0

    # Without the token the registry answers 401: the row fails, the scan says it is incomplete.
    code, report = _run(tmp_path, "--registry", crates, "--no-cache")
    acme = _rows(report)["acme-core"]
    assert acme["status"] == "error"
    assert acme["reason"].endswith(
        "HTTP 401 from " + host.url.removeprefix("http://") + ": no token configured for cargo"
        " registry 'private-crates' (set CARGO_REGISTRIES_PRIVATE_CRATES_TOKEN, or"
        " [registries.private-crates] token in $CARGO_HOME/credentials.toml)"
    )
    assert code == 3


def test_crates_io_replaced_by_a_sparse_mirror(
    fake_registry: FakeRegistry, private: tuple[VirtualHost, Crates], tmp_path: Path
) -> None:
    """``[source.crates-io] replace-with``: crates.io rows go to the mirror, with a note.

    ``--registry crates=URL`` wins over the replacement.
    """
    host, _ = private
    fake_registry.crates.add("serde", {"1.0.0": OLD, "1.0.5": OLD})
    (tmp_path / ".cargo").mkdir()
    (tmp_path / ".cargo" / "config.toml").write_text(
        '[source.crates-io]\nreplace-with = "corp"\n'
        f'[source.corp]\nregistry = "sparse+{host.url}"\n'
    )
    _crate_manifest(tmp_path, 'serde = "1.0"\n')
    code, report = _run(tmp_path)
    serde = _rows(report)["serde"]
    assert serde["latest"] == "9.9.0"
    assert "crates-io replaced by 'corp' (./.cargo/config.toml)" in serde["reason"]
    assert host.requests >= 1
    assert code == 0

    before = host.requests
    code, report = _run(
        tmp_path, "--registry", f"crates={fake_registry.url('crates-index')}", "--no-cache"
    )
    serde = _rows(report)["serde"]
    assert serde["latest"] == "1.0.5"
    assert "replaced" not in (serde["reason"] or "")
    assert host.requests == before


def test_nearest_config_wins(
    fake_registry: FakeRegistry, private: tuple[VirtualHost, Crates], tmp_path: Path
) -> None:
    """A member's own .cargo/config.toml overrides the root's for its crates only."""
    host, _ = private
    (tmp_path / ".cargo").mkdir()
    (tmp_path / ".cargo" / "config.toml").write_text(
        '[registries.corp]\nindex = "https://git.example/index.git"\n'
    )
    (tmp_path / "near" / ".cargo").mkdir(parents=True)
    (tmp_path / "near" / ".cargo" / "config.toml").write_text(
        f'[registries.corp]\nindex = "sparse+{host.url}/"\n'
    )
    _crate_manifest(tmp_path / "near", 'acme-core = { version = "1", registry = "corp" }\n')
    _crate_manifest(tmp_path / "far", 'other = { version = "1", registry = "corp" }\n')
    code, report = _run(tmp_path, "--registry", f"crates={fake_registry.url('crates-index')}")
    rows = _rows(report)
    assert rows["acme-core"]["latest"] == "1.4.0"
    assert rows["other"]["status"] == "skipped"
    assert rows["other"]["reason"] == (
        "registry 'corp' has a git index (https://git.example/index.git, ./.cargo/config.toml):"
        " patchula reads only sparse indexes (sparse+https://…)"
    )
    assert code == 0


def test_unreadable_sources_are_skipped_or_errors(tmp_path: Path) -> None:
    """Git indexes, local registries, undefined names: skipped; a cycle or bad TOML: errors."""
    (tmp_path / ".cargo").mkdir()
    (tmp_path / ".cargo" / "config.toml").write_text(
        '[registries.gitreg]\nindex = "https://user:STANDIN-userinfo-z9@git.example/i.git"\n'
        '[source.vendored]\nlocal-registry = "/srv/crates"\n'
        '[source.loop-a]\nreplace-with = "loop-b"\n[source.loop-b]\nreplace-with = "loop-a"\n'
    )
    _crate_manifest(
        tmp_path,
        'a = { version = "1", registry = "gitreg" }\n'
        'b = { version = "1", registry = "vendored" }\n'
        'c = { version = "1", registry = "nowhere" }\n'
        'd = { version = "1", registry = "loop-a" }\n',
    )
    code, report = _run(tmp_path, "-v")
    rows = _rows(report)
    assert rows["a"]["status"] == "skipped"
    assert "https://***@git.example/i.git" in rows["a"]["reason"]
    assert "STANDIN-userinfo-z9" not in json.dumps(report)
    assert rows["b"]["reason"] == (
        "cargo source 'vendored' is a local-registry source (files on disk): not looked up"
    )
    assert rows["c"]["status"] == "skipped"
    assert "CARGO_REGISTRIES_NOWHERE_INDEX" in rows["c"]["reason"]
    assert rows["d"]["status"] == "error"
    assert rows["d"]["reason"] == (
        "cargo source replacement cycle (./.cargo/config.toml): loop-a → loop-b → loop-a"
    )
    assert code == 3

    (tmp_path / ".cargo" / "config.toml").write_text("[registries\n")
    code, report = _run(tmp_path, "--no-cache")
    assert _rows(report)["a"]["reason"].startswith(
        "cargo configuration: ./.cargo/config.toml line 1: not valid TOML"
    )
    assert code == 3


def test_registry_index_from_the_environment(
    private: tuple[VirtualHost, Crates], tmp_path: Path
) -> None:
    """``CARGO_REGISTRIES_<NAME>_INDEX`` defines a registry with no config file."""
    host, _ = private
    _crate_manifest(tmp_path, 'acme-core = { version = "1", registry = "my-corp" }\n')
    env = {"CARGO_REGISTRIES_MY_CORP_INDEX": f"sparse+{host.url}/"}
    code, report = _run(tmp_path, env=env)
    assert _rows(report)["acme-core"]["latest"] == "1.4.0"
    assert code == 0
