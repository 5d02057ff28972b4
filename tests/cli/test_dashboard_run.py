"""``patchula run --dashboard PATH`` and ``--format markdown`` end to end (respx registry)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import respx
from typer.testing import CliRunner

from patchula.cli import app
from patchula.report.dashboard import render_markdown
from patchula.report.model import ScanReport

NPM = "http://npm.test"
runner = CliRunner()


def _iso(days_ago: float) -> str:
    return (datetime.now(UTC) - timedelta(days=days_ago)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


@pytest.fixture
def registry() -> Iterator[respx.Route]:
    """An npm registry with one package, three releases."""
    versions = {"1.0.0": 900, "1.3.0": 400, "1.4.0": 10}
    packument = {
        "name": "left-pad",
        "dist-tags": {"latest": "1.4.0"},
        "versions": {v: {"name": "left-pad", "version": v} for v in versions},
        "time": {"created": _iso(1000), "modified": _iso(0)}
        | {v: _iso(d) for v, d in versions.items()},
    }
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        yield router.get(f"{NPM}/left-pad").mock(return_value=httpx.Response(200, json=packument))


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout pinning left-pad 1.0.0."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text(json.dumps({"dependencies": {"left-pad": "1.0.0"}}))
    return repo


def _run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["run", *args, "--registry", f"npm={NPM}", "--no-cache"])
    return result.exit_code, result.stdout, result.stderr


def test_dashboard_file_is_written_and_stdout_keeps_the_table(
    checkout: Path, tmp_path: Path, registry: respx.Route
) -> None:
    """``--dashboard PATH`` writes the dashboard; stdout is still the (piped) table."""
    path = tmp_path / "out" / "dashboard.md"
    code, out, _ = _run(str(checkout), "--dashboard", str(path))
    assert code == 0
    assert out.splitlines()[-1].startswith("1 dependency in 1 repository: 1 outdated")
    assert "# Dependency dashboard" not in out
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Dependency dashboard\n")
    assert "### Major updates" not in text
    assert "| `left-pad` | `1.0.0` | `1.4.0` | 10d | `package.json:1` |" in text
    # npm.test is not the public registry: no link to npmjs.com is invented.
    assert "npmjs.com" not in text
    assert registry.call_count == 1


def test_format_markdown_prints_the_dashboard(checkout: Path, registry: respx.Route) -> None:
    """``--format markdown`` prints the dashboard on stdout, once, ending with one newline."""
    code, out, _ = _run(str(checkout), "--format", "markdown", "--min-release-age", "30d")
    assert code == 0
    assert out.startswith("# Dependency dashboard\n")
    assert out.endswith("|\n")
    assert "**Policy:** minimum release age 30d for every update type;" in out
    assert "### Releases held back by the policy (1)" in out
    assert registry.call_count == 1


def test_json_and_dashboard_together(checkout: Path, tmp_path: Path, registry: respx.Route) -> None:
    """``--format json --dashboard PATH``: JSON alone on stdout, the dashboard of it in PATH."""
    path = tmp_path / "dashboard.md"
    code, out, _ = _run(str(checkout), "--format", "json", "--dashboard", str(path))
    assert code == 0
    report = ScanReport.model_validate(json.loads(out))
    assert report.options["dashboard"] == str(path)
    assert path.read_text(encoding="utf-8") == render_markdown(report)
    assert registry.call_count == 1


def test_a_dashboard_path_that_is_a_directory_exits_2_before_scanning(
    checkout: Path, tmp_path: Path, registry: respx.Route
) -> None:
    """A directory as PATH is a usage error said at once; no lookup is made."""
    code, out, err = _run(str(checkout), "--dashboard", str(tmp_path))
    assert code == 2
    assert out == ""
    assert f"patchula: error: cannot write dashboard {tmp_path}: it is a directory" in err
    assert "Traceback" not in err
    assert registry.call_count == 0


def test_a_dashboard_path_below_a_file_exits_2_before_scanning(
    checkout: Path, tmp_path: Path, registry: respx.Route
) -> None:
    """A PATH whose parent is a regular file cannot be created: exit 2, no lookup."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = _run(str(checkout), "--dashboard", str(blocker / "sub" / "d.md"))
    assert code == 2
    assert f"{blocker} is not a directory" in err
    assert registry.call_count == 0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_dashboard_that_fails_when_written_says_so_after_the_output(
    checkout: Path, tmp_path: Path, registry: respx.Route
) -> None:
    """A FIFO nobody reads fails at write time: the table is printed, then a message, exit 2."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, out, err = _run(str(checkout), "--dashboard", str(fifo))
    assert code == 2
    assert "1 dependency in 1 repository" in out
    assert f"patchula: error: cannot write dashboard {fifo}: a FIFO that nobody reads" in err
    assert "Traceback" not in err
    assert registry.call_count == 1


def test_a_dashboard_path_that_is_a_scanned_manifest_exits_2_before_scanning(
    checkout: Path, registry: respx.Route
) -> None:
    """``--dashboard`` on the checkout's own ``package.json`` is refused; the file is kept."""
    manifest = checkout / "package.json"
    before = manifest.read_bytes()
    code, out, err = _run(str(checkout), "--dashboard", str(manifest))
    assert code == 2
    assert out == ""
    assert (
        f"patchula: error: cannot write dashboard {manifest}: it is package.json of target "
        f"{checkout}, a file the scan reads (read by package_json); write it elsewhere"
    ) in err
    assert "Traceback" not in err
    assert manifest.read_bytes() == before
    assert registry.call_count == 0


