"""Hostile checkouts: loops, FIFOs, surrogates, huge numbers and bugs never crash or hang a scan."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from patchula import lookup as lookup_module
from patchula import scan as scan_module
from patchula.datasource import DATASOURCES
from patchula.discovery import discover, read_regular
from patchula.errors import ManifestError
from patchula.manager import MANAGERS
from patchula.models import ExtractResult
from patchula.policy import evaluate as policy_evaluate
from patchula.scan import _Reader, read_commit
from patchula.settings import DEFAULT_IGNORE_PATHS
from tests.hang import fail_if_blocked
from tests.test_scan import PKGS, FakeFetch, _scan, _write

HUGE = "9" * 5000


@pytest.fixture(autouse=True)
def _no_hang() -> Iterator[None]:
    """Fail a test that blocks (a FIFO opened by a regression) instead of hanging the suite."""
    with fail_if_blocked(10):
        yield


def _problems(result: scan_module.ScanResult) -> dict[str, tuple[int | None, str, str]]:
    return {p.file: (p.line, p.message, p.severity) for p in result.repos[0].problems}


# --- symlink loops -------------------------------------------------------------------------


def test_symlink_loops_are_refused_and_named_when_manifest_named(tmp_path: Path) -> None:
    """A two-link loop and a self-loop never raise; a manifest-named one is a "symlink loop"."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "1.0.0"}}))
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "package.json").symlink_to("package.json")
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "requirements.txt").symlink_to("../svc/reqs")
    (tmp_path / "svc" / "reqs").symlink_to("requirements.txt")
    found = discover(tmp_path, DEFAULT_IGNORE_PATHS)
    assert [f.path for f in found.files] == ["package.json"]
    assert sorted(found.refused) == [
        ("svc/requirements.txt", "symlink loop"),
        ("web/package.json", "symlink loop"),
    ]
    result = _scan([tmp_path], FakeFetch(PKGS))
    assert _problems(result) == {
        "svc/requirements.txt": (None, "symlink loop", "warning"),
        "web/package.json": (None, "symlink loop", "warning"),
    }
    assert [(r.dependency.name, r.finding.status) for r in result.repos[0].rows] == [
        ("a", "outdated")
    ]


def test_reader_names_a_symlink_loop(tmp_path: Path) -> None:
    """The manager's reader (a ``-r`` include) turns a loop into a ManifestError, not a crash."""
    (tmp_path / "extra.txt").symlink_to("extra.txt")
    reader = _Reader(tmp_path.resolve(), 1024)
    with pytest.raises(ManifestError, match="symlink loop") as caught:
        reader("extra.txt")
    assert caught.value.file == "extra.txt"


def test_include_that_is_a_loop_is_a_problem_of_the_including_file(tmp_path: Path) -> None:
    """``-r loop.txt`` naming a symlink loop is a problem; the other lines still count."""
    _write(tmp_path, "requirements.txt", "-r loop.txt\nflask==3.0.0\n")
    (tmp_path / "loop.txt").symlink_to("loop.txt")
    result = _scan([tmp_path], FakeFetch({}), registries={"pypi": "http://pypi.test"})
    line, message, _ = _problems(result)["requirements.txt"]
    assert line == 1
    assert "symlink loop" in message
    assert [r.dependency.name for r in result.repos[0].rows] == ["flask"]


# --- FIFOs and other non-regular files -----------------------------------------------------


def test_manifest_named_fifo_directory_and_socket_are_problems(tmp_path: Path) -> None:
    """A FIFO, a directory and a socket named like manifests are "not a regular file (KIND)"."""
    os.mkfifo(tmp_path / "package.json")
    (tmp_path / "requirements.txt").mkdir()
    (tmp_path / "sock").mkdir()
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "sock" / "Cargo.toml"))
        result = _scan([tmp_path], FakeFetch({}))
    finally:
        server.close()
    assert _problems(result) == {
        "package.json": (None, "not a regular file (FIFO)", "warning"),
        "requirements.txt": (None, "not a regular file (directory)", "warning"),
        "sock/Cargo.toml": (None, "not a regular file (socket)", "warning"),
    }


