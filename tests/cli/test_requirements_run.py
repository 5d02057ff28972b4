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


def _run(
    root: Path, registry: FakeRegistry, *more: str, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any], str]:
    args = ["run", str(root), "--format", "json", "--no-cache"]
    args += ["--registry", f"pypi={registry.url('pypi')}", *more]
    result = CliRunner().invoke(app, args, catch_exceptions=False, env=env)
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


def test_fail_on_counts_dependencies_that_could_not_be_judged(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """An ``unknown`` row fails every gate (exit 1, named on stderr) unless --allow-unknown.

    ``ghost==9.9.9`` names a release PyPI does not list: patchula cannot tell how far behind it
    is, so ``--fail-on outdated`` must not pass it as if it were up to date.
    """
    fake_registry.pypi.add("ghost", {"1.0.0": OLD})
    fake_registry.pypi.add("fresh", {"1.0.0": OLD})
    (tmp_path / "requirements.txt").write_text("fresh==1.0.0\nghost==9.9.9\n")
    code, report, err = _run(tmp_path, fake_registry)
    assert code == 0  # no gate: nothing to fail
    statuses = {d["name"]: d["status"] for d in report["repositories"][0]["dependencies"]}
    assert statuses == {"fresh": "up-to-date", "ghost": "unknown"}
    assert "could not be judged" not in err
    for level in ("major", "outdated", "held-back"):
        code, _, err = _run(tmp_path, fake_registry, "--fail-on", level)
        assert code == 1, level
        assert (
            "patchula: note: 1 dependency could not be judged (status unknown) and matches "
            f"--fail-on {level}: ghost (requirements.txt:2): pinned version 9.9.9 is not in the "
            "pypi release list"
        ) in err
    code, report, err = _run(tmp_path, fake_registry, "--fail-on", "outdated", "--allow-unknown")
    assert code == 0
    assert report["options"]["allow-unknown"] is True
    assert "could not be judged" not in err
    code, _, _ = _run(
        tmp_path, fake_registry, "--fail-on", "outdated", env={"PATCHULA_ALLOW_UNKNOWN": "1"}
    )
    assert code == 0


def test_report_merge_gates_unknown_rows_as_the_shards_were_run(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``report merge`` applies the recorded --fail-on and --allow-unknown; flags override."""
    fake_registry.pypi.add("ghost", {"1.0.0": OLD})
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "requirements.txt").write_text("ghost==9.9.9\n")
    strict, lenient = tmp_path / "strict.json", tmp_path / "lenient.json"
    assert _run(repo, fake_registry, "--fail-on", "outdated", "--report", str(strict))[0] == 1
    code, _, _ = _run(
        repo, fake_registry, "--fail-on", "outdated", "--allow-unknown", "--report", str(lenient)
    )
    assert code == 0

    def merge(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(app, ["report", "merge", *args], catch_exceptions=False)
        return result.exit_code, result.stderr

    code, err = merge(str(strict))
    assert code == 1
    assert "ghost (requirements.txt:1)" in err
    assert merge(str(strict), "--allow-unknown")[0] == 0
    assert merge(str(lenient))[0] == 0
    assert merge(str(lenient), "--no-allow-unknown")[0] == 1
    assert merge(str(strict), "--fail-on", "none")[0] == 0


def test_a_pip_compile_source_is_judged_at_its_compiled_pins(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """requirements.in's rows are current at requirements.txt's pins, reported once.

    The proposal keeps to the .in range: a release outside it says the range must be widened
    before compiling again; the compiled file's indirect pins are skipped, not looked up.
    """
    fake_registry.pypi.add("flask", {"2.3.3": OLD, "2.3.4": OLD, "3.0.0": OLD})
    fake_registry.pypi.add("requests", {"2.31.0": OLD, "2.32.0": OLD})
    fake_registry.pypi.add("certifi", {"2023.7.22": OLD, "2024.1.1": OLD})
    (tmp_path / "requirements.in").write_text("flask<3\nrequests>=2\n")
    (tmp_path / "requirements.txt").write_text(
        "# This file was autogenerated by uv via the following command:\n"
        "#    uv pip compile requirements.in -o requirements.txt\n"
        "certifi==2023.7.22\n    # via requests\n"
        "flask==2.3.3\n    # via -r requirements.in\n"
        "requests==2.31.0\n    # via -r requirements.in\n"
    )
    code, report, _ = _run(tmp_path, fake_registry)
    assert code == 0
    [repo] = report["repositories"]
    rows = {(d["file"], d["name"]): d for d in repo["dependencies"]}
    assert sorted(rows) == [
        ("requirements.in", "flask"),
        ("requirements.in", "requests"),
        ("requirements.txt", "certifi"),
    ]
    flask = rows["requirements.in", "flask"]
    assert (flask["current"], flask["currentSource"], flask["lockFile"]) == (
        "2.3.3",
        "lockfile",
        "requirements.txt",
    )
    assert (flask["declared"], flask["eligible"], flask["status"]) == ("<3", "3.0.0", "outdated")
    assert flask["reason"] == (
        "3.0.0 is outside the range <3 of requirements.in: widen it there, then compile again"
    )
    requests = rows["requirements.in", "requests"]
    assert (requests["current"], requests["eligible"], requests["reason"]) == (
        "2.31.0",
        "2.32.0",
        None,
    )
    certifi = rows["requirements.txt", "certifi"]
    assert (certifi["status"], certifi["depType"]) == ("skipped", "indirect")
    host = fake_registry.host("pypi")
    with host.lock:
        routes = set(host.requests_by_route)
    assert [r for r in routes if "certifi" in r] == []
    assert any("flask" in r for r in routes)


def test_offline_rows_not_in_the_cache_exit_3_and_are_no_gate_match(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``unknown`` for want of a cached answer is an incomplete scan (3), not a gate finding.

    --allow-unknown could not make it pass, so the note does not name such rows.
    """
    (tmp_path / "requirements.txt").write_text("fresh==1.0.0\n")
    args = ["run", str(tmp_path), "--format", "json", "--offline", "--fail-on", "outdated"]
    args += ["--cache", str(tmp_path / "cache.sqlite3")]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 3
    [row] = json.loads(result.stdout)["repositories"][0]["dependencies"]
    assert (row["status"], row["reason"]) == ("unknown", "not in cache (offline)")
    assert "could not be judged" not in result.stderr
