"""End to end: ``patchula run`` on a checkout against mocked npm and PyPI registries."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
import rich.table
from typer.testing import CliRunner

from patchula.cli import app

NPM = "http://npm.test"
PYPI = "http://pypi.test"
runner = CliRunner()


def _iso(days_ago: float) -> str:
    when = datetime.now(UTC) - timedelta(days=days_ago)
    return when.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _packument(name: str, versions: dict[str, float], latest: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "dist-tags": {"latest": latest},
        "versions": {v: {"name": name, "version": v, **extra.get(v, {})} for v in versions},
        "time": {
            "created": _iso(1000),
            "modified": _iso(0),
            **{v: _iso(d) for v, d in versions.items()},
        },
    }


def _simple(name: str, versions: dict[str, float], yanked: tuple[str, ...] = ()) -> dict[str, Any]:
    files = [
        {
            "filename": f"{name}-{v}.tar.gz",
            "url": f"{PYPI}/files/{name}-{v}.tar.gz",
            "hashes": {},
            "upload-time": _iso(d).replace(".000Z", ".000000Z"),
            "yanked": v in yanked,
        }
        for v, d in versions.items()
    ]
    return {
        "meta": {"api-version": "1.1"},
        "name": name,
        "versions": list(versions),
        "files": files,
    }


SIMPLE = {"Content-Type": "application/vnd.pypi.simple.v1+json"}


@pytest.fixture
def registry() -> Iterator[respx.MockRouter]:
    """Mocked npm and PyPI registries with a handful of packages."""
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        router.get(f"{NPM}/left-pad").mock(
            return_value=httpx.Response(
                200, json=_packument("left-pad", {"1.0.0": 900, "1.3.0": 400, "1.4.0": 1}, "1.4.0")
            )
        )
        router.get(f"{NPM}/@types%2fnode").mock(
            return_value=httpx.Response(
                200, json=_packument("@types/node", {"20.0.0": 300, "22.1.0": 100}, "22.1.0")
            )
        )
        router.get(f"{NPM}/does-not-exist").mock(
            return_value=httpx.Response(404, json={"error": "Not found"})
        )
        router.get(f"{PYPI}/simple/requests/").mock(
            return_value=httpx.Response(
                200,
                headers=SIMPLE,
                json=_simple("requests", {"2.31.0": 800, "2.32.0": 200, "2.33.0": 0.5}),
            )
        )
        router.get(f"{PYPI}/simple/flask/").mock(
            return_value=httpx.Response(
                200, headers=SIMPLE, json=_simple("flask", {"3.0.0": 300, "3.1.0": 50})
            )
        )
        yield router


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text(
        json.dumps(
            {
                "name": "demo",
                "dependencies": {"left-pad": "^1.0.0", "local": "file:../local"},
                "devDependencies": {"@types/node": "^20.0.0", "does-not-exist": "^1.0.0"},
            },
            indent=2,
        )
    )
    (repo / "package-lock.json").write_text(
        json.dumps(
            {
                "name": "demo",
                "lockfileVersion": 3,
                "packages": {
                    "": {"name": "demo"},
                    "node_modules/left-pad": {"version": "1.3.0"},
                    "node_modules/@types/node": {"version": "20.0.0"},
                },
            }
        )
    )
    (repo / "requirements.txt").write_text("requests==2.31.0\nflask>=3.0\n")
    (repo / "broken").mkdir()
    (repo / "broken" / "pyproject.toml").write_text(
        '[project]\nname = "x"\ndependencies = [\n  "a",\n  oops\n]\n'
    )
    return repo


def _run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["run", *args], catch_exceptions=False)
    return result.exit_code, result.stdout


def test_json_report_end_to_end(tmp_path: Path, registry: respx.MockRouter) -> None:
    """A run reports locked, pinned and ranged dependencies, skips, errors and manifest problems."""
    repo = _repo(tmp_path)
    code, out = _run(
        str(repo),
        "--format",
        "json",
        "--registry",
        f"npm={NPM}",
        "--registry",
        f"pypi={PYPI}",
        "--min-release-age",
        "3d",
    )
    report = json.loads(out)
    assert code == 3  # one lookup failed (404)
    assert report["schemaVersion"] == "1"
    rows = {d["name"]: d for d in report["repositories"][0]["dependencies"]}

    left_pad = rows["left-pad"]
    assert (left_pad["current"], left_pad["currentSource"], left_pad["lockFile"]) == (
        "1.3.0",
        "lockfile",
        "package-lock.json",
    )
    assert (left_pad["latest"], left_pad["eligible"], left_pad["status"]) == (
        "1.4.0",
        None,
        "held-back",
    )
    assert [h["version"] for h in left_pad["heldBack"]] == ["1.4.0"]
    assert left_pad["heldBack"][0]["eligibleAt"] is not None
    assert left_pad["line"] == 4

    node = rows["@types/node"]
    assert (node["current"], node["eligible"], node["updateType"], node["status"]) == (
        "20.0.0",
        "22.1.0",
        "major",
        "outdated",
    )
    assert node["metadata"]["lookup"]["catalog"]["timeSource"] == "npm packument time"

    assert rows["local"]["status"] == "skipped"
    assert rows["does-not-exist"]["status"] == "error"
    assert "not found" in rows["does-not-exist"]["reason"]

    req = rows["requests"]
    assert (req["current"], req["currentSource"], req["eligible"], req["status"]) == (
        "2.31.0",
        "pin",
        "2.32.0",
        "outdated",
    )
    assert [h["version"] for h in req["heldBack"]] == ["2.33.0"]
    flask = rows["flask"]
    assert (flask["current"], flask["currentSource"], flask["status"]) == (
        "3.1.0",
        "range",
        "up-to-date",
    )

    problems = report["repositories"][0]["problems"]
    assert [(p["file"], p["line"]) for p in problems] == [("broken/pyproject.toml", 5)]
    summary = report["summary"]
    assert summary["byStatus"] == {
        "up-to-date": 1,
        "outdated": 2,
        "held-back": 1,
        "unknown": 0,
        "skipped": 1,
        "error": 1,
    }
    assert summary["failedLookups"] == 1


def test_single_flight_across_repositories(tmp_path: Path, registry: respx.MockRouter) -> None:
    """Many repositories declaring the same package cause one registry request for it."""
    for i in range(10):
        repo = tmp_path / f"r{i}"
        repo.mkdir()
        (repo / "requirements.txt").write_text("requests==2.31.0\n")
    code, out = _run(
        *(str(tmp_path / f"r{i}") for i in range(10)),
        "--format",
        "json",
        "--registry",
        f"pypi={PYPI}",
        "--fail-on",
        "outdated",
    )
    assert code == 1
    assert registry.routes[3].call_count == 1  # the requests route
    assert len(json.loads(out)["repositories"]) == 10


def test_table_is_plain_when_piped(tmp_path: Path, registry: respx.MockRouter) -> None:
    """Piped table output has no escape codes and ends with the summary line."""
    repo = _repo(tmp_path)
    code, out = _run(str(repo), "--registry", f"npm={NPM}", "--registry", f"pypi={PYPI}")
    assert code == 3
    assert "\x1b[" not in out
    assert (
        out.strip()
        .splitlines()[-1]
        .startswith("6 dependencies in 1 repository: 1 up-to-date, 3 outdated")
    )
    assert "broken/pyproject.toml:5" in out
    assert [line for line in out.splitlines() if line != line.rstrip()] == []


def test_piped_table_honours_columns(
    tmp_path: Path, registry: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Piped with ``COLUMNS=100``: no table line is wider than 100 characters."""
    repo = _repo(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    _, out = _run(str(repo), "-v", "--registry", f"npm={NPM}", "--registry", f"pypi={PYPI}")
    table = [line for line in out.splitlines() if " | " in line]
    assert table
    assert max(len(line) for line in table) <= 100


def test_fail_on_levels(tmp_path: Path, registry: respx.MockRouter) -> None:
    """--fail-on major exits 1 only for major updates; none exits 0."""
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "requirements.txt").write_text("flask==3.0.0\n")
    args = ["--registry", f"pypi={PYPI}", "-q"]
    assert _run(str(repo), *args, "--fail-on", "major")[0] == 0
    assert _run(str(repo), *args, "--fail-on", "outdated")[0] == 1
    assert _run(str(repo), *args)[0] == 0


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    """Bad flag values are usage errors (exit 2) with a message naming the flag."""
    result = runner.invoke(app, ["run", str(tmp_path), "--host-concurrency", "x=500"])
    assert result.exit_code == 2
    assert "between 1 and 100" in result.stderr
    result = runner.invoke(app, ["run", str(tmp_path), "--registry", "cargo=https://x.test"])
    assert result.exit_code == 2
    assert "unknown datasource 'cargo'" in result.stderr


