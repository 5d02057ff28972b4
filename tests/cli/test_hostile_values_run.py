"""End to end: hostile values from registries and manifests are dropped, masked or cut short."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry
from tests.fake_registry.base import text_reply

runner = CliRunner()
OLD = datetime(2025, 1, 1, tzinfo=UTC)
# Over CPython's 4,300-digit ``int()`` limit (sys.get_int_max_str_digits).
HUGE = "9" * 5000


def _run(path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(
        app, ["run", str(path), "--no-cache", "--format", "json", *args], catch_exceptions=False
    )
    return result.exit_code, json.loads(result.stdout), result.stderr


def _rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for repo in report["repositories"] for row in repo["dependencies"]}


def _npm(registry: FakeRegistry, repo: Path) -> list[str]:
    huge = f"5.{HUGE}.0"
    registry.npm.add("foo", {"1.0.0": OLD, "2.0.0": OLD, huge: OLD}, latest="2.0.0")
    (repo / "package.json").write_text('{"dependencies": {"foo": "1.0.0"}}')
    return ["--registry", f"npm={registry.url('npm')}"]


def _pypi(registry: FakeRegistry, repo: Path) -> list[str]:
    registry.pypi.add("foo", {"1.0.0": OLD, "2.0.0": OLD, f"5.{HUGE}": OLD})
    (repo / "requirements.txt").write_text("foo==1.0.0\n")
    return ["--registry", f"pypi={registry.url('pypi')}"]


def _crates(registry: FakeRegistry, repo: Path) -> list[str]:
    registry.crates.add("foo", {"1.0.0": OLD, "2.0.0": OLD, f"5.{HUGE}.0": OLD})
    (repo / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\n[dependencies]\nfoo = "=1.0.0"\n'
    )
    return ["--registry", f"crates={registry.url('crates-index')}"]


def _go(registry: FakeRegistry, repo: Path) -> list[str]:
    versions = {"v1.0.0": OLD, "v1.2.0": OLD, f"v1.{HUGE}.0": OLD}
    registry.goproxy.add("example.com/foo", versions, latest="v1.2.0")
    go_mod = "module example.com/app\n\ngo 1.22\n\nrequire example.com/foo v1.0.0\n"
    (repo / "go.mod").write_text(go_mod)
    return ["--registry", f"goproxy={registry.url('goproxy')}"]


def _docker(registry: FakeRegistry, repo: Path) -> list[str]:
    registry.oci.add("acme/foo", dict.fromkeys(("1.0.0", "2.0.0", f"5.{HUGE}.0")))
    host = registry.url("oci").removeprefix("http://")
    (repo / "Dockerfile").write_text(f"FROM {host}/acme/foo:1.0.0\n")
    return []


SETUPS: dict[str, tuple[Callable[[FakeRegistry, Path], list[str]], str, str]] = {
    "npm": (_npm, "foo", "2.0.0"),
    "pypi": (_pypi, "foo", "2.0.0"),
    "crates": (_crates, "foo", "2.0.0"),
    "go": (_go, "example.com/foo", "v1.2.0"),
    "docker": (_docker, "", "2.0.0"),
}


@pytest.mark.parametrize("ecosystem", sorted(SETUPS))
def test_a_5000_digit_version_is_dropped_and_the_good_ones_answer(
    fake_registry: FakeRegistry, tmp_path: Path, ecosystem: str
) -> None:
    """A registry version with a 5,000-digit number is dropped: latest is the newest good one."""
    setup, name, latest = SETUPS[ecosystem]
    repo = tmp_path / "repo"
    repo.mkdir()
    args = setup(fake_registry, repo)
    code, report, stderr = _run(repo, *args)
    rows = _rows(report)
    row = rows[name] if name else next(iter(rows.values()))
    assert (row["status"], row["latest"]) == ("outdated", latest), row
    assert all(HUGE not in str(release) for release in row.get("heldBack") or ())
    assert "internal error" not in json.dumps(report)
    assert "int_max_str_digits" not in stderr + json.dumps(report)
    assert code == 0


def _index_line(**fields: object) -> str:
    entry = {"name": "serde", "vers": "1.0.0", "deps": [], "cksum": "c", "features": {}}
    return json.dumps(entry | fields) + "\n"


@pytest.mark.parametrize(
    ("extra", "latest"),
    [
        ({"name": "other", "vers": "1.8.0"}, "1.0.0"),
        ({"vers": "1.6.0", "v": 99}, "1.0.0"),
        ({"vers": "1.5.0", "yanked": "yes"}, "1.0.0"),
        ({"vers": "1.4.0", "v": 2, "yanked": False}, "1.4.0"),
    ],
    ids=["other-crate", "v99", "yanked-yes", "good"],
)
def test_crates_index_lines_cargo_would_not_offer_are_no_release(
    fake_registry: FakeRegistry, tmp_path: Path, extra: dict[str, object], latest: str
) -> None:
    """A sparse-index line of another crate, schema v 99 or ``"yanked": "yes"`` is dropped."""
    body = _index_line(yanked=False) + _index_line(**extra)
    fake_registry.host("crates-index").handler = lambda _request: text_reply(body)
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\n[dependencies]\nserde = "1.0.0"\n'
    )
    code, report, _ = _run(tmp_path, "--registry", f"crates={fake_registry.url('crates-index')}")
    row = _rows(report)["serde"]
    assert (row["current"], row["latest"]) == (latest, latest), row
    assert code == 0


def test_a_crates_index_of_only_dropped_lines_is_an_error_row_saying_why(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Every line dropped: the row is an error naming how many lines were dropped and why."""
    body = _index_line(name="other") + _index_line(v=99)
    fake_registry.host("crates-index").handler = lambda _request: text_reply(body)
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\n[dependencies]\nserde = "1.0.0"\n'
    )
    code, report, _ = _run(tmp_path, "--registry", f"crates={fake_registry.url('crates-index')}")
    row = _rows(report)["serde"]
    assert row["status"] == "error"
    assert row["reason"] == (
        "crate 'serde': the index file has no usable version line (1 line names another crate;"
        " 1 line has index schema v 99, above the 2 cargo reads)"
    )
    assert code == 3


