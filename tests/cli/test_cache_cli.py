"""The cache from the command line: damaged or foreign cache files never cost a scan."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from patchula.cache import recovery as cache_recovery
from patchula.cli import app
from tests.fake_registry import FakeRegistry

OLD = datetime(2025, 1, 1, tzinfo=UTC)
runner = CliRunner()


def _scan(
    registry: FakeRegistry, repo: Path, cache: Path, *extra: str
) -> tuple[int, dict[str, object], str]:
    args = [
        "run",
        str(repo),
        "--format",
        "json",
        "--cache",
        str(cache),
        "--registry",
        f"npm={registry.url('npm')}",
    ]
    result = runner.invoke(app, [*args, *extra], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout), result.stderr


@pytest.fixture
def repo(tmp_path: Path, fake_registry: FakeRegistry) -> Path:
    """A checkout depending on two npm packages the fake registry serves."""
    fake_registry.npm.add("alpha", {"1.0.0": OLD, "2.0.0": OLD})
    fake_registry.npm.add("beta", {"1.0.0": OLD})
    root = tmp_path / "repo"
    root.mkdir()
    (root / "package.json").write_text(
        json.dumps({"dependencies": {"alpha": "1.0.0", "beta": "1.0.0"}})
    )
    return root


def _statuses(report: dict[str, object]) -> dict[str, str]:
    deps = report["repositories"][0]["dependencies"]  # type: ignore[index]
    return {d["name"]: d["status"] for d in deps}


def test_garbage_cache_file_is_quarantined_and_the_scan_completes(
    fake_registry: FakeRegistry, repo: Path, tmp_path: Path
) -> None:
    """A cache file with a garbage header is set aside (kept), rebuilt, and the report is whole."""
    cache = tmp_path / "cache.sqlite3"
    cache.write_bytes(b"this is not a database" * 100)
    code, report, stderr = _scan(fake_registry, repo, cache)
    assert code == 0
    assert _statuses(report) == {"alpha": "outdated", "beta": "up-to-date"}
    kept = list(tmp_path.glob("cache.sqlite3.corrupt-*"))
    assert len(kept) == 1
    assert kept[0].read_bytes() == b"this is not a database" * 100
    assert "warning" in stderr
    assert report["cache"]["warnings"]  # type: ignore[index]


def test_cache_from_a_newer_patchula_is_left_alone(
    fake_registry: FakeRegistry, repo: Path, tmp_path: Path
) -> None:
    """A database with a newer schema is refused untouched; the scan runs with a memory cache."""
    cache = tmp_path / "cache.sqlite3"
    with sqlite3.connect(cache) as conn:
        conn.execute("PRAGMA user_version = 99")
    before = cache.read_bytes()
    code, report, stderr = _scan(fake_registry, repo, cache)
    assert code == 0
    assert _statuses(report) == {"alpha": "outdated", "beta": "up-to-date"}
    assert cache.read_bytes() == before
    assert "newer" in stderr
    assert report["cache"]["path"] is None  # type: ignore[index]


def test_unusable_cache_location_falls_back_to_memory(
    fake_registry: FakeRegistry, repo: Path, tmp_path: Path
) -> None:
    """A cache path under a regular file cannot be created: warn, scan in memory, report whole."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    code, report, stderr = _scan(fake_registry, repo, blocker / "cache.sqlite3")
    assert code == 0
    assert _statuses(report) == {"alpha": "outdated", "beta": "up-to-date"}
    assert "in-memory cache" in stderr


def test_cache_path_and_prune(tmp_path: Path, fake_registry: FakeRegistry, repo: Path) -> None:
    """``cache path`` names the file in use and ``cache prune`` shrinks it to a zero budget."""
    cache = tmp_path / "c.sqlite3"
    result = runner.invoke(app, ["cache", "path"], env={"PATCHULA_CACHE": str(cache)})
    assert result.stdout.strip() == str(cache)
    _scan(fake_registry, repo, cache)
    result = runner.invoke(app, ["cache", "prune", "--cache", str(cache), "--cache-budget", "0"])
    assert result.exit_code == 0
    assert "0 compressed body bytes kept" in result.stdout
    _, report, _ = _scan(fake_registry, repo, cache)
    assert report["cache"]["misses"] == 2  # type: ignore[index]


def test_cache_path_flag_and_prune_of_a_missing_file(tmp_path: Path) -> None:
    """``cache path --cache`` echoes the file; pruning a missing file creates nothing."""
    wanted = tmp_path / "elsewhere" / "c.sqlite3"
    assert runner.invoke(app, ["cache", "path", "--cache", str(wanted)]).stdout.strip() == str(
        wanted
    )
    result = runner.invoke(app, ["cache", "prune", "--cache", str(wanted)])
    assert result.exit_code == 0
    assert "nothing to prune" in result.stdout
    assert not wanted.parent.exists()


