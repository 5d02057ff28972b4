"""``patchula run`` on pip requirements files (fake PyPI)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

OLD = datetime(2025, 1, 1, tzinfo=UTC)


def _run(root: Path, registry: FakeRegistry, *more: str) -> tuple[int, dict[str, Any], str]:
    args = ["run", str(root), "--format", "json", "--no-cache"]
    args += ["--registry", f"pypi={registry.url('pypi')}", *more]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout), result.stderr


def test_layered_requirements_keep_the_compiled_file_and_name_constraints_files(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """requirements.txt, read by dev-requirements.in with -c, still gives its own rows.

    constraints.txt (named so) gives none: the report lists it and -v says why.
    """
    fake_registry.pypi.add("django", {"4.2.0": OLD, "5.0.0": OLD + timedelta(days=30)})
    fake_registry.pypi.add("sqlparse", {"0.4.0": OLD, "0.5.0": OLD + timedelta(days=30)})
    fake_registry.pypi.add("toolbar", {"1.0.0": OLD})
    (tmp_path / "requirements.txt").write_text("django==4.2.0\nsqlparse==0.4.0\n")
    (tmp_path / "dev-requirements.in").write_text("-c requirements.txt\ntoolbar\ndjango\n")
    (tmp_path / "constraints.txt").write_text("toolbar==1.0.0\n")
    code, report, err = _run(tmp_path, fake_registry, "-v")
    assert code == 0
    [repo] = report["repositories"]
    rows = sorted(
        (d["file"], d["name"], d["current"], d["status"], d["lockFile"])
        for d in repo["dependencies"]
    )
    assert rows == [
        ("dev-requirements.in", "django", "4.2.0", "outdated", "requirements.txt"),
        ("dev-requirements.in", "toolbar", "1.0.0", "up-to-date", None),
        ("requirements.txt", "django", "4.2.0", "outdated", None),
        ("requirements.txt", "sqlparse", "0.4.0", "outdated", None),
    ]
    assert sorted(repo["extraction"]["files"]) == [
        "constraints.txt",
        "dev-requirements.in",
        "requirements.txt",
    ]
    assert repo["extraction"]["constraintsFiles"] == ["constraints.txt"]
    assert "constraints.txt: a constraints file by its name: pip installs nothing from it" in err
    assert "requirements.txt: a constraints file" not in err
