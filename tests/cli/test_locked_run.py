"""``patchula run`` on lockfiles that lock several versions of one package (fake PyPI)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

OLD = datetime(2025, 1, 1, tzinfo=UTC)
SOURCE = 'source = { registry = "https://pypi.org/simple" }\n'


def test_uv_lock_with_a_version_per_environment_is_judged_at_the_oldest(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A uv.lock with numpy 2.2.6 and 2.3.4 (marker split), latest 2.5.5: outdated from 2.2.6."""
    fake_registry.pypi.add(
        "numpy",
        {
            "2.2.6": OLD,
            "2.3.4": OLD + timedelta(days=100),
            "2.5.5": OLD + timedelta(days=200),
        },
    )
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0.1.0"\ndependencies = ["numpy>=2"]\n'
    )
    (tmp_path / "uv.lock").write_text(
        'version = 1\n[[package]]\nname = "numpy"\nversion = "2.3.4"\n'
        f"{SOURCE}resolution-markers = [\"python_full_version >= '3.11'\"]\n"
        '[[package]]\nname = "numpy"\nversion = "2.2.6"\n'
        f"{SOURCE}resolution-markers = [\"python_full_version < '3.11'\"]\n"
    )
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(tmp_path),
            "--format",
            "json",
            "--registry",
            f"pypi={fake_registry.url('pypi')}",
        ],
        catch_exceptions=False,
    )
    [numpy] = json.loads(result.stdout)["repositories"][0]["dependencies"]
    assert (numpy["current"], numpy["currentSource"], numpy["lockFile"]) == (
        "2.2.6",
        "lockfile",
        "uv.lock",
    )
    assert (numpy["latest"], numpy["status"]) == ("2.5.5", "outdated")
    assert numpy["reason"] == (
        "uv.lock locks numpy 2.2.6 and 2.3.4 (Python >= 3.11); judged at 2.2.6, which 2.5.5"
        " replaces"
    )


def _run(fake_registry: FakeRegistry, root: Path) -> dict[str, object]:
    result = CliRunner().invoke(
        app,
        ["run", str(root), "--format", "json", "--registry", f"pypi={fake_registry.url('pypi')}"],
        catch_exceptions=False,
    )
    [row] = json.loads(result.stdout)["repositories"][0]["dependencies"]
    return dict(row)


def _forked_numpy(fake_registry: FakeRegistry, root: Path, releases: dict[str, str]) -> None:
    """The pydantic-core case: requires-python >=3.10, uv forks at 3.12, releases' Pythons."""
    days = {v: OLD + timedelta(days=10 * i) for i, v in enumerate(releases)}
    fake_registry.pypi.add("numpy", days, requires_python=dict(releases))
    (root / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        'dependencies = ["numpy>=2"]\n'
    )
    (root / "uv.lock").write_text(
        'version = 1\nrevision = 3\nrequires-python = ">=3.10"\nresolution-markers = [\n'
        "    \"python_full_version >= '3.12'\",\n    \"python_full_version < '3.12'\",\n]\n\n"
        '[[package]]\nname = "numpy"\nversion = "2.2.6"\n'
        f"{SOURCE}resolution-markers = [\n    \"python_full_version < '3.12'\",\n]\n\n"
        '[[package]]\nname = "numpy"\nversion = "2.3.4"\n'
        f"{SOURCE}resolution-markers = [\n    \"python_full_version >= '3.12'\",\n]\n"
    )


def test_uv_fork_for_a_newer_python_is_judged_for_that_python(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A fork 2.2.6 (< 3.12) and 2.3.4 (>= 3.12), 2.5.5 needs 3.12: the 3.12 fork is outdated.

    The trial's pydantic-core row was up-to-date, judged only at 2.2.6 for Python 3.10.
    """
    _forked_numpy(
        fake_registry,
        tmp_path,
        {"2.2.6": ">=3.10", "2.3.4": ">=3.11", "2.5.5": ">=3.12"},
    )
    numpy = _run(fake_registry, tmp_path)
    assert (numpy["current"], numpy["latest"], numpy["status"]) == ("2.3.4", "2.5.5", "outdated")
    assert numpy["eligible"] == "2.5.5"
    reason = str(numpy["reason"])
    assert reason.endswith(
        "uv.lock locks numpy 2.2.6 (Python >= 3.10) and 2.3.4 (Python >= 3.12); judged at"
        " 2.3.4, which 2.5.5 replaces on Python >= 3.12"
    ), reason


def test_uv_forks_all_current_for_their_python_are_up_to_date(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Latest 2.5.5 needs Python 3.13: no fork can take it, so the row is up to date."""
    _forked_numpy(
        fake_registry,
        tmp_path,
        {"2.2.6": ">=3.10", "2.3.4": ">=3.11", "2.5.5": ">=3.13"},
    )
    numpy = _run(fake_registry, tmp_path)
    assert (numpy["current"], numpy["status"]) == ("2.2.6", "up-to-date")
    assert "judged at each: none can move" in str(numpy["reason"])