def test_missing_target_costs_only_itself(tmp_path: Path, registry: respx.MockRouter) -> None:
    """A target that does not exist is reported (exit 3) and the other targets are scanned."""
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "requirements.txt").write_text("flask==3.1.0\n")
    code, out = _run(
        str(tmp_path / "missing"), str(repo), "--format", "json", "--registry", f"pypi={PYPI}"
    )
    report = json.loads(out)
    assert code == 3
    missing, scanned = report["repositories"]
    assert missing["problems"] == [
        {
            "file": str(tmp_path / "missing"),
            "line": None,
            "message": "target does not exist",
            "severity": "error",
        }
    ]
    assert [d["status"] for d in scanned["dependencies"]] == ["up-to-date"]


def test_a_manifest_file_is_a_target(tmp_path: Path, registry: respx.MockRouter) -> None:
    """`run sub/requirements.txt` scans that file at its checkout root, and nothing else."""
    repo = _repo(tmp_path)
    (repo / ".git").mkdir()
    (repo / "py").mkdir()
    (repo / "requirements.txt").rename(repo / "py" / "requirements.txt")
    target = str(repo / "py" / "requirements.txt")
    code, out = _run(target, "--format", "json", "--registry", f"pypi={PYPI}")
    [scanned] = json.loads(out)["repositories"]
    assert code == 0  # the broken pyproject.toml and the npm 404 elsewhere are not this target's
    assert (scanned["target"], scanned["path"]) == (target, str(repo))
    assert scanned["extraction"]["files"] == ["py/requirements.txt"]
    assert scanned["problems"] == []
    assert [(d["file"], d["name"]) for d in scanned["dependencies"]] == [
        ("py/requirements.txt", "requests"),
        ("py/requirements.txt", "flask"),
    ]


