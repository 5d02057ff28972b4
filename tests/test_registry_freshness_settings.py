"""``--registry-freshness-secs``: default, flag, environment, config key and bounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from patchula.errors import ConfigError
from patchula.settings import load_settings


def test_registry_freshness_secs_from_each_source(tmp_path: Path) -> None:
    """3600 by default; config key, then PATCHULA_REGISTRY_FRESHNESS_SECS, then the flag win."""
    assert load_settings({}, env={}, cwd=tmp_path).registry_freshness_secs == 3600
    (tmp_path / "patchula.toml").write_text("registry-freshness-secs = 0\n")
    assert load_settings({}, env={}, cwd=tmp_path).registry_freshness_secs == 0
    env = {"PATCHULA_REGISTRY_FRESHNESS_SECS": "120"}
    assert load_settings({}, env=env, cwd=tmp_path).registry_freshness_secs == 120
    flag = {"registry_freshness_secs": 5}
    assert load_settings(flag, env=env, cwd=tmp_path).registry_freshness_secs == 5


def test_a_negative_registry_freshness_is_refused_naming_its_source(tmp_path: Path) -> None:
    """A negative floor is a usage error that names the flag."""
    with pytest.raises(ConfigError, match="--registry-freshness-secs"):
        load_settings({"registry_freshness_secs": -1}, env={}, cwd=tmp_path)


def test_the_run_flag_reaches_the_report_options(tmp_path: Path) -> None:
    """``patchula run --registry-freshness-secs 60`` is in force (the report's options say 60)."""
    result = CliRunner().invoke(
        app,
        ["run", str(tmp_path), "--format", "json", "--registry-freshness-secs", "60", "--no-cache"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0
    assert json.loads(result.stdout)["options"]["registry-freshness-secs"] == 60
