"""``patchula report merge`` end to end: shards of a run merged equal the unsharded run."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from patchula.cli import report as report_cli
from patchula.report.model import ScanReport
from tests.cli.test_startup import NETWORK, PLUGINS, _imported
from tests.fake_registry import FakeRegistry

runner = CliRunner()
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
OLD = datetime(2024, 1, 1, tzinfo=UTC)
REPOSITORIES = 30


def _registry(registry: FakeRegistry) -> None:
    for k in range(8):
        registry.npm.add(
            f"pkg-{k}",
            {
                "1.0.0": OLD,
                "1.1.0": OLD + timedelta(days=30 * (k + 1)),
                "2.0.0": NOW - timedelta(days=k),  # young for small k: held back by 3d
            },
        )


def _fleet(root: Path) -> list[str]:
    """30 checkouts with 2-4 npm pins and a requirements.txt; one unreadable, one 404 row."""
    targets = []
    for i in range(REPOSITORIES):
        repo = root / f"repo-{i:02d}"
        repo.mkdir(parents=True)
        deps = {f"pkg-{(i + j) % 8}": ("1.0.0", "1.1.0")[(i + j) % 2] for j in range(2 + i % 3)}
        if i == 7:
            deps["not-on-the-registry"] = "1.0.0"
        (repo / "package.json").write_text(json.dumps({"name": repo.name, "dependencies": deps}))
        (repo / "requirements.txt").write_text("requests==2.31.0\n")
        if i == 11:
            (repo / "pyproject.toml").write_text("[project\n")
        targets.append(str(repo))
    return targets


def _run(registry: FakeRegistry, tmp: Path, listing: Path, name: str, *more: str) -> int:
    result = runner.invoke(
        app,
        [
            "run",
            "--targets-file",
            str(listing),
            "--format",
            "json",
            "--report",
            str(tmp / f"{name}.json"),
            "--now",
            NOW.isoformat(),
            "--min-release-age",
            "3d",
            "--cache",
            str(tmp / f"{name}.sqlite3"),  # each CI job has its own cache
            "--registry",
            f"npm={registry.url('npm')}",
            "--registry",
            f"pypi={registry.url('pypi')}",
            *more,
        ],
        catch_exceptions=False,
    )
    assert json.loads(result.stdout)["schemaVersion"] == "1", result.stderr
    return result.exit_code


def _merge(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["report", "merge", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _comparable(report: dict[str, Any]) -> dict[str, Any]:
    """The report without what differs by run: timings, requests, caches, the shard option."""
    report = copy.deepcopy(report)
    for repo in report["repositories"]:
        for row in repo["dependencies"]:
            if row["metadata"]["lookup"]["catalog"] is not None:
                del row["metadata"]["lookup"]["catalog"]["fetchedAt"]
                del row["metadata"]["lookup"]["catalog"]["reused"]
    for key in ("hosts", "cache"):
        del report[key]
    for key in ("report", "cache", "shard"):
        del report["options"][key]
    return report


def test_merged_shards_equal_the_unsharded_run(fake_registry: FakeRegistry, tmp_path: Path) -> None:
    """3 shards of 30 checkouts merged: the rows, totals and repositories of one whole run.

    In its order too: each repository carries its place in the whole list (``targetIndex``).
    """
    _registry(fake_registry)
    listing = tmp_path / "repos.txt"
    listing.write_text("# the fleet\n" + "\n".join(_fleet(tmp_path / "src")) + "\n")
    whole_code = _run(fake_registry, tmp_path, listing, "whole")
    codes = [
        _run(fake_registry, tmp_path, listing, f"shard-{i}", "--shard", f"{i}/3") for i in (1, 2, 3)
    ]
    shards = [json.loads((tmp_path / f"shard-{i}.json").read_text()) for i in (1, 2, 3)]
    assert sorted(len(s["repositories"]) for s in shards) == [10, 10, 10]
    assert [s["options"]["shard"] for s in shards] == [[1, 3], [2, 3], [3, 3]]

    code, stdout, stderr = _merge(*(str(tmp_path / f"shard-{i}.json") for i in (1, 2, 3)))
    assert stderr == ""
    merged = json.loads(stdout)
    whole = json.loads((tmp_path / "whole.json").read_text())
    ScanReport.model_validate(merged)  # the same schema a run writes
    assert _comparable(merged) == _comparable(whole)
    assert merged["summary"]["repositories"] == REPOSITORIES
    assert merged["summary"]["problems"] == whole["summary"]["problems"] >= 1
    assert merged["summary"]["failedLookups"] == whole["summary"]["failedLookups"] == 1
    assert merged["summary"]["byStatus"]["held-back"] > 0
    assert merged["summary"]["byStatus"]["outdated"] > 0
    # The merged list is in the order of the whole run's (the targets file's), not by shard.
    order = [r["target"] for r in merged["repositories"]]
    assert order == [r["target"] for r in whole["repositories"]] == sorted(order)
    assert order != [r["target"] for s in shards for r in s["repositories"]]
    assert [r["targetIndex"] for r in merged["repositories"]] == list(range(REPOSITORIES))
    assert merged["targets"] == whole["targets"]
    assert merged["targets"]["count"] == REPOSITORIES
    assert [s["targets"] for s in shards] == [whole["targets"]] * 3
    # Host and cache statistics are the shards' added up.
    npm = fake_registry.url("npm").removeprefix("http://")
    assert merged["hosts"][npm]["requests"] == sum(s["hosts"][npm]["requests"] for s in shards)
    assert merged["cache"]["misses"] == sum(s["cache"]["misses"] for s in shards)
    assert merged["cache"]["path"] is None  # three caches
    # The exit code is run's table applied to the merged report: a failed lookup is 3.
    assert whole_code == code == 3
    assert codes == [3 if _failed(s) else 0 for s in shards]
    assert 3 in codes  # the 404 row and the unreadable pyproject.toml (in one shard or two)

    code, markdown, _ = _merge(
        *(str(tmp_path / f"shard-{i}.json") for i in (1, 2, 3)), "--format", "markdown"
    )
    assert code == 3
    assert markdown.startswith("# Dependency dashboard")
    deps = merged["summary"]["dependencies"]
    assert f"**{deps}** dependencies in **{REPOSITORIES}** repositories" in markdown

    out = tmp_path / "all.txt"
    code, stdout, _ = _merge(
        *(str(tmp_path / f"shard-{i}.json") for i in (1, 2, 3)), "--format", "table", "-o", str(out)
    )
    assert stdout == ""
    table = out.read_text()
    assert f"in {REPOSITORIES} repositories" in table
    assert "not-on-the-registry" in table


def _failed(report: dict[str, Any]) -> bool:
    return any(
        d["status"] == "error" for r in report["repositories"] for d in r["dependencies"]
    ) or any(p["severity"] == "error" for r in report["repositories"] for p in r["problems"])


def _write(tmp_path: Path, name: str, report: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(report))
    return str(path)


@pytest.fixture
def reports(tmp_path: Path) -> list[str]:
    """Two small shard reports, made by runs without any lookup."""
    targets = []
    for i in (1, 2):
        repo = tmp_path / f"repo-{i}"
        repo.mkdir()
        (repo / "package.json").write_text("{}\n")
        targets.append(str(repo))
    paths = []
    for i in (1, 2):
        result = runner.invoke(
            app, ["run", *targets, "--no-cache", "--format", "json", "--shard", f"{i}/2"]
        )
        report = json.loads(result.stdout)
        assert len(report["repositories"]) == 1
        paths.append(_write(tmp_path, f"s{i}.json", report))
    return paths


def test_fail_on_applies_to_the_merged_report(tmp_path: Path, reports: list[str]) -> None:
    """An outdated row in one shard: --fail-on outdated exits 1; shards run without it, 0."""
    document = json.loads(Path(reports[0]).read_text())
    repo = document["repositories"][0]
    assert repo["dependencies"] == []
    repo["dependencies"] = [_outdated_row()]
    edited = _write(tmp_path, "edited.json", document)
    assert _merge(edited, reports[1])[0] == 0
    code, stdout, _ = _merge(edited, reports[1], "--fail-on", "outdated")
    assert code == 1
    assert json.loads(stdout)["summary"]["byStatus"]["outdated"] == 1
    assert _merge(edited, reports[1], "--fail-on", "major")[0] == 0


def test_fail_on_defaults_to_the_level_the_shards_were_run_with(
    tmp_path: Path, reports: list[str]
) -> None:
    """Shards run with --fail-on outdated: their merge exits 1 unless told otherwise."""
    document = json.loads(Path(reports[0]).read_text())
    document["repositories"][0]["dependencies"] = [_outdated_row()]
    document["options"]["fail-on"] = "outdated"
    edited = _write(tmp_path, "edited.json", document)
    assert _merge(edited, reports[1])[0] == 1
    assert _merge(edited, reports[1], "--fail-on", "none")[0] == 0
    document["options"]["fail-on"] = "nonsense"  # a hand-edited report: as none
    assert _merge(_write(tmp_path, "odd.json", document), reports[1])[0] == 0


def _outdated_row() -> dict[str, Any]:
    return {
        "manager": "package_json",
        "file": "package.json",
        "line": 1,
        "ecosystem": "npm",
        "datasource": "npm",
        "name": "a",
        "packageName": "a",
        "depType": "dependencies",
        "declared": "1.0.0",
        "markers": None,
        "current": "1.0.0",
        "currentSource": "pin",
        "lockFile": None,
        "latest": "1.1.0",
        "eligible": "1.1.0",
        "updateType": "minor",
        "versionsBehind": 1,
        "currentReleasedAt": None,
        "latestReleasedAt": None,
        "eligibleReleasedAt": None,
        "libyears": None,
        "heldBack": [],
        "status": "outdated",
        "reason": None,
        "metadata": {"lookup": {"catalog": None}},
    }


def test_an_empty_shard_merges(tmp_path: Path, reports: list[str]) -> None:
    """A shard that scanned nothing adds nothing and no warning."""
    document = json.loads(Path(reports[1]).read_text())
    document["repositories"] = []
    empty = _write(tmp_path, "empty.json", document)
    code, stdout, stderr = _merge(reports[0], empty)
    assert (code, stderr) == (0, "")
    assert json.loads(stdout)["summary"]["repositories"] == 1


def test_a_missing_shard_is_recorded_and_exits_3(tmp_path: Path, reports: list[str]) -> None:
    """Merging 1/2 alone (2/2's job died): exit 3, ``targets.missingShards``, said everywhere."""
    code, stdout, stderr = _merge(reports[0])
    assert code == 3
    assert stderr == (
        "patchula: warning: the merged report is incomplete: shard 2/2 not given: 1 of the 2 "
        "targets is not in the report; merge its report too, or re-run it (exit 3)\n"
    )
    merged = json.loads(stdout)
    assert merged["options"]["shard"] is None
    assert merged["targets"]["missingShards"] == ["2/2"]
    assert merged["targets"]["missingShardTargets"] == 1
    assert merged["summary"]["repositories"] == 1
    said = "shard 2/2 missing: 1 of 2 targets not in this report"
    code, markdown, _ = _merge(reports[0], "--format", "markdown")
    assert code == 3
    assert f"in **1** repository; **{said}**" in markdown
    code, table, _ = _merge(reports[0], "--format", "table")
    assert code == 3
    assert f"in 1 repository: none found; {said}" in " ".join(table.split())
    # Merged again, the report still misses 2/2; with 2/2's report it is whole (exit 0).
    again = _write(tmp_path, "merged.json", merged)
    code, stdout, _ = _merge(again)
    assert code == 3
    assert json.loads(stdout)["targets"]["missingShards"] == ["2/2"]
    code, stdout, stderr = _merge(again, reports[1])
    assert (code, stderr) == (0, "")
    whole = json.loads(stdout)
    assert (whole["targets"]["missingShards"], whole["targets"]["missingShardTargets"]) == ([], 0)
    assert whole["summary"]["repositories"] == 2


def test_every_shard_given_exits_as_before(reports: list[str]) -> None:
    """Both shares: nothing missing, no warning, exit 0; the table says nothing of shards."""
    code, stdout, stderr = _merge(*reports)
    assert (code, stderr) == (0, "")
    assert json.loads(stdout)["targets"]["missingShards"] == []
    code, table, _ = _merge(*reports, "--format", "table")
    assert code == 0
    assert "missing" not in table


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot read: No such file or directory"),
        (b"\x00\xff", "not JSON"),
        (b'{"schemaVersion": "9", "summary": {}}', "report schemaVersion '9', this patchula reads"),
        (b'{"schemaVersion": "1", "summary": {}}', "not a patchula report of schemaVersion 1"),
        (b'{"repositories": []}', "not a patchula report (no schemaVersion)"),
    ],
)
def test_a_file_that_is_not_a_report_is_a_usage_error_naming_it(
    tmp_path: Path, reports: list[str], content: bytes | None, expected: str
) -> None:
    """Missing, not JSON, another schemaVersion, another shape: exit 2 naming the file."""
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_bytes(content)
    code, stdout, stderr = _merge(reports[0], str(bad))
    assert code == 2
    assert stdout == ""
    assert stderr.startswith(f"patchula: error: {bad}: ")
    assert expected in stderr