def test_a_folder_named_by_a_loose_manifest_pattern_is_walked_silently(tmp_path: Path) -> None:
    """``dockerfiles/`` (Renovate's ``Dockerfile*`` names it) is a folder: walked, no problem."""
    (tmp_path / "dockerfiles").mkdir()
    (tmp_path / "dockerfiles" / "Dockerfile").write_text("FROM scratch\n")
    result = _scan([tmp_path], FakeFetch({}))
    assert _problems(result) == {}


def test_symlink_to_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    """A manifest symlinked to a FIFO inside the checkout is refused, never opened blocking."""
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "package.json").symlink_to("pipe")
    result = _scan([tmp_path], FakeFetch({}))
    assert _problems(result) == {"package.json": (None, "not a regular file (FIFO)", "warning")}


def test_include_that_is_a_fifo_does_not_block(tmp_path: Path) -> None:
    """``-r extra.txt`` naming a FIFO is a problem at the include line, read without blocking."""
    _write(tmp_path, "requirements.txt", "flask==3.0.0\n-r extra.txt\n")
    os.mkfifo(tmp_path / "extra.txt")
    result = _scan([tmp_path], FakeFetch({}), registries={"pypi": "http://pypi.test"})
    line, message, severity = _problems(result)["requirements.txt"]
    assert (line, severity) == (2, "error")
    assert "not a regular file (FIFO)" in message
    assert [r.dependency.name for r in result.repos[0].rows] == ["flask"]


def test_reader_refuses_a_fifo_swapped_in_after_discovery(tmp_path: Path) -> None:
    """The check is on the open descriptor (fstat), so a FIFO that replaced a file is refused."""
    os.mkfifo(tmp_path / "package.json")
    with pytest.raises(ManifestError, match=r"not a regular file \(FIFO\)"):
        _Reader(tmp_path.resolve(), 1024)("package.json")


def test_read_regular_reads_at_most_the_limit_plus_one(tmp_path: Path) -> None:
    """A regular file over the limit is refused by size; one at the limit is read whole."""
    (tmp_path / "f").write_bytes(b"x" * 10)
    assert read_regular(tmp_path / "f", "f", 10) == b"x" * 10
    with pytest.raises(ManifestError, match="over the"):
        read_regular(tmp_path / "f", "f", 9)


@pytest.mark.parametrize(
    "fifo",
    [".git/HEAD", ".git/refs/heads/main", ".git/packed-refs", ".git"],
)
def test_git_metadata_fifo_gives_no_commit_and_never_blocks(tmp_path: Path, fifo: str) -> None:
    """A FIFO as .git, HEAD, a ref or packed-refs makes the commit unknown, without blocking."""
    if fifo not in {".git", ".git/HEAD"}:
        _write(tmp_path, ".git/HEAD", "ref: refs/heads/main\n")
    path = tmp_path / fifo
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    assert read_commit(tmp_path) is None


def test_git_file_pointing_through_a_loop_gives_no_commit(tmp_path: Path) -> None:
    """A ``.git`` file whose gitdir is a symlink loop gives no commit instead of raising."""
    (tmp_path / "loop").symlink_to("loop")
    _write(tmp_path, ".git", "gitdir: loop/x\n")
    assert read_commit(tmp_path) is None