def test_fallback_reason_is_in_the_report_and_printed_with_verbose(
    fake_registry: FakeRegistry, repo: Path, tmp_path: Path
) -> None:
    """A cache path that is a directory: the report's cache.fallback says why; -v prints it."""
    cache = tmp_path / "cache.sqlite3"
    cache.mkdir()
    code, report, stderr = _scan(fake_registry, repo, cache)
    assert code == 0
    assert _statuses(report) == {"alpha": "outdated", "beta": "up-to-date"}
    section = report["cache"]
    assert section["path"] is None  # type: ignore[index]
    fallback = section["fallback"]  # type: ignore[index]
    assert str(cache) in fallback
    assert "SQLITE_CANTOPEN" in fallback
    assert any(fallback in warning for warning in section["warnings"])  # type: ignore[index]
    assert fallback in stderr
    args = ["run", str(repo), "-v", "--cache", str(cache)]
    args += ["--registry", f"npm={fake_registry.url('npm')}"]
    verbose = runner.invoke(app, args, catch_exceptions=False)
    assert f"cache (in memory: {fallback})" in verbose.stdout


def test_a_write_lock_held_at_open_still_serves_reads(
    fake_registry: FakeRegistry, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's WAL write lock at open: the file is read, only writes are skipped."""
    monkeypatch.setattr(cache_recovery, "BUSY_TIMEOUT_MS", 100)
    cache = tmp_path / "cache.sqlite3"
    _scan(fake_registry, repo, cache)
    with sqlite3.connect(cache, isolation_level=None) as holder:
        holder.execute("BEGIN IMMEDIATE")
        code, report, _ = _scan(fake_registry, repo, cache)
        holder.execute("ROLLBACK")
    holder.close()
    assert code == 0
    assert _statuses(report) == {"alpha": "outdated", "beta": "up-to-date"}
    section = report["cache"]
    assert (section["path"], section["fallback"]) == (str(cache), None)  # type: ignore[index]
    assert section["hits"] == 2  # type: ignore[index]
    assert any("holds its write lock" in w for w in section["warnings"])  # type: ignore[index]


def test_an_exclusive_rollback_journal_lock_at_open_falls_back_with_its_reason(
    fake_registry: FakeRegistry, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file locked whole (rollback journal, EXCLUSIVE): in memory, the report says busy."""
    monkeypatch.setattr(cache_recovery, "BUSY_TIMEOUT_MS", 100)
    cache = tmp_path / "cache.sqlite3"
    _scan(fake_registry, repo, cache)
    with sqlite3.connect(cache, isolation_level=None) as holder:
        assert holder.execute("PRAGMA journal_mode = DELETE").fetchone() == ("delete",)
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("INSERT INTO meta VALUES ('holder', 1)")
        code, report, _ = _scan(fake_registry, repo, cache)
        holder.execute("ROLLBACK")
    holder.close()
    assert code == 0
    assert _statuses(report) == {"alpha": "outdated", "beta": "up-to-date"}
    assert report["cache"]["path"] is None  # type: ignore[index]
    assert "SQLITE_BUSY" in report["cache"]["fallback"]  # type: ignore[index]


def test_future_schema_fallback_is_in_the_report(
    fake_registry: FakeRegistry, repo: Path, tmp_path: Path
) -> None:
    """The newer-schema refusal is the report's fallback reason."""
    cache = tmp_path / "cache.sqlite3"
    with sqlite3.connect(cache) as conn:
        conn.execute("PRAGMA user_version = 99")
    conn.close()
    _, report, _ = _scan(fake_registry, repo, cache)
    assert "newer than the version this patchula supports" in report["cache"]["fallback"]  # type: ignore[index]


def test_a_damaged_row_costs_one_refetch_not_the_run(
    fake_registry: FakeRegistry, repo: Path, tmp_path: Path
) -> None:
    """A cached body whose BLOB became TEXT: that lookup is fetched again, the run exits 0."""
    cache = tmp_path / "cache.sqlite3"
    _scan(fake_registry, repo, cache)
    with sqlite3.connect(cache, isolation_level=None) as conn:
        changed = conn.execute(
            "UPDATE http_entries SET body = CAST(body AS TEXT) WHERE key LIKE '%alpha%'"
        ).rowcount
    conn.close()
    assert changed == 1
    code, report, stderr = _scan(fake_registry, repo, cache)
    assert code == 0
    assert _statuses(report) == {"alpha": "outdated", "beta": "up-to-date"}
    # Met during the scan, said once on stderr after it.
    assert stderr.count("patchula: warning:") == 1
    assert "damaged row" in stderr
    section = report["cache"]
    assert section["corruptBodies"] == 1  # type: ignore[index]
    assert any("damaged row" in w for w in section["warnings"])  # type: ignore[index]
    _, again, _ = _scan(fake_registry, repo, cache)  # the refetched answer was stored
    assert again["cache"]["corruptBodies"] == 0  # type: ignore[index]
    assert again["cache"]["warnings"] == []  # type: ignore[index]


def test_cache_clear_removes_the_file_and_its_sidecars(
    fake_registry: FakeRegistry, repo: Path, tmp_path: Path
) -> None:
    """``cache clear`` removes the database, ``-wal`` and ``-shm``; the next run fetches again."""
    cache = tmp_path / "c.sqlite3"
    _scan(fake_registry, repo, cache)
    wal, shm = tmp_path / "c.sqlite3-wal", tmp_path / "c.sqlite3-shm"
    wal.write_bytes(b"")  # sidecars as an interrupted run leaves them
    shm.write_bytes(b"\0" * 64)
    kept = tmp_path / "c.sqlite3.corrupt-20260101T000000Z"
    kept.write_bytes(b"damaged")
    size = cache.stat().st_size + 64
    result = runner.invoke(app, ["cache", "clear", "--cache", str(cache)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0] == f"removed {wal}, {shm}, {cache} ({size} bytes)"
    assert "kept 1 quarantined copy" in result.stdout
    assert not cache.exists()
    assert not wal.exists()
    assert not shm.exists()
    assert kept.read_bytes() == b"damaged"
    _, report, _ = _scan(fake_registry, repo, cache)
    assert report["cache"]["misses"] == 2  # type: ignore[index]
    again = runner.invoke(app, ["cache", "clear"], env={"PATCHULA_CACHE": str(cache)})
    assert again.exit_code == 0
    assert not cache.exists()


def test_cache_clear_of_a_missing_file_creates_nothing(tmp_path: Path) -> None:
    """Clearing a cache that does not exist says so, exits 0 and creates no directory."""
    wanted = tmp_path / "elsewhere" / "c.sqlite3"
    result = runner.invoke(app, ["cache", "clear", "--cache", str(wanted)])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"no cache file at {wanted}; nothing to clear"
    assert not wanted.parent.exists()


def test_cache_clear_refuses_a_file_another_process_has_open(
    fake_registry: FakeRegistry, repo: Path, tmp_path: Path
) -> None:
    """A cache another process has open (a run in progress) is refused with exit 2, untouched."""
    import subprocess  # noqa: PLC0415 - only this test starts a process
    import sys  # noqa: PLC0415

    cache = tmp_path / "c.sqlite3"
    _scan(fake_registry, repo, cache)
    before = cache.read_bytes()
    holder = subprocess.Popen(  # noqa: S603 - this interpreter, a fixed script
        [
            sys.executable,
            "-c",
            (
                "import sqlite3, sys\n"
                "conn = sqlite3.connect(sys.argv[1])\n"
                "conn.execute('SELECT count(*) FROM http_entries').fetchone()\n"
                "print('open', flush=True)\n"
                "sys.stdin.read()\n"
            ),
            str(cache),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "open"
        result = runner.invoke(app, ["cache", "clear", "--cache", str(cache)])
    finally:
        holder.communicate("")
    assert result.exit_code == 2
    assert "is open in another process" in result.stderr
    assert cache.read_bytes() == before
    # Once it has ended, the same command clears the file.
    assert runner.invoke(app, ["cache", "clear", "--cache", str(cache)]).exit_code == 0
    assert not cache.exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"requests==2.31.0\n", "is not an SQLite database, so not a patchula cache"),
        (None, "is an SQLite database of another application (tables notes)"),
    ],
)
def test_cache_clear_refuses_what_is_not_a_patchula_cache(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    """``--cache`` naming another file or another application's database removes nothing."""
    path = tmp_path / "precious"
    if content is None:
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE notes (body TEXT)")
        conn.close()
    else:
        path.write_bytes(content)
    before = path.read_bytes()
    result = runner.invoke(app, ["cache", "clear", "--cache", str(path)])
    assert result.exit_code == 2
    assert message in result.stderr
    assert path.read_bytes() == before


def test_argument_help_reads_as_usage_not_as_python_types() -> None:
    """``run`` and ``cache warm`` show ``[TARGET]...``, never typer's ``TARGET <list[str]>``."""
    for command, label in (
        (["run"], "[TARGET]..."),
        (["cache", "warm"], "[TARGET]..."),
        (["cache", "retry"], "[NAME]"),
        (["report", "merge"], "REPORT..."),
    ):
        result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "100"})
        assert result.exit_code == 0
        arguments = result.stdout.split("Arguments:\n", 1)[1].splitlines()[0]
        assert arguments.split()[0] == label, arguments
        assert "<" not in arguments