@pytest.mark.parametrize(
    ("args", "expected"), [(["--format", "yaml"], "--format"), (["--fail-on", "x"], "--fail-on")]
)
def test_a_bad_option_is_a_usage_error(reports: list[str], args: list[str], expected: str) -> None:
    """An unknown --format or --fail-on exits 2 naming the option."""
    code, _, stderr = _merge(*reports, *args)
    assert code == 2
    assert expected in stderr


def test_merge_needs_a_file() -> None:
    """``report merge`` without a file is a usage error."""
    assert _merge()[0] == 2


def test_report_is_listed_in_help() -> None:
    """``patchula --help`` lists the report command group."""
    result = runner.invoke(app, ["--help"])
    assert "report" in result.stdout


def test_an_unwritable_output_is_a_usage_error(tmp_path: Path, reports: list[str]) -> None:
    """``-o`` naming a directory exits 2 naming it; nothing is printed on stdout."""
    code, stdout, stderr = _merge(*reports, "-o", str(tmp_path))
    assert code == 2
    assert stdout == ""
    assert f"patchula: error: cannot write {tmp_path}" in stderr


def test_output_writes_the_json_report(tmp_path: Path, reports: list[str]) -> None:
    """``-o all.json`` writes the merged JSON there (parents created) and prints nothing."""
    out = tmp_path / "out" / "all.json"
    code, stdout, _ = _merge(*reports, "--output", str(out))
    assert (code, stdout) == (0, "")
    merged = json.loads(out.read_text())
    assert sorted(r["target"] for r in merged["repositories"]) == [
        str(tmp_path / "repo-1"),
        str(tmp_path / "repo-2"),
    ]