def test_fifo_git_head_still_scans_the_checkout(tmp_path: Path) -> None:
    """A checkout with a FIFO ``.git/HEAD`` is scanned completely (commit unknown)."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "1.0.0"}}))
    (tmp_path / ".git").mkdir()
    os.mkfifo(tmp_path / ".git" / "HEAD")
    result = _scan([tmp_path], FakeFetch(PKGS))
    assert result.repos[0].commit is None
    assert [r.finding.status for r in result.repos[0].rows] == ["outdated"]


# --- lone surrogates and huge numbers ------------------------------------------------------


def test_lone_surrogates_in_npm_names_and_ranges_are_problems(tmp_path: Path) -> None:
    r"""``"pkg\ud800": "^1"`` and a surrogate in a range are problems naming file and line."""
    text = (
        '{\n  "dependencies": {\n    "pkg\\ud800": "^1",\n    "a": "^1\\udc00",\n    "b": "1"\n'
        "  }\n}"
    )
    _write(tmp_path, "package.json", text)
    result = _scan([tmp_path], FakeFetch({"b": {"1.0.0": "2025-01-01T00:00:00Z"}}))
    problems = sorted((p.line, p.message) for p in result.repos[0].problems)
    assert problems == [
        (3, "invalid Unicode: lone surrogate in the name of 'pkg\\ud800'"),
        (4, "invalid Unicode: lone surrogate in the declared value of 'a'"),
    ]
    assert [(r.dependency.name, r.finding.status) for r in result.repos[0].rows] == [
        ("b", "up-to-date")
    ]


@pytest.mark.parametrize(
    ("rel", "text", "registries"),
    [
        ("requirements.txt", f"requests>={HUGE}\n", {"pypi": "http://pypi.test"}),
        ("package.json", json.dumps({"dependencies": {"a": f"^{HUGE}"}}), {}),
        ("Cargo.toml", f'[package]\nname = "x"\n[dependencies]\nserde = "{HUGE}"\n', {}),
        ("go.mod", f"module example.com/x\n\nrequire example.com/m v{HUGE}.0.0\n", {}),
    ],
)
def test_a_5000_digit_version_is_a_problem_not_a_crash(
    tmp_path: Path, rel: str, text: str, registries: dict[str, str]
) -> None:
    """A 5,000-digit version in any manifest is a problem naming the file, and nothing crashes."""
    _write(tmp_path, rel, text)
    result = _scan(
        [tmp_path],
        FakeFetch(PKGS),
        registries={"npm": "http://npm.test", **registries},
        max_file_bytes=1024 * 1024,
    )
    problems = result.repos[0].problems
    assert [p.file for p in problems] == [rel]
    assert problems[0].line is not None
    assert "digits" in problems[0].message or "invalid" in problems[0].message
    assert [r for r in result.repos[0].rows if r.finding.status == "error"] == []


def test_a_5000_digit_locked_version_is_ignored_with_a_problem(tmp_path: Path) -> None:
    """A lockfile version of 5,000 digits is dropped (a problem); current comes from the range."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "^1.0.0"}}))
    lock = {
        "lockfileVersion": 3,
        "packages": {"": {"dependencies": {"a": "^1.0.0"}}, "node_modules/a": {"version": HUGE}},
    }
    _write(tmp_path, "package-lock.json", json.dumps(lock, indent=2))
    result = _scan([tmp_path], FakeFetch(PKGS))
    [problem] = result.repos[0].problems
    assert problem.file == "package-lock.json"
    assert "more than 100 digits" in problem.message
    [row] = result.repos[0].rows
    assert (row.finding.current, row.finding.current_source) == ("1.0.0", "range")


# --- names that would leave the base URL ---------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "text", "name"),
    [
        (
            "go.mod",
            "module example.com/x\n\nrequire example.com/m/../../../admin/x v1.0.0\n",
            "example.com/m/../../../admin/x",
        ),
        ("package.json", json.dumps({"dependencies": {"../admin": "^1"}}), "../admin"),
        ("package.json", json.dumps({"dependencies": {"@x/..": "^1"}}), "@x/.."),
        (
            "Cargo.toml",
            '[package]\nname = "x"\n[dependencies]\n"../x" = "1"\n',
            "../x",
        ),
    ],
)
def test_names_with_dot_dot_are_problems_and_never_requested(
    tmp_path: Path, rel: str, text: str, name: str
) -> None:
    """Invalid Go module paths, npm and crate names are problems at their line; no request."""
    _write(tmp_path, rel, text)
    fetch = FakeFetch(PKGS)
    result = _scan([tmp_path], fetch)
    [problem] = result.repos[0].problems
    assert problem.file == rel
    assert problem.line is not None
    assert problem.message.startswith(f"invalid package name {name!r}")
    assert result.repos[0].rows == []
    assert not fetch.calls


