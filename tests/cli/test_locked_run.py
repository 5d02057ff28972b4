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
    assert numpy["reason"] == "uv.lock also locks numpy 2.3.4; judged at the oldest locked"
