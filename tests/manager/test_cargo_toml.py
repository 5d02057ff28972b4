from __future__ import annotations

from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import cargo_toml
from patchula.manager.base import ReadFile
from patchula.models import Dependency, ExtractResult, ManifestProblem

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "cargo_toml"

Row = tuple[int | None, str, str, str, str | None, str | None, str | None]


def _reader(case: str, served: list[str] | None = None) -> ReadFile:
    """Serve the fixture files of ``case`` as a checkout; record the paths asked for."""

    def read(path: str) -> str:
        if served is not None:
            served.append(path)
        file = FIXTURES / case / path
        if not file.is_file():
            raise ManifestError("no such file", file=path)
        return file.read_text(encoding="utf-8")

    return read


def _extract(case: str, path: str = "Cargo.toml", served: list[str] | None = None) -> ExtractResult:
    read = _reader(case, served)
    return cargo_toml.extract(path, read(path), read)


def _rows(result: ExtractResult) -> list[Row]:
    return [
        (d.line, d.name, d.package_name, d.dep_type, d.declared, d.constraint, d.skip_reason)
        for d in result.dependencies
    ]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("Cargo.toml", True),
        ("crates/ruff_cache/Cargo.toml", True),
        ("cargo.toml", False),
        ("Cargo.lock", False),
        ("Cargo.toml.orig", False),
    ],
)
def test_matches_cargo_toml_by_basename(path: str, *, expected: bool) -> None:
    """Only files named exactly Cargo.toml match."""
    assert cargo_toml.matches(path) is expected


def test_rows_carry_manager_datasource_and_versioning() -> None:
    """Every row names the cargo_toml manager, the crates datasource and cargo versioning."""
    dependency = _extract("dotted-tables").dependencies[0]
    assert dependency == Dependency(
        manager="cargo_toml",
        file="Cargo.toml",
        line=5,
        name="serde",
        package_name="serde",
        datasource="crates",
        versioning="cargo",
        dep_type="dependencies",
        declared="1.0.77",
        constraint="1.0.77",
    )


def test_workspace_root_lists_its_own_and_shared_dependencies() -> None:
    """A root gives its [workspace.dependencies]; its package's inheriting row is the same one."""
    result = _extract("workspace")
    assert result.project_name == "ruff"
    assert result.problems == ()
    assert _rows(result) == [
        # `anyhow = { workspace = true }` of the root package (line 25) is the declaration's row.
        (12, "anyhow", "anyhow", "workspace.dependencies", "1.0.80", "1.0.80", None),
        (9, "char_str", "char_str", "workspace.dependencies", "0.0.2", "0.0.2", None),
        (
            10,
            "ruff_cache",
            "ruff_cache",
            "workspace.dependencies",
            "0.0.10",
            "0.0.10",
            "local path dependency (workspace member)",
        ),
        (
            11,
            "ruff_macros",
            "ruff_macros",
            "workspace.dependencies",
            "crates/ruff_macros",
            None,
            "local path dependency",
        ),
        (12, "anyhow", "anyhow", "workspace.dependencies", "1.0.80", "1.0.80", None),
        (
            13,
            "reqwest-middleware",
            "astral-reqwest-middleware",
            "workspace.dependencies",
            "0.5",
            "0.5",
            None,
        ),
        (
            14,
            "salsa",
            "salsa",
            "workspace.dependencies",
            "https://github.com/salsa-rs/salsa.git",
            None,
            "git dependency",
        ),
        (16, "serde", "serde", "workspace.dependencies", "1.0.197", "1.0.197", None),
    ]