# --- the orchestration guards --------------------------------------------------------------


def test_a_manager_bug_costs_only_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A manager raising an unexpected exception is a problem of its file naming the type."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "1.0.0"}}))
    _write(tmp_path, "requirements.txt", "flask==1\n")

    def broken(path: str, text: str, read: object) -> ExtractResult:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(MANAGERS["requirements_txt"], "extract", broken)
    result = _scan([tmp_path], FakeFetch(PKGS))
    assert _problems(result) == {
        "requirements.txt": (None, "requirements_txt failed: ZeroDivisionError: boom", "error")
    }
    assert [r.finding.status for r in result.repos[0].rows] == ["outdated"]


def test_an_evaluation_bug_costs_only_its_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``evaluate`` raising for one package is that row's error; every other row completes."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "1.0.0", "b": "1.0.0"}}))
    real = policy_evaluate

    def flaky(dep, catalog, *args, **kwargs):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN002, ANN003, ANN202
        if dep.name == "b":
            raise KeyError("oops")
        return real(dep, catalog, *args, **kwargs)

    monkeypatch.setattr("patchula.lookup.evaluate", flaky)
    pkgs = {**PKGS, "b": {"1.0.0": "2025-01-01T00:00:00Z"}}
    result = _scan([tmp_path], FakeFetch(pkgs))
    rows = {r.dependency.name: r.finding for r in result.repos[0].rows}
    assert rows["a"].status == "outdated"
    assert rows["b"].status == "error"
    assert rows["b"].reason == "internal error evaluating b: KeyError: 'oops'"


def test_a_times_needed_bug_costs_only_its_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in the lazy publish-time step is an error row, not a crashed task group."""
    _write(tmp_path, "Cargo.toml", '[package]\nname = "x"\n[dependencies]\nserde = "1"\n')

    def broken(*args: object, **kwargs: object) -> list[str]:
        raise TypeError("bad")

    monkeypatch.setattr(lookup_module, "_times_needed", broken)
    monkeypatch.setattr(DATASOURCES["crates"], "get_catalog", _crates_catalog, raising=True)
    result = _scan([tmp_path], FakeFetch({}))
    [row] = result.repos[0].rows
    assert row.finding.status == "error"
    assert row.finding.reason == "internal error evaluating serde: TypeError: bad"


async def _crates_catalog(fetch: object, base_url: str, package_name: str) -> object:
    from datetime import UTC, datetime  # noqa: PLC0415 - local to this stub

    from patchula.models import Catalog, Release  # noqa: PLC0415

    when = datetime(2025, 1, 1, tzinfo=UTC)
    return Catalog(
        package_name=package_name,
        datasource="crates",
        releases=(Release("1.0.0", None), Release("1.1.0", None)),
        latest="1.1.0",
        fetched_at=when,
        source_url=base_url,
    )


def test_a_read_commit_bug_costs_only_its_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception resolving one target is its problem (with the type); the others complete."""
    bad, good = tmp_path / "bad", tmp_path / "good"
    _write(bad, "package.json", "{}")
    _write(good, "package.json", json.dumps({"dependencies": {"a": "1.0.0"}}))
    (bad / ".git").mkdir()  # a checkout: its commit is read
    real = scan_module.read_commit

    def flaky(root: Path, *args: object) -> str | None:
        if root.name == "bad":
            raise MemoryError("no")
        return real(root)

    monkeypatch.setattr(scan_module, "read_commit", flaky)
    result = _scan([bad, good], FakeFetch(PKGS))
    first, second = result.repos
    assert [p.message for p in first.problems] == [
        f"internal error resolving {bad}: MemoryError: no"
    ]
    assert [r.finding.status for r in second.rows] == ["outdated"]