def test_broken_manifest_fails_the_run(tmp_path: Path) -> None:
    """A manifest that cannot be parsed makes the exit code 3 even with nothing else to report."""
    (tmp_path / "package.json").write_text("{ not json")
    code, out = _run(str(tmp_path), "-q")
    assert code == 3
    assert "1 manifest error" in out


def test_schema_command_prints_json_schema() -> None:
    """``patchula schema`` prints the report's JSON Schema with camelCase keys."""
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert "schemaVersion" in schema["properties"]
    assert "heldBack" in schema["$defs"]["DependencyReport"]["properties"]
    # The draft is said, so a validator does not have to guess it.
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_unreachable_registry_fails_fast_with_rows_and_host_statistics(tmp_path: Path) -> None:
    """Nothing listens: every row is an error naming the host, exit 3, in two attempts."""
    import socket  # noqa: PLC0415 - only this test needs a closed port

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    names = [f"pkg{i}" for i in range(40)]
    (tmp_path / "requirements.txt").write_text("".join(f"{n}==1.0\n" for n in names))
    registry = f"http://127.0.0.1:{port}"
    result = runner.invoke(
        app, ["run", str(tmp_path), "--no-cache", "-v", "--registry", f"pypi={registry}"]
    )
    assert result.exit_code == 3
    assert f"  127.0.0.1:{port} unreachable (ConnectError): 40 lookups not done" in result.stdout
    hosts = [line for line in result.stdout.splitlines() if line.startswith(f"127.0.0.1:{port}:")]
    assert len(hosts) == 1
    assert "(no HTTP answer)" in hosts[0]
    requests = int(hosts[0].split(": ", 1)[1].split(" requests", 1)[0])
    assert requests <= 2 * 16 + 1  # two waves at most, not 40 lookups x 4 attempts


