"""The README's GitHub Actions matrix example parses and runs what it says it runs."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from patchula.cli import app

README = Path(__file__).resolve().parents[1] / "README.md"
runner = CliRunner()
SECTION = "### Many repositories: targets files, shards and merged reports"


def _workflow() -> dict[Any, Any]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n## ")]
    [block] = re.findall(r"```yaml\n(.*?)```", section, flags=re.DOTALL)
    loaded = yaml.safe_load(block)
    assert isinstance(loaded, dict)
    return loaded


def _uses(job: dict[str, Any]) -> list[str]:
    return [step["uses"] for step in job["steps"] if "uses" in step]


def _runs(job: dict[str, Any]) -> list[str]:
    return [" ".join(step["run"].split()) for step in job["steps"] if "run" in step]


def test_the_matrix_job_scans_one_shard_with_its_own_cache() -> None:
    """Four shards, each restoring its own cache and uploading its report."""
    jobs = _workflow()["jobs"]
    scan = jobs["scan"]
    assert scan["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    uses = [s.get("uses", "") for s in scan["steps"]]
    restore = scan["steps"][uses.index("actions/cache/restore@v4")]
    save = scan["steps"][uses.index("actions/cache/save@v4")]
    key = restore["with"]["key"]
    assert "${{ matrix.shard }}" in key
    assert "${{ github.run_id }}" in key
    # A re-run is another attempt of the same run: without the attempt its key exists already
    # and its cache is never saved.
    assert "${{ github.run_attempt }}" in key
    prefix = restore["with"]["restore-keys"].strip()
    assert prefix == "patchula-${{ matrix.shard }}of4-"
    assert key.startswith(prefix)
    # Shard 1's prefix matches no other shard's key (of this split or one of 10 or more).
    keys = [
        key.replace("${{ matrix.shard }}", str(i)).replace("of4", f"of{n}")
        for n in (4, 12)
        for i in range(1, n + 1)
    ]
    one = prefix.replace("${{ matrix.shard }}", "1")
    assert [k for k in keys if k.startswith(one)] == [key.replace("${{ matrix.shard }}", "1")]
    # Saved under the same key, also after a failed scan (exit 3), and after the scan.
    assert save["with"] == {"path": restore["with"]["path"], "key": restore["with"]["key"]}
    assert save["if"] == "always()"
    scan_step = next(i for i, s in enumerate(scan["steps"]) if "patchula run" in s.get("run", ""))
    assert uses.index("actions/cache/restore@v4") < scan_step < uses.index("actions/cache/save@v4")
    cache = restore
    [command] = [r for r in _runs(scan) if r.startswith("patchula run")]
    # GitHub expands the expression before the shell sees the line: as the third job does.
    args = shlex.split(command.replace("${{ matrix.shard }}", "3"))
    assert args[args.index("--targets-file") + 1] == "repos.txt"
    assert args[args.index("--shard") + 1] == "3/4"
    assert args[args.index("--format") + 1] == "json"
    assert args[args.index("--report") + 1] == "shard-3.json"
    cache_file = args[args.index("--cache") + 1]
    assert cache_file.startswith(cache["with"]["path"] + "/")
    upload = next(s for s in scan["steps"] if s.get("uses", "").startswith("actions/upload-"))
    assert upload["with"]["path"] == "shard-${{ matrix.shard }}.json"
    assert upload["if"] == "always()"
    assert upload["with"]["overwrite"] is True  # re-running a shard replaces its report


def test_patchula_is_installed_from_its_repository_at_a_commit_not_from_pypi() -> None:
    """Not on PyPI: ``pip install patchula`` would install whatever may hold the name there."""
    jobs = _workflow()["jobs"]
    for job in jobs.values():
        [install] = [r for r in _runs(job) if r.startswith("pip install")]
        args = shlex.split(install)
        assert args[:2] == ["pip", "install"]
        assert args[2:] == ["patchula @ git+https://github.com/OWNER/patchula@COMMIT"]
    text = README.read_text(encoding="utf-8")
    assert "patchula is not on PyPI" in text


def test_the_example_targets_file_lists_no_path_a_hosted_runner_lacks() -> None:
    """``repos.txt`` holds ``github:`` targets; a local path says an earlier step checked it out."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    block = section[
        section.index("# repos.txt") : section.index("```", section.index("# repos.txt"))
    ]
    lines = [line for line in block.splitlines()[1:] if line.strip()]
    assert lines
    for line in lines:
        target = line.split("#")[0].strip()
        if not target.startswith("github:"):
            assert not target.startswith("/"), line
            assert "earlier step" in line, line


def test_the_final_job_merges_into_the_step_summary_and_all_json() -> None:
    """The merge job needs the matrix, downloads the reports and merges them twice."""
    merge = _workflow()["jobs"]["merge"]
    assert merge["needs"] == "scan"
    assert merge["if"] == "always()"
    download = next(s for s in merge["steps"] if s.get("uses", "").startswith("actions/download-"))
    assert download["with"] == {"pattern": "shard-*", "merge-multiple": True}
    runs = _runs(merge)
    assert 'patchula report merge shard-*.json --format markdown >> "$GITHUB_STEP_SUMMARY"' in runs
    assert any(
        r.startswith("patchula report merge shard-*.json --format json")
        and r.endswith("> all.json")
        for r in runs
    )


def test_actions_are_pinned_by_major_tag() -> None:
    """Every action is ``actions/name@vN`` (or ``actions/name/sub@vN``)."""
    jobs = _workflow()["jobs"]
    uses = [u for job in jobs.values() for u in _uses(job)]
    assert uses
    assert all(re.fullmatch(r"actions/[a-z-]+(/[a-z-]+)?@v\d+", u) for u in uses), uses


def test_the_workflow_commands_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan command of every shard, then the merge commands, exit 0 on a small fleet."""
    monkeypatch.chdir(tmp_path)
    fleet = []
    for name in ("api", "web", "docs"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "package.json").write_text("{}\n")
        fleet.append(name)
    (tmp_path / "repos.txt").write_text("# fleet\n" + "\n".join(fleet) + "\n")
    jobs = _workflow()["jobs"]
    [scan] = [r for r in _runs(jobs["scan"]) if r.startswith("patchula run")]
    for shard in (1, 2, 3, 4):
        args = shlex.split(scan.replace("${{ matrix.shard }}", str(shard)))
        assert args[-2:] == [">", "/dev/null"]
        result = runner.invoke(app, args[1:-2], catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
    merges = [r for r in _runs(jobs["merge"]) if r.startswith("patchula report merge")]
    reports = sorted(str(p) for p in tmp_path.glob("shard-*.json"))
    assert len(reports) == 4
    for command in merges:
        args = shlex.split(command)
        redirect = next(i for i, a in enumerate(args) if a in {">", ">>"})
        argv = [a for a in args[1:redirect] if a != "shard-*.json"]
        result = runner.invoke(app, [*argv, *reports], catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
        assert result.stderr == ""
        if "json" in argv:
            assert json.loads(result.stdout)["summary"]["repositories"] == 3
        else:
            assert "**0** dependencies in **3** repositories" in result.stdout