def test_a_repository_bug_costs_only_that_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception while walking one repository is its problem; the other repository completes."""
    bad, good = tmp_path / "bad", tmp_path / "good"
    _write(bad, "package.json", "{}")
    _write(good, "package.json", json.dumps({"dependencies": {"a": "1.0.0"}}))
    real = scan_module._discover_sliced

    async def flaky(root: Path, settings: object) -> object:
        if root.name == "bad":
            raise OSError(5, "Input/output error")
        return await real(root, settings)  # type: ignore[arg-type]

    monkeypatch.setattr(scan_module, "_discover_sliced", flaky)
    result = _scan([bad, good], FakeFetch(PKGS))
    first, second = result.repos
    assert [p.message for p in first.problems] == [
        f"internal error scanning {bad}: OSError: [Errno 5] Input/output error"
    ]
    assert [r.finding.status for r in second.rows] == ["outdated"]


def test_a_lockfile_matching_bug_costs_only_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``_locked_version`` raising is a problem at the dependency; the row uses its range."""
    _write(tmp_path, "package.json", '{\n  "dependencies": {\n    "a": "^1.0.0"\n  }\n}')

    def broken(*args: object) -> object:
        raise AttributeError("nope")

    monkeypatch.setattr(scan_module, "_locked_version", broken)
    result = _scan([tmp_path], FakeFetch(PKGS))
    assert _problems(result) == {
        "package.json": (
            3,
            "internal error matching lockfiles for a: AttributeError: nope",
            "error",
        )
    }
    [row] = result.repos[0].rows
    assert row.finding.current == "1.0.0"


def test_reader_counts_offsets_in_the_file_after_a_byte_order_mark(tmp_path: Path) -> None:
    """An invalid byte after a BOM is named at its offset in the file, with its line."""
    (tmp_path / "requirements.txt").write_bytes(b"\xef\xbb\xbfrequests==1.0\n\xffoo\n")
    with pytest.raises(ManifestError) as caught:
        _Reader(tmp_path.resolve(), 1024)("requirements.txt")
    assert caught.value.message == "not UTF-8 text (invalid byte 0xff at offset 17)"
    assert caught.value.line == 2


# --- nesting deeper than the parsers follow ---------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "text", "line", "depth"),
    [
        # A bracket inside a string is not nesting; the deep array starts on line 3.
        ("package.json", '{\n  "name": "[[[",\n  "x": ' + "[" * 5000 + "]" * 5000 + "}", 3, 5001),
        (
            "Cargo.toml",
            '[package]\nname = "x"  # [[[[\nversion = "1"\n[metadata]\ny = '
            + "[" * 5000
            + "]" * 5000
            + "\n",
            5,
            5000,
        ),
    ],
)
def test_nesting_too_deep_is_a_problem_at_its_line(
    tmp_path: Path, rel: str, text: str, line: int, depth: int
) -> None:
    """A manifest nested past the parser's recursion limit is a problem naming its deepest line.

    Every other file is still scanned.
    """
    _write(tmp_path, rel, text)
    _write(tmp_path, "web/package.json", json.dumps({"dependencies": {"a": "1.0.0"}}))
    result = _scan([tmp_path], FakeFetch(PKGS), max_file_bytes=1024 * 1024)
    syntax = "JSON" if rel.endswith(".json") else "TOML"
    assert _problems(result) == {
        rel: (line, f"invalid {syntax}: nested too deeply ({depth} levels of brackets)", "error")
    }
    assert [(r.dependency.file, r.finding.status) for r in result.repos[0].rows] == [
        ("web/package.json", "outdated")
    ]