def test_a_directory_given_as_a_report_is_a_usage_error(tmp_path: Path, reports: list[str]) -> None:
    """A directory among the reports exits 2 naming it."""
    code, _, stderr = _merge(reports[0], str(tmp_path))
    assert code == 2
    assert f"patchula: error: {tmp_path}: cannot read" in stderr


@pytest.mark.parametrize("source", ["file", "/dev/zero"])
def test_a_report_larger_than_the_bound_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    """A file over the bound (by its size) or an endless device: exit 2 naming it, no hang."""
    monkeypatch.setattr(report_cli, "REPORT_MAX_BYTES", 100)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 101)
    path = str(big) if source == "file" else source
    code, _, stderr = _merge(path)
    assert code == 2
    assert f"patchula: error: {path}: larger than 100 bytes, not a report" in stderr


@pytest.mark.parametrize("output_format", ["json", "table"])
def test_merge_imports_no_network_cache_or_plugin_code(
    tmp_path: Path, reports: list[str], output_format: str
) -> None:
    """Merging sends nothing and opens no cache: no HTTP client, SQLite or plugin is imported."""
    code, modules, stdout = _imported(
        tmp_path, "report", "merge", *reports, "--format", output_format
    )
    assert code == 0
    assert "in 2 repositories" in stdout or json.loads(stdout)["summary"]["repositories"] == 2
    unwanted = {*NETWORK, "sqlite3", "patchula.cache", "rich", *PLUGINS}
    assert sorted(modules & unwanted) == []


