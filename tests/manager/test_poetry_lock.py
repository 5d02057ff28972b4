from __future__ import annotations

from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import poetry_lock
from patchula.models import ExtractResult, LockedPackage, Lockfile, ManifestProblem

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "poetry_lock"


def _no_read(path: str) -> str:
    raise ManifestError("lockfiles have no includes", file=path)


def _extract(case: str, path: str = "poetry.lock") -> ExtractResult:
    text = (FIXTURES / case / "poetry.lock").read_text(encoding="utf-8")
    return poetry_lock.extract(path, text, _no_read)


def _lockfile(result: ExtractResult) -> Lockfile:
    assert result.lockfile is not None
    return result.lockfile


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("poetry.lock", True),
        ("tests/fixtures/old_lock/poetry.lock", True),
        ("poetry.lock.orig", False),
        ("uv.lock", False),
    ],
)
def test_matches_poetry_lock_by_basename(path: str, *, expected: bool) -> None:
    """Only files named poetry.lock match."""
    assert poetry_lock.matches(path) is expected


def test_real_lock_gives_packages_at_their_name_lines() -> None:
    """The trimmed poetry.lock of Poetry itself gives three packages with name lines."""
    result = _extract("real-poetry", "app/poetry.lock")
    lockfile = _lockfile(result)
    assert lockfile.packages == (
        LockedPackage("anyio", "4.13.0", 4),
        LockedPackage("backports-tarfile", "1.2.0", 24),
        LockedPackage("build", "1.5.0", 41),
    )
    assert (lockfile.file, lockfile.manager, lockfile.ecosystem) == (
        "app/poetry.lock",
        "poetry_lock",
        "pypi",
    )
    assert lockfile.members is None
    assert result.problems == ()


def test_real_directory_dependency_is_dropped() -> None:
    """Poetry's with_path_dependency lock drops the directory package bazz and keeps the rest."""
    lockfile = _lockfile(_extract("path-dependency"))
    assert [(p.name, p.version, p.line) for p in lockfile.packages] == [
        ("certifi", "2022.12.7", 21),
        ("chardet", "4.0.0", 33),
        ("idna", "2.10", 45),
        ("requests", "2.25.1", 57),
        ("urllib3", "1.26.14", 79),
    ]


def test_source_types_legacy_kept_git_url_file_and_versionless_dropped() -> None:
    """A legacy index package stays (name normalised); git, url, file and versionless drop."""
    lockfile = _lockfile(_extract("source-types"))
    assert lockfile.packages == (
        LockedPackage("private-lib", "1.4.0", 4),
        LockedPackage("requests", "2.32.3", 63),
    )


def test_real_old_lock_version_one_is_read() -> None:
    """A lock-version 1.0 file (name after description) is read without a problem."""
    result = _extract("old-lock")
    assert _lockfile(result).packages == (LockedPackage("sampleproject", "1.3.1", 3),)
    assert result.problems == ()


def test_real_incompatible_lock_version_is_a_warning() -> None:
    """Poetry's lock-version 999.0 fixture is a warning at its line, not an error."""
    result = _extract("incompatible-lock")
    assert result.problems == (
        ManifestProblem(
            "poetry.lock",
            2,
            "unknown lock-version '999.0'; reading it as far as possible",
            "warning",
        ),
    )
    assert _lockfile(result).packages == ()


def test_unknown_major_still_extracts_packages() -> None:
    """A lock-version 3.0 file warns at the metadata line and still yields its packages."""
    result = _extract("future-lock")
    assert [(p.line, p.severity) for p in result.problems] == [(9, "warning")]
    assert _lockfile(result).packages == (LockedPackage("idna", "3.10", 2),)


def test_real_invalid_lock_is_a_problem_at_line_one() -> None:
    """Poetry's broken-lock fixture is an invalid-TOML problem on line 1 with no lockfile."""
    result = _extract("invalid-lock")
    assert result.problems == (
        ManifestProblem(
            "poetry.lock", 1, "invalid TOML: Expected '=' after a key in a key/value pair"
        ),
    )
    assert result.lockfile is None


def test_non_table_package_elements_are_problems() -> None:
    """`package = [1, 2]` gives one problem per element and an empty lockfile."""
    result = _extract("wrong-types")
    assert [(p.line, p.message) for p in result.problems] == [
        (1, "`package` element 1 must be a table, got 1"),
        (1, "`package` element 2 must be a table, got 2"),
    ]
    assert _lockfile(result).packages == ()


def test_empty_and_nul_files() -> None:
    """A 0-byte lock is an empty lockfile; NUL characters are a problem at their line."""
    empty = _extract("empty")
    assert (empty.problems, _lockfile(empty).packages) == ((), ())
    assert [(p.line, p.message) for p in _extract("nul-bytes").problems] == [
        (3, "file contains NUL characters; not a text manifest")
    ]
