from __future__ import annotations

from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import cargo_lock
from patchula.models import ExtractResult, LockedPackage, Lockfile, ManifestProblem

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "cargo_lock"


def _no_read(path: str) -> str:
    raise ManifestError("lockfiles have no includes", file=path)


def _extract(case: str, path: str = "Cargo.lock") -> ExtractResult:
    text = (FIXTURES / case / "Cargo.lock").read_text(encoding="utf-8")
    return cargo_lock.extract(path, text, _no_read)


def _lockfile(result: ExtractResult) -> Lockfile:
    assert result.lockfile is not None
    return result.lockfile


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("Cargo.lock", True),
        ("fuzz/Cargo.lock", True),
        ("cargo.lock", False),
        ("Cargo.toml", False),
        ("Cargo.lock.orig", False),
    ],
)
def test_matches_cargo_lock_by_basename(path: str, *, expected: bool) -> None:
    """Only files named exactly Cargo.lock match."""
    assert cargo_lock.matches(path) is expected


def test_manager_ids() -> None:
    """The module declares its id, datasource and versioning."""
    assert (cargo_lock.ID, cargo_lock.DATASOURCE, cargo_lock.VERSIONING) == (
        "cargo_lock",
        "crates",
        "cargo",
    )


def test_real_v4_workspace_lock_keeps_registry_crates_and_lists_members() -> None:
    """The trimmed ripgrep v4 lock keeps crates.io packages; sourceless packages are members."""
    result = _extract("v4-workspace", "ripgrep/Cargo.lock")
    lockfile = _lockfile(result)
    assert lockfile.packages == (
        LockedPackage("aho-corasick", "1.1.5", 6),
        LockedPackage("anyhow", "1.0.104", 15),
    )
    assert lockfile.members == frozenset({"grep", "ripgrep"})
    assert (lockfile.file, lockfile.manager, lockfile.ecosystem) == (
        "ripgrep/Cargo.lock",
        "cargo_lock",
        "crates",
    )
    assert result.problems == ()
    assert result.dependencies == ()


def test_real_git_source_is_dropped() -> None:
    """The trimmed ruff fuzz lock drops libfuzzer-sys from git and names ruff-fuzz as member."""
    lockfile = _lockfile(_extract("git-sourced"))
    assert [(p.name, p.version, p.line) for p in lockfile.packages] == [
        ("aho-corasick", "1.1.4", 6),
        ("allocator-api2", "0.2.21", 15),
    ]
    assert lockfile.members == frozenset({"ruff-fuzz"})


def test_v3_lock_keeps_crates_io_and_sparse_registry_packages() -> None:
    """A v3 lock with inline checksums keeps registry+ and sparse+ sources."""
    result = _extract("v3")
    lockfile = _lockfile(result)
    assert [(p.name, p.version, p.line) for p in lockfile.packages] == [
        ("ahash", "0.8.12", 6),
        ("cfg-if", "1.0.0", 15),
        ("internal-widget", "0.3.1", 21),
    ]
    assert lockfile.members == frozenset({"pydantic-core"})
    assert result.problems == ()


def test_v1_lock_with_metadata_checksums() -> None:
    """A v1 lock (no version key, [metadata] checksums) is read without problems."""
    result = _extract("v1-metadata")
    lockfile = _lockfile(result)
    assert lockfile.packages == (
        LockedPackage("libc", "0.2.66", 12),
        LockedPackage("log", "0.4.8", 17),
    )
    assert lockfile.members == frozenset({"demo"})
    assert result.problems == ()


def test_unknown_lock_version_is_a_warning_and_still_extracted() -> None:
    """An unknown lock version warns at its line and the packages are still read."""
    result = _extract("unknown-version")
    assert result.problems == (
        ManifestProblem(
            "Cargo.lock",
            1,
            "unknown Cargo.lock version 7; reading it as far as possible",
            "warning",
        ),
    )
    assert _lockfile(result).packages == (LockedPackage("memchr", "2.8.0", 4),)


def test_invalid_toml_is_a_problem_with_line() -> None:
    """A broken string gives one error at its line and no lockfile."""
    result = _extract("invalid-toml")
    assert result.lockfile is None
    assert len(result.problems) == 1
    problem = result.problems[0]
    assert (problem.file, problem.line, problem.severity) == ("Cargo.lock", 5, "error")
    assert problem.message.startswith("invalid TOML: ")


def test_empty_file_gives_an_empty_lockfile() -> None:
    """A 0-byte Cargo.lock yields a lockfile with no packages and no members."""
    result = _extract("empty")
    assert _lockfile(result).packages == ()
    assert _lockfile(result).members == frozenset()
    assert result.problems == ()


def test_wrong_types_are_skipped() -> None:
    """Packages with a non-string name or version are left out; the rest are kept."""
    result = _extract("wrong-types")
    assert _lockfile(result).packages == (LockedPackage("serde", "1.0.228", 14),)
    assert result.problems == ()


def test_package_not_an_array_is_a_problem() -> None:
    """A `package` key that is not an array of tables is reported at its line."""
    result = cargo_lock.extract("Cargo.lock", 'version = 4\npackage = "x"\n', _no_read)
    assert result.problems == (
        ManifestProblem("Cargo.lock", 2, "`package` must be an array of tables"),
    )
    assert _lockfile(result).packages == ()