def test_shards_of_different_lists_exit_3_though_every_row_is_fine(
    tmp_path: Path, reports: list[str]
) -> None:
    """A shard that cut another target list: a loud warning naming it, exit 3 (else 0)."""
    assert _merge(*reports)[0] == 0
    document = json.loads(Path(reports[1]).read_text())
    assert document["targets"]["count"] == 2
    document["targets"]["count"] = 1  # a tie: the longer list is taken as the whole one
    document["targets"]["digest"] = "sha256:" + "0" * 64
    other = _write(tmp_path, "other.json", document)
    code, stdout, stderr = _merge(reports[0], other)
    assert code == 3
    said = " ".join(stderr.split())
    assert said.startswith("patchula: warning: the merged report is incomplete: the shards did")
    assert f"re-run {other} (2/2) (exit 3)" in said
    assert json.loads(stdout)["targets"]["mismatched"] == [f"{other} (2/2)"]
    # The merged report keeps saying so: merged again, it still exits 3.
    again = _write(tmp_path, "merged.json", json.loads(stdout))
    assert _merge(again)[0] == 3


def test_a_run_and_its_merge_exit_3_for_an_owner_not_listed(
    tmp_path: Path, reports: list[str]
) -> None:
    """``targets.unlisted`` alone (its row edited away) still exits 3."""
    document = json.loads(Path(reports[0]).read_text())
    document["targets"]["unlisted"] = ["github:corp/*"]
    code, _, stderr = _merge(_write(tmp_path, "unlisted.json", document), reports[1])
    assert code == 3
    assert "the repositories of github:corp/* could not be listed" in " ".join(stderr.split())