@pytest.mark.parametrize(
    ("option", "words"),
    [
        ("--report", "cannot write report"),
        ("--cache", "cannot use cache"),
    ],
)
def test_a_report_or_cache_path_that_is_a_scanned_manifest_exits_2_and_keeps_it(
    checkout: Path, registry: respx.Route, option: str, words: str
) -> None:
    """``--report`` would overwrite the manifest, ``--cache`` move it aside as a corrupt cache.

    Both are refused before scanning, like ``--dashboard``; the manifest keeps its bytes and
    no ``.corrupt-*`` copy appears.
    """
    manifest = checkout / "package.json"
    before = manifest.read_bytes()
    # Without ``_run``'s ``--no-cache``: the cache file is the one named.
    result = runner.invoke(
        app, ["run", str(checkout), option, str(manifest), "--registry", f"npm={NPM}"]
    )
    code, out, err = result.exit_code, result.stdout, result.stderr
    assert code == 2
    assert out == ""
    assert f"patchula: error: {words} {manifest}: it is package.json of target {checkout}" in err
    assert manifest.read_bytes() == before
    assert sorted(p.name for p in checkout.glob("package.json*")) == ["package.json"]
    assert registry.call_count == 0


@pytest.mark.parametrize("name", ["package-lock.json", "sub/pnpm-lock.yaml", "bun.lockb"])
def test_a_dashboard_path_that_is_a_lockfile_is_refused(
    checkout: Path, registry: respx.Route, name: str
) -> None:
    """Lockfiles are refused too, also one no manager reads yet (``bun.lockb``)."""
    lock = checkout / name
    lock.parent.mkdir(exist_ok=True)
    lock.write_text("keep me\n")
    code, _, err = _run(str(checkout), "--dashboard", str(lock))
    assert code == 2
    assert f"cannot write dashboard {lock}: it is {name} of target {checkout}" in err
    assert lock.read_text() == "keep me\n"
    assert registry.call_count == 0


def test_a_symlink_to_a_scanned_manifest_is_refused_and_a_file_target_counts(
    checkout: Path, tmp_path: Path, registry: respx.Route
) -> None:
    """The path is resolved; a file target is scanned from its directory, whose files count."""
    link = tmp_path / "dashboard.md"
    link.symlink_to(checkout / "package.json")
    code, _, err = _run(str(checkout), "--dashboard", str(link))
    assert code == 2
    assert f"cannot write dashboard {link}: it is package.json of target" in err
    requirements = checkout / "requirements.txt"
    requirements.write_text("flask==3.1.0\n")
    code, _, err = _run(str(checkout / "package.json"), "--dashboard", str(requirements))
    assert code == 2
    assert "it is requirements.txt of target" in err
    assert "(read by requirements_txt)" in err
    assert requirements.read_text() == "flask==3.1.0\n"
    assert registry.call_count == 0


def test_a_dashboard_beside_the_manifests_or_outside_the_targets_is_written(
    checkout: Path, tmp_path: Path, registry: respx.Route
) -> None:
    """A new or existing ``DEPENDENCIES.md`` of a checkout, and others' manifests, are written.

    Only the files the scan reads are refused: a ``package.json`` outside every target is not.
    """
    inside = checkout / "DEPENDENCIES.md"
    code, _, _ = _run(str(checkout), "--dashboard", str(inside))
    assert code == 0
    assert inside.read_text(encoding="utf-8").startswith("# Dependency dashboard\n")
    code, _, _ = _run(str(checkout), "--dashboard", str(inside))  # existing: overwritten
    assert code == 0
    other = tmp_path / "elsewhere" / "package.json"
    other.parent.mkdir()
    other.write_text("{}")
    code, _, err = _run(str(checkout), "--dashboard", str(other))
    assert code == 0, err
    assert other.read_text(encoding="utf-8").startswith("# Dependency dashboard\n")


def test_a_workspace_members_root_lockfile_is_refused(
    tmp_path: Path, registry: respx.Route
) -> None:
    """A member target is scanned from its workspace root: the root's lockfile is read too."""
    root = tmp_path / "mono"
    member = root / "packages" / "a"
    member.mkdir(parents=True)
    (root / "package.json").write_text(json.dumps({"workspaces": ["packages/*"]}))
    (member / "package.json").write_text(json.dumps({"dependencies": {"left-pad": "1.0.0"}}))
    lock = root / "package-lock.json"
    lock.write_text("{}")
    code, _, err = _run(str(member), "--dashboard", str(lock))
    assert code == 2
    assert f"it is package-lock.json of target {member}" in err
    assert lock.read_text() == "{}"
    assert registry.call_count == 0
