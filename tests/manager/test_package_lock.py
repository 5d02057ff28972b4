from __future__ import annotations

from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import package_lock
from patchula.models import ExtractResult, LockedPackage, Lockfile, ManifestProblem

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "package_lock"


def _no_read(path: str) -> str:
    raise ManifestError("lockfiles have no includes", file=path)


def _extract(case: str, name: str = "package-lock.json", path: str | None = None) -> ExtractResult:
    text = (FIXTURES / case / name).read_text(encoding="utf-8")
    return package_lock.extract(path or name, text, _no_read)


def _lockfile(result: ExtractResult) -> Lockfile:
    assert result.lockfile is not None
    return result.lockfile


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("package-lock.json", True),
        ("playground/package-lock.json", True),
        ("npm-shrinkwrap.json", True),
        ("node_modules/a/package-lock.json", False),
        ("node_modules/.package-lock.json", False),
        ("package.json", False),
        ("yarn.lock", False),
    ],
)
def test_matches_npm_lockfiles_by_basename(path: str, *, expected: bool) -> None:
    """package-lock.json and npm-shrinkwrap.json match, hidden and nested copies do not."""
    assert package_lock.matches(path) is expected


def test_real_v3_lock_with_workspaces_aliases_and_links() -> None:
    """The trimmed ruff playground lock gives aliases' real names, nested paths and members."""
    lockfile = _lockfile(_extract("v3-workspaces", path="playground/package-lock.json"))
    assert lockfile.file == "playground/package-lock.json"
    assert (lockfile.manager, lockfile.ecosystem) == ("package_lock", "npm")
    assert lockfile.packages == (
        LockedPackage(
            "@typescript-eslint/eslint-plugin",
            "8.66.0",
            37,
            "node_modules/@typescript-eslint/eslint-plugin",
        ),
        LockedPackage(
            "ignore",
            "7.0.5",
            66,
            "node_modules/@typescript-eslint/eslint-plugin/node_modules/ignore",
        ),
        LockedPackage("typescript", "7.0.2", 76, "node_modules/@typescript/native"),
        LockedPackage("typescript", "6.0.3", 112, "node_modules/@typescript/old"),
        LockedPackage("@typescript/typescript6", "6.0.2", 147, "node_modules/typescript"),
    )
    assert lockfile.members == frozenset(
        {"", "ruff", "ruff/ruff_wasm", "shared", "ty", "ty/ty_wasm"}
    )


def test_real_small_v3_lock() -> None:
    """The ty_benchmark lock gives its two registry packages with their key lines."""
    result = _extract("real-ty-benchmark")
    assert _lockfile(result).packages == (
        LockedPackage("fsevents", "2.3.3", 17, "node_modules/fsevents"),
        LockedPackage("pyright", "1.1.411", 31, "node_modules/pyright"),
    )
    assert _lockfile(result).members == frozenset({""})
    assert result.problems == ()
    assert result.dependencies == ()


def test_workspace_member_install_paths_and_shrinkwrap() -> None:
    """Packages under a member's node_modules keep that install path; the link marks the member."""
    lockfile = _lockfile(_extract("member-node-modules", name="npm-shrinkwrap.json"))
    assert [(p.name, p.version, p.install_path) for p in lockfile.packages] == [
        ("left-pad", "1.3.0", "node_modules/left-pad"),
        ("left-pad", "1.1.3", "packages/app/node_modules/left-pad"),
        ("@scope/util", "2.0.0", "packages/app/node_modules/@scope/util"),
    ]
    assert lockfile.members == frozenset({"", "packages/app"})
    assert lockfile.file == "npm-shrinkwrap.json"


def test_git_and_file_resolved_entries_are_left_out() -> None:
    """Entries resolved from git or a local tarball are dropped; an entry without resolved stays."""
    lockfile = _lockfile(_extract("git-sourced"))
    assert [(p.name, p.line) for p in lockfile.packages] == [("left-pad", 22), ("unresolved", 26)]


def test_v2_reads_packages_not_the_legacy_tree() -> None:
    """A v2 lock is read from packages once, not twice through its v1 dependencies copy."""
    lockfile = _lockfile(_extract("v2"))
    assert lockfile.packages == (
        LockedPackage("debug", "4.3.4", 14, "node_modules/debug"),
        LockedPackage("ms", "2.1.2", 21, "node_modules/ms"),
    )


def test_v1_nested_tree_aliases_git_and_file_entries() -> None:
    """v1 nesting becomes nested install paths, npm: versions resolve, git and file drop out."""
    result = _extract("v1")
    assert _lockfile(result).packages == (
        LockedPackage("debug", "2.6.9", 7, "node_modules/debug"),
        LockedPackage("ms", "2.0.0", 14, "node_modules/debug/node_modules/ms"),
        LockedPackage("ms", "2.1.3", 20, "node_modules/ms"),
        LockedPackage("typescript", "4.9.5", 24, "node_modules/old-ts"),
    )
    assert result.problems == ()


def test_unknown_lockfile_version_is_a_warning_and_still_read() -> None:
    """An unknown lockfileVersion (4) is a warning at its line, and packages are still read."""
    result = _extract("unknown-version")
    assert result.problems == (
        ManifestProblem(
            "package-lock.json",
            3,
            "unknown lockfileVersion 4; reading it as far as possible",
            "warning",
        ),
    )
    assert [p.name for p in _lockfile(result).packages] == ["left-pad"]


def test_wrong_entry_types_are_problems_and_other_entries_survive() -> None:
    """A string entry and a numeric version are problems; the valid entry is kept."""
    result = _extract("wrong-types")
    assert [(p.line, p.message) for p in result.problems] == [
        (6, "entry 'node_modules/a' must be an object, got a string"),
        (8, "version of 'node_modules/b' must be a string, got a number"),
    ]
    assert [(p.name, p.version) for p in _lockfile(result).packages] == [("c", "3.0.0")]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('{\n  "lockfileVersion": 3,\n  "packages": []\n}', 3, "`packages` must be an object"),
        ('{\n  "lockfileVersion": 1,\n  "dependencies": 7\n}', 3, "`dependencies` must be an"),
        (
            '{\n  "lockfileVersion": 1,\n  "dependencies": {\n    "a": {"version": 1}\n  }\n}',
            4,
            "version of 'a' must be a string",
        ),
    ],
)
def test_wrong_section_types_are_problems(text: str, line: int, message: str) -> None:
    """A packages array, a non-object v1 tree and a numeric v1 version are problems by line."""
    result = package_lock.extract("package-lock.json", text, _no_read)
    assert [(p.line, p.message[: len(message)]) for p in result.problems] == [(line, message)]
    assert _lockfile(result).packages == ()


def test_bad_json_is_a_problem_at_the_decoder_line() -> None:
    """A trailing comma is reported at the line json points to, with no lockfile."""
    result = _extract("not-json")
    assert [(p.line, p.message) for p in result.problems] == [
        (7, "invalid JSON: Expecting property name enclosed in double quotes at column 5")
    ]
    assert result.lockfile is None


def test_empty_and_nul_files_are_problems() -> None:
    """A 0-byte lock and a lock with NUL bytes are problems, not exceptions."""
    assert [(p.line, p.message) for p in _extract("empty").problems] == [
        (1, "empty file; expected a JSON object")
    ]
    assert [(p.line, p.message) for p in _extract("nul-bytes").problems] == [
        (5, "file contains NUL characters; not a text manifest")
    ]