def test_workspace_member_inherits_requirements_from_the_root() -> None:
    """`workspace = true` entries give the root's declaration rows (one declaration, one row)."""
    served: list[str] = []
    result = _extract("workspace", "crates/member/Cargo.toml", served)
    assert result.project_name == "ruff_cache"
    assert {d.file for d in result.dependencies} == {"Cargo.toml"}
    assert {d.dep_type for d in result.dependencies} == {"workspace.dependencies"}
    root = set(_extract("workspace").dependencies)
    assert set(result.dependencies) <= root
    assert _rows(result) == [
        (9, "char_str", "char_str", "workspace.dependencies", "0.0.2", "0.0.2", None),
        (16, "serde", "serde", "workspace.dependencies", "1.0.197", "1.0.197", None),
        (
            13,
            "reqwest-middleware",
            "astral-reqwest-middleware",
            "workspace.dependencies",
            "0.5",
            "0.5",
            None,
        ),
        (
            14,
            "salsa",
            "salsa",
            "workspace.dependencies",
            "https://github.com/salsa-rs/salsa.git",
            None,
            "git dependency",
        ),
        (
            11,
            "ruff_macros",
            "ruff_macros",
            "workspace.dependencies",
            "crates/ruff_macros",
            None,
            "local path dependency",
        ),
        (
            10,
            "ruff_cache",
            "ruff_cache",
            "workspace.dependencies",
            "0.0.10",
            "0.0.10",
            "local path dependency (workspace member)",
        ),
        (12, "anyhow", "anyhow", "workspace.dependencies", "1.0.80", "1.0.80", None),
    ]
    assert result.problems == (
        ManifestProblem(
            "crates/member/Cargo.toml",
            11,
            "cannot resolve `itertools.workspace = true`: "
            "not in [workspace.dependencies] of Cargo.toml",
        ),
    )
    # The member file itself, then the ancestors up to the root; the root is read only once.
    assert served == ["crates/member/Cargo.toml", "crates/Cargo.toml", "Cargo.toml"]
    assert result.included_files == ()


def test_inheritance_without_a_workspace_root_is_a_problem() -> None:
    """A `workspace = true` dependency with no root above gives a problem at its line."""
    result = _extract("no-root")
    assert _rows(result) == [(7, "log", "log", "dependencies", "0.4", "0.4", None)]
    assert result.problems == (
        ManifestProblem(
            "Cargo.toml",
            6,
            "cannot resolve `serde.workspace = true`: "
            "no workspace root Cargo.toml found for Cargo.toml",
        ),
    )


def test_package_workspace_key_names_the_root() -> None:
    """`package.workspace = "../.."` is followed to the root instead of the nearest ancestor."""
    served: list[str] = []
    result = _extract("explicit-root", "tools/sub/Cargo.toml", served)
    assert _rows(result) == [(2, "log", "log", "workspace.dependencies", "0.4.20", "0.4.20", None)]
    assert result.problems == ()
    assert served == ["tools/sub/Cargo.toml", "Cargo.toml"]


def test_invalid_workspace_root_is_a_problem_in_the_member() -> None:
    """A root that is not valid TOML leaves the member's inherited dependency unresolved."""
    result = _extract("broken-root", "crates/member/Cargo.toml")
    assert result.dependencies == ()
    assert result.problems == (
        ManifestProblem(
            "crates/member/Cargo.toml",
            5,
            "cannot resolve `log.workspace = true`: Cargo.toml is not valid TOML",
        ),
    )


def test_renamed_crates_and_target_tables() -> None:
    """The trimmed mise manifest: renames look up the real crate, target specs stay whole."""
    result = _extract("renamed-and-targets")
    assert result.project_name == "mise"
    assert result.problems == ()
    assert _rows(result) == [
        (7, "regex", "regex", "dependencies", "1", "1", None),
        (8, "reqwest-middleware", "astral-reqwest-middleware", "dependencies", "0.5", "0.5", None),
        (9, "tera", "tera", "dependencies", "2", "2", None),
        (10, "tera1", "tera", "dependencies", "1", "1", None),
        (11, "vfox", "vfox", "dependencies", "crates/vfox", None, "local path dependency"),
        (
            12,
            "mise-interactive-config",
            "mise-interactive-config",
            "dependencies",
            "2026",
            "2026",
            "local path dependency (workspace member)",
        ),
        (33, "pretty_assertions", "pretty_assertions", "dev-dependencies", "1", "1", None),
        (30, "built", "built", "build-dependencies", "0.8", "0.8", None),
        (15, "exec", "exec", "target.cfg(unix).dependencies", "0.3", "0.3", None),
        (16, "nix", "nix", "target.cfg(unix).dependencies", "0.31", "0.31", None),
        (
            19,
            "landlock",
            "landlock",
            'target.cfg(target_os = "linux").dependencies',
            "0.4",
            "0.4",
            None,
        ),
        (
            22,
            "windows-sys",
            "windows-sys",
            "target.cfg(windows).dependencies",
            "0.61",
            "0.61",
            None,
        ),
        (
            27,
            "winres",
            "winres",
            "target.x86_64-pc-windows-gnu.dev-dependencies",
            "0.1",
            "0.1",
            None,
        ),
    ]