@pytest.mark.parametrize("foreign", ["v2.0.0", "v99999999999999999999.0.0"])
def test_a_go_list_naming_another_major_is_never_proposed(
    fake_registry: FakeRegistry, tmp_path: Path, foreign: str
) -> None:
    """A v1 path's ``@v/list`` naming v2.0.0 (no +incompatible): latest stays v1.2.0."""
    versions = dict.fromkeys(("v1.0.0", "v1.2.0", foreign, "v3.1.0+incompatible"), OLD)
    fake_registry.goproxy.add("github.com/foo/bar", versions, latest="v1.2.0")
    go_mod = "module example.com/app\n\ngo 1.22\n\nrequire github.com/foo/bar v1.0.0\n"
    (tmp_path / "go.mod").write_text(go_mod)
    code, report, _ = _run(tmp_path, "--registry", f"goproxy={fake_registry.url('goproxy')}")
    row = _rows(report)["github.com/foo/bar"]
    assert (row["latest"], row["updateType"], row["status"]) == ("v1.2.0", "minor", "outdated")
    assert code == 0


LONG = "a" * 200_000
LONG_NAMES = {
    "requirements.txt": f"{LONG}==1.0\n",
    "package.json": json.dumps({"dependencies": {LONG: "^1.0.0"}}),
    "Cargo.toml": f'[package]\nname = "app"\nversion = "0.1.0"\n[dependencies]\n{LONG} = "1"\n',
    "go.mod": f"module example.com/app\n\nrequire example.com/{LONG} v1.0.0\n",
}

LONG_LINES = {"requirements.txt": 1, "package.json": 1, "Cargo.toml": 5, "go.mod": 3}


@pytest.mark.parametrize("manifest", sorted(LONG_NAMES))
def test_a_200k_name_is_a_short_problem_and_never_requested(
    fake_registry: FakeRegistry, tmp_path: Path, manifest: str
) -> None:
    """A 200,000-character name is a problem at its line, cut short; no registry is asked."""
    (tmp_path / manifest).write_text(LONG_NAMES[manifest])
    registries = [
        f"{name}={fake_registry.url(host)}"
        for name, host in (
            ("npm", "npm"),
            ("pypi", "pypi"),
            ("crates", "crates-index"),
            ("goproxy", "goproxy"),
        )
    ]
    args = [arg for registry in registries for arg in ("--registry", registry)]
    code, report, _ = _run(tmp_path, *args)
    problems = report["repositories"][0]["problems"]
    assert len(problems) == 1
    assert (problems[0]["file"], problems[0]["line"]) == (manifest, LONG_LINES[manifest])
    message = problems[0]["message"]
    assert "characters): longer than 256 characters" in message
    assert message.endswith("; not looked up")
    assert len(json.dumps(report)) < 20_000
    assert report["repositories"][0]["dependencies"] == []
    assert sum(fake_registry.host(h).requests for h in fake_registry.hosts) == 0
    table = runner.invoke(app, ["run", str(tmp_path), "--no-cache", *args])
    assert len(table.stdout) < 2_000, table.stdout[:300]
    assert code == 3


SECRET = "tok-SECRET-123"  # noqa: S105 - a stand-in that must appear nowhere


@pytest.mark.parametrize("output", ["table", "json", "markdown"])
def test_userinfo_in_an_image_reference_appears_in_no_output(
    fake_registry: FakeRegistry, tmp_path: Path, output: str
) -> None:
    """``FROM user:tok@host/img:1.0``: the problem says ``***@``, the token is nowhere."""
    host = fake_registry.url("oci").removeprefix("http://")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Dockerfile").write_text(f"FROM user:{SECRET}@{host}/acme/app:1.0\n")
    (repo / "compose.yaml").write_text(f"services:\n  app:\n    image: me:{SECRET}@{host}/a:1\n")
    report, dashboard = tmp_path / "report.json", tmp_path / "dashboard.md"
    result = runner.invoke(
        app,
        [
            "run",
            str(repo),
            "--no-cache",
            "-vv",
            "--format",
            output,
            "--report",
            str(report),
            "--dashboard",
            str(dashboard),
            "--registry",
            f"docker={fake_registry.url('oci')}",
        ],
        catch_exceptions=False,
    )
    texts = [result.stdout, result.stderr, report.read_text(), dashboard.read_text()]
    assert all(SECRET not in text for text in texts)
    assert f"'***@{host}/acme/app:1.0'" in texts[0 if output != "json" else 2]
    problems = json.loads(report.read_text())["repositories"][0]["problems"]
    assert [(p["file"], p["line"]) for p in problems] == [("Dockerfile", 1), ("compose.yaml", 3)]
    assert all("***@" in p["message"] for p in problems)
    assert fake_registry.host("oci").requests == 0
    assert result.exit_code == 3


def test_an_interrupted_run_exits_130_and_prints_no_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C (KeyboardInterrupt in the scan): "patchula: interrupted", exit 130, no report."""

    def interrupted(*_args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("anyio.run", interrupted)  # imported by ``run`` when it starts
    report = tmp_path / "report.json"
    result = runner.invoke(app, ["run", str(tmp_path), "--no-cache", "--report", str(report)])
    assert (result.exit_code, result.stdout) == (130, "")
    assert result.stderr.strip() == "patchula: interrupted"
    assert not report.exists()
