"""``patchula run`` on Python manifests against the fake PyPI: OR ranges, self-references."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

OLD = datetime(2025, 1, 1, tzinfo=UTC)
LOCK_TAIL = '\n[metadata]\nlock-version = "2.0"\npython-versions = "^3.11"\ncontent-hash = "x"\n'


def _run(fake_registry: FakeRegistry, root: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(root),
            "--format",
            "json",
            "--registry",
            f"pypi={fake_registry.url('pypi')}",
            *extra,
        ],
        catch_exceptions=False,
    )
    return result.exit_code, json.loads(result.stdout)


def _rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in report["repositories"][0]["dependencies"]}


def test_poetry_or_constraint_is_judged_against_the_union_with_the_lock(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``flask = "^1.0 || ^2.0"`` locked at 2.0.0: outdated to 2.3.0, never skipped."""
    fake_registry.pypi.add(
        "flask",
        {v: OLD + timedelta(days=i) for i, v in enumerate(["1.1.0", "2.0.0", "2.3.0", "3.0.0"])},
    )
    fake_registry.pypi.add("click", {"7.1": OLD, "8.0": OLD + timedelta(days=3)})
    (tmp_path / "pyproject.toml").write_text(
        '[tool.poetry]\nname = "app"\n[tool.poetry.dependencies]\npython = "^3.11"\n'
        'flask = "^1.0 || ^2.0"\nclick = ">=7,<8 || >=9"\n'
    )
    (tmp_path / "poetry.lock").write_text(
        '[[package]]\nname = "flask"\nversion = "2.0.0"\n' + LOCK_TAIL
    )
    _, report = _run(fake_registry, tmp_path)
    rows = _rows(report)
    flask = rows["flask"]
    assert (flask["status"], flask["current"], flask["currentSource"]) == (
        "outdated",
        "2.0.0",
        "lockfile",
    )
    assert (flask["latest"], flask["eligible"]) == ("3.0.0", "3.0.0")
    assert flask.get("reason") is None  # 2.0.0 is inside the union: no "outside" note
    click = rows["click"]  # unlocked: what Poetry installs for the union
    assert (click["status"], click["current"], click["currentSource"]) == (
        "outdated",
        "7.1",
        "range",
    )


def test_self_referential_extra_is_skipped_not_an_error(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``x[lint]`` in project ``x``: a skipped row, no lookup of "x", exit 0."""
    fake_registry.pypi.add("pytest", {"7.0": OLD, "8.0": OLD + timedelta(days=1)})
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "0.1.0"\n[project.optional-dependencies]\n'
        'lint = []\ntest = ["pytest>=8", "x[lint]"]\n'
    )
    code, report = _run(fake_registry, tmp_path)
    rows = _rows(report)
    assert (rows["x"]["status"], rows["x"]["reason"]) == (
        "skipped",
        "the project itself (self-referential extra)",
    )
    assert rows["pytest"]["status"] == "up-to-date"
    assert code == 0


HTTPX = ["0.27.0", "0.28.1", "1.0.dev3", "1.0.dev6"]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"requirements.txt": "--pre\nhttpx\n"}, "1.0.dev6"),
        ({"requirements.txt": "httpx\n"}, "0.28.1"),
        (
            {"Pipfile": '[packages]\nhttpx = "*"\n[pipenv]\nallow_prereleases = true\n'},
            "1.0.dev6",
        ),
        (
            {
                "pyproject.toml": '[tool.poetry]\nname = "app"\n[tool.poetry.dependencies]\n'
                'httpx = { version = "*", allow-prereleases = true }\n'
            },
            "1.0.dev6",
        ),
        (
            {
                "pyproject.toml": '[project]\nname = "app"\ndependencies = ["httpx>=0.27"]\n'
                '[tool.uv]\nprerelease = "allow"\n'
            },
            "1.0.dev6",
        ),
    ],
)
def test_prerelease_opt_ins_make_current_what_the_installer_picks(
    fake_registry: FakeRegistry, tmp_path: Path, files: dict[str, str], expected: str
) -> None:
    """Opt-ins (pip --pre, pipenv, Poetry, uv): current is the newest release, 1.0.dev6."""
    fake_registry.pypi.add("httpx", {v: OLD + timedelta(days=i) for i, v in enumerate(HTTPX)})
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    _, report = _run(fake_registry, tmp_path)
    httpx = _rows(report)["httpx"]
    assert (httpx["current"], httpx["currentSource"]) == (expected, "range")


UV_EXPLICIT = (
    '[project]\nname = "app"\ndependencies = ["torch>=2"]\n'
    '[tool.uv.sources]\ntorch = { index = "pytorch" }\n'
    '[[tool.uv.index]]\nname = "pytorch"\nurl = "https://download.pytorch.org/whl/cpu"\n'
    "explicit = true\n"
)


def test_a_package_only_on_an_explicit_uv_index_is_not_checked_against_public_pypi(
    tmp_path: Path,
) -> None:
    """An explicit-index torch, no PyPI registry configured: skipped, and the index warned of."""
    (tmp_path / "pyproject.toml").write_text(UV_EXPLICIT)
    result = CliRunner().invoke(
        app, ["run", str(tmp_path), "--format", "json"], catch_exceptions=False
    )
    report = json.loads(result.stdout)
    torch = _rows(report)["torch"]
    assert (torch["status"], torch["reason"]) == (
        "skipped",
        (
            "only on package index 'pytorch' (explicit): cannot be checked against the configured "
            "PyPI (public PyPI); --registry pypi=URL points the run at that index"
        ),
    )
    problems = report["repositories"][0]["problems"]
    assert [(p["file"], p["line"], p["severity"]) for p in problems] == [
        ("pyproject.toml", 6, "warning")
    ]
    assert "download.pytorch.org" not in result.stdout


def test_with_a_configured_pypi_registry_the_explicit_index_package_is_looked_up_there(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``--registry pypi=URL`` (pointed at that index): looked up, the row says where."""
    fake_registry.pypi.add("torch", {"2.0.0": OLD, "2.1.0": OLD + timedelta(days=9)})
    (tmp_path / "pyproject.toml").write_text(UV_EXPLICIT)
    _, report = _run(fake_registry, tmp_path)
    torch = _rows(report)["torch"]
    assert (torch["status"], torch["current"]) == ("up-to-date", "2.1.0")
    assert torch["reason"] == (
        "only on package index 'pytorch': looked up on the configured PyPI registry"
    )


def test_a_poetry_source_constraint_is_said_on_its_row(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``attrs = {source = "private"}`` with a primary source: a warning and a row note."""
    fake_registry.pypi.add("attrs", {"21.1.0": OLD, "21.4.0": OLD + timedelta(days=9)})
    (tmp_path / "pyproject.toml").write_text(
        '[tool.poetry]\nname = "app"\n[tool.poetry.dependencies]\n'
        'attrs = { version = "^21.0", source = "private" }\n'
        '[[tool.poetry.source]]\nname = "private"\nurl = "https://pypi.internal.example/simple"\n'
        'priority = "primary"\n'
    )
    _, report = _run(fake_registry, tmp_path)
    attrs = _rows(report)["attrs"]
    assert (attrs["status"], attrs["current"]) == ("up-to-date", "21.4.0")
    assert attrs["reason"] == (
        "installed from package source 'private' (its `source`): looked up on the configured "
        "PyPI base"
    )
    [problem] = report["repositories"][0]["problems"]
    assert (problem["line"], problem["severity"]) == (5, "warning")
    assert problem["message"].startswith("package source 'private' is not used for lookups")