def test_dotted_tables_and_dotted_keys() -> None:
    """`[dependencies.serde]`, `log.version = …` and a dotted target table are located."""
    result = _extract("dotted-tables")
    assert result.problems == ()
    assert _rows(result) == [
        (5, "serde", "serde", "dependencies", "1.0.77", "1.0.77", None),
        (10, "bstr", "bstr", "dependencies", "1.7.0", "1.7.0", None),
        (11, "log", "log", "dependencies", "0.4.5", "0.4.5", None),
        (17, "walkdir", "walkdir", "dev-dependencies", "2", "2", None),
        (
            14,
            "tikv-jemallocator",
            "tikv-jemallocator",
            'target.cfg(all(target_env = "musl", target_pointer_width = "64")).dependencies',
            "0.7.0",
            "0.7.0",
            None,
        ),
    ]


def test_path_git_and_registry_dependencies_are_skipped() -> None:
    """Path, path+version and git dependencies carry their skip reason; a registry is kept.

    One with neither version, path nor git is refused by Cargo: a problem, no row.
    """
    result = _extract("sources")
    assert _rows(result) == [
        (
            6,
            "ruff_db",
            "ruff_db",
            "dependencies",
            "../crates/ruff_db",
            None,
            "local path dependency",
        ),
        (
            7,
            "grep",
            "grep",
            "dependencies",
            "0.4.1",
            "0.4.1",
            "local path dependency (workspace member)",
        ),
        (
            8,
            "libfuzzer-sys",
            "libfuzzer-sys",
            "dependencies",
            "https://github.com/rust-fuzz/libfuzzer",
            None,
            "git dependency",
        ),
        (9, "pinned-git", "pinned-git", "dependencies", "1.2", "1.2", "git dependency"),
        (10, "internal", "internal", "dependencies", "0.3", "0.3", None),
        (12, "exact", "exact", "dependencies", "=1.2.3", "=1.2.3", None),
    ]
    # An alternative registry's row is looked up there (the scan reads .cargo/config.toml).
    registries = {d.name: d.sole_index for d in result.dependencies}
    assert registries["internal"] == "other"
    assert registries["exact"] is None
    assert result.problems == (
        ManifestProblem(
            "Cargo.toml",
            11,
            "dependency `dependencies.featured` has no `version`, `path`, `git` or `workspace`;"
            " Cargo refuses it; not looked up",
        ),
    )


def test_invalid_toml_is_a_problem_with_line() -> None:
    """An unterminated string gives one error at its line and no rows."""
    result = _extract("invalid-toml")
    assert result.dependencies == ()
    assert len(result.problems) == 1
    problem = result.problems[0]
    assert (problem.file, problem.line, problem.severity) == ("Cargo.toml", 5, "error")
    assert problem.message.startswith("invalid TOML: ")


def test_empty_file_gives_an_empty_result() -> None:
    """A 0-byte Cargo.toml yields nothing and no problem."""
    assert _extract("empty") == ExtractResult()


def test_wrong_types_are_problems_with_lines() -> None:
    """Non-table sections, non-string versions and `workspace = "yes"` are reported per line."""
    result = _extract("wrong-types")
    assert result.project_name is None
    assert _rows(result) == [(10, "good", "good", "dev-dependencies", "1", "1", None)]
    assert result.problems == (
        ManifestProblem("Cargo.toml", 1, "`dependencies` must be a table"),
        ManifestProblem(
            "Cargo.toml", 7, "dependency `dev-dependencies.log` must be a string or a table"
        ),
        ManifestProblem(
            "Cargo.toml", 8, "`version` of dependency `dev-dependencies.anyhow` must be a string"
        ),
        ManifestProblem(
            "Cargo.toml", 9, "`workspace` of dependency `dev-dependencies.tokio` must be `true`"
        ),
        ManifestProblem("Cargo.toml", 13, "`target.bad` must be a table"),
    )


def test_nul_bytes_are_a_problem() -> None:
    """A NUL character marks a binary file: one problem at its line, no rows."""
    result = cargo_toml.extract("Cargo.toml", '[dependencies]\nserde = "1"\x00\n', _reader("empty"))
    assert result.dependencies == ()
    assert result.problems == (
        ManifestProblem("Cargo.toml", 2, "file contains NUL characters; not a text manifest"),
    )


def test_workspace_dependencies_cannot_inherit() -> None:
    """A `workspace = true` inside [workspace.dependencies] is a problem, not a row."""
    text = "[workspace]\n\n[workspace.dependencies]\nserde = { workspace = true }\n"
    result = cargo_toml.extract("Cargo.toml", text, _reader("empty"))
    assert result.dependencies == ()
    assert result.problems == (
        ManifestProblem(
            "Cargo.toml", 4, "`workspace.dependencies.serde`: a workspace dependency cannot inherit"
        ),
    )