def test_failed_lookup_row_keeps_the_pinned_version(tmp_path: Path) -> None:
    """The registry is down, but the checkout says what is installed: current is the pin."""
    import socket  # noqa: PLC0415 - only this test needs a closed port

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "requirements.txt").write_text("flask==3.1.0\nrequests>=2\n")
    code, out = _run(
        str(tmp_path),
        "--no-cache",
        "--format",
        "json",
        "--registry",
        f"pypi=http://127.0.0.1:{port}",
    )
    assert code == 3
    rows = json.loads(out)["repositories"][0]["dependencies"]
    assert [(r["name"], r["status"], r["current"], r["currentSource"]) for r in rows] == [
        ("flask", "error", "3.1.0", "pin"),
        ("requests", "error", None, None),
    ]


def test_piped_table_without_columns_prints_every_line_in_full(
    tmp_path: Path, registry: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Piped with ``COLUMNS`` unset, a wide row is one full line: no cell is folded or cut."""
    monkeypatch.delenv("COLUMNS", raising=False)
    name = "a-rather-long-distribution-name-" + "x" * 40
    pin = "2024.11.29.2107260000.1234567890.99"
    registry.get(f"{PYPI}/simple/{name}/").mock(
        return_value=httpx.Response(200, headers=SIMPLE, json=_simple(name, {pin: 10}))
    )
    (tmp_path / "requirements.txt").write_text(f"{name}=={pin}\n")
    _, out = _run(str(tmp_path), "-v", "--no-cache", "--registry", f"pypi={PYPI}")
    rows = [line for line in out.splitlines() if line.startswith(name)]
    assert len(rows) == 1
    assert f"| =={pin} | {pin} | pin | {pin} |" in rows[0]
    assert rows[0].endswith("| up-to-date |")
    assert len(rows[0]) > 200  # wider than the old fixed width: nothing was folded into it


def test_now_evaluates_the_release_age_policy_at_another_time(
    tmp_path: Path, registry: respx.MockRouter
) -> None:
    """--now three days ahead admits a release held back today; evaluatedAt is that instant."""
    (tmp_path / "package.json").write_text(json.dumps({"dependencies": {"left-pad": "^1.0.0"}}))
    (tmp_path / "package-lock.json").write_text(
        json.dumps(
            {
                "lockfileVersion": 3,
                "packages": {"": {}, "node_modules/left-pad": {"version": "1.3.0"}},
            }
        )
    )
    args = [str(tmp_path), "--no-cache", "--format", "json", "--min-release-age", "3d"]
    args += ["--registry", f"npm={NPM}"]
    _, today = _run(*args)
    monday = (datetime.now(UTC) + timedelta(days=3)).replace(microsecond=0)
    _, later = _run(*args, "--now", monday.isoformat())
    [row] = json.loads(today)["repositories"][0]["dependencies"]
    assert (row["status"], row["heldBack"][0]["version"]) == ("held-back", "1.4.0")
    report = json.loads(later)
    [row] = report["repositories"][0]["dependencies"]
    assert (row["status"], row["eligible"], row["heldBack"]) == ("outdated", "1.4.0", [])
    assert datetime.fromisoformat(report["evaluatedAt"]) == monday


def test_disabled_managers_leave_their_files_out(
    tmp_path: Path, registry: respx.MockRouter
) -> None:
    """--disabled-managers (repeatable, comma-separated) drops those managers' files and rows."""
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "a"\n[dependencies]\nserde = "1"\n')
    (tmp_path / "requirements.txt").write_text("flask==3.1.0\n")
    args = [str(tmp_path), "--no-cache", "--format", "json", "--registry", f"pypi={PYPI}"]
    code, out = _run(*args, "--disabled-managers", "cargo_toml", "--disabled-managers", "go_mod")
    assert code == 0
    repo = json.loads(out)["repositories"][0]
    assert [(d["manager"], d["name"]) for d in repo["dependencies"]] == [
        ("requirements_txt", "flask")
    ]
    assert repo["extraction"]["files"] == ["requirements.txt"]
    code, _ = _run(*args, "--enabled-managers", "cargo")
    assert code == 2


def test_piped_table_without_columns_is_rendered_without_rich_layout(
    tmp_path: Path, registry: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Piped, no rich table is laid out: with ``COLUMNS`` the plain renderer folds the cells."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    tables: list[object] = []
    original = rich.table.Table.__init__

    def counting_init(self: object, *args: Any, **kwargs: Any) -> None:
        tables.append(self)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(rich.table.Table, "__init__", counting_init)
    repo = _repo(tmp_path)
    args = [str(repo), "-v", "--no-cache", "--registry", f"npm={NPM}", "--registry", f"pypi={PYPI}"]
    _, out = _run(*args)
    assert tables == []
    lines = out.splitlines()
    assert lines[0] == str(repo)
    assert lines[1] == "package.json"
    assert lines[2].startswith(
        "package        | type            | declared      | current | via  |"
    )
    assert lines[3].startswith(
        "---------------+-----------------+---------------+---------+------+"
    )
    assert any(
        line.startswith("left-pad       | dependencies    | ^1.0.0        | 1.3.0   | lock | 1.4.0")
        for line in lines
    )
    assert any(line.startswith("npm.test: ") for line in lines)  # -v host statistics follow
    monkeypatch.setenv("COLUMNS", "100")
    _, folded = _run(*args)
    assert tables == []
    assert max(len(line) for line in folded.splitlines() if " | " in line) <= 100
    assert any(line.startswith("npm.test: ") for line in folded.splitlines())


@pytest.mark.parametrize(
    ("name", "value", "rich_layout"),
    [
        ("FORCE_COLOR", "1", True),
        ("TTY_COMPATIBLE", "1", True),
        ("FORCE_COLOR", "", False),
        ("TTY_COMPATIBLE", "0", False),
    ],
)
def test_force_color_or_tty_compatible_choose_the_terminal_table(
    tmp_path: Path,
    registry: respx.MockRouter,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    value: str,
    *,
    rich_layout: bool,
) -> None:
    """A pipe counts as a terminal (rich, in colour) with FORCE_COLOR or TTY_COMPATIBLE=1 only."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv(name, value)
    repo = _repo(tmp_path)
    _, out = _run(str(repo), "--no-cache", "--registry", f"npm={NPM}", "--registry", f"pypi={PYPI}")
    assert ("\x1b[" in out) is rich_layout
    assert (" | " in out) is not rich_layout  # the plain renderer's separators


def test_min_release_age_flag_over_a_config_files_waits_by_type_is_said_with_v(
    tmp_path: Path,
) -> None:
    """``--min-release-age 40d`` replaces a file's per-type waits; ``-v`` says so on stderr."""
    config = tmp_path / "cfg.toml"
    config.write_text('[min-release-age-by-type]\npatch = "1d"\n')
    repo = tmp_path / "empty"
    repo.mkdir()
    args = ["run", str(repo), "--config", str(config), "--min-release-age", "40d"]
    result = runner.invoke(app, [*args, "--format", "json", "--no-cache", "-v"])
    assert result.exit_code == 0
    options = json.loads(result.stdout)["options"]
    assert options["min-release-age-by-type"] == {"major": None, "minor": None, "patch": None}
    assert options["min-release-age"] == "P40D"
    assert (
        "patchula: --min-release-age 40d is the wait of every update type: it replaces"
        f" [min-release-age-by-type] of {config} (patch = '1d')"
    ) in result.stderr
    quiet = runner.invoke(app, [*args, "--format", "json", "--no-cache"])
    assert "replaces" not in quiet.stderr
